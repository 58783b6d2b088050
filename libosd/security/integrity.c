/*
 * ALLDATA integrity information blocks (osd2r03 §4.12.4.5, docs/protocol.md
 * §5.3; coverage fixed in docs/security.md 3.4):
 *   data-out: DATA BYTES[8] SET ATTRIBUTES BYTES[8] GET ATTRIBUTES BYTES[8] ICV
 *   data-in:  DATA BYTES[8] RETRIEVED ATTRIBUTES BYTES[8] ICV
 * ICV = osd_sec_bound_icv(kind, request ICV, the counts || covered bytes).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/uio.h>

#include <openssl/crypto.h>

#include <osd/security.h>

#include "proto/byteorder.h"
#include "security/icv_field.h"

#define OSD_COUNT_LEN 8

/* Bytes of counts before the ICV field, or 0 for a kind without a block. */
static size_t osd_integrity__counts_len(enum osd_icv_kind kind)
{
	if (kind == OSD_ICV_DATA_OUT)
		return 3 * OSD_COUNT_LEN;
	if (kind == OSD_ICV_DATA_IN)
		return 2 * OSD_COUNT_LEN;
	return 0;
}

static size_t osd_integrity__icv_len(enum osd_version version)
{
	if (version == OSD_V1)
		return OSD_ICV_V1_LEN;
	if (version == OSD_V2)
		return OSD_ICV_V2_LEN;
	return 0;
}

size_t osd_sec_integrity_len(enum osd_version version, enum osd_icv_kind kind)
{
	size_t counts = osd_integrity__counts_len(kind), icv = osd_integrity__icv_len(version);

	return counts && icv ? counts + icv : 0;
}

/* Total bytes of @iov; -1 if it overflows (never a valid match). */
static int osd_integrity__iov_total(const struct iovec *iov, int iovcnt, uint64_t *total)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > UINT64_MAX - sum)
			return -1;
		sum += iov[i].iov_len;
	}
	*total = sum;
	return 0;
}

/* Sum of the counts the block records; -1 on overflow. */
static int osd_integrity__counts_total(const struct osd_sec_integrity *c, uint64_t *total)
{
	if (c->attr_bytes > UINT64_MAX - c->data_bytes ||
	    c->get_list_bytes > UINT64_MAX - c->data_bytes - c->attr_bytes)
		return -1;
	*total = c->data_bytes + c->attr_bytes + c->get_list_bytes;
	return 0;
}

static int osd_integrity__segments_match(const struct osd_sec_integrity *c,
					 const struct iovec *iov, int iovcnt)
{
	uint64_t want = 0, have = 0; /* set by both calls when they return 0 */

	return osd_integrity__counts_total(c, &want) == 0 &&
	       osd_integrity__iov_total(iov, iovcnt, &have) == 0 && want == have;
}

static void osd_integrity__put_counts(uint8_t *block, enum osd_icv_kind kind,
				      const struct osd_sec_integrity *c)
{
	osd__put_be64(block, c->data_bytes);
	osd__put_be64(block + OSD_COUNT_LEN, c->attr_bytes);
	if (kind == OSD_ICV_DATA_OUT)
		osd__put_be64(block + 2 * OSD_COUNT_LEN, c->get_list_bytes);
}

/* The ICV over the block's counts (already in @block) and the covered bytes. */
static int osd_integrity__icv(osd_key *capkey, enum osd_icv_kind kind,
			      const uint8_t req_icv[OSD_HMAC_LEN], const uint8_t *block,
			      const struct iovec *iov, int iovcnt, uint8_t icv[OSD_HMAC_LEN])
{
	struct iovec counts;

	counts.iov_base = (void *)block;
	counts.iov_len = osd_integrity__counts_len(kind);
	return osd__sec_bound_icv_with(capkey, kind, req_icv, &counts, iov, iovcnt, icv);
}

static int osd_integrity__check_args(osd_key *capkey, enum osd_version version,
				     enum osd_icv_kind kind, const uint8_t *req_icv,
				     const uint8_t *block, const struct iovec *iov, int iovcnt)
{
	if (capkey == NULL || req_icv == NULL || block == NULL || iovcnt < 0 ||
	    (iovcnt > 0 && iov == NULL))
		return -EINVAL;
	if (osd_sec_integrity_len(version, kind) == 0)
		return -EINVAL;
	return 0;
}

int osd_sec_integrity_encode(osd_key *capkey, enum osd_version version,
			     enum osd_icv_kind kind, const uint8_t req_icv[OSD_HMAC_LEN],
			     const struct osd_sec_integrity *counts,
			     const struct iovec *iov, int iovcnt,
			     uint8_t *block, size_t block_len)
{
	size_t len, off = osd_integrity__counts_len(kind);
	uint8_t icv[OSD_HMAC_LEN];
	int rc;

	rc = osd_integrity__check_args(capkey, version, kind, req_icv, block, iov, iovcnt);
	if (rc < 0)
		return rc;
	if (counts == NULL || (kind == OSD_ICV_DATA_IN && counts->get_list_bytes != 0))
		return -EINVAL;
	if (!osd_integrity__segments_match(counts, iov, iovcnt))
		return -EINVAL;
	len = osd_sec_integrity_len(version, kind);
	if (block_len < len)
		return -ENOBUFS;
	osd_integrity__put_counts(block, kind, counts);
	rc = osd_integrity__icv(capkey, kind, req_icv, block, iov, iovcnt, icv);
	if (rc < 0)
		return rc;
	osd__icv_store(block + off, len - off, icv);
	OPENSSL_cleanse(icv, sizeof(icv));
	return (int)len;
}

int osd_sec_integrity_decode(enum osd_version version, enum osd_icv_kind kind,
			     const uint8_t *block, size_t len,
			     struct osd_sec_integrity *counts)
{
	size_t need = osd_sec_integrity_len(version, kind);

	if (need == 0 || block == NULL || counts == NULL)
		return -EINVAL;
	if (len < need)
		return -EBADMSG;
	counts->data_bytes = osd__get_be64(block);
	counts->attr_bytes = osd__get_be64(block + OSD_COUNT_LEN);
	counts->get_list_bytes =
		kind == OSD_ICV_DATA_OUT ? osd__get_be64(block + 2 * OSD_COUNT_LEN) : 0;
	return 0;
}

int osd_sec_integrity_verify(osd_key *capkey, enum osd_version version,
			     enum osd_icv_kind kind, const uint8_t req_icv[OSD_HMAC_LEN],
			     const uint8_t *block, size_t len,
			     const struct iovec *iov, int iovcnt)
{
	struct osd_sec_integrity counts;
	size_t off = osd_integrity__counts_len(kind);
	uint8_t icv[OSD_HMAC_LEN];
	int rc;

	rc = osd_integrity__check_args(capkey, version, kind, req_icv, block, iov, iovcnt);
	if (rc == 0)
		rc = osd_sec_integrity_decode(version, kind, block, len, &counts);
	if (rc < 0)
		return rc;
	if (!osd_integrity__segments_match(&counts, iov, iovcnt))
		return -EBADMSG;
	rc = osd_integrity__icv(capkey, kind, req_icv, block, iov, iovcnt, icv);
	if (rc < 0)
		return rc;
	len = osd_sec_integrity_len(version, kind);
	rc = osd__icv_matches(block + off, len - off, icv) ? 0 : -EACCES;
	OPENSSL_cleanse(icv, sizeof(icv));
	return rc;
}
