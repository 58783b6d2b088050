/*
 * The iSCSI PDU codec (libosd/iscsi/pdu.h) against BHS, AHS and text bytes
 * written by hand from the RFC 7143 layouts, and its error cases.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi/pdu.h"

/* ---- BHS ---- */

static const uint8_t scsi_cmd_bytes[48] = {
	0x41, 0xC1, 0x00, 0x00, 0x38, 0x00, 0x00, 0x00, /* I+op 01, F R SIMPLE, 224 AHS */
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* LUN 1 */
	0x00, 0x00, 0x12, 0x34, 0x00, 0x01, 0x00, 0x00, /* ITT, EDTL 65536 */
	0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x09, /* CmdSN 7, ExpStatSN 9 */
	0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE4, /* CDB 0-15 */
	0x88, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

START_TEST(scsi_command_encode_decode)
{
	struct osd__iscsi_bhs h = { 0 }, d;
	uint8_t out[48];
	h.opcode = OSD_ISCSI_OP_SCSI_CMD;
	h.immediate = 1;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_READ | OSD_ISCSI_ATTR_SIMPLE;
	h.ahs_words = 56;
	osd__iscsi_lun_encode(h.lun, 1);
	h.itt = 0x1234;
	h.ttt = 65536;
	h.cmd_sn = 7;
	h.exp_stat_sn = 9;
	memcpy(h.cdb, scsi_cmd_bytes + 32, 16);
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, out), 0);
	ck_assert_mem_eq(out, scsi_cmd_bytes, 48);
	ck_assert_int_eq(osd__iscsi_bhs_decode(&d, scsi_cmd_bytes), 0);
	ck_assert_int_eq(memcmp(&d, &h, sizeof(d)), 0);
	ck_assert_int_eq(osd__iscsi_lun_decode(d.lun), 1);
}
END_TEST

START_TEST(login_response_decode)
{
	static const uint8_t b[48] = {
		0x23, 0x87, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, /* T, CSG 1, NSG 3; 16 data */
		0x80, 0x12, 0x34, 0x56, 0x00, 0x01, 0x00, 0x05, /* ISID, TSIH 5 */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* ITT 1 */
		0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0A, /* StatSN 2, ExpCmdSN 10 */
		0x00, 0x00, 0x00, 0x29, 0x02, 0x01, 0x00, 0x00, /* MaxCmdSN 41, status 0201 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t isid[6] = { 0x80, 0x12, 0x34, 0x56, 0x00, 0x01 };
	struct osd__iscsi_bhs h;
	uint8_t again[48];
	ck_assert_int_eq(osd__iscsi_bhs_decode(&h, b), 0);
	ck_assert_uint_eq(h.opcode, OSD_ISCSI_OP_LOGIN_RSP);
	ck_assert_uint_eq(h.immediate, 0);
	ck_assert(h.flags & OSD_ISCSI_F_TRANSIT);
	ck_assert_int_eq(OSD_ISCSI_LOGIN_CSG(h.flags), 1);
	ck_assert_int_eq(OSD_ISCSI_LOGIN_NSG(h.flags), 3);
	ck_assert_uint_eq(h.data_len, 16);
	ck_assert_mem_eq(h.isid, isid, 6);
	ck_assert_uint_eq(h.tsih, 5);
	ck_assert_uint_eq(h.itt, 1);
	ck_assert_uint_eq(h.stat_sn, 2);
	ck_assert_uint_eq(h.exp_cmd_sn, 10);
	ck_assert_uint_eq(h.max_cmd_sn, 41);
	ck_assert_uint_eq(h.status_class, 2);
	ck_assert_uint_eq(h.status_detail, 1);
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, again), 0);
	ck_assert_mem_eq(again, b, 48);
}
END_TEST

START_TEST(r2t_and_responses)
{
	static const uint8_t r2t[48] = {
		0x31, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x22, /* ITT, TTT */
		0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x06, /* StatSN, ExpCmdSN */
		0x00, 0x00, 0x00, 0x25, 0x00, 0x00, 0x00, 0x01, /* MaxCmdSN, R2TSN */
		0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x40, 0x00, /* offset, desired */
	};
	static const uint8_t rsp[48] = {
		0x21, 0x82, 0x00, 0x02, 0x00, 0x00, 0x00, 0x12, /* F U, CHECK CONDITION, 18 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x26, 0x00, 0x00, 0x00, 0x03, /* MaxCmdSN, ExpDataSN 3 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, /* residual 256 */
	};
	struct osd__iscsi_bhs h = { 0 };
	uint8_t out[48];
	h.opcode = OSD_ISCSI_OP_R2T;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = 0x11;
	h.ttt = 0x22;
	h.stat_sn = 5;
	h.exp_cmd_sn = 6;
	h.max_cmd_sn = 0x25;
	h.data_sn = 1;
	h.offset = 0x2000;
	h.length = 0x4000;
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, out), 0);
	ck_assert_mem_eq(out, r2t, 48);

	ck_assert_int_eq(osd__iscsi_bhs_decode(&h, rsp), 0);
	ck_assert_uint_eq(h.opcode, OSD_ISCSI_OP_SCSI_RSP);
	ck_assert_uint_eq(h.flags, OSD_ISCSI_F_FINAL | OSD_ISCSI_F_UNDER);
	ck_assert_uint_eq(h.status, 2);
	ck_assert_uint_eq(h.data_len, 18);
	ck_assert_uint_eq(h.data_sn, 3);
	ck_assert_uint_eq(h.length, 256);
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, out), 0);
	ck_assert_mem_eq(out, rsp, 48);
}
END_TEST

