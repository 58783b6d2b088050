/*
 * The iSCSI decoders on arbitrary bytes: a whole PDU (with or without
 * digests, chosen by the first byte), its AHS, and its data segment as
 * login text negotiated the way the target does. A BHS that decodes must
 * re-encode to bytes that decode to the same fields.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi/pdu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void text(const uint8_t *seg, size_t len)
{
	struct osd__iscsi_params ours, p;
	struct osd__iscsi_text ans = { 0 };
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	int rc;
	osd__iscsi_params_default(&ours);
	osd__iscsi_params_default(&p);
	ours.header_digest = ours.data_digest = 1;
	while ((rc = osd__iscsi_text_next(&kv, seg, len, &pos)) == 1) {
		uint8_t bin[64];
		uint64_t v;
		if (pos > len || kv.key_len == 0 || kv.key_len > OSD_ISCSI_MAX_KEY)
			abort();
		rc = osd__iscsi_negotiate_offer(&p, &ours, &kv, &ans);
		if (rc && rc != -ENOENT && rc != -EMSGSIZE)
			abort();
		struct osd__iscsi_params q = p;
		(void)osd__iscsi_negotiate_answer(&q, &kv);
		(void)osd__iscsi_parse_number(&kv, UINT64_MAX, &v);
		long n = osd__iscsi_binary_decode(bin, sizeof(bin), kv.value, kv.value_len);
		if (n > (long)sizeof(bin))
			abort();
	}
	if (rc != 0 && rc != -EBADMSG)
		abort();
	/* Negotiated values stay within what the target offered. */
	if (p.max_burst > ours.max_burst || p.first_burst > ours.first_burst ||
	    p.error_recovery_level > ours.error_recovery_level)
		abort();
	osd__iscsi_text_free(&ans);
}

static void ahs(const struct osd__iscsi_pdu *p)
{
	struct osd__iscsi_ahs_info info;
	uint8_t cdb[OSD_ISCSI_MAX_CDB];
	if (osd__iscsi_ahs_parse(&info, p->ahs, p->ahs_len))
		return;
	long n = osd__iscsi_cdb_join(cdb, sizeof(cdb), &p->bhs, &info);
	if (n < 16 || n > OSD_ISCSI_MAX_CDB)
		abort();
	/* What parsed rebuilds to an AHS that parses the same. */
	uint8_t again[OSD_ISCSI_MAX_AHS_LEN];
	long len = osd__iscsi_ahs_build(again, sizeof(again), cdb, (size_t)n, info.has_bidi_read,
					info.bidi_read_len);
	struct osd__iscsi_ahs_info back;
	if (len < 0 || osd__iscsi_ahs_parse(&back, again, (size_t)len) ||
	    back.ext_cdb_len != info.ext_cdb_len || back.has_bidi_read != info.has_bidi_read ||
	    back.bidi_read_len != info.bidi_read_len ||
	    (info.ext_cdb_len && memcmp(back.ext_cdb, info.ext_cdb, info.ext_cdb_len)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct osd__iscsi_digests dg = { data[0] & 1, (data[0] >> 1) & 1 };
	size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1); /* exact size: overreads are caught */
	if (!buf)
		return 0;
	memcpy(buf, data + 1, len);
	struct osd__iscsi_pdu p;
	long n = osd__iscsi_pdu_parse(&p, buf, len, &dg, 65536);
	if (n > (long)len)
		abort();
	if (n > 0 || n == -EILSEQ) {
		uint8_t out[OSD_ISCSI_BHS_LEN];
		struct osd__iscsi_bhs again;
		if (osd__iscsi_bhs_encode(&p.bhs, out) || osd__iscsi_bhs_decode(&again, out) ||
		    memcmp(&again, &p.bhs, sizeof(again)))
			abort();
		(void)osd__iscsi_lun_decode(p.bhs.lun);
	}
	if (n > 0) {
		ahs(&p);
		text(p.data, p.data_len);
	}
	/* The raw bytes as a text segment and as an AHS, whatever they hold. */
	text(buf, len);
	struct osd__iscsi_ahs_info info;
	(void)osd__iscsi_ahs_parse(&info, buf, len);
	free(buf);
	return 0;
}
