/* Credential issuer: key selection, -ENOKEY, capability fields, concurrency. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <osd/capability.h>
#include <osd/cdb.h>
#include <osd/security.h>

static const uint8_t sysid[OSD_SYSTEM_ID_LEN] = "issuer-test-system-1";

static void key_bytes(uint8_t k[20], uint8_t seed)
{
	int i;

	for (i = 0; i < 20; i++)
		k[i] = (uint8_t)(seed * 13 + i);
}

/* The capability key the OSD would compute with @secret_bytes. */
static void expected_key(const uint8_t secret_bytes[20], const struct osd_credential *cred,
			 uint8_t out[20])
{
	osd_key *k;

	ck_assert_int_eq(osd_key_new(&k, secret_bytes, 20), 0);
	ck_assert_int_eq(osd_capability_key(k, cred->version, &cred->cap, sysid, out), 0);
	osd_key_free(k);
}

static struct osd_cred_request user_request(uint64_t partition, uint8_t kv)
{
	struct osd_cred_request r;

	memset(&r, 0, sizeof(r));
	r.version = OSD_V2;
	r.obj.partition = partition;
	r.obj.id = 0x10007;
	r.permissions = OSD_PERM_READ | OSD_PERM_GET_ATTR;
	r.method = OSD_SEC_CMDRSP;
	r.key_version = kv;
	return r;
}

START_TEST(test_enokey)
{
	osd_cred_issuer *iss;
	struct osd_cred_request r = user_request(0x10000, 1);
	struct osd_credential c, untouched;
	uint8_t k[20];

	memset(&c, 0xA5, sizeof(c));
	untouched = c;
	ck_assert_int_eq(osd_cred_issuer_new(&iss, sysid), 0);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -ENOKEY);
	ck_assert_mem_eq(&c, &untouched, sizeof(c));
	/* the root object needs the root key */
	r.obj.partition = 0;
	r.obj.id = 0;
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -ENOKEY);
	/* the partition exists but not this key version */
	key_bytes(k, 1);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 0x10000, 0, k), 0);
	r = user_request(0x10000, 1);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -ENOKEY);
	/* another partition's key does not help */
	r = user_request(0x10001, 0);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -ENOKEY);
	/* a root key does not sign partition capabilities */
	ck_assert_int_eq(osd_cred_issuer_set_root_key(iss, k), 0);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -ENOKEY);
	/* NOSEC needs no key; the capability key is zero */
	r.method = OSD_SEC_NOSEC;
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), 0);
	memset(k, 0, sizeof(k));
	ck_assert_mem_eq(c.cap_key, k, 20);
	ck_assert_uint_eq(c.cap.security_method, OSD_SEC_NOSEC);
	osd_cred_issuer_free(iss);
}
END_TEST

START_TEST(test_root_vs_working)
{
	osd_cred_issuer *iss;
	uint8_t root[20], w3[20], w4[20], want[20], other[20];
	struct osd_cred_request r;
	struct osd_credential c;

	key_bytes(root, 7);
	key_bytes(w3, 3);
	key_bytes(w4, 4);
	ck_assert_int_eq(osd_cred_issuer_new(&iss, sysid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(iss, root), 0);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 0x20000, 3, w3), 0);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 0x20000, 4, w4), 0);

	/* root object: root key, whatever the key version says */
	memset(&r, 0, sizeof(r));
	r.version = OSD_V1;
	r.permissions = OSD_PERM_CREATE;
	r.method = OSD_SEC_CAPKEY;
	r.key_version = 3;
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), 0);
	ck_assert_uint_eq(c.cap.object_type, OSD_OBJ_ROOT);
	expected_key(root, &c, want);
	ck_assert_mem_eq(c.cap_key, want, 20);
	expected_key(w3, &c, other);
	ck_assert_mem_ne(c.cap_key, other, 20);
	ck_assert_mem_eq(c.system_id, sysid, 20);

	/* partition object and user object: the working key of key_version */
	r.obj.partition = 0x20000;
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), 0);
	ck_assert_uint_eq(c.cap.object_type, OSD_OBJ_PARTITION);
	expected_key(w3, &c, want);
	ck_assert_mem_eq(c.cap_key, want, 20);
	r = user_request(0x20000, 4);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), 0);
	expected_key(w4, &c, want);
	ck_assert_mem_eq(c.cap_key, want, 20);
	expected_key(w3, &c, other);
	ck_assert_mem_ne(c.cap_key, other, 20);

	/* replacing a working key changes the keys issued from then on */
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 0x20000, 4, w3), 0);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), 0);
	expected_key(w3, &c, want);
	ck_assert_mem_eq(c.cap_key, want, 20);
	osd_cred_issuer_free(iss);
}
END_TEST

