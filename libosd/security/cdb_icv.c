/*
 * Request integrity: signing and verifying the security parameters of an
 * encoded CDB, and the ICVs bound to a request (data, continuation,
 * response). Byte coverage is fixed in docs/security.md section 3.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include <openssl/crypto.h>

#include <osd/cdb.h>
#include <osd/security.h>

#include "security/cdb_icv.h"
#include "security/icv_field.h"
#include "security/key.h"

/* Where the security fields of one CDB version live. */
struct osd_sec_layout {
	size_t icv_off; /* REQUEST INTEGRITY CHECK VALUE */
	size_t icv_len; /* 20 (v1) or 32 (v2) */
	size_t nonce_off; /* REQUEST NONCE, right after the ICV */
	size_t method_off; /* capability byte 2 */
};

static int osd_sec__layout(size_t cdb_len, struct osd_sec_layout *l)
{
	enum osd_version v;

	if (cdb_len == OSD_CDB_V1_LEN)
		v = OSD_V1;
	else if (cdb_len == OSD_CDB_V2_LEN)
		v = OSD_V2;
	else
		return -EINVAL;
	l->icv_off = osd_cdb_icv_offset(v);
	l->icv_len = osd_cdb_icv_len(v);
	l->nonce_off = l->icv_off + l->icv_len;
	l->method_off = osd_cdb_cap_offset(v) + 2;
	return 0;
}

static int osd_sec__check_args(osd_key *capkey, enum osd_sec_method method,
			       const uint8_t *cdb, const uint8_t *token, size_t token_len)
{
	if (cdb == NULL || (token == NULL && token_len != 0))
		return -EINVAL;
	if ((unsigned)method > OSD_SEC_ALLDATA)
		return -EINVAL;
	if (method != OSD_SEC_NOSEC && capkey == NULL)
		return -EINVAL;
	return 0;
}

int osd__sec_capkey_icv(osd_key *capkey, const uint8_t *token, size_t token_len,
			uint8_t icv[OSD_HMAC_LEN])
{
	struct iovec iov = { .iov_base = (void *)token, .iov_len = token_len };

	if (capkey == NULL || (token == NULL && token_len != 0))
		return -EINVAL;
	return osd__key_hmac2(capkey, NULL, 0, &iov, 1, icv);
}

/* Write the ICV and nonce fields; the caller has checked the layout. */
static void osd_sec__store(uint8_t *cdb, const struct osd_sec_layout *l,
			   const uint8_t icv[OSD_HMAC_LEN], const uint8_t nonce[OSD_NONCE_LEN])
{
	osd__icv_store(cdb + l->icv_off, l->icv_len, icv);
	memcpy(cdb + l->nonce_off, nonce, OSD_NONCE_LEN);
}

int osd__sec_sign_cdb_capkey(uint8_t *cdb, size_t cdb_len, const uint8_t icv[OSD_HMAC_LEN])
{
	static const uint8_t zero_nonce[OSD_NONCE_LEN];
	struct osd_sec_layout l;

	if (cdb == NULL || icv == NULL || osd_sec__layout(cdb_len, &l) < 0)
		return -EINVAL;
	if ((cdb[l.method_off] & 0x0F) != (uint8_t)OSD_SEC_CAPKEY)
		return -EINVAL;
	osd_sec__store(cdb, &l, icv, zero_nonce);
	return 0;
}

/*
 * The request ICV of @cdb as it would be with @nonce in the nonce field and
 * the ICV field zeroed; the CDB itself is not modified. The image is built
 * in a copy because one MAC update over 236 bytes is cheaper than several.
 */
static int osd_sec__request_icv(osd_key *capkey, enum osd_sec_method method,
				const uint8_t *cdb, size_t cdb_len,
				const struct osd_sec_layout *l,
				const uint8_t nonce[OSD_NONCE_LEN],
				const uint8_t *token, size_t token_len,
				uint8_t icv[OSD_HMAC_LEN])
{
	uint8_t image[OSD_CDB_MAX_LEN];
	struct iovec iov;

	if (method == OSD_SEC_CAPKEY)
		return osd__sec_capkey_icv(capkey, token, token_len, icv);
	memcpy(image, cdb, cdb_len);
	memset(image + l->icv_off, 0, l->icv_len);
	memcpy(image + l->nonce_off, nonce, OSD_NONCE_LEN);
	iov.iov_base = image;
	iov.iov_len = cdb_len;
	return osd__key_hmac2(capkey, NULL, 0, &iov, 1, icv);
}

