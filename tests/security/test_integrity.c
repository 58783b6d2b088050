/* ALLDATA integrity information blocks and the response ICV. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <osd/security.h>

#include "sec_testutil.h"

static const uint8_t cap_key[20] = {
	0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 0x01, 0x23,
	0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xf0, 0xe1, 0xd2, 0xc3,
};

struct fixture {
	osd_key *k;
	uint8_t r[20];           /* request ICV */
	uint8_t payload[4096];
	uint8_t set_list[40];
	uint8_t get_list[24];
	struct iovec iov[3];
};

static void setup_fixture(struct fixture *f)
{
	size_t i;

	ck_assert_int_eq(osd_key_new(&f->k, cap_key, sizeof(cap_key)), 0);
	for (i = 0; i < sizeof(f->r); i++)
		f->r[i] = (uint8_t)(0x80 + i);
	for (i = 0; i < sizeof(f->payload); i++)
		f->payload[i] = (uint8_t)(i * 7);
	memset(f->set_list, 0x51, sizeof(f->set_list));
	memset(f->get_list, 0x47, sizeof(f->get_list));
	f->iov[0] = (struct iovec){ f->payload, sizeof(f->payload) };
	f->iov[1] = (struct iovec){ f->set_list, sizeof(f->set_list) };
	f->iov[2] = (struct iovec){ f->get_list, sizeof(f->get_list) };
}

/* HMAC(cap_key, kind || R || parts...) by the openssl tool. */
static void cli_bound(uint8_t kind, const uint8_t r[20], const struct iovec *parts, int n,
		      uint8_t out[20])
{
	uint8_t *msg;
	size_t len = 21, off;
	int i;

	for (i = 0; i < n; i++)
		len += parts[i].iov_len;
	msg = malloc(len);
	ck_assert_ptr_nonnull(msg);
	msg[0] = kind;
	memcpy(msg + 1, r, 20);
	for (off = 21, i = 0; i < n; off += parts[i].iov_len, i++)
		memcpy(msg + off, parts[i].iov_base, parts[i].iov_len);
	ck_assert_int_eq(sec_cli_hmac_sha1(cap_key, 20, msg, len, out), 0);
	free(msg);
}

START_TEST(test_lengths)
{
	ck_assert_uint_eq(osd_sec_integrity_len(OSD_V1, OSD_ICV_DATA_OUT), 44);
	ck_assert_uint_eq(osd_sec_integrity_len(OSD_V2, OSD_ICV_DATA_OUT), 56);
	ck_assert_uint_eq(osd_sec_integrity_len(OSD_V1, OSD_ICV_DATA_IN), 36);
	ck_assert_uint_eq(osd_sec_integrity_len(OSD_V2, OSD_ICV_DATA_IN), 48);
	ck_assert_uint_eq(osd_sec_integrity_len(OSD_V2, OSD_ICV_RESPONSE), 0);
	ck_assert_uint_eq(osd_sec_integrity_len((enum osd_version)0, OSD_ICV_DATA_IN), 0);
}
END_TEST

