/* osd_key: HMAC-SHA1 against RFC 2202 and the openssl command-line tool. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <osd/security.h>

#include "sec_testutil.h"

static void hmac_flat(const uint8_t *key, size_t klen, const uint8_t *msg, size_t mlen,
		      uint8_t mac[OSD_HMAC_LEN])
{
	osd_key *k;
	struct iovec iov = { (void *)msg, mlen };

	ck_assert_int_eq(osd_key_new(&k, key, klen), 0);
	ck_assert_int_eq(osd_key_hmac(k, &iov, 1, mac), 0);
	osd_key_free(k);
}

struct rfc2202_case {
	const char *key_hex;
	size_t key_repeat; /* key is key_hex repeated this many times */
	const char *data;  /* text, or NULL for data_byte x data_len */
	uint8_t data_byte;
	size_t data_len;
	const char *mac_hex;
};

/* RFC 2202 section 3, test cases 1-7. */
static const struct rfc2202_case rfc2202[] = {
	{ "0b", 20, "Hi There", 0, 0, "b617318655057264e28bc0b6fb378c8ef146be00" },
	{ "4a656665", 1, "what do ya want for nothing?", 0, 0,
	  "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79" },
	{ "aa", 20, NULL, 0xdd, 50, "125d7342b9ac11cd91a39af48aa17b4f63f175d3" },
	{ "0102030405060708090a0b0c0d0e0f10111213141516171819", 1, NULL, 0xcd, 50,
	  "4c9007f4026250c6bc8414f9bf50c86c2d7235da" },
	{ "0c", 20, "Test With Truncation", 0, 0, "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04" },
	{ "aa", 80, "Test Using Larger Than Block-Size Key - Hash Key First", 0, 0,
	  "aa4ae5e15272d00e95705637ce8a3b55ed402112" },
	{ "aa", 80, "Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data",
	  0, 0, "e8e99d0f45237d786d6bbaa7965c7808bbff1a91" },
};

/* The openssl command-line tool is there to cross-check against (set in main,
 * before check forks the tests). */
static int have_cli;

START_TEST(test_rfc2202)
{
	const struct rfc2202_case *c = &rfc2202[_i];
	uint8_t key[128], unit[32], msg[128], want[20], got[20], cli[20];
	size_t klen = 0, mlen, i;
	int ulen = sec_hex(c->key_hex, unit, sizeof(unit));

	ck_assert_int_gt(ulen, 0);
	for (i = 0; i < c->key_repeat; i++, klen += (size_t)ulen)
		memcpy(key + klen, unit, (size_t)ulen);
	if (c->data) {
		mlen = strlen(c->data);
		memcpy(msg, c->data, mlen);
	} else {
		mlen = c->data_len;
		memset(msg, c->data_byte, mlen);
	}
	ck_assert_int_eq(sec_hex(c->mac_hex, want, sizeof(want)), 20);
	hmac_flat(key, klen, msg, mlen, got);
	ck_assert_mem_eq(got, want, 20);
	if (!have_cli)
		return;
	ck_assert_int_eq(sec_cli_hmac_sha1(key, klen, msg, mlen, cli), 0);
	ck_assert_mem_eq(cli, want, 20);
}
END_TEST

/* A 236-byte CDB-sized message under a 20-byte key, split every way. */
START_TEST(test_cdb_sized_matches_cli)
{
	uint8_t key[20], msg[OSD_CDB_V2_LEN], cli[20], got[20];
	struct iovec iov[4];
	osd_key *k;
	size_t i, a, b;

	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0x30 + i * 7);
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 31 + 5);
	ck_assert_int_eq(sec_cli_hmac_sha1(key, sizeof(key), msg, sizeof(msg), cli), 0);
	ck_assert_int_eq(osd_key_new(&k, key, sizeof(key)), 0);
	/* Splits at every 29th byte pair, with an empty segment in between. */
	for (a = 0; a <= sizeof(msg); a += 29) {
		for (b = a; b <= sizeof(msg); b += 37) {
			iov[0] = (struct iovec){ msg, a };
			iov[1] = (struct iovec){ NULL, 0 };
			iov[2] = (struct iovec){ msg + a, b - a };
			iov[3] = (struct iovec){ msg + b, sizeof(msg) - b };
			ck_assert_int_eq(osd_key_hmac(k, iov, 4, got), 0);
			ck_assert_mem_eq(got, cli, 20);
		}
	}
	osd_key_free(k);
}
END_TEST