START_TEST(logout_tmf_async_reject)
{
	struct osd__iscsi_bhs h = { 0 }, d;
	uint8_t out[48];
	h.opcode = OSD_ISCSI_OP_LOGOUT_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = OSD_ISCSI_LOGOUT_RSP_NO_RECOVERY;
	h.itt = 9;
	h.time2wait = 2;
	h.time2retain = 20;
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, out), 0);
	ck_assert_uint_eq(out[0], 0x26);
	ck_assert_uint_eq(out[2], 2);
	ck_assert_uint_eq(out[41], 2);
	ck_assert_uint_eq(out[43], 20);

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_TMF_REQ;
	h.immediate = 1;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_TASK_ABORT;
	h.itt = 0x40;
	h.ttt = 0x33; /* referenced task tag */
	h.cmd_sn = 4;
	h.ref_cmd_sn = 3;
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, out), 0);
	ck_assert_uint_eq(out[0], 0x42);
	ck_assert_uint_eq(out[1], 0x81);
	ck_assert_uint_eq(out[23], 0x33);
	ck_assert_uint_eq(out[35], 3);
	ck_assert_int_eq(osd__iscsi_bhs_decode(&d, out), 0);
	ck_assert_int_eq(memcmp(&d, &h, sizeof(d)), 0);

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_ASYNC_MSG;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = OSD_ISCSI_RSVD_TAG;
	h.async_event = 1;
	h.async_param[2] = 7;
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, out), 0);
	ck_assert_uint_eq(out[36], 1);
	ck_assert_uint_eq(out[43], 7);
	ck_assert_int_eq(osd__iscsi_bhs_decode(&d, out), 0);
	ck_assert_uint_eq(d.async_param[2], 7);

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_REJECT;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = OSD_ISCSI_REJECT_DIGEST;
	h.itt = OSD_ISCSI_RSVD_TAG;
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, out), 0);
	ck_assert_uint_eq(out[0], 0x3F);
	ck_assert_uint_eq(out[2], 0x02);
	ck_assert_uint_eq(out[16], 0xFF);
}
END_TEST

START_TEST(bhs_errors)
{
	uint8_t b[48];
	struct osd__iscsi_bhs h = { 0 };
	memcpy(b, scsi_cmd_bytes, 48);
	b[0] = 0x0F; /* unknown opcode */
	ck_assert_int_eq(osd__iscsi_bhs_decode(&h, b), -EPROTO);
	b[0] = 0x81; /* reserved bit 7 */
	ck_assert_int_eq(osd__iscsi_bhs_decode(&h, b), -EPROTO);
	h.opcode = 0x3E;
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, b), -EINVAL);
	h.opcode = OSD_ISCSI_OP_NOP_OUT;
	h.data_len = 1u << 24;
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, b), -EINVAL);
	/* The I bit does not exist on target PDUs. */
	memset(b, 0, 48);
	b[0] = 0x40 | OSD_ISCSI_OP_NOP_IN;
	ck_assert_int_eq(osd__iscsi_bhs_decode(&h, b), 0);
	ck_assert_uint_eq(h.immediate, 0);
	ck_assert_str_eq(osd__iscsi_opcode_name(OSD_ISCSI_OP_R2T), "Ready To Transfer");
	ck_assert_str_eq(osd__iscsi_opcode_name(0x07), "unknown");
}
END_TEST