START_TEST(test_capability_fields)
{
	osd_cred_issuer *iss;
	uint8_t w[20];
	struct osd_cred_request r = user_request(0x10000, 9);
	struct osd_credential a, b;

	key_bytes(w, 9);
	ck_assert_int_eq(osd_cred_issuer_new(&iss, sysid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 0x10000, 9, w), 0);
	r.is_collection = 1;
	r.obj.id = 0x10010;
	r.expiration = 0x018C2A3B4C5DULL;
	r.object_created = 0x018C00000001ULL;
	r.policy_access_tag = 0xCAFEF00D;
	r.permissions = OSD_PERM_QUERY | OSD_PERM_GET_ATTR;
	ck_assert_int_eq(osd_cred_issue(iss, &r, &a), 0);
	ck_assert_int_eq(a.version, OSD_V2);
	ck_assert_uint_eq(a.cap.format, 2);
	ck_assert_uint_eq(a.cap.key_version, 9);
	ck_assert_uint_eq(a.cap.icv_algorithm, OSD_ICV_ALG_HMAC_SHA1);
	ck_assert_uint_eq(a.cap.security_method, OSD_SEC_CMDRSP);
	ck_assert_uint_eq(a.cap.expiration, r.expiration);
	ck_assert_uint_eq(a.cap.object_created, r.object_created);
	ck_assert_uint_eq(a.cap.policy_access_tag, 0xCAFEF00D);
	ck_assert_uint_eq(a.cap.object_type, OSD_OBJ_COLLECTION);
	ck_assert_uint_eq(a.cap.desc_type, OSD_CAP_DESC_COL);
	ck_assert_uint_eq(a.cap.permissions, OSD_PERM_QUERY | OSD_PERM_GET_ATTR);
	ck_assert_uint_eq(a.cap.allowed_partition, 0x10000);
	ck_assert_uint_eq(a.cap.allowed_object, 0x10010);
	/* identical requests still get distinct capabilities and keys */
	ck_assert_int_eq(osd_cred_issue(iss, &r, &b), 0);
	ck_assert_mem_ne(a.cap.discriminator, b.cap.discriminator, sizeof(a.cap.discriminator));
	ck_assert_mem_ne(a.cap_key, b.cap_key, 20);
	osd_cred_issuer_free(iss);
}
END_TEST

