/* Capability keys and SET KEY derivation against hand-built bytes and the openssl tool. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <osd/capability.h>
#include <osd/cdb.h>
#include <osd/security.h>

#include "sec_testutil.h"

/* Capability bytes written by hand from docs/protocol.md §6 (osd-r10 §4.9.2.2,
 * osd2r03 §4.11.2.2). */
static const char cap_v1_hex[] =
	"01" "31" "02" "00" "018c2a3b4c5d"                 /* format, kv 3/alg 1, CMDRSP, expiry */
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3"         /* 10-29 audit */
	"c0c1c2c3c4c5c6c7c8c9cacb"                         /* 30-41 discriminator */
	"018c00112233" "80" "f000" "00000000" "10"           /* created, user, perms, 51-54, desc */
	"deadbeef" "0000000000010000" "0000000000010005"   /* tag, partition, object */
	"00000000";
static const char cap_v2_hex[] =
	"02" "31" "02" "00" "018c2a3b4c5d"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3"
	"c0c1c2c3c4c5c6c7c8c9cacb"
	"018c00112233" "80" "f000" "00000000" "10"
	"00000007" "deadbeef" "0102" "000000000000"        /* attr access, tag, boot epoch */
	"0000000000010000" "0000000000010005"              /* partition, object */
	"0000000000100000" "0000000000002000";             /* range length, start */

static void sample_cap(struct osd_capability *cap, uint8_t format)
{
	size_t i;

	memset(cap, 0, sizeof(*cap));
	cap->format = format;
	cap->key_version = 3;
	cap->icv_algorithm = OSD_ICV_ALG_HMAC_SHA1;
	cap->security_method = OSD_SEC_CMDRSP;
	cap->expiration = 0x018C2A3B4C5DULL;
	for (i = 0; i < sizeof(cap->audit); i++)
		cap->audit[i] = (uint8_t)(0xA0 + i);
	for (i = 0; i < sizeof(cap->discriminator); i++)
		cap->discriminator[i] = (uint8_t)(0xC0 + i);
	cap->object_created = 0x018C00112233ULL;
	cap->object_type = OSD_OBJ_USER;
	cap->permissions = OSD_PERM_READ | OSD_PERM_WRITE | OSD_PERM_GET_ATTR | OSD_PERM_SET_ATTR;
	cap->desc_type = OSD_CAP_DESC_USER;
	cap->policy_access_tag = 0xDEADBEEF;
	cap->allowed_attr_access = 7;
	cap->boot_epoch = 0x0102;
	cap->allowed_partition = 0x10000;
	cap->allowed_object = 0x10005;
	cap->range_length = 0x100000;
	cap->range_start = 0x2000;
}

static void fill(uint8_t *p, size_t n, uint8_t base)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(base + i);
}

static void check_cap_key(enum osd_version v, const char *hex, size_t caplen)
{
	uint8_t secret[20], sysid[OSD_SYSTEM_ID_LEN], msg[OSD_CAP_V2_LEN + OSD_SYSTEM_ID_LEN];
	uint8_t want[20], got[20];
	struct osd_capability cap;
	osd_key *k;

	fill(secret, sizeof(secret), 0x70);
	fill(sysid, sizeof(sysid), 0x50);
	ck_assert_int_eq(sec_hex(hex, msg, sizeof(msg)), (int)caplen);
	memcpy(msg + caplen, sysid, sizeof(sysid));
	ck_assert_int_eq(sec_cli_hmac_sha1(secret, 20, msg, caplen + 20, want), 0);

	sample_cap(&cap, (uint8_t)v);
	ck_assert_int_eq(osd_key_new(&k, secret, sizeof(secret)), 0);
	ck_assert_int_eq(osd_capability_key(k, v, &cap, sysid, got), 0);
	ck_assert_mem_eq(got, want, 20);
	/* Any field change gives another key. */
	cap.permissions ^= OSD_PERM_CREATE;
	ck_assert_int_eq(osd_capability_key(k, v, &cap, sysid, got), 0);
	ck_assert_mem_ne(got, want, 20);
	cap.permissions ^= OSD_PERM_CREATE;
	sysid[19] ^= 1;
	ck_assert_int_eq(osd_capability_key(k, v, &cap, sysid, got), 0);
	ck_assert_mem_ne(got, want, 20);
	osd_key_free(k);
}

START_TEST(test_capability_key_v1)
{
	check_cap_key(OSD_V1, cap_v1_hex, OSD_CAP_V1_LEN);
}
END_TEST

START_TEST(test_capability_key_v2)
{
	check_cap_key(OSD_V2, cap_v2_hex, OSD_CAP_V2_LEN);
}
END_TEST

START_TEST(test_capability_key_bad_args)
{
	uint8_t secret[20] = { 1 }, sysid[20] = { 0 }, out[20];
	struct osd_capability cap;
	osd_key *k;

	sample_cap(&cap, 1);
	ck_assert_int_eq(osd_key_new(&k, secret, 20), 0);
	ck_assert_int_eq(osd_capability_key(k, (enum osd_version)3, &cap, sysid, out), -EINVAL);
	ck_assert_int_eq(osd_capability_key(NULL, OSD_V1, &cap, sysid, out), -EINVAL);
	ck_assert_int_eq(osd_capability_key(k, OSD_V1, NULL, sysid, out), -EINVAL);
	cap.key_version = 16; /* does not fit the 4-bit field */
	ck_assert_int_lt(osd_capability_key(k, OSD_V1, &cap, sysid, out), 0);
	osd_key_free(k);
}
END_TEST