START_TEST(lun_addressing)
{
	uint8_t l[8];
	static const uint8_t flat[8] = { 0x41, 0x2C, 0, 0, 0, 0, 0, 0 };
	osd__iscsi_lun_encode(l, 300);
	ck_assert_mem_eq(l, flat, 8);
	ck_assert_int_eq(osd__iscsi_lun_decode(l), 300);
	osd__iscsi_lun_encode(l, 255);
	ck_assert_uint_eq(l[0], 0);
	ck_assert_uint_eq(l[1], 255);
	l[0] = 0x01; /* peripheral with bus 1 */
	ck_assert_int_eq(osd__iscsi_lun_decode(l), -EINVAL);
	l[0] = 0xC0; /* extended addressing */
	ck_assert_int_eq(osd__iscsi_lun_decode(l), -EINVAL);
	l[0] = 0;
	l[5] = 1; /* second level */
	ck_assert_int_eq(osd__iscsi_lun_decode(l), -EINVAL);
}
END_TEST

/* ---- Digests (RFC 7143 Appendix B.4 vectors) ---- */

START_TEST(crc32c_vectors)
{
	uint8_t buf[32], d[4];
	static const uint8_t zeros[4] = { 0xAA, 0x36, 0x91, 0x8A };
	static const uint8_t ones[4] = { 0x43, 0xAB, 0xA8, 0x62 };
	static const uint8_t inc[4] = { 0x4E, 0x79, 0xDD, 0x46 };
	static const uint8_t dec[4] = { 0x5C, 0xDB, 0x3F, 0x11 };
	memset(buf, 0, 32);
	osd__iscsi_digest(d, buf, 32);
	ck_assert_mem_eq(d, zeros, 4);
	memset(buf, 0xFF, 32);
	osd__iscsi_digest(d, buf, 32);
	ck_assert_mem_eq(d, ones, 4);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	osd__iscsi_digest(d, buf, 32);
	ck_assert_mem_eq(d, inc, 4);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	osd__iscsi_digest(d, buf, 32);
	ck_assert_mem_eq(d, dec, 4);
	/* Continuation equals one pass; odd lengths take the byte tail. */
	uint32_t one = osd__crc32c(0, buf, 29);
	ck_assert_uint_eq(osd__crc32c(osd__crc32c(0, buf, 13), buf + 13, 16), one);
}
END_TEST

/* ---- Whole PDUs ---- */

static long build_nop(uint8_t *out, size_t cap, const struct osd__iscsi_digests *dg,
		      const uint8_t *data, size_t len)
{
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_NOP_OUT;
	h.immediate = 1;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = 5;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	return osd__iscsi_pdu_build(out, cap, &h, NULL, 0, data, len, dg);
}

