/* CRC32C for the store's metadata records (see crc32c.h). */
#include "checksum/crc32c.h"

#include <pthread.h>
#include <string.h>

#define CRC32C_POLY 0x82F63B78u

static uint32_t crc_table[8][256];
static int crc_have_sse42;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xFF];
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	crc_have_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				   (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
		c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
		    crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^
		    crc_table[3][p[4]] ^ crc_table[2][p[5]] ^
		    crc_table[1][p[6]] ^ crc_table[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t len)
{
	uint64_t c64 = c;
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8); /* little-endian host: byte order matches the table */
		c64 = __builtin_ia32_crc32di(c64, v);
		p += 8;
		len -= 8;
	}
	c = (uint32_t)c64;
	while (len--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

uint32_t osd__crc32c(uint32_t crc, const void *buf, size_t len)
{
	uint32_t c = ~crc;
	pthread_once(&crc_once, crc_init);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (crc_have_sse42)
		return ~crc_hw(c, buf, len);
#endif
	return ~crc_sw(c, buf, len);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/*
 * Three independent CRCs at once. The crc32 instruction has a latency of 3
 * cycles and a throughput of 1: one dependency chain uses a third of the
 * unit, three interleaved chains use all of it.
 */
__attribute__((target("sse4.2")))
static void crc_hw3(const uint8_t *a, const uint8_t *b, const uint8_t *c, size_t len,
		    uint32_t out[3])
{
	uint64_t x = 0xFFFFFFFFu, y = 0xFFFFFFFFu, z = 0xFFFFFFFFu;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t va, vb, vc;
		memcpy(&va, a + i, 8);
		memcpy(&vb, b + i, 8);
		memcpy(&vc, c + i, 8);
		x = __builtin_ia32_crc32di(x, va);
		y = __builtin_ia32_crc32di(y, vb);
		z = __builtin_ia32_crc32di(z, vc);
	}
	uint32_t x32 = (uint32_t)x, y32 = (uint32_t)y, z32 = (uint32_t)z;
	for (; i < len; i++) {
		x32 = __builtin_ia32_crc32qi(x32, a[i]);
		y32 = __builtin_ia32_crc32qi(y32, b[i]);
		z32 = __builtin_ia32_crc32qi(z32, c[i]);
	}
	out[0] = ~x32;
	out[1] = ~y32;
	out[2] = ~z32;
}
#endif

void osd__crc32c_blocks(const void *buf, size_t bs, size_t n, uint32_t *out)
{
	const uint8_t *p = buf;
	size_t i = 0;
	pthread_once(&crc_once, crc_init);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (crc_have_sse42)
		for (; i + 3 <= n; i += 3)
			crc_hw3(p + i * bs, p + (i + 1) * bs, p + (i + 2) * bs, bs, out + i);
#endif
	for (; i < n; i++)
		out[i] = osd__crc32c(0, p + i * bs, bs);
}

uint32_t osd__crc32c_table(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_init);
	return ~crc_sw(~crc, buf, len);
}