int osd_sec_sign_cdb(osd_key *capkey, enum osd_sec_method method,
		     uint8_t *cdb, size_t cdb_len,
		     const uint8_t *token, size_t token_len, uint64_t now_ms)
{
	struct osd_sec_layout l;
	uint8_t nonce[OSD_NONCE_LEN] = { 0 };
	uint8_t icv[OSD_HMAC_LEN] = { 0 };
	int rc;

	rc = osd_sec__check_args(capkey, method, cdb, token, token_len);
	if (rc == 0)
		rc = osd_sec__layout(cdb_len, &l);
	if (rc < 0)
		return rc;
	/* Signing with another method than the capability states is a caller bug. */
	if ((cdb[l.method_off] & 0x0F) != (uint8_t)method)
		return -EINVAL;
	if (method == OSD_SEC_CMDRSP || method == OSD_SEC_ALLDATA) {
		rc = osd_nonce_make(nonce, now_ms);
		if (rc < 0)
			return rc;
	}
	if (method != OSD_SEC_NOSEC) {
		rc = osd_sec__request_icv(capkey, method, cdb, cdb_len, &l, nonce,
					  token, token_len, icv);
		if (rc < 0)
			return rc;
	}
	/* Only now touch the CDB, so a failure leaves it as it was. */
	osd_sec__store(cdb, &l, icv, nonce);
	OPENSSL_cleanse(icv, sizeof(icv));
	return 0;
}

int osd_sec_verify_cdb(osd_key *capkey, enum osd_sec_method method,
		       const uint8_t *cdb, size_t cdb_len,
		       const uint8_t *token, size_t token_len)
{
	struct osd_sec_layout l;
	uint8_t icv[OSD_HMAC_LEN];
	int rc;

	rc = osd_sec__check_args(capkey, method, cdb, token, token_len);
	if (rc == 0)
		rc = osd_sec__layout(cdb_len, &l);
	if (rc < 0)
		return rc;
	if ((cdb[l.method_off] & 0x0F) != (uint8_t)method)
		return -EACCES;
	if (method == OSD_SEC_NOSEC)
		return 0;
	rc = osd_sec__request_icv(capkey, method, cdb, cdb_len, &l, cdb + l.nonce_off,
				  token, token_len, icv);
	if (rc < 0)
		return rc;
	rc = osd__icv_matches(cdb + l.icv_off, l.icv_len, icv) ? 0 : -EACCES;
	OPENSSL_cleanse(icv, sizeof(icv));
	return rc;
}

int osd_sec_data_icv(osd_key *capkey, const struct iovec *iov, int iovcnt,
		     uint8_t icv[OSD_HMAC_LEN])
{
	return osd_key_hmac(capkey, iov, iovcnt, icv);
}

int osd__sec_bound_icv_with(osd_key *capkey, enum osd_icv_kind kind,
			    const uint8_t req_icv[OSD_HMAC_LEN], const struct iovec *first,
			    const struct iovec *iov, int iovcnt, uint8_t icv[OSD_HMAC_LEN])
{
	uint8_t kind_byte = (uint8_t)kind;
	struct iovec head[3];

	head[0].iov_base = &kind_byte;
	head[0].iov_len = 1;
	head[1].iov_base = (void *)req_icv;
	head[1].iov_len = OSD_HMAC_LEN;
	if (first != NULL)
		head[2] = *first;
	return osd__key_hmac2(capkey, head, first != NULL ? 3 : 2, iov, iovcnt, icv);
}

int osd_sec_bound_icv(osd_key *capkey, enum osd_icv_kind kind,
		      const uint8_t req_icv[OSD_HMAC_LEN],
		      const struct iovec *iov, int iovcnt,
		      uint8_t icv[OSD_HMAC_LEN])
{
	if (capkey == NULL || req_icv == NULL || icv == NULL || iovcnt < 0 ||
	    (iovcnt > 0 && iov == NULL))
		return -EINVAL;
	if (kind < OSD_ICV_DATA_OUT || kind > OSD_ICV_CONTINUATION)
		return -EINVAL;
	return osd__sec_bound_icv_with(capkey, kind, req_icv, NULL, iov, iovcnt, icv);
}