START_TEST(pdu_layout_and_digests)
{
	uint8_t buf[128], d[4];
	const struct osd__iscsi_digests both = { 1, 1 };
	struct osd__iscsi_pdu p;
	long n = build_nop(buf, sizeof(buf), &both, (const uint8_t *)"hello", 5);
	/* BHS, header digest, 5 data + 3 pad, data digest */
	ck_assert_int_eq(n, 48 + 4 + 8 + 4);
	ck_assert_uint_eq(buf[7], 5);
	osd__iscsi_digest(d, buf, 48);
	ck_assert_mem_eq(buf + 48, d, 4);
	ck_assert_mem_eq(buf + 52, "hello\0\0\0", 8);
	osd__iscsi_digest(d, buf + 52, 8);
	ck_assert_mem_eq(buf + 60, d, 4);
	ck_assert_int_eq(osd__iscsi_pdu_parse(&p, buf, (size_t)n, &both, 8192), n);
	ck_assert_uint_eq(p.data_len, 5);
	ck_assert_mem_eq(p.data, "hello", 5);
	ck_assert_ptr_null(p.ahs);

	/* Truncated, oversized, bad digests. */
	ck_assert_int_eq(osd__iscsi_pdu_parse(&p, buf, (size_t)n - 1, &both, 8192), -EBADMSG);
	ck_assert_int_eq(osd__iscsi_pdu_parse(&p, buf, 47, &both, 8192), -EBADMSG);
	ck_assert_int_eq(osd__iscsi_pdu_parse(&p, buf, (size_t)n, &both, 4), -EBADMSG);
	buf[61] ^= 1;
	ck_assert_int_eq(osd__iscsi_pdu_parse(&p, buf, (size_t)n, &both, 8192), -EILSEQ);
	ck_assert_uint_eq(p.bhs.itt, 5);
	buf[61] ^= 1;
	buf[49] ^= 1;
	ck_assert_int_eq(osd__iscsi_pdu_parse(&p, buf, (size_t)n, &both, 8192), -EBADMSG);
	buf[49] ^= 1;
	buf[20] ^= 1; /* header byte covered by the header digest */
	ck_assert_int_eq(osd__iscsi_pdu_parse(&p, buf, (size_t)n, &both, 8192), -EBADMSG);

	/* Without digests and without data: just the BHS. */
	ck_assert_int_eq(build_nop(buf, sizeof(buf), NULL, NULL, 0), 48);
	ck_assert_int_eq(build_nop(buf, 47, NULL, NULL, 0), -ENOSPC);
	struct osd__iscsi_bhs h = { .opcode = OSD_ISCSI_OP_NOP_OUT };
	ck_assert_int_eq(osd__iscsi_pdu_build(buf, sizeof(buf), &h, buf, 3, NULL, 0, NULL), -EINVAL);
}
END_TEST

/* Head + caller's data + tail (the scatter-gather senders) give exactly the
 * bytes of osd__iscsi_pdu_build(), with and without digests and padding. */
START_TEST(pdu_head_tail_scatter)
{
	static const uint8_t data[9] = "abcdefghi";
	const struct osd__iscsi_digests modes[4] = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 } };
	uint8_t whole[128], split[128], tail[OSD_ISCSI_PDU_TAIL_MAX];

	for (int m = 0; m < 4; m++) {
		for (size_t len = 0; len <= sizeof(data); len++) {
			long n = build_nop(whole, sizeof(whole), &modes[m], len ? data : NULL, len);
			struct osd__iscsi_bhs h = { 0 };
			h.opcode = OSD_ISCSI_OP_NOP_OUT;
			h.immediate = 1;
			h.flags = OSD_ISCSI_F_FINAL;
			h.itt = 5;
			h.ttt = OSD_ISCSI_RSVD_TAG;
			long head = osd__iscsi_pdu_build_head(split, sizeof(split), &h, NULL, 0, len,
							      &modes[m]);
			ck_assert_int_eq(head, 48 + (modes[m].header ? 4 : 0));
			memcpy(split + head, data, len);
			size_t tl = osd__iscsi_pdu_build_tail(tail, data, len, &modes[m]);
			ck_assert_uint_eq(tl, len ? osd__iscsi_pad(len) + (modes[m].data ? 4u : 0u) : 0u);
			memcpy(split + head + len, tail, tl);
			ck_assert_int_eq(n, head + (long)(len + tl));
			ck_assert_mem_eq(split, whole, (size_t)n);
		}
	}
	struct osd__iscsi_bhs h = { .opcode = OSD_ISCSI_OP_NOP_OUT };
	ck_assert_int_eq(osd__iscsi_pdu_build_head(split, 51, &h, NULL, 0, 4, &modes[1]), -ENOSPC);
	ck_assert_int_eq(osd__iscsi_pdu_build_head(split, 128, &h, split, 2, 4, NULL), -EINVAL);
}
END_TEST

/* ---- AHS ---- */

