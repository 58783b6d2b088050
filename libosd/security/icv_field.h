/*
 * ICV fields: 20 HMAC-SHA1 bytes left-justified in a 20-byte (OSD-1) or
 * 32-byte (OSD-2) field whose tail is zero. Shared by every security file
 * that writes or checks one.
 */
#ifndef OSD_SECURITY_ICV_FIELD_H
#define OSD_SECURITY_ICV_FIELD_H

#include <string.h>
#include <sys/uio.h>

#include <openssl/crypto.h>

#include <osd/security.h>

static inline void osd__icv_store(uint8_t *field, size_t field_len,
				  const uint8_t icv[OSD_HMAC_LEN])
{
	memset(field, 0, field_len);
	memcpy(field, icv, OSD_HMAC_LEN);
}

/* 1 if @field holds @icv and a zero tail (constant time in the ICV bytes). */
static inline int osd__icv_matches(const uint8_t *field, size_t field_len,
				   const uint8_t icv[OSD_HMAC_LEN])
{
	uint8_t tail = 0;
	size_t i;

	/* The tail is not covered by the ICV: it must not vary. */
	for (i = OSD_HMAC_LEN; i < field_len; i++)
		tail |= field[i];
	return CRYPTO_memcmp(field, icv, OSD_HMAC_LEN) == 0 && tail == 0;
}

/*
 * osd_sec_bound_icv() with one more segment (@first, may be NULL) hashed
 * right after the request ICV, before @iov. Arguments are trusted.
 */
int osd__sec_bound_icv_with(osd_key *capkey, enum osd_icv_kind kind,
			    const uint8_t req_icv[OSD_HMAC_LEN], const struct iovec *first,
			    const struct iovec *iov, int iovcnt, uint8_t icv[OSD_HMAC_LEN]);

#endif