/* Context reuse must not leak state between calls or between keys. */
START_TEST(test_reuse_and_interleave)
{
	uint8_t k1[20], k2[20], m1[] = "first message", m2[] = "second";
	uint8_t want1[20], want2[20], got[20];
	struct iovec i1 = { m1, sizeof(m1) - 1 }, i2 = { m2, sizeof(m2) - 1 };
	osd_key *a, *b;
	int n;

	memset(k1, 0x11, sizeof(k1));
	memset(k2, 0x22, sizeof(k2));
	ck_assert_int_eq(sec_cli_hmac_sha1(k1, 20, m1, i1.iov_len, want1), 0);
	ck_assert_int_eq(sec_cli_hmac_sha1(k2, 20, m2, i2.iov_len, want2), 0);
	ck_assert_int_eq(osd_key_new(&a, k1, 20), 0);
	ck_assert_int_eq(osd_key_new(&b, k2, 20), 0);
	for (n = 0; n < 50; n++) {
		ck_assert_int_eq(osd_key_hmac(a, &i1, 1, got), 0);
		ck_assert_mem_eq(got, want1, 20);
		ck_assert_int_eq(osd_key_hmac(b, &i2, 1, got), 0);
		ck_assert_mem_eq(got, want2, 20);
	}
	/* The secret is copied: changing the caller's buffer changes nothing. */
	memset(k1, 0, sizeof(k1));
	ck_assert_int_eq(osd_key_hmac(a, &i1, 1, got), 0);
	ck_assert_mem_eq(got, want1, 20);
	osd_key_free(a);
	osd_key_free(b);
}
END_TEST

START_TEST(test_empty_message)
{
	uint8_t key[3] = { 1, 2, 3 }, cli[20], got[20];
	osd_key *k;

	ck_assert_int_eq(sec_cli_hmac_sha1(key, 3, (const uint8_t *)"", 0, cli), 0);
	ck_assert_int_eq(osd_key_new(&k, key, 3), 0);
	ck_assert_int_eq(osd_key_hmac(k, NULL, 0, got), 0);
	ck_assert_mem_eq(got, cli, 20);
	osd_key_free(k);
}
END_TEST

START_TEST(test_bad_arguments)
{
	uint8_t key[20] = { 0 }, mac[20];
	struct iovec iov = { key, 1 };
	osd_key *k = (osd_key *)&k;

	ck_assert_int_eq(osd_key_new(&k, key, 0), -EINVAL);
	ck_assert_ptr_null(k);
	ck_assert_int_eq(osd_key_new(&k, NULL, 20), -EINVAL);
	ck_assert_int_eq(osd_key_new(NULL, key, 20), -EINVAL);
	ck_assert_int_eq(osd_key_new(&k, key, 20), 0);
	ck_assert_int_eq(osd_key_hmac(k, &iov, -1, mac), -EINVAL);
	ck_assert_int_eq(osd_key_hmac(k, NULL, 1, mac), -EINVAL);
	ck_assert_int_eq(osd_key_hmac(k, &iov, 1, NULL), -EINVAL);
	ck_assert_int_eq(osd_key_hmac(NULL, &iov, 1, mac), -EINVAL);
	osd_key_free(k);
	osd_key_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("security_key");
	TCase *tc = tcase_create("hmac");
	SRunner *sr;
	int failed;

	have_cli = sec_cli_available();
	tcase_add_loop_test(tc, test_rfc2202, 0, (int)(sizeof(rfc2202) / sizeof(rfc2202[0])));
	if (have_cli)
		tcase_add_test(tc, test_cdb_sized_matches_cli);
	tcase_add_test(tc, test_reuse_and_interleave);
	tcase_add_test(tc, test_empty_message);
	tcase_add_test(tc, test_bad_arguments);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (!failed && !have_cli) {
		/* The RFC 2202 vectors passed; the cross-checks could not run. */
		fprintf(stderr, "openssl command-line tool not found: CLI cross-checks skipped\n");
		return 77;
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