START_TEST(ahs_extended_cdb_and_bidi)
{
	uint8_t cdb[236], ahs[300], joined[OSD_ISCSI_MAX_CDB];
	struct osd__iscsi_ahs_info info;
	struct osd__iscsi_bhs h = { 0 };
	static const uint8_t head[4] = { 0x00, 0xDD, 0x01, 0x00 }; /* AHSLength 221 */
	static const uint8_t bidi[8] = { 0x00, 0x05, 0x02, 0x00, 0x00, 0x01, 0x00, 0x00 };
	for (int i = 0; i < 236; i++)
		cdb[i] = (uint8_t)i;
	long n = osd__iscsi_ahs_build(ahs, sizeof(ahs), cdb, 236, 1, 65536);
	ck_assert_int_eq(n, 224 + 8);
	ck_assert_mem_eq(ahs, head, 4);
	ck_assert_mem_eq(ahs + 4, cdb + 16, 220);
	ck_assert_mem_eq(ahs + 224, bidi, 8);
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, ahs, (size_t)n), 0);
	ck_assert_uint_eq(info.ext_cdb_len, 220);
	ck_assert(info.has_bidi_read);
	ck_assert_uint_eq(info.bidi_read_len, 65536);
	memcpy(h.cdb, cdb, 16);
	ck_assert_int_eq(osd__iscsi_cdb_join(joined, sizeof(joined), &h, &info), 236);
	ck_assert_mem_eq(joined, cdb, 236);
	ck_assert_int_eq(osd__iscsi_cdb_join(joined, 100, &h, &info), -EBADMSG);

	/* OSD-1's 200-byte CDB: 184 bytes + reserved = 185, padded to 188. */
	n = osd__iscsi_ahs_build(ahs, sizeof(ahs), cdb, 200, 0, 0);
	ck_assert_int_eq(n, 188);
	ck_assert_uint_eq(ahs[1], 185);
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, ahs, (size_t)n), 0);
	ck_assert_uint_eq(info.ext_cdb_len, 184);
	ck_assert(!info.has_bidi_read);
	/* A 16-byte CDB needs no AHS. */
	ck_assert_int_eq(osd__iscsi_ahs_build(ahs, sizeof(ahs), cdb, 16, 0, 0), 0);
	ck_assert_int_eq(osd__iscsi_ahs_build(ahs, 100, cdb, 236, 0, 0), -ENOSPC);
}
END_TEST

START_TEST(ahs_errors)
{
	struct osd__iscsi_ahs_info info;
	uint8_t a[16] = { 0x00, 0x05, 0x02, 0x00, 0, 0, 1, 0 };
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, a, 6), -EBADMSG);      /* not words */
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, a, 4), -EBADMSG);      /* overruns */
	memcpy(a + 8, a, 8);
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, a, 16), -EPROTO);      /* twice */
	a[2] = 0x09;
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, a, 8), -EPROTO);       /* unknown type */
	a[2] = 0x02;
	a[1] = 0x04;
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, a, 8), -EPROTO);       /* bidi length */
	a[1] = 0x00;
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, a, 8), -EBADMSG);      /* zero length */
	a[0] = 0xFF;
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, a, 8), -EBADMSG);
	ck_assert_int_eq(osd__iscsi_ahs_parse(&info, NULL, 0), 0);
}
END_TEST

/* ---- Text ---- */

START_TEST(text_parse)
{
	static const uint8_t t[] = "InitiatorName=iqn.x\0SessionType=Normal\0Empty=\0\0\0";
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	ck_assert_int_eq(osd__iscsi_text_next(&kv, t, sizeof(t) - 1, &pos), 1);
	ck_assert(osd__iscsi_kv_is(&kv, "InitiatorName"));
	ck_assert_uint_eq(kv.value_len, 5);
	ck_assert_mem_eq(kv.value, "iqn.x", 5);
	ck_assert_int_eq(osd__iscsi_text_next(&kv, t, sizeof(t) - 1, &pos), 1);
	ck_assert(osd__iscsi_kv_is(&kv, "SessionType"));
	ck_assert_int_eq(osd__iscsi_text_next(&kv, t, sizeof(t) - 1, &pos), 1);
	ck_assert(osd__iscsi_kv_is(&kv, "Empty"));
	ck_assert_uint_eq(kv.value_len, 0);
	ck_assert_int_eq(osd__iscsi_text_next(&kv, t, sizeof(t) - 1, &pos), 0);
}
END_TEST

static int text_error(const char *s, size_t len)
{
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	int rc;
	while ((rc = osd__iscsi_text_next(&kv, (const uint8_t *)s, len, &pos)) == 1)
		;
	return rc;
}

