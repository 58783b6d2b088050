/*
 * Internal pieces of request signing, for callers that sign many requests
 * with one credential: under CAPKEY the request ICV depends only on the
 * capability key and the channel token (docs/security.md section 3), so it
 * can be computed once and stored into each CDB.
 */
#ifndef OSD_SECURITY_CDB_ICV_H
#define OSD_SECURITY_CDB_ICV_H

#include <stddef.h>
#include <stdint.h>

#include <osd/security.h>

/* The CAPKEY request ICV: HMAC(capkey, token). 0 or negative errno. */
int osd__sec_capkey_icv(osd_key *capkey, const uint8_t *token, size_t token_len,
			uint8_t icv[OSD_HMAC_LEN]);

/* Sign an encoded CAPKEY CDB with an ICV from osd__sec_capkey_icv(): the
 * same bytes osd_sec_sign_cdb() writes (ICV, zero-padded field, zero nonce).
 * -EINVAL, CDB untouched, if the length is wrong or its capability does not
 * state CAPKEY. */
int osd__sec_sign_cdb_capkey(uint8_t *cdb, size_t cdb_len, const uint8_t icv[OSD_HMAC_LEN]);

#endif