START_TEST(test_bad_requests)
{
	osd_cred_issuer *iss;
	uint8_t w[20];
	struct osd_cred_request r;
	struct osd_credential c;

	key_bytes(w, 1);
	ck_assert_int_eq(osd_cred_issuer_new(&iss, sysid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 0, 0, w), -EINVAL);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 5, 16, w), -EINVAL);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 5, 0, NULL), -EINVAL);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(iss, NULL), -EINVAL);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 0x10000, 0, w), 0);

	r = user_request(0x10000, 16);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -EINVAL);
	r = user_request(0x10000, 0);
	r.version = (enum osd_version)3;
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -EINVAL);
	r = user_request(0x10000, 0);
	r.method = (enum osd_sec_method)4;
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -EINVAL);
	r = user_request(0x10000, 0);
	r.version = OSD_V1;
	r.permissions = OSD_PERM_READ | OSD_PERM_QUERY; /* QUERY is v2 only */
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -EINVAL);
	r = user_request(0x10000, 0);
	r.permissions = 0x0001; /* reserved bit */
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -EINVAL);
	r = user_request(0x10000, 0);
	r.expiration = 0x1000000000000ULL; /* beyond 48 bits */
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -EINVAL);
	r = user_request(0, 0); /* partition 0 with an object id */
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -EINVAL);
	r = user_request(0x10000, 0);
	r.obj.id = 0;
	r.is_collection = 1; /* a partition is not a collection */
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -EINVAL);
	r = user_request(0x10000, 0);
	ck_assert_int_eq(osd_cred_issue(NULL, &r, &c), -EINVAL);
	ck_assert_int_eq(osd_cred_issue(iss, NULL, &c), -EINVAL);
	ck_assert_int_eq(osd_cred_issue(iss, &r, NULL), -EINVAL);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), 0);
	osd_cred_issuer_free(iss);
	osd_cred_issuer_free(NULL);
	ck_assert_int_eq(osd_cred_issuer_new(&iss, NULL), -EINVAL);
}
END_TEST

/* Issued credential -> signed CDB -> target-side verification. */
START_TEST(test_end_to_end)
{
	osd_cred_issuer *iss;
	uint8_t w[20], cdb[OSD_CDB_V2_LEN], tk[20];
	struct osd_cred_request r = user_request(0x10000, 2);
	struct osd_credential c;
	struct osd_capability dec;
	osd_key *ck, *secret, *tkey;

	key_bytes(w, 2);
	ck_assert_int_eq(osd_cred_issuer_new(&iss, sysid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 0x10000, 2, w), 0);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), 0);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x7F;
	cdb[7] = OSD_CDB_V2_LEN - 8;
	cdb[8] = 0x88;
	cdb[9] = 0x85;
	ck_assert_int_eq(osd_capability_encode(OSD_V2, &c.cap, cdb + 80, OSD_CAP_V2_LEN),
			 OSD_CAP_V2_LEN);
	ck_assert_int_eq(osd_key_new(&ck, c.cap_key, 20), 0);
	ck_assert_int_eq(osd_sec_sign_cdb(ck, OSD_SEC_CMDRSP, cdb, sizeof(cdb), NULL, 0,
					  osd_now_ms()), 0);
	/* target: decode, recompute with its working key, verify */
	ck_assert_int_eq(osd_capability_decode(OSD_V2, cdb + 80, OSD_CAP_V2_LEN, &dec), 0);
	ck_assert_int_eq(osd_key_new(&secret, w, 20), 0);
	ck_assert_int_eq(osd_capability_key(secret, OSD_V2, &dec, sysid, tk), 0);
	ck_assert_int_eq(osd_key_new(&tkey, tk, 20), 0);
	ck_assert_int_eq(osd_sec_verify_cdb(tkey, dec.security_method, cdb, sizeof(cdb), NULL, 0),
			 0);
	osd_key_free(tkey);
	osd_key_free(secret);
	osd_key_free(ck);
	osd_cred_issuer_free(iss);
}
END_TEST