START_TEST(text_errors)
{
	char big[200];
	ck_assert_int_eq(text_error("Key=value", 9), -EBADMSG);         /* no NUL */
	ck_assert_int_eq(text_error("Keyvalue\0", 9), -EBADMSG);        /* no '=' */
	ck_assert_int_eq(text_error("=value\0", 7), -EBADMSG);          /* empty key */
	ck_assert_int_eq(text_error("Ke y=v\0", 7), -EBADMSG);          /* bad char */
	memset(big, 'K', sizeof(big));
	memcpy(big + 64, "=v", 3);                                      /* 64-byte key */
	ck_assert_int_eq(text_error(big, 67), -EBADMSG);
	memcpy(big + 63, "=v", 3);
	ck_assert_int_eq(text_error(big, 66), 0);
}
END_TEST

START_TEST(text_build)
{
	struct osd__iscsi_text t = { 0 };
	ck_assert_int_eq(osd__iscsi_text_add(&t, "A", "b"), 0);
	ck_assert_int_eq(osd__iscsi_text_add_num(&t, "N", 8192), 0);
	ck_assert_uint_eq(t.len, 11);
	ck_assert_mem_eq(t.data, "A=b\0N=8192\0", 11);
	char *v = malloc(OSD_ISCSI_MAX_TEXT);
	memset(v, 'x', OSD_ISCSI_MAX_TEXT - 1);
	v[OSD_ISCSI_MAX_TEXT - 1] = 0;
	ck_assert_int_eq(osd__iscsi_text_add(&t, "Big", v), -EMSGSIZE);
	ck_assert_uint_eq(t.len, 11);
	free(v);
	osd__iscsi_text_free(&t);
	ck_assert_ptr_null(t.data);
}
END_TEST

/* ---- Negotiation ---- */

static void offer_all(struct osd__iscsi_params *p, const struct osd__iscsi_params *ours,
		      const char *text, size_t len, struct osd__iscsi_text *ans, int *session_keys)
{
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	*session_keys = 0;
	while (osd__iscsi_text_next(&kv, (const uint8_t *)text, len, &pos) == 1) {
		int rc = osd__iscsi_negotiate_offer(p, ours, &kv, ans);
		if (rc == -ENOENT)
			(*session_keys)++;
		else
			ck_assert_int_eq(rc, 0);
	}
}

START_TEST(negotiate_target_side)
{
	static const char offer[] =
		"HeaderDigest=CRC32C,None\0DataDigest=None,CRC32C\0MaxBurstLength=1048576\0"
		"FirstBurstLength=4096\0InitialR2T=No\0ImmediateData=No\0X-com.example.Foo=bar\0"
		"MaxRecvDataSegmentLength=4096\0DefaultTime2Wait=5\0TargetName=iqn.t\0"
		"ErrorRecoveryLevel=2\0MaxConnections=abc\0SessionType=Discovery\0OFMarker=Yes\0";
	static const char want[] =
		"HeaderDigest=CRC32C\0DataDigest=None\0MaxBurstLength=262144\0"
		"FirstBurstLength=4096\0InitialR2T=No\0ImmediateData=No\0"
		"X-com.example.Foo=NotUnderstood\0DefaultTime2Wait=5\0ErrorRecoveryLevel=0\0"
		"MaxConnections=Reject\0OFMarker=No\0";
	struct osd__iscsi_params ours, p;
	struct osd__iscsi_text ans = { 0 };
	int session_keys;
	osd__iscsi_params_default(&ours);
	ours.header_digest = ours.data_digest = 1;
	ours.initial_r2t = 0;
	ours.time2wait = 0;
	osd__iscsi_params_default(&p);
	offer_all(&p, &ours, offer, sizeof(offer) - 1, &ans, &session_keys);
	ck_assert_int_eq(session_keys, 1);
	ck_assert_uint_eq(ans.len, sizeof(want) - 1);
	ck_assert_mem_eq(ans.data, want, sizeof(want) - 1);
	ck_assert_int_eq(p.header_digest, 1);
	ck_assert_int_eq(p.data_digest, 0);
	ck_assert_uint_eq(p.max_burst, 262144);
	ck_assert_uint_eq(p.first_burst, 4096);
	ck_assert_int_eq(p.initial_r2t, 0);
	ck_assert_int_eq(p.immediate_data, 0);
	ck_assert_uint_eq(p.max_recv_dsl_initiator, 4096);
	ck_assert_uint_eq(p.time2wait, 5);
	ck_assert_int_eq(p.discovery, 1);
	osd__iscsi_text_free(&ans);

	/* A target that does not do digests answers None; none acceptable -> Reject. */
	ours.header_digest = 0;
	static const char only_crc[] = "HeaderDigest=CRC32C\0MaxBurstLength=100\0";
	offer_all(&p, &ours, only_crc, sizeof(only_crc) - 1, &ans, &session_keys);
	ck_assert_mem_eq(ans.data, "HeaderDigest=Reject\0MaxBurstLength=Reject\0", ans.len);
	osd__iscsi_text_free(&ans);
}
END_TEST

