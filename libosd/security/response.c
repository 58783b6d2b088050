/*
 * The response ICV (CMDRSP, ALLDATA; docs/security.md 3.3): bound to the
 * request, over the status byte and the sense data with the ICV bytes of
 * sense descriptor 07h zeroed (the ICV cannot cover itself).
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include <openssl/crypto.h>

#include <osd/security.h>

#include "security/icv_field.h"

#define OSD_SENSE_DESC_RICV 0x07
#define OSD_SENSE_HDR_LEN 8

/* Zero the ICV bytes of every descriptor 07h in descriptor-format sense. */
static void osd_response__blank_ricv(uint8_t *sense, size_t len)
{
	size_t end, off;

	if (len < OSD_SENSE_HDR_LEN || ((sense[0] & 0x7F) != 0x72 && (sense[0] & 0x7F) != 0x73))
		return;
	end = OSD_SENSE_HDR_LEN + (size_t)sense[7];
	if (end > len)
		end = len;
	for (off = OSD_SENSE_HDR_LEN; off + 2 <= end; off += 2 + (size_t)sense[off + 1]) {
		size_t alen = sense[off + 1];

		if (off + 2 + alen > end)
			break; /* truncated descriptor: hashed as received */
		if (sense[off] == OSD_SENSE_DESC_RICV)
			memset(sense + off + 2, 0, alen);
	}
}

int osd_sec_response_icv(osd_key *capkey, const uint8_t req_icv[OSD_HMAC_LEN],
			 uint8_t status, const uint8_t *sense, size_t sense_len,
			 uint8_t icv[OSD_HMAC_LEN])
{
	uint8_t blank[OSD_SENSE_MAX_LEN];
	struct iovec iov[2];

	if (capkey == NULL || req_icv == NULL || icv == NULL ||
	    (sense == NULL && sense_len != 0) || sense_len > OSD_SENSE_MAX_LEN)
		return -EINVAL;
	if (sense_len != 0)
		memcpy(blank, sense, sense_len);
	osd_response__blank_ricv(blank, sense_len);
	iov[0].iov_base = &status;
	iov[0].iov_len = 1;
	iov[1].iov_base = blank;
	iov[1].iov_len = sense_len;
	return osd_sec_bound_icv(capkey, OSD_ICV_RESPONSE, req_icv, iov, 2, icv);
}

int osd_sec_response_verify(osd_key *capkey, const uint8_t req_icv[OSD_HMAC_LEN],
			    uint8_t status, const uint8_t *sense, size_t sense_len,
			    const uint8_t *ricv, size_t ricv_len)
{
	uint8_t icv[OSD_HMAC_LEN];
	int rc;

	if (ricv == NULL || (ricv_len != OSD_ICV_V1_LEN && ricv_len != OSD_ICV_V2_LEN))
		return -EINVAL;
	rc = osd_sec_response_icv(capkey, req_icv, status, sense, sense_len, icv);
	if (rc < 0)
		return rc;
	rc = osd__icv_matches(ricv, ricv_len, icv) ? 0 : -EACCES;
	OPENSSL_cleanse(icv, sizeof(icv));
	return rc;
}
