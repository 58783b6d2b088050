/* Internal interface of libosd/security/key.c. */
#ifndef OSD_SECURITY_KEY_H
#define OSD_SECURITY_KEY_H

#include <osd/security.h>

/*
 * HMAC of the @head buffers followed by the @iov buffers, so callers can
 * prefix a caller-supplied vector without copying it. Arguments are trusted
 * (checked by the public entry points): @key and @mac non-NULL, counts >= 0.
 */
int osd__key_hmac2(osd_key *key, const struct iovec *head, int nhead,
		   const struct iovec *iov, int iovcnt, uint8_t mac[OSD_HMAC_LEN]);

#endif
