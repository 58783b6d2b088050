/*
 * osd-conform's verdicts without a target: which sense means UNSUPPORTED,
 * and the checks of INQUIRY, VPD 00h, REPORT LUNS and page-format answers
 * on known-good byte vectors (our target's answers, docs/target.md 6) and on
 * each way they can be wrong.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "conform.h"
#include "answers.h"

static struct osd_sense sense(uint8_t key, uint16_t asc, int field, uint16_t pointer)
{
	struct osd_sense s;

	memset(&s, 0, sizeof(s));
	s.response_code = 0x72;
	s.key = key;
	s.asc = asc;
	s.has_field = field != 0;
	s.field_in_cdb = field > 0;
	s.field_pointer = pointer;
	return s;
}

START_TEST(unsupported_sense)
{
	static const struct { uint8_t key; uint16_t asc; int field; uint16_t ptr; int want; } v[] = {
		{ 5, 0x2000, 0, 0, 1 },   /* INVALID COMMAND OPERATION CODE */
		{ 5, 0x2000, 1, 8, 1 },
		{ 5, 0x0000, 0, 0, 1 },   /* ILLEGAL REQUEST without more */
		{ 5, 0x2400, 1, 0, 1 },   /* INVALID FIELD IN CDB at the opcode */
		{ 5, 0x2400, 1, 8, 1 },   /* ... the service action */
		{ 5, 0x2400, 1, 11, 1 },  /* ... an option byte (DH_STEP) */
		{ 5, 0x2400, 1, 12, 0 },  /* ... TIMESTAMPS CONTROL: a bad value, not a missing command */
		{ 5, 0x2400, 1, 24, 0 },  /* ... the object id: a missing object */
		{ 5, 0x2400, 1, 82, 0 },  /* ... the capability */
		{ 5, 0x2400, 0, 0, 0 },   /* no field pointer */
		{ 5, 0x2400, -1, 8, 0 },  /* a pointer into the parameter list */
		{ 5, 0x2600, 0, 0, 0 },
		{ 5, 0x2406, 0, 0, 0 },
		{ 6, 0x2900, 0, 0, 0 },   /* unit attention */
		{ 1, 0x3B17, 0, 0, 0 },   /* short READ */
		{ 4, 0x2000, 0, 0, 0 },   /* not ILLEGAL REQUEST */
	};
	char code[16];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct osd_sense s = sense(v[i].key, v[i].asc, v[i].field, v[i].ptr);

		ck_assert_msg(cf_sense_unsupported(&s) == v[i].want, "case %zu: %s field %d at %u",
			      i, cf_sense_code(&s, code, sizeof(code)), v[i].field, v[i].ptr);
	}
	{
		struct osd_sense s = sense(5, 0x2406, 0, 0);

		ck_assert_str_eq(cf_sense_code(&s, code, sizeof(code)), "5/24/06");
	}
}
END_TEST

/* Standard INQUIRY data as the software target sends it (docs/target.md 6). */
static void our_inquiry(uint8_t d[96])
{
	static const uint8_t vd[] = { 0x03, 0x55, 0x03, 0x56, 0x04, 0x40, 0x04, 0x48 };

	memset(d, 0, 96);
	d[0] = 0x11;
	d[2] = 0x05;
	d[3] = 0x02;
	d[4] = 91;
	memcpy(d + 8, "OSDSUITE", 8);
	memcpy(d + 16, "SOFTWARE OSD    ", 16);
	memcpy(d + 32, "0001", 4);
	memcpy(d + 58, vd, sizeof(vd));
}

