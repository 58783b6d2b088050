/*
 * Plain SCSI commands of the target, checked byte for byte: TEST UNIT READY,
 * INQUIRY (standard data, VPD 00h/80h/83h/B0h/B1h), REPORT LUNS, REQUEST
 * SENSE, unknown opcodes and malformed CDBs; plus the loopback transport.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <osd/sys/transport.h>

#include "harness.h"

static struct h_target ht;
static uint8_t in[1024];
static struct osd_xfer x;
static struct osd_sense sense;
static const uint8_t token[] = "tok";

static void setup(void)
{
	h_target_open(&ht);
}

static void teardown(void)
{
	h_target_close(&ht);
}

static int scsi(const uint8_t *cdb, size_t cdb_len, size_t alloc)
{
	static struct iovec iov;

	memset(&x, 0, sizeof(x));
	memset(in, 0xEE, sizeof(in));
	iov.iov_base = in;
	iov.iov_len = alloc;
	x.cdb = cdb;
	x.cdb_len = cdb_len;
	x.in_iov = alloc ? &iov : NULL;
	x.in_iovcnt = alloc ? 1 : 0;
	x.in_len = alloc;
	ck_assert_int_eq(osd_target_execute(ht.tgt, &x, token, 3), 0);
	memset(&sense, 0, sizeof(sense));
	if (x.status == OSD_STATUS_CHECK_CONDITION)
		ck_assert_int_eq(osd_sense_decode(x.sense, x.sense_len, &sense), 0);
	return x.status;
}

START_TEST(test_unit_ready)
{
	const uint8_t cdb[6] = { 0x00 };

	ck_assert_int_eq(scsi(cdb, 6, 0), OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.sense_len, 0);
	ck_assert_uint_eq(x.in_xferred, 0);
}
END_TEST

START_TEST(inquiry_standard)
{
	const uint8_t cdb[6] = { 0x12, 0, 0, 0, 96, 0 };
	const uint8_t head[8] = { 0x11, 0x00, 0x05, 0x02, 91, 0, 0, 0 };
	const uint8_t vd[8] = { 0x03, 0x55, 0x03, 0x56, 0x04, 0x40, 0x04, 0x48 };

	ck_assert_int_eq(scsi(cdb, 6, 96), OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 96);
	ck_assert_mem_eq(in, head, 8);
	ck_assert_mem_eq(in + 8, "OSDSUITE", 8);
	ck_assert_mem_eq(in + 16, "SOFTWARE OSD    ", 16);
	ck_assert_mem_eq(in + 32, "0001", 4);
	ck_assert_mem_eq(in + 58, vd, 8);
	for (size_t i = 66; i < 96; i++)
		ck_assert_uint_eq(in[i], 0);
	/* The allocation length bounds the transfer. */
	const uint8_t cdb2[6] = { 0x12, 0, 0, 0, 36, 0 };

	ck_assert_int_eq(scsi(cdb2, 6, 256), OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 36);
	ck_assert_uint_eq(in[36], 0xEE);
}
END_TEST