/* SET KEY credentials are signed with the parent of the key being set. */
START_TEST(test_set_key_credentials)
{
	osd_cred_issuer *iss;
	uint8_t root[20], pkey[20], w0[20], want[20], seed[OSD_SEED_LEN], kid[OSD_KEY_ID_LEN];
	struct osd_cred_request r;
	struct osd_credential c;
	osd_key *rk;

	key_bytes(root, 1);
	key_bytes(w0, 2);
	memset(seed, 0x5E, sizeof(seed));
	memset(kid, 0x1D, sizeof(kid));
	memset(&r, 0, sizeof(r));
	r.version = OSD_V2;
	r.obj.partition = 0x30000;
	r.permissions = OSD_PERM_POL_SEC;
	r.method = OSD_SEC_CMDRSP;
	ck_assert_int_eq(osd_cred_issuer_new(&iss, sysid), 0);
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, OSD_KEY_PARTITION, &c), -ENOKEY);
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, OSD_KEY_WORKING, &c), -ENOKEY);
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, OSD_KEY_ROOT, &c), -ENOTSUP);
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, 0, &c), -EINVAL);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(iss, root), 0);

	/* partition key: signed with the root key */
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, OSD_KEY_PARTITION, &c), 0);
	ck_assert_uint_eq(c.cap.object_type, OSD_OBJ_PARTITION);
	expected_key(root, &c, want);
	ck_assert_mem_eq(c.cap_key, want, 20);

	/* the manager derives the partition key as the OSD will, then installs it */
	ck_assert_int_eq(osd_key_new(&rk, root, 20), 0);
	ck_assert_int_eq(osd_key_derive(rk, seed, kid, OSD_KEY_PARTITION, 0, pkey), 0);
	osd_key_free(rk);
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, OSD_KEY_WORKING, &c), -ENOKEY);
	ck_assert_int_eq(osd_cred_issuer_set_partition_key(iss, 0x30000, pkey), 0);
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, OSD_KEY_WORKING, &c), 0);
	expected_key(pkey, &c, want);
	ck_assert_mem_eq(c.cap_key, want, 20);

	/* the partition key never signs ordinary credentials */
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), -ENOKEY);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, 0x30000, 0, w0), 0);
	ck_assert_int_eq(osd_cred_issue(iss, &r, &c), 0);
	expected_key(w0, &c, want);
	ck_assert_mem_eq(c.cap_key, want, 20);

	/* SET KEY addresses the partition object */
	r.obj.id = 0x10000;
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, OSD_KEY_WORKING, &c), -EINVAL);
	r.obj.partition = 0;
	r.obj.id = 0;
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, OSD_KEY_PARTITION, &c), -EINVAL);
	ck_assert_int_eq(osd_cred_issuer_set_partition_key(iss, 0, pkey), -EINVAL);
	ck_assert_int_eq(osd_cred_issuer_set_partition_key(iss, 5, NULL), -EINVAL);
	osd_cred_issuer_free(iss);
}
END_TEST

#define THREADS 4
#define ROUNDS 1500

struct worker {
	osd_cred_issuer *iss;
	int index;
	int failures;
};

/* Each thread issues for its own and shared partitions while adding new ones. */
static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	uint8_t key[20], want[20];
	struct osd_credential c;
	struct osd_cred_request r;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		uint64_t part = 0x10000 + (uint64_t)(i % 8);
		uint8_t kv = (uint8_t)(i % 16);

		/* every thread installs the same deterministic key for a slot */
		key_bytes(key, (uint8_t)(part * 16 + kv));
		if (osd_cred_issuer_set_working_key(wk->iss, part, kv, key) != 0)
			wk->failures++;
		/* new partitions keep the array growing under concurrent readers */
		key_bytes(key, 0xEE);
		if (osd_cred_issuer_set_working_key(wk->iss,
						    0x100000 + (uint64_t)(wk->index * ROUNDS + i),
						    0, key) != 0)
			wk->failures++;
		r = user_request(part, kv);
		if (osd_cred_issue(wk->iss, &r, &c) != 0) {
			wk->failures++;
			continue;
		}
		key_bytes(key, (uint8_t)(part * 16 + kv));
		expected_key(key, &c, want);
		if (memcmp(want, c.cap_key, 20) != 0)
			wk->failures++;
	}
	return NULL;
}

START_TEST(test_threads)
{
	osd_cred_issuer *iss;
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int i;

	ck_assert_int_eq(osd_cred_issuer_new(&iss, sysid), 0);
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ iss, i, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		ck_assert_int_eq(w[i].failures, 0);
	}
	osd_cred_issuer_free(iss);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("security_issuer");
	TCase *tc = tcase_create("issuer");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_enokey);
	tcase_add_test(tc, test_root_vs_working);
	tcase_add_test(tc, test_capability_fields);
	tcase_add_test(tc, test_bad_requests);
	tcase_add_test(tc, test_end_to_end);
	tcase_add_test(tc, test_set_key_credentials);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