/* child = HMAC(parent, seed || key id || key to set || key version) */
START_TEST(test_derive_vector)
{
	uint8_t parent[20], seed[OSD_SEED_LEN], kid[OSD_KEY_ID_LEN], msg[29];
	uint8_t want[20], got[20], again[20];
	osd_key *k;

	fill(parent, sizeof(parent), 0x01);
	fill(seed, sizeof(seed), 0x90);
	fill(kid, sizeof(kid), 0xE0);
	memcpy(msg, seed, 20);
	memcpy(msg + 20, kid, 7);
	msg[27] = OSD_KEY_WORKING;
	msg[28] = 9;
	ck_assert_int_eq(sec_cli_hmac_sha1(parent, 20, msg, sizeof(msg), want), 0);
	ck_assert_int_eq(osd_key_new(&k, parent, 20), 0);
	ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_WORKING, 9, got), 0);
	ck_assert_mem_eq(got, want, 20);
	ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_WORKING, 9, again), 0);
	ck_assert_mem_eq(again, want, 20);
	osd_key_free(k);
}
END_TEST

START_TEST(test_derive_differs)
{
	uint8_t parent[20], seed[OSD_SEED_LEN], kid[OSD_KEY_ID_LEN];
	uint8_t base[20], other[20];
	osd_key *k, *k2;
	size_t i;

	fill(parent, sizeof(parent), 0x01);
	fill(seed, sizeof(seed), 0x90);
	fill(kid, sizeof(kid), 0xE0);
	ck_assert_int_eq(osd_key_new(&k, parent, 20), 0);
	ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_WORKING, 0, base), 0);
	for (i = 0; i < sizeof(seed) * 8; i++) {
		seed[i / 8] ^= (uint8_t)(1u << (i % 8));
		ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_WORKING, 0, other), 0);
		ck_assert_mem_ne(other, base, 20);
		seed[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	for (i = 0; i < sizeof(kid) * 8; i++) {
		kid[i / 8] ^= (uint8_t)(1u << (i % 8));
		ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_WORKING, 0, other), 0);
		ck_assert_mem_ne(other, base, 20);
		kid[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	for (i = 1; i < 16; i++) {
		ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_WORKING, (uint8_t)i, other), 0);
		ck_assert_mem_ne(other, base, 20);
	}
	ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_PARTITION, 0, other), 0);
	ck_assert_mem_ne(other, base, 20);
	ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_ROOT, 0, other), 0);
	ck_assert_mem_ne(other, base, 20);
	parent[0] ^= 0x80;
	ck_assert_int_eq(osd_key_new(&k2, parent, 20), 0);
	ck_assert_int_eq(osd_key_derive(k2, seed, kid, OSD_KEY_WORKING, 0, other), 0);
	ck_assert_mem_ne(other, base, 20);
	osd_key_free(k2);
	osd_key_free(k);
}
END_TEST

START_TEST(test_derive_bad_args)
{
	uint8_t parent[20] = { 1 }, seed[OSD_SEED_LEN] = { 0 }, kid[OSD_KEY_ID_LEN] = { 0 };
	uint8_t out[20];
	osd_key *k;

	ck_assert_int_eq(osd_key_new(&k, parent, 20), 0);
	ck_assert_int_eq(osd_key_derive(k, seed, kid, 0, 0, out), -EINVAL);
	ck_assert_int_eq(osd_key_derive(k, seed, kid, 4, 0, out), -EINVAL);
	ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_WORKING, 16, out), -EINVAL);
	/* Root and partition keys have no versions. */
	ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_ROOT, 1, out), -EINVAL);
	ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_PARTITION, 2, out), -EINVAL);
	ck_assert_int_eq(osd_key_derive(NULL, seed, kid, OSD_KEY_ROOT, 0, out), -EINVAL);
	ck_assert_int_eq(osd_key_derive(k, NULL, kid, OSD_KEY_ROOT, 0, out), -EINVAL);
	ck_assert_int_eq(osd_key_derive(k, seed, NULL, OSD_KEY_ROOT, 0, out), -EINVAL);
	ck_assert_int_eq(osd_key_derive(k, seed, kid, OSD_KEY_ROOT, 0, NULL), -EINVAL);
	osd_key_free(k);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("security_derive");
	TCase *tc = tcase_create("derive");
	SRunner *sr;
	int failed;

	if (!sec_cli_available()) {
		fprintf(stderr, "openssl command-line tool not found: skipping\n");
		return 77;
	}
	tcase_add_test(tc, test_capability_key_v1);
	tcase_add_test(tc, test_capability_key_v2);
	tcase_add_test(tc, test_capability_key_bad_args);
	tcase_add_test(tc, test_derive_vector);
	tcase_add_test(tc, test_derive_differs);
	tcase_add_test(tc, test_derive_bad_args);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