START_TEST(inquiry)
{
	uint8_t d[96];
	char why[256];

	our_inquiry(d);
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V1, why, sizeof(why)), 0);
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V2, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "type 11h, version descriptor present");
	ck_assert_int_eq(cf_check_inquiry(d, 35, OSD_V2, why, sizeof(why)), -1);
	/* an OSD-2 target claiming only OSD-1 (0340h), as seen in the field */
	memset(d + 58, 0, 16);
	d[58] = 0x03;
	d[59] = 0x40;
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V1, why, sizeof(why)), 0);
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V2, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "the version descriptors name OSD but not OSD-2, the version this "
			 "run speaks");
	/* no version descriptor at all is allowed */
	memset(d + 58, 0, 16);
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V2, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "type 11h, no OSD version descriptor");
	/* descriptors past ADDITIONAL LENGTH do not count */
	our_inquiry(d);
	d[4] = 31;
	d[58] = 0x03;
	d[59] = 0x40;
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V2, why, sizeof(why)), 0);
	our_inquiry(d);
	d[0] = 0x00; /* a disk */
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V2, why, sizeof(why)), -1);
	our_inquiry(d);
	d[0] = 0x31; /* qualifier 1: not connected */
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V2, why, sizeof(why)), -1);
	our_inquiry(d);
	d[3] = 0x01;
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V2, why, sizeof(why)), -1);
	our_inquiry(d);
	d[4] = 30;
	ck_assert_int_eq(cf_check_inquiry(d, 96, OSD_V2, why, sizeof(why)), -1);
}
END_TEST

START_TEST(vpd_and_luns)
{
	static const uint8_t vpd[] = { 0x11, 0x00, 0x00, 0x05, 0x00, 0x80, 0x83, 0xB0, 0xB1 };
	static const uint8_t luns[16] = { 0, 0, 0, 8 };
	uint8_t b[32];
	char why[256];

	ck_assert_int_eq(cf_check_vpd_pages(vpd, sizeof(vpd), why, sizeof(why)), 0);
	ck_assert_str_eq(why, "5 pages listed");
	ck_assert_int_eq(cf_check_vpd_pages(vpd, sizeof(vpd) - 1, why, sizeof(why)), -1);
	memcpy(b, vpd, sizeof(vpd));
	b[4] = 0x80; /* 00h not listed */
	ck_assert_int_eq(cf_check_vpd_pages(b, sizeof(vpd), why, sizeof(why)), -1);
	ck_assert_int_eq(cf_check_vpd_pages(vpd, 0, why, sizeof(why)), -1);
	ck_assert_int_eq(cf_check_report_luns(luns, sizeof(luns), why, sizeof(why)), 0);
	ck_assert_str_eq(why, "1 LUNs");
	ck_assert_int_eq(cf_check_report_luns(luns, 15, why, sizeof(why)), -1);
	memcpy(b, luns, sizeof(luns));
	b[3] = 12; /* not a multiple of 8 */
	ck_assert_int_eq(cf_check_report_luns(b, sizeof(luns), why, sizeof(why)), -1);
	b[3] = 0;
	ck_assert_int_eq(cf_check_report_luns(b, sizeof(luns), why, sizeof(why)), -1);
}
END_TEST

START_TEST(timestamps_page)
{
	/* page 3, length 30, then five 6-byte timestamps (docs/protocol.md 9.8) */
	uint8_t pg[38] = { 0, 0, 0, 3, 0, 0, 0, 30, 0x01, 0x90, 0, 0, 0, 1 };
	char why[256];

	ck_assert_int_eq(cf_check_timestamps_page(pg, sizeof(pg), 3, why, sizeof(why)), 0);
	ck_assert_int_eq(cf_check_timestamps_page(pg, sizeof(pg) - 1, 3, why, sizeof(why)), -1);
	ck_assert_int_eq(cf_check_timestamps_page(pg, sizeof(pg), 0x30000003, why, sizeof(why)),
			 -1);
	ck_assert_int_eq(cf_check_timestamps_page(pg, 7, 3, why, sizeof(why)), -1);
	pg[7] = 29;
	ck_assert_int_eq(cf_check_timestamps_page(pg, sizeof(pg), 3, why, sizeof(why)), -1);
	pg[7] = 30;
	memset(pg + 8, 0, 6); /* CREATED TIME zero */
	ck_assert_int_eq(cf_check_timestamps_page(pg, sizeof(pg), 3, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "CREATED TIME is zero");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conform");
	TCase *tc = tcase_create("conform");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, unsupported_sense);
	tcase_add_test(tc, inquiry);
	tcase_add_test(tc, vpd_and_luns);
	tcase_add_test(tc, timestamps_page);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
