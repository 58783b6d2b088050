/*
 * SipHash-2-4 (Aumasson and Bernstein), keyed with the filesystem's random
 * hash key so that directory bucket placement cannot be steered by
 * chosen names. Input bytes are read little-endian as the algorithm
 * specifies, so hashes are identical on every host.
 */
#include "core/format.h"
#include "lebytes.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

/* One SipRound on four locals: a function taking the state by pointer was
 * not inlined, and its loads and stores made SipHash most of an insert's
 * hashing of a block's names (osdfs creates). */
#define SIP_ROUND(v0, v1, v2, v3)                                                   \
	do {                                                                        \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);           \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                              \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                              \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);           \
	} while (0)

uint64_t osdfs__siphash(uint64_t k0, uint64_t k1, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t m, last = (uint64_t)len << 56;
	size_t i, tail = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		m = osdfs__get_le64(p + i);
		v3 ^= m;
		SIP_ROUND(v0, v1, v2, v3);
		SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (size_t j = 0; j < tail; j++)
		last |= (uint64_t)p[i + j] << (8 * j);
	v3 ^= last;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	v0 ^= last;
	v2 ^= 0xff;
	for (int r = 0; r < 4; r++)
		SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