START_TEST(inquiry_vpd)
{
	uint8_t cdb[6] = { 0x12, 1, 0x00, 0, 255, 0 };
	const uint8_t pages[9] = { 0x11, 0x00, 0x00, 0x05, 0x00, 0x80, 0x83, 0xB0, 0xB1 };
	uint8_t sysid[OSD_SYSTEM_ID_LEN];
	char serial[41];

	osd_target_system_id(ht.tgt, sysid);
	for (int i = 0; i < OSD_SYSTEM_ID_LEN; i++)
		sprintf(serial + 2 * i, "%02X", sysid[i]);
	ck_assert_int_eq(scsi(cdb, 6, 255), OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 9);
	ck_assert_mem_eq(in, pages, 9);
	cdb[2] = 0x80;
	ck_assert_int_eq(scsi(cdb, 6, 255), OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 44);
	ck_assert_uint_eq(in[3], 40);
	ck_assert_mem_eq(in + 4, serial, 40);
	cdb[2] = 0x83;
	ck_assert_int_eq(scsi(cdb, 6, 255), OSD_STATUS_GOOD);
	ck_assert_uint_eq(in[1], 0x83);
	ck_assert_uint_eq(in[3], 52);
	ck_assert_uint_eq(in[4], 0x02);
	ck_assert_uint_eq(in[5], 0x01);
	ck_assert_uint_eq(in[7], 48);
	ck_assert_mem_eq(in + 8, "OSDSUITE", 8);
	ck_assert_mem_eq(in + 16, serial, 40);
	cdb[2] = 0xB0;
	ck_assert_int_eq(scsi(cdb, 6, 255), OSD_STATUS_GOOD);
	ck_assert_uint_eq(in[3], 20);
	ck_assert_mem_eq(in + 4, sysid, 20);
	cdb[2] = 0xB1;
	ck_assert_int_eq(scsi(cdb, 6, 255), OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 7);
	ck_assert_uint_eq(in[3], 3);
	ck_assert_mem_eq(in + 4, "tok", 3);
	/* Unknown page, and a page code without EVPD. */
	cdb[2] = 0x55;
	ck_assert_int_eq(scsi(cdb, 6, 255), OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(sense.key, OSD_SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(sense.asc, OSD_ASC_INVALID_FIELD_IN_CDB);
	ck_assert_uint_eq(sense.field_pointer, 2);
	cdb[1] = 0;
	cdb[2] = 0x80;
	ck_assert_int_eq(scsi(cdb, 6, 255), OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(sense.asc, OSD_ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

START_TEST(report_luns)
{
	const uint8_t cdb[12] = { 0xA0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0 };
	const uint8_t want[16] = { 0, 0, 0, 8 };

	ck_assert_int_eq(scsi(cdb, 12, 64), OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 16);
	ck_assert_mem_eq(in, want, 16);
}
END_TEST

START_TEST(request_sense)
{
	const uint8_t fixed[6] = { 0x03, 0, 0, 0, 18, 0 }, desc[6] = { 0x03, 1, 0, 0, 18, 0 };
	const uint8_t want_fixed[18] = { 0x70, 0, 0, 0, 0, 0, 0, 10 };
	const uint8_t want_desc[8] = { 0x72 };

	ck_assert_int_eq(scsi(fixed, 6, 64), OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 18);
	ck_assert_mem_eq(in, want_fixed, 18);
	ck_assert_int_eq(scsi(desc, 6, 64), OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 8);
	ck_assert_mem_eq(in, want_desc, 8);
}
END_TEST

START_TEST(bad_opcodes)
{
	const uint8_t read10[10] = { 0x28 }, shorty[3] = { 0x12, 0, 0 };
	uint8_t osd[236] = { 0x7F };

	ck_assert_int_eq(scsi(read10, 10, 0), OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(sense.response_code, 0x72);
	ck_assert_uint_eq(sense.key, OSD_SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(sense.asc, OSD_ASC_INVALID_OPCODE);
	ck_assert_int_eq(scsi(shorty, 3, 0), OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(sense.asc, OSD_ASC_INVALID_FIELD_IN_CDB);
	ck_assert_int_eq(scsi(read10, 0, 0), OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(sense.asc, OSD_ASC_INVALID_OPCODE);
	/* 7Fh with a wrong ADDITIONAL CDB LENGTH, or an unknown service action. */
	osd[7] = 0x10;
	ck_assert_int_eq(scsi(osd, 236, 0), OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(sense.asc, OSD_ASC_INVALID_OPCODE);
	osd[7] = 228;
	osd[8] = 0x88;
	osd[9] = 0xEE;
	ck_assert_int_eq(scsi(osd, 236, 0), OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(sense.asc, OSD_ASC_INVALID_OPCODE);
	/* Commands this target does not implement answer 20h/00h too. */
	osd[9] = 0xA8; /* CREATE CLONE, list mode with no lists */
	osd[11] = 0x30;
	ck_assert_int_eq(scsi(osd, 236, 0), OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(sense.asc, OSD_ASC_INVALID_OPCODE);
}
END_TEST

struct done_state {
	int calls;
	int err;
};

static void on_done(struct osd_xfer *xf, int err)
{
	struct done_state *d = xf->priv;

	d->calls++;
	d->err = err;
}

START_TEST(loopback_transport)
{
	struct osd_transport t;
	struct done_state d = { 0 };
	const uint8_t cdb[6] = { 0x12, 1, 0xB1, 0, 255, 0 };
	uint8_t buf[255], tok[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct osd_xfer xf = { 0 };
	size_t n;

	ck_assert_int_eq(osd_target_loopback(ht.tgt, &t), 0);
	ck_assert_int_eq(t.ops->version, OSD_TRANSPORT_VERSION);
	n = t.ops->security_token(t.impl, tok, sizeof(tok));
	ck_assert_uint_eq(n, 16);
	xf.cdb = cdb;
	xf.cdb_len = 6;
	xf.in_iov = &iov;
	xf.in_iovcnt = 1;
	xf.in_len = sizeof(buf);
	xf.done = on_done;
	xf.priv = &d;
	/* a size below the first layout (struct osd_xfer's extension rule) */
	xf.size = OSD_XFER_BASE_SIZE - 1;
	ck_assert_int_eq(t.ops->submit(t.impl, &xf), -EINVAL);
	ck_assert_int_eq(d.calls, 0);
	xf.size = sizeof(xf);
	ck_assert_int_eq(t.ops->submit(t.impl, &xf), 0);
	ck_assert_int_eq(d.calls, 1);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(xf.status, OSD_STATUS_GOOD);
	/* VPD B1h over the loopback returns this channel's token. */
	ck_assert_uint_eq(xf.in_xferred, 4 + n);
	ck_assert_mem_eq(buf + 4, tok, n);
	t.ops->destroy(t.impl);
}
END_TEST

static Suite *scsi_suite(void)
{
	Suite *s = suite_create("target_scsi");
	TCase *tc = tcase_create("scsi");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_unit_ready);
	tcase_add_test(tc, inquiry_standard);
	tcase_add_test(tc, inquiry_vpd);
	tcase_add_test(tc, report_luns);
	tcase_add_test(tc, request_sense);
	tcase_add_test(tc, bad_opcodes);
	tcase_add_test(tc, loopback_transport);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(scsi_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