static int answer(struct osd__iscsi_params *p, const char *kvtext)
{
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	ck_assert_int_eq(osd__iscsi_text_next(&kv, (const uint8_t *)kvtext, strlen(kvtext) + 1,
					      &pos), 1);
	return osd__iscsi_negotiate_answer(p, &kv);
}

START_TEST(negotiate_initiator_side)
{
	struct osd__iscsi_params p;
	osd__iscsi_params_default(&p);
	p.max_burst = 65536;
	ck_assert_int_eq(answer(&p, "MaxBurstLength=8192"), 0);
	ck_assert_uint_eq(p.max_burst, 8192);
	ck_assert_int_eq(answer(&p, "MaxBurstLength=1048576"), -EPROTO); /* above offer */
	ck_assert_int_eq(answer(&p, "InitialR2T=No"), -EPROTO);          /* OR of Yes */
	p.immediate_data = 0;
	ck_assert_int_eq(answer(&p, "ImmediateData=Yes"), -EPROTO);      /* AND of No */
	ck_assert_int_eq(answer(&p, "DefaultTime2Wait=7"), 0);           /* MAX */
	ck_assert_uint_eq(p.time2wait, 7);
	ck_assert_int_eq(answer(&p, "DefaultTime2Wait=1"), -EPROTO);
	ck_assert_int_eq(answer(&p, "MaxRecvDataSegmentLength=262144"), 0);
	ck_assert_uint_eq(p.max_recv_dsl_target, 262144);
	ck_assert_int_eq(answer(&p, "MaxRecvDataSegmentLength=100"), -EPROTO);
	ck_assert_int_eq(answer(&p, "HeaderDigest=CRC32C"), 0);
	ck_assert_int_eq(p.header_digest, 1);
	ck_assert_int_eq(answer(&p, "DataDigest=MD5"), -EPROTO);
	ck_assert_int_eq(answer(&p, "ErrorRecoveryLevel=Reject"), -EPROTO);
	ck_assert_int_eq(answer(&p, "MaxConnections=Irrelevant"), 0);
	ck_assert_int_eq(answer(&p, "TargetAlias=disk"), -ENOENT);
}
END_TEST

START_TEST(numbers)
{
	struct osd__iscsi_kv kv = { "K", 1, NULL, 0 };
	uint64_t v;
	const char *ok[] = { "0", "8192", "0x2000", "0XfF" };
	const uint64_t want[] = { 0, 8192, 8192, 255 };
	for (int i = 0; i < 4; i++) {
		kv.value = ok[i];
		kv.value_len = strlen(ok[i]);
		ck_assert_int_eq(osd__iscsi_parse_number(&kv, UINT64_MAX, &v), 0);
		ck_assert_uint_eq(v, want[i]);
	}
	const char *bad[] = { "", "0x", "-1", "+5", "12a", "99999999999999999999", "1 " };
	for (int i = 0; i < 7; i++) {
		kv.value = bad[i];
		kv.value_len = strlen(bad[i]);
		ck_assert_int_eq(osd__iscsi_parse_number(&kv, UINT64_MAX, &v), -EINVAL);
	}
	kv.value = "4097";
	kv.value_len = 4;
	ck_assert_int_eq(osd__iscsi_parse_number(&kv, 4096, &v), -EINVAL);
}
END_TEST

/* ---- Serial numbers ---- */