START_TEST(test_data_out_v2)
{
	struct fixture f;
	struct osd_sec_integrity c = { 4096, 40, 24 }, d;
	uint8_t block[64], want[20];
	const uint8_t counts_hex[24] = { 0, 0, 0, 0, 0, 0, 0x10, 0x00, 0, 0, 0, 0, 0, 0, 0, 0x28,
					 0, 0, 0, 0, 0, 0, 0, 0x18 };
	struct iovec parts[4];
	size_t bit;

	setup_fixture(&f);
	memset(block, 0xAA, sizeof(block));
	ck_assert_int_eq(osd_sec_integrity_encode(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, &c, f.iov, 3,
						  block, sizeof(block)), 56);
	ck_assert_mem_eq(block, counts_hex, 24);
	parts[0] = (struct iovec){ (void *)counts_hex, 24 };
	memcpy(&parts[1], f.iov, sizeof(f.iov));
	cli_bound(OSD_ICV_DATA_OUT, f.r, parts, 4, want);
	ck_assert_mem_eq(block + 24, want, 20);
	ck_assert_mem_eq(block + 44, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
	ck_assert_uint_eq(block[56], 0xAA); /* nothing written past the block */

	ck_assert_int_eq(osd_sec_integrity_decode(OSD_V2, OSD_ICV_DATA_OUT, block, 56, &d), 0);
	ck_assert_uint_eq(d.data_bytes, 4096);
	ck_assert_uint_eq(d.attr_bytes, 40);
	ck_assert_uint_eq(d.get_list_bytes, 24);
	ck_assert_int_eq(osd_sec_integrity_verify(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, block, 56,
						  f.iov, 3), 0);
	/* count bits: the segments no longer add up; ICV bits and tail: mismatch */
	for (bit = 0; bit < 56 * 8; bit++) {
		block[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(osd_sec_integrity_verify(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, block,
							  56, f.iov, 3),
				 bit < 24 * 8 ? -EBADMSG : -EACCES);
		block[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	f.payload[4000] ^= 0x04;
	ck_assert_int_eq(osd_sec_integrity_verify(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, block, 56,
						  f.iov, 3), -EACCES);
	f.payload[4000] ^= 0x04;
	f.r[0] ^= 1; /* another request */
	ck_assert_int_eq(osd_sec_integrity_verify(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, block, 56,
						  f.iov, 3), -EACCES);
	f.r[0] ^= 1;
	ck_assert_int_eq(osd_sec_integrity_verify(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, block, 55,
						  f.iov, 3), -EBADMSG);
	osd_key_free(f.k);
}
END_TEST

/* Moving bytes between segments changes the counts, hence the ICV. */
START_TEST(test_segment_boundaries_covered)
{
	struct fixture f;
	struct osd_sec_integrity a = { 4096, 40, 24 }, b = { 4095, 41, 24 };
	uint8_t ba[56], bb[56];

	setup_fixture(&f);
	ck_assert_int_eq(osd_sec_integrity_encode(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, &a, f.iov, 3,
						  ba, sizeof(ba)), 56);
	ck_assert_int_eq(osd_sec_integrity_encode(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, &b, f.iov, 3,
						  bb, sizeof(bb)), 56);
	ck_assert_mem_ne(ba + 24, bb + 24, 20);
	osd_key_free(f.k);
}
END_TEST

START_TEST(test_data_in_v1)
{
	struct fixture f;
	struct osd_sec_integrity c = { 4096, 40, 0 }, d;
	uint8_t block[36], want[20];
	const uint8_t counts_hex[16] = { 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0x28 };
	struct iovec parts[3];

	setup_fixture(&f);
	ck_assert_int_eq(osd_sec_integrity_encode(f.k, OSD_V1, OSD_ICV_DATA_IN, f.r, &c, f.iov, 2,
						  block, sizeof(block)), 36);
	ck_assert_mem_eq(block, counts_hex, 16);
	parts[0] = (struct iovec){ (void *)counts_hex, 16 };
	parts[1] = f.iov[0];
	parts[2] = f.iov[1];
	cli_bound(OSD_ICV_DATA_IN, f.r, parts, 3, want);
	ck_assert_mem_eq(block + 16, want, 20);
	ck_assert_int_eq(osd_sec_integrity_decode(OSD_V1, OSD_ICV_DATA_IN, block, 36, &d), 0);
	ck_assert_uint_eq(d.data_bytes, 4096);
	ck_assert_uint_eq(d.attr_bytes, 40);
	ck_assert_uint_eq(d.get_list_bytes, 0);
	ck_assert_int_eq(osd_sec_integrity_verify(f.k, OSD_V1, OSD_ICV_DATA_IN, f.r, block, 36,
						  f.iov, 2), 0);
	/* the same bytes under the data-out kind do not verify */
	ck_assert_int_ne(osd_sec_integrity_verify(f.k, OSD_V1, OSD_ICV_DATA_OUT, f.r, block, 36,
						  f.iov, 2), 0);
	osd_key_free(f.k);
}
END_TEST

START_TEST(test_encode_errors)
{
	struct fixture f;
	struct osd_sec_integrity c = { 4096, 40, 24 }, bad = { 4096, 40, 25 }, in = { 1, 2, 3 };
	uint8_t block[56], before[56];

	setup_fixture(&f);
	memset(block, 0x33, sizeof(block));
	memcpy(before, block, sizeof(block));
	ck_assert_int_eq(osd_sec_integrity_encode(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, &bad, f.iov,
						  3, block, sizeof(block)), -EINVAL);
	ck_assert_int_eq(osd_sec_integrity_encode(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, &c, f.iov, 3,
						  block, 55), -ENOBUFS);
	ck_assert_int_eq(osd_sec_integrity_encode(f.k, OSD_V2, OSD_ICV_DATA_IN, f.r, &in, f.iov, 3,
						  block, sizeof(block)), -EINVAL);
	ck_assert_int_eq(osd_sec_integrity_encode(f.k, OSD_V2, OSD_ICV_RESPONSE, f.r, &c, f.iov, 3,
						  block, sizeof(block)), -EINVAL);
	ck_assert_int_eq(osd_sec_integrity_encode(NULL, OSD_V2, OSD_ICV_DATA_OUT, f.r, &c, f.iov,
						  3, block, sizeof(block)), -EINVAL);
	ck_assert_int_eq(osd_sec_integrity_encode(f.k, OSD_V2, OSD_ICV_DATA_OUT, f.r, &c, f.iov,
						  -1, block, sizeof(block)), -EINVAL);
	ck_assert_mem_eq(block, before, sizeof(block));
	ck_assert_int_eq(osd_sec_integrity_decode(OSD_V2, OSD_ICV_CONTINUATION, block, 56, &c),
			 -EINVAL);
	osd_key_free(f.k);
}
END_TEST

/* 72h sense: ILLEGAL REQUEST 24h/00h, descriptor 02h, then 07h with a 32-byte ICV. */
static size_t make_sense(uint8_t *s)
{
	size_t n = 0;

	memset(s, 0, OSD_SENSE_MAX_LEN);
	s[0] = 0x72;
	s[1] = 0x05;
	s[2] = 0x24;
	s[3] = 0x00;
	s[7] = 8 + 34;
	n = 8;
	s[n] = 0x02;
	s[n + 1] = 0x06;
	s[n + 4] = 0xC0;
	s[n + 6] = 184;
	n += 8;
	s[n] = 0x07;
	s[n + 1] = 0x20;
	return n + 34;
}

#define RICV_OFF 18 /* ICV bytes of descriptor 07h in make_sense() */

START_TEST(test_response_good)
{
	struct fixture f;
	uint8_t icv[20], want[20], field[32] = { 0 }, status = 0x00;
	struct iovec part = { &status, 1 };

	setup_fixture(&f);
	ck_assert_int_eq(osd_sec_response_icv(f.k, f.r, 0x00, NULL, 0, icv), 0);
	cli_bound(OSD_ICV_RESPONSE, f.r, &part, 1, want);
	ck_assert_mem_eq(icv, want, 20);
	memcpy(field, icv, 20);
	ck_assert_int_eq(osd_sec_response_verify(f.k, f.r, 0x00, NULL, 0, field, 32), 0);
	ck_assert_int_eq(osd_sec_response_verify(f.k, f.r, 0x00, NULL, 0, field, 20), 0);
	ck_assert_int_eq(osd_sec_response_verify(f.k, f.r, 0x02, NULL, 0, field, 32), -EACCES);
	field[31] = 1;
	ck_assert_int_eq(osd_sec_response_verify(f.k, f.r, 0x00, NULL, 0, field, 32), -EACCES);
	ck_assert_int_eq(osd_sec_response_verify(f.k, f.r, 0x00, NULL, 0, field, 21), -EINVAL);
	osd_key_free(f.k);
}
END_TEST

START_TEST(test_response_check_condition)
{
	struct fixture f;
	uint8_t sense[OSD_SENSE_MAX_LEN], msg[OSD_SENSE_MAX_LEN + 1], icv[20], want[20];
	struct iovec part;
	size_t n, bit;

	setup_fixture(&f);
	n = make_sense(sense);
	/* target: compute over the sense with a blank ICV, then fill it in */
	ck_assert_int_eq(osd_sec_response_icv(f.k, f.r, 0x02, sense, n, icv), 0);
	msg[0] = 0x02;
	memcpy(msg + 1, sense, n);
	part = (struct iovec){ msg, n + 1 };
	cli_bound(OSD_ICV_RESPONSE, f.r, &part, 1, want);
	ck_assert_mem_eq(icv, want, 20);
	memcpy(sense + RICV_OFF, icv, 20);
	/* initiator: the filled-in descriptor hashes as blank */
	ck_assert_int_eq(osd_sec_response_verify(f.k, f.r, 0x02, sense, n, sense + RICV_OFF, 32),
			 0);
	for (bit = 0; bit < n * 8; bit++) {
		size_t byte = bit / 8;
		uint8_t ricv[32];
		int rc;

		memcpy(ricv, sense + RICV_OFF, 32);
		sense[byte] ^= (uint8_t)(1u << (bit % 8));
		rc = osd_sec_response_verify(f.k, f.r, 0x02, sense, n, ricv, 32);
		if (byte >= RICV_OFF && byte < RICV_OFF + 32)
			ck_assert_int_eq(rc, 0); /* the ICV bytes themselves are not covered */
		else
			ck_assert_msg(rc == -EACCES, "sense bit %zu not detected", bit);
		sense[byte] ^= (uint8_t)(1u << (bit % 8));
	}
	ck_assert_int_eq(osd_sec_response_icv(f.k, f.r, 0x02, sense, OSD_SENSE_MAX_LEN + 1, icv),
			 -EINVAL);
	ck_assert_int_eq(osd_sec_response_icv(f.k, f.r, 0x02, NULL, 4, icv), -EINVAL);
	osd_key_free(f.k);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("security_integrity");
	TCase *tc = tcase_create("integrity");
	SRunner *sr;
	int failed;

	if (!sec_cli_available()) {
		fprintf(stderr, "openssl command-line tool not found: skipping\n");
		return 77;
	}
	tcase_add_test(tc, test_lengths);
	tcase_add_test(tc, test_data_out_v2);
	tcase_add_test(tc, test_segment_boundaries_covered);
	tcase_add_test(tc, test_data_in_v1);
	tcase_add_test(tc, test_encode_errors);
	tcase_add_test(tc, test_response_good);
	tcase_add_test(tc, test_response_check_condition);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
