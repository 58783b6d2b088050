/* Encoded offsets (osd-r10 §4.12.5, osd2r03 §4.14.5): worked values, rounding,
 * limits, decoding. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <osd/offset.h>

struct offset_vec {
	uint64_t offset;
	uint32_t v1;      /* expected OSD-1 field */
	uint64_t v1_real; /* what it designates */
	uint32_t v2;
	uint64_t v2_real;
};

/* Worked values computed by hand; docs/protocol.md §5.1 lists the same table. */
static const struct offset_vec vecs[] = {
	{ 0, 0x00000000, 0, 0x00000000, 0 },
	{ 8, 0x00000001, 256, 0xB0000001, 8 },
	{ 256, 0x00000001, 256, 0xB0000020, 256 },
	{ 4096, 0x00000010, 4096, 0xB0000200, 4096 },
	{ 1ULL << 31, 0x00800000, 1ULL << 31, 0xC8000000, 1ULL << 31 },
	{ 1, 0x00000001, 256, 0xB0000001, 8 },
	{ 257, 0x00000002, 512, 0xB0000021, 264 },
	{ 0x7FFFFFF8ULL, 0x00800000, 1ULL << 31, 0xBFFFFFFF, 0x7FFFFFF8ULL },
	{ 1ULL << 36, 0x18000000, 1ULL << 36, 0x18000000, 1ULL << 36 },
};

START_TEST(test_worked_values)
{
	const struct offset_vec *v = &vecs[_i];
	uint32_t enc;
	uint64_t real, dec;

	ck_assert_int_eq(osd_offset_encode(OSD_V1, v->offset, &enc, &real), 0);
	ck_assert_uint_eq(enc, v->v1);
	ck_assert_uint_eq(real, v->v1_real);
	ck_assert_int_eq(osd_offset_decode(OSD_V1, enc, &dec), 0);
	ck_assert_uint_eq(dec, v->v1_real);
	ck_assert_uint_eq(osd_offset_align(OSD_V1, v->offset), v->v1_real);

	ck_assert_int_eq(osd_offset_encode(OSD_V2, v->offset, &enc, &real), 0);
	ck_assert_uint_eq(enc, v->v2);
	ck_assert_uint_eq(real, v->v2_real);
	ck_assert_int_eq(osd_offset_decode(OSD_V2, enc, &dec), 0);
	ck_assert_uint_eq(dec, v->v2_real);
	ck_assert_uint_eq(osd_offset_align(OSD_V2, v->offset), v->v2_real);
}
END_TEST

START_TEST(test_unused)
{
	uint64_t dec = 0;
	uint32_t enc;

	ck_assert_int_eq(osd_offset_decode(OSD_V1, 0xFFFFFFFF, &dec), 0);
	ck_assert_uint_eq(dec, OSD_OFFSET_NONE);
	ck_assert_int_eq(osd_offset_decode(OSD_V2, 0xFFFFFFFF, &dec), 0);
	ck_assert_uint_eq(dec, OSD_OFFSET_NONE);
	ck_assert_int_eq(osd_offset_encode(OSD_V1, OSD_OFFSET_NONE, &enc, NULL), -EINVAL);
}
END_TEST

/* The signed v2 exponent: a v2 value read with v1 rules is a different offset. */
START_TEST(test_signed_exponent)
{
	uint64_t dec;

	ck_assert_int_eq(osd_offset_decode(OSD_V1, 0xB0000001, &dec), 0);
	ck_assert_uint_eq(dec, 1ULL << 19);
	ck_assert_int_eq(osd_offset_decode(OSD_V2, 0xB0000001, &dec), 0);
	ck_assert_uint_eq(dec, 8);
	ck_assert_int_eq(osd_offset_decode(OSD_V2, 0x70000001, &dec), 0);
	ck_assert_uint_eq(dec, 1ULL << 15);
	/* exponents -8..-6 are not used in OSD-2 */
	ck_assert_int_eq(osd_offset_decode(OSD_V2, 0x80000001, &dec), -EBADMSG);
	ck_assert_int_eq(osd_offset_decode(OSD_V2, 0xA0000001, &dec), -EBADMSG);
	ck_assert_int_eq(osd_offset_decode((enum osd_version)0, 0, &dec), -EINVAL);
}
END_TEST

START_TEST(test_limits)
{
	uint32_t enc;
	uint64_t real;
	/* v2: largest is mantissa 0x0FFFFFFF, exponent +7 */
	uint64_t v2max = 0x0FFFFFFFULL << 15;
	/* v1: exponent 15 with mantissa 0x0FFFFFFF would be 0xFFFFFFFF ("unused") */
	uint64_t v1max = 0x0FFFFFFEULL << 23;

	ck_assert_int_eq(osd_offset_encode(OSD_V2, v2max, &enc, &real), 0);
	ck_assert_uint_eq(enc, 0x7FFFFFFF);
	ck_assert_int_eq(osd_offset_encode(OSD_V2, v2max + 1, &enc, &real), -EINVAL);
	ck_assert_uint_eq(osd_offset_align(OSD_V2, v2max + 1), OSD_OFFSET_NONE);
	ck_assert_int_eq(osd_offset_encode(OSD_V1, v1max, &enc, &real), 0);
	ck_assert_uint_eq(enc, 0xFFFFFFFE);
	ck_assert_int_eq(osd_offset_encode(OSD_V1, v1max + 1, &enc, &real), -EINVAL);
	ck_assert_int_eq(osd_offset_encode((enum osd_version)9, 0, &enc, &real), -EINVAL);
}
END_TEST

/* Rounding always yields the smallest encodable offset at or above the input. */
START_TEST(test_align_is_minimal)
{
	for (int v = OSD_V1; v <= OSD_V2; v++) {
		for (uint64_t off = 0; off < (1ULL << 40); off = off * 3 + 7) {
			uint64_t a = osd_offset_align((enum osd_version)v, off);
			uint32_t enc;
			uint64_t dec;

			ck_assert_uint_ge(a, off);
			ck_assert_int_eq(osd_offset_encode((enum osd_version)v, a, &enc, &dec), 0);
			ck_assert_uint_eq(dec, a);
			if (a > off)
				ck_assert_uint_eq(osd_offset_align((enum osd_version)v, a - 1), a);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("offset");
	TCase *tc = tcase_create("offset");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_worked_values, 0, (int)(sizeof(vecs) / sizeof(vecs[0])));
	tcase_add_test(tc, test_unused);
	tcase_add_test(tc, test_signed_exponent);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_align_is_minimal);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