START_TEST(serial_numbers)
{
	ck_assert(osd__iscsi_sn_lt(1, 2));
	ck_assert(osd__iscsi_sn_lt(0xFFFFFFFFu, 0));    /* wraps */
	ck_assert(!osd__iscsi_sn_lt(0, 0xFFFFFFFFu));
	ck_assert(osd__iscsi_sn_gt(5, 0xFFFFFFF0u));
	ck_assert(osd__iscsi_sn_le(3, 3));
	ck_assert(!osd__iscsi_sn_lt(3, 3));
	ck_assert(osd__iscsi_sn_in_window(0xFFFFFFFFu, 0xFFFFFFF0u, 0x10));
	ck_assert(osd__iscsi_sn_in_window(0x10, 0xFFFFFFF0u, 0x10));
	ck_assert(!osd__iscsi_sn_in_window(0x11, 0xFFFFFFF0u, 0x10));
	ck_assert(!osd__iscsi_sn_in_window(0xFFFFFFEFu, 0xFFFFFFF0u, 0x10));
}
END_TEST

/* ---- CHAP ---- */

START_TEST(chap_md5_and_encodings)
{
	uint8_t chal[16], r[16], dec[64];
	char hex[40];
	/* MD5(0x2a || "verysecretpassword" || 00 01 .. 0f), computed independently. */
	static const uint8_t want[16] = { 0x72, 0xd8, 0xe9, 0xd7, 0x8f, 0x56, 0x05, 0x16,
					  0x51, 0xbe, 0x89, 0x3d, 0xeb, 0xba, 0xf2, 0x85 };
	for (int i = 0; i < 16; i++)
		chal[i] = (uint8_t)i;
	ck_assert_int_eq(osd__iscsi_chap_response(r, 0x2a, (const uint8_t *)"verysecretpassword",
						  18, chal, 16), 0);
	ck_assert_mem_eq(r, want, 16);
	osd__iscsi_binary_encode(hex, want, 16);
	ck_assert_str_eq(hex, "0x72d8e9d78f56051651be893debbaf285");
	ck_assert_int_eq(osd__iscsi_binary_decode(dec, sizeof(dec), hex, strlen(hex)), 16);
	ck_assert_mem_eq(dec, want, 16);
	ck_assert_int_eq(osd__iscsi_binary_decode(dec, sizeof(dec), "0xabc", 5), 2);
	ck_assert_uint_eq(dec[0], 0x0a);
	ck_assert_uint_eq(dec[1], 0xbc);
	ck_assert_int_eq(osd__iscsi_binary_decode(dec, sizeof(dec), "0bAAEC/w==", 10), 4);
	ck_assert_uint_eq(dec[0], 0x00);
	ck_assert_uint_eq(dec[1], 0x01);
	ck_assert_uint_eq(dec[2], 0x02);
	ck_assert_uint_eq(dec[3], 0xFF);
	ck_assert_int_eq(osd__iscsi_binary_decode(dec, sizeof(dec), "0xzz", 4), -EINVAL);
	ck_assert_int_eq(osd__iscsi_binary_decode(dec, sizeof(dec), "1234", 4), -EINVAL);
	ck_assert_int_eq(osd__iscsi_binary_decode(dec, sizeof(dec), "0x", 2), -EINVAL);
	ck_assert_int_eq(osd__iscsi_binary_decode(dec, 1, "0xabcd", 6), -EINVAL);
	ck_assert_int_eq(osd__iscsi_binary_decode(dec, sizeof(dec), "0bA", 3), -EINVAL);
	ck_assert_int_eq(osd__iscsi_binary_decode(dec, sizeof(dec), "0bA*==", 6), -EINVAL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iscsi_pdu");
	TCase *t = tcase_create("codec");
	tcase_add_test(t, scsi_command_encode_decode);
	tcase_add_test(t, login_response_decode);
	tcase_add_test(t, r2t_and_responses);
	tcase_add_test(t, logout_tmf_async_reject);
	tcase_add_test(t, bhs_errors);
	tcase_add_test(t, lun_addressing);
	tcase_add_test(t, crc32c_vectors);
	tcase_add_test(t, pdu_layout_and_digests);
	tcase_add_test(t, pdu_head_tail_scatter);
	tcase_add_test(t, ahs_extended_cdb_and_bidi);
	tcase_add_test(t, ahs_errors);
	tcase_add_test(t, text_parse);
	tcase_add_test(t, text_errors);
	tcase_add_test(t, text_build);
	tcase_add_test(t, negotiate_target_side);
	tcase_add_test(t, negotiate_initiator_side);
	tcase_add_test(t, numbers);
	tcase_add_test(t, serial_numbers);
	tcase_add_test(t, chap_md5_and_encodings);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
