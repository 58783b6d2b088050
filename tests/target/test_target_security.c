/*
 * Security enforcement of the target (docs/security.md), OSD-1 and OSD-2
 * (loop index 0 = OSD-1, 1 = OSD-2): keys installed with SET KEY from a
 * bootstrapped root key, CAPKEY/CMDRSP/ALLDATA requests, response and data
 * ICVs, and every rejection with its sense, checking nothing was executed.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "proto/byteorder.h"

#define P1 0x10000ULL
#define P2 0x10001ULL
#define O1 0x10000ULL
#define CC OSD_APAGE_CURRENT_COMMAND
#define UPOL (OSD_APAGE_USER_BASE + OSD_APAGE_POLICY_SECURITY)
#define PPOL (OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY)

static struct h_target ht;
static osd_cred_issuer *iss;
static uint8_t sysid[OSD_SYSTEM_ID_LEN];
static const uint8_t root_key[OSD_HMAC_LEN] = "root-key-0123456789";
static uint8_t part_key[OSD_HMAC_LEN], work_key[OSD_HMAC_LEN];

static enum osd_version ver(int i)
{
	return i ? OSD_V2 : OSD_V1;
}

/* A credential for (pid, oid) from the test's security manager. */
static struct osd_credential cred(enum osd_version v, uint64_t pid, uint64_t oid, uint16_t perms,
				  enum osd_sec_method m)
{
	struct osd_cred_request rq = { 0 };
	struct osd_credential c;

	rq.version = v;
	rq.obj.partition = pid;
	rq.obj.id = oid;
	rq.permissions = perms;
	rq.method = m;
	ck_assert_int_eq(osd_cred_issue(iss, &rq, &c), 0);
	return c;
}

/* SET KEY credentials are keyed with the parent key (docs/security.md 2.2). */
static struct osd_credential setkey_cred(enum osd_version v, uint64_t pid,
					 const uint8_t parent[OSD_HMAC_LEN])
{
	struct osd_credential c = { 0 };
	struct osd_obj_id o = { pid, 0 };
	osd_key *k;

	c.version = v;
	osd_capability_init(&c.cap, v, &o, 0, OSD_PERM_POL_SEC, OSD_SEC_CMDRSP);
	c.cap.icv_algorithm = OSD_ICV_ALG_HMAC_SHA1;
	memcpy(c.system_id, sysid, sizeof(sysid));
	ck_assert_int_eq(osd_key_new(&k, parent, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_capability_key(k, v, &c.cap, sysid, c.cap_key), 0);
	osd_key_free(k);
	return c;
}

/* SET KEY of @p kind with a fresh seed; the derived key goes to @p out. */
static void set_key(enum osd_version v, uint64_t pid, enum osd_key_to_set kind,
		    const uint8_t parent[OSD_HMAC_LEN], uint8_t seed_byte, uint8_t out[OSD_HMAC_LEN])
{
	struct osd_credential c = setkey_cred(v, pid, parent);
	struct h_req r;
	osd_key *k;

	h_req(&r, v, OSD_ACT_SET_KEY, pid, 0);
	r.cdb.cmd_options = (uint8_t)kind;
	r.cdb.key_version = 0;
	memset(r.cdb.seed, seed_byte, OSD_SEED_LEN);
	memcpy(r.cdb.key_id, "KEYID-1", OSD_KEY_ID_LEN);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	ck_assert_int_eq(osd_key_new(&k, parent, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_key_derive(k, r.cdb.seed, r.cdb.key_id, (uint8_t)kind, 0, out), 0);
	osd_key_free(k);
}

static void set_method(enum osd_version v, uint64_t pid, enum osd_sec_method m)
{
	struct h_req r;
	uint8_t b = (uint8_t)m;

	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, pid, 0);
	h_set(&r, PPOL, OSD_ATTR_PS_DEFAULT_METHOD, &b, 1);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

/* CREATE PARTITION signed with the root key: a keyed root refuses it keyless. */
static void root_create_partition(enum osd_version v, uint64_t pid)
{
	struct osd_credential c = cred(v, 0, 0, OSD_PERM_CREATE, OSD_SEC_CAPKEY);
	struct h_req r;

	h_req(&r, v, OSD_ACT_CREATE_PARTITION, pid, 0);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

/* Root key, partition P1 with partition key and working key 0, object O1 = "original". */
static void secure_setup(enum osd_version v, enum osd_sec_method m)
{
	struct osd_credential c;
	struct h_req r;

	osd_target_system_id(ht.tgt, sysid);
	ck_assert_int_eq(osd_target_set_root_key(ht.tgt, root_key), 0);
	ck_assert_int_eq(osd_cred_issuer_new(&iss, sysid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(iss, root_key), 0);
	root_create_partition(v, P1);
	set_key(v, P1, OSD_KEY_PARTITION, root_key, 0x11, part_key);
	set_key(v, P1, OSD_KEY_WORKING, part_key, 0x22, work_key);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, P1, 0, work_key), 0);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, P2, 0, work_key), 0);
	set_method(v, P1, m);
	c = cred(v, P1, 0, OSD_PERM_CREATE, m);
	h_req(&r, v, OSD_ACT_CREATE, P1, O1);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	c = cred(v, P1, O1, OSD_PERM_WRITE, m);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = (const uint8_t *)"original";
	r.payload_len = 8;
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

static void setup(void)
{
	h_target_open(&ht);
	iss = NULL;
}

static void teardown(void)
{
	osd_cred_issuer_free(iss);
	h_target_close(&ht);
}

/* O1 still holds "original" (read with a valid CMDRSP credential). */
static void expect_unchanged(enum osd_version v)
{
	struct osd_credential c = cred(v, P1, O1, OSD_PERM_READ, OSD_SEC_CMDRSP);
	struct h_req r;

	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 8;
	r.data_in = 8;
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_mem_eq(r.in, "original", 8);
	h_req_free(&r);
}

/* An attempt to overwrite O1 with @p c; returns with r filled (caller frees). */
static void evil_write(struct h_req *r, enum osd_version v, const struct osd_credential *c)
{
	h_req(r, v, OSD_ACT_WRITE, P1, O1);
	r->payload = (const uint8_t *)"EVILEVIL";
	r->payload_len = 8;
	r->cred = c;
	h_run(&ht, r);
}

static uint16_t icv_field(enum osd_version v)
{
	return v == OSD_V1 ? 160 : 184;
}

START_TEST(methods_accepted)
{
	enum osd_version v = ver(_i);
	static const enum osd_sec_method ms[] = { OSD_SEC_CAPKEY, OSD_SEC_CMDRSP, OSD_SEC_ALLDATA };

	secure_setup(v, OSD_SEC_CAPKEY);
	for (size_t i = 0; i < 3; i++) {
		struct osd_credential c = cred(v, P1, O1, OSD_PERM_READ | OSD_PERM_WRITE, ms[i]);
		struct h_req r;

		h_req(&r, v, OSD_ACT_WRITE, P1, O1);
		r.payload = (const uint8_t *)"original";
		r.payload_len = 8;
		r.cred = &c;
		h_run(&ht, &r);
		h_expect_good(&r);
		h_req_free(&r);
		h_req(&r, v, OSD_ACT_READ, P1, O1);
		r.cdb.length = 8;
		r.data_in = 8;
		r.cred = &c;
		h_run(&ht, &r);
		h_expect_good(&r);
		ck_assert_mem_eq(r.in, "original", 8);
		if (ms[i] == OSD_SEC_ALLDATA) {
			/* Data-in integrity block: counts, then the bound ICV. */
			const uint8_t *b = r.in + (size_t)r.cdb.data_in_icv_offset;
			uint8_t mac[OSD_HMAC_LEN];
			struct iovec iov[2] = { { (void *)b, 16 }, { r.in, 8 } };
			osd_key *k;

			ck_assert_uint_eq(osd__get_be64(b), 8);
			ck_assert_uint_eq(osd__get_be64(b + 8), 0);
			ck_assert_int_eq(osd_key_new(&k, c.cap_key, OSD_HMAC_LEN), 0);
			ck_assert_int_eq(osd_sec_bound_icv(k, OSD_ICV_DATA_IN,
							   r.cdb_bytes + icv_field(v), iov, 2, mac), 0);
			osd_key_free(k);
			ck_assert_mem_eq(b + 16, mac, OSD_HMAC_LEN);
		}
		h_req_free(&r);
	}
}
END_TEST

START_TEST(response_icv)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	uint8_t mac[OSD_HMAC_LEN], status = 0, sense[252];
	struct h_req r;
	const uint8_t *val;
	uint16_t len;
	osd_key *k;

	secure_setup(v, OSD_SEC_CMDRSP);
	c = cred(v, P1, O1, OSD_PERM_GET_ATTR | OSD_PERM_READ, OSD_SEC_CMDRSP);
	ck_assert_int_eq(osd_key_new(&k, c.cap_key, OSD_HMAC_LEN), 0);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, CC, OSD_ATTR_CC_RESPONSE_ICV);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert(h_attr(&r, CC, OSD_ATTR_CC_RESPONSE_ICV, &val, &len));
	ck_assert_uint_eq(len, v == OSD_V1 ? 20 : 32);
	{
		struct iovec iov = { &status, 1 };

		ck_assert_int_eq(osd_sec_bound_icv(k, OSD_ICV_RESPONSE, r.cdb_bytes + icv_field(v),
						   &iov, 1, mac), 0);
	}
	ck_assert_mem_eq(val, mac, OSD_HMAC_LEN);
	h_req_free(&r);
	/* A short read ends in CHECK CONDITION: descriptor 07h carries the ICV. */
	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 64;
	r.data_in = 64;
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_RECOVERED_ERROR, OSD_ASC_READ_PAST_END_OF_OBJECT);
	ck_assert(r.sense.has_ricv);
	memcpy(sense, r.x.sense, r.x.sense_len);
	/* Zero the ICV bytes of 07h before recomputing. */
	for (size_t p = 8; p + 2 <= r.x.sense_len; p += 2 + sense[p + 1])
		if (sense[p] == 0x07)
			memset(sense + p + 2, 0, sense[p + 1]);
	status = OSD_STATUS_CHECK_CONDITION;
	{
		struct iovec iov[2] = { { &status, 1 }, { sense, r.x.sense_len } };

		ck_assert_int_eq(osd_sec_bound_icv(k, OSD_ICV_RESPONSE, r.cdb_bytes + icv_field(v),
						   iov, 2, mac), 0);
	}
	ck_assert_mem_eq(r.sense.ricv, mac, OSD_HMAC_LEN);
	h_req_free(&r);
	osd_key_free(k);
}
END_TEST

START_TEST(nosec_refused_when_required)
{
	enum osd_version v = ver(_i);
	struct h_req r;

	secure_setup(v, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1); /* harness NOSEC capability */
	r.payload = (const uint8_t *)"EVILEVIL";
	r.payload_len = 8;
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 80 + 2);
	ck_assert(!r.sense.has_ricv);
	h_req_free(&r);
	expect_unchanged(v);
}
END_TEST

START_TEST(wrong_key)
{
	enum osd_version v = ver(_i);
	uint8_t other[OSD_HMAC_LEN];
	struct osd_credential c;
	struct h_req r;

	secure_setup(v, OSD_SEC_CMDRSP);
	memset(other, 0x5C, sizeof(other));
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, P1, 0, other), 0);
	c = cred(v, P1, O1, OSD_PERM_WRITE, OSD_SEC_CMDRSP);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, P1, 0, work_key), 0);
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, icv_field(v));
	ck_assert(!r.sense.has_ricv);
	h_req_free(&r);
	/* A key version the target has no key for. */
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, P1, 5, work_key), 0);
	{
		struct osd_cred_request rq = { v, { P1, O1 }, 0, OSD_PERM_WRITE, OSD_SEC_CMDRSP, 5, 0, 0, 0 };

		ck_assert_int_eq(osd_cred_issue(iss, &rq, &c), 0);
	}
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 81);
	h_req_free(&r);
	expect_unchanged(v);
}
END_TEST

START_TEST(expired)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	struct h_req r;
	struct osd_cred_request rq = { v, { P1, O1 }, 0, OSD_PERM_WRITE, OSD_SEC_CMDRSP, 0, 0, 0, 0 };

	secure_setup(v, OSD_SEC_CMDRSP);
	rq.expiration = osd_now_ms() - 1000;
	ck_assert_int_eq(osd_cred_issue(iss, &rq, &c), 0);
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 80 + 4);
	h_req_free(&r);
	expect_unchanged(v);
}
END_TEST

START_TEST(wrong_object_and_partition)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	struct h_req r;

	secure_setup(v, OSD_SEC_CMDRSP);
	c = cred(v, P1, O1 + 1, OSD_PERM_WRITE, OSD_SEC_CMDRSP);
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 80 + 55);
	h_req_free(&r);
	c = cred(v, P2, O1, OSD_PERM_WRITE, OSD_SEC_CMDRSP);
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 80 + 55);
	h_req_free(&r);
	/* A partition capability without GLOBAL does not reach the objects inside. */
	c = cred(v, P1, 0, OSD_PERM_WRITE, OSD_SEC_CMDRSP);
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 80 + 55);
	h_req_free(&r);
	expect_unchanged(v);
}
END_TEST

START_TEST(missing_permission)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	struct h_req r;

	secure_setup(v, OSD_SEC_CMDRSP);
	c = cred(v, P1, O1, OSD_PERM_READ | OSD_PERM_APPEND, OSD_SEC_CMDRSP);
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 80 + 49);
	h_req_free(&r);
	/* WRITE alone does not cover a piggy-backed set list. */
	c = cred(v, P1, O1, OSD_PERM_WRITE, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = (const uint8_t *)"EVILEVIL";
	r.payload_len = 8;
	h_set(&r, 0x10003, 1, "x", 1);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 80 + 49);
	h_req_free(&r);
	expect_unchanged(v);
}
END_TEST

START_TEST(policy_tag)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	struct osd_cred_request rq = { v, { P1, O1 }, 0, OSD_PERM_WRITE, OSD_SEC_CMDRSP, 0, 0, 0, 0 };
	struct h_req r;

	secure_setup(v, OSD_SEC_CMDRSP);
	c = cred(v, P1, O1, OSD_PERM_SET_ATTR, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set(&r, UPOL, OSD_ATTR_PS_POLICY_ACCESS_TAG, "\0\0\0\5", 4);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	rq.policy_access_tag = 6;
	ck_assert_int_eq(osd_cred_issue(iss, &rq, &c), 0);
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB,
		       v == OSD_V1 ? 80 + 56 : 80 + 60);
	h_req_free(&r);
	expect_unchanged(v);
	/* The matching tag works. */
	rq.policy_access_tag = 5;
	ck_assert_int_eq(osd_cred_issue(iss, &rq, &c), 0);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = (const uint8_t *)"original";
	r.payload_len = 8;
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}
END_TEST

START_TEST(forged_icv)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	struct h_req r;

	secure_setup(v, OSD_SEC_CMDRSP);
	c = cred(v, P1, O1, OSD_PERM_WRITE, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = (const uint8_t *)"original";
	r.payload_len = 8;
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	/* Change the starting address after signing. */
	memcpy(r.out, "EVILEVIL", 8);
	r.cdb_bytes[v == OSD_V1 ? 51 : 47] = 0;
	r.cdb_bytes[v == OSD_V1 ? 50 : 46] = 0;
	r.cdb_bytes[icv_field(v)] ^= 0xFF;
	h_rerun(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, icv_field(v));
	h_req_free(&r);
	/* Widening the permissions in the CDB changes the capability key. */
	c = cred(v, P1, O1, OSD_PERM_READ, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 8;
	r.data_in = 8;
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	c.cap.permissions |= OSD_PERM_WRITE;
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, icv_field(v));
	h_req_free(&r);
	expect_unchanged(v);
}
END_TEST

START_TEST(replayed_and_stale_nonce)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	struct h_req r, r2;

	secure_setup(v, OSD_SEC_CMDRSP);
	c = cred(v, P1, O1, OSD_PERM_WRITE, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = (const uint8_t *)"EVILEVIL";
	r.payload_len = 8;
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	/* Restore, then replay the old request byte for byte. */
	h_req(&r2, v, OSD_ACT_WRITE, P1, O1);
	r2.payload = (const uint8_t *)"original";
	r2.payload_len = 8;
	r2.cred = &c;
	h_run(&ht, &r2);
	h_expect_good(&r2);
	h_req_free(&r2);
	h_rerun(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_NONCE_NOT_UNIQUE);
	h_req_free(&r);
	expect_unchanged(v);
	/* A nonce two minutes old is outside the default 60 s window. */
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = (const uint8_t *)"EVILEVIL";
	r.payload_len = 8;
	r.cred = &c;
	r.nonce_time = osd_now_ms() - 120000;
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_NONCE_TIMESTAMP_OUT_OF_RANGE);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = (const uint8_t *)"EVILEVIL";
	r.payload_len = 8;
	r.cred = &c;
	r.nonce_time = osd_now_ms() + 120000;
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_NONCE_TIMESTAMP_OUT_OF_RANGE);
	h_req_free(&r);
	expect_unchanged(v);
}
END_TEST

START_TEST(alldata_tampered)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	struct h_req r;

	secure_setup(v, OSD_SEC_ALLDATA);
	c = cred(v, P1, O1, OSD_PERM_WRITE, OSD_SEC_ALLDATA);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = (const uint8_t *)"EVILEVIL";
	r.payload_len = 8;
	r.cred = &c;
	r.corrupt_payload = 1;
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_DATA_OUT_ICV);
	h_req_free(&r);
	/* CMDRSP is weaker than the partition's ALLDATA. */
	c = cred(v, P1, O1, OSD_PERM_WRITE, OSD_SEC_CMDRSP);
	evil_write(&r, v, &c);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 80 + 2);
	h_req_free(&r);
	{
		struct osd_credential rc = cred(v, P1, O1, OSD_PERM_READ, OSD_SEC_ALLDATA);

		h_req(&r, v, OSD_ACT_READ, P1, O1);
		r.cdb.length = 8;
		r.data_in = 8;
		r.cred = &rc;
		h_run(&ht, &r);
		h_expect_good(&r);
		ck_assert_mem_eq(r.in, "original", 8);
		h_req_free(&r);
	}
}
END_TEST

START_TEST(key_rotation)
{
	enum osd_version v = ver(_i);
	struct osd_credential old;
	uint8_t new_work[OSD_HMAC_LEN];
	struct h_req r;

	secure_setup(v, OSD_SEC_CMDRSP);
	old = cred(v, P1, O1, OSD_PERM_WRITE, OSD_SEC_CMDRSP);
	set_key(v, P1, OSD_KEY_WORKING, part_key, 0x33, new_work);
	ck_assert_mem_ne(new_work, work_key, OSD_HMAC_LEN);
	evil_write(&r, v, &old);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, icv_field(v));
	h_req_free(&r);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, P1, 0, new_work), 0);
	expect_unchanged(v);
}
END_TEST

START_TEST(key_rotation_new_key_works)
{
	enum osd_version v = ver(_i);
	struct osd_credential fresh;
	uint8_t new_work[OSD_HMAC_LEN];
	struct h_req r;

	secure_setup(v, OSD_SEC_CMDRSP);
	set_key(v, P1, OSD_KEY_WORKING, part_key, 0x33, new_work);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, P1, 0, new_work), 0);
	fresh = cred(v, P1, O1, OSD_PERM_READ, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 8;
	r.data_in = 8;
	r.cred = &fresh;
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_mem_eq(r.in, "original", 8);
	h_req_free(&r);
	/* The key identifier is published; the key itself never is. */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, 0);
	h_get(&r, PPOL, OSD_ATTR_PS_WORKING_KEY_ID(0));
	h_get(&r, 0x5FFFFFF0u, 0x10);
	fresh = cred(v, P1, 0, OSD_PERM_GET_ATTR, OSD_SEC_CMDRSP);
	r.cred = &fresh;
	h_run(&ht, &r);
	h_expect_good(&r);
	{
		const uint8_t *val;
		uint16_t len;

		ck_assert(h_attr(&r, PPOL, OSD_ATTR_PS_WORKING_KEY_ID(0), &val, &len));
		ck_assert_uint_eq(len, 7);
		ck_assert_mem_eq(val, "KEYID-1", 7);
		ck_assert_int_eq(h_attr(&r, 0x5FFFFFF0u, 0x10, &val, &len), 0);
	}
	h_req_free(&r);
	/* SET KEY of the root key (its parent is the master key) is refused. */
	{
		struct osd_credential c = setkey_cred(v, 0, root_key);

		c.cap.object_type = OSD_OBJ_ROOT;
		h_req(&r, v, OSD_ACT_SET_KEY, 0, 0);
		r.cdb.cmd_options = OSD_KEY_ROOT;
		r.cred = &c;
		h_run(&ht, &r);
		ck_assert_uint_eq(r.x.status, OSD_STATUS_CHECK_CONDITION);
		ck_assert_uint_eq(r.sense.asc, OSD_ASC_INVALID_FIELD_IN_CDB);
		h_req_free(&r);
	}
}
END_TEST

START_TEST(frozen_working_key)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	struct h_req r;

	secure_setup(v, OSD_SEC_CMDRSP);
	c = cred(v, P1, 0, OSD_PERM_SET_ATTR, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, 0);
	h_set(&r, PPOL, OSD_ATTR_PS_FROZEN_WORKING_KEYS, "\0\1", 2);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	c = setkey_cred(v, P1, part_key);
	h_req(&r, v, OSD_ACT_SET_KEY, P1, 0);
	r.cdb.cmd_options = OSD_KEY_WORKING;
	memset(r.cdb.seed, 0x44, OSD_SEED_LEN);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_SECURITY_WORKING_KEY_FROZEN);
	h_req_free(&r);
	expect_unchanged(v);
}
END_TEST

START_TEST(keys_persist)
{
	enum osd_version v = ver(_i);

	secure_setup(v, OSD_SEC_CMDRSP);
	h_target_reopen(&ht);
	expect_unchanged(v);
}
END_TEST

/* A READ of O1 with @p c; returns the SCSI status (r freed). */
static int read_with(enum osd_version v, const struct osd_credential *c)
{
	struct h_req r;
	int status;

	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 8;
	r.data_in = 8;
	r.cred = c;
	status = h_run(&ht, &r);
	if (status == OSD_STATUS_GOOD)
		ck_assert_mem_eq(r.in, "original", 8);
	h_req_free(&r);
	return status;
}

/*
 * The target caches capability keys: a capability that worked (and is
 * cached) must fail at once when its working key is rotated.
 * Loop: bit 0 = version, bit 1 = CMDRSP instead of CAPKEY.
 */
START_TEST(cached_capability_after_rotation)
{
	enum osd_version v = ver(_i & 1);
	enum osd_sec_method m = _i & 2 ? OSD_SEC_CMDRSP : OSD_SEC_CAPKEY;
	struct osd_credential old, rw;
	uint8_t new_work[OSD_HMAC_LEN];
	struct h_req r;

	secure_setup(v, m);
	old = cred(v, P1, O1, OSD_PERM_READ | OSD_PERM_WRITE, m);
	ck_assert_int_eq(read_with(v, &old), OSD_STATUS_GOOD);
	ck_assert_int_eq(read_with(v, &old), OSD_STATUS_GOOD);
	set_key(v, P1, OSD_KEY_WORKING, part_key, 0x44, new_work);
	ck_assert_int_eq(read_with(v, &old), OSD_STATUS_CHECK_CONDITION);
	evil_write(&r, v, &old);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, icv_field(v));
	h_req_free(&r);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, P1, 0, new_work), 0);
	rw = cred(v, P1, O1, OSD_PERM_READ, m);
	ck_assert_int_eq(read_with(v, &rw), OSD_STATUS_GOOD);
	ck_assert_int_eq(read_with(v, &rw), OSD_STATUS_GOOD);
}
END_TEST

/* A new root key (out of band) fails cached root capabilities at once. */
START_TEST(cached_capability_after_root_key_change)
{
	enum osd_version v = ver(_i);
	static const uint8_t new_root[OSD_HMAC_LEN] = "another-root-key-01";
	struct osd_credential rc;
	struct h_req r;
	int pass;

	secure_setup(v, OSD_SEC_CAPKEY);
	rc = cred(v, 0, 0, OSD_PERM_GET_ATTR, OSD_SEC_CAPKEY);
	for (pass = 0; pass < 3; pass++) {
		if (pass == 2)
			ck_assert_int_eq(osd_target_set_root_key(ht.tgt, new_root), 0);
		h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
		h_get(&r, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_RI_VENDOR_ID);
		r.cred = &rc;
		h_run(&ht, &r);
		if (pass < 2)
			h_expect_good(&r);
		else
			h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB,
				       icv_field(v));
		h_req_free(&r);
	}
}
END_TEST

/* FORMAT OSD drops every partition key: a cached partition capability goes too. */
START_TEST(cached_capability_after_format)
{
	enum osd_version v = ver(_i);
	struct osd_credential old = { 0 }, root;
	struct h_req r;

	secure_setup(v, OSD_SEC_CAPKEY);
	old = cred(v, P1, O1, OSD_PERM_READ, OSD_SEC_CAPKEY);
	ck_assert_int_eq(read_with(v, &old), OSD_STATUS_GOOD);
	root = cred(v, 0, 0, OSD_PERM_DEV_MGMT, OSD_SEC_CAPKEY);
	h_req(&r, v, OSD_ACT_FORMAT_OSD, 0, 0);
	r.cred = &root;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	root_create_partition(v, P1);
	h_create_object(&ht, v, P1, O1);
	/* P1 has no working key now: checks 4 refuses the capability. */
	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 8;
	r.data_in = 8;
	r.cred = &old;
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 81);
	h_req_free(&r);
}
END_TEST

/*
 * Check 1: a capability with a reserved bit set is refused (cap+0), also
 * when its canonical twin is cached. Under CAPKEY the request ICV does not
 * cover the CDB, so only this check notices the change.
 */
START_TEST(noncanonical_capability)
{
	enum osd_version v = ver(_i);
	static const size_t reserved[] = { 3, 0, 52 }; /* byte 3; byte 0 high nibble; 52 */
	struct osd_credential c;
	struct h_req r;

	secure_setup(v, OSD_SEC_CAPKEY);
	c = cred(v, P1, O1, OSD_PERM_READ, OSD_SEC_CAPKEY);
	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 8;
	r.data_in = 8;
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		uint8_t *b = &r.cdb_bytes[80 + reserved[i]];

		*b ^= reserved[i] == 0 ? 0x40 : 0x01;
		h_rerun(&ht, &r);
		h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 80);
		*b ^= reserved[i] == 0 ? 0x40 : 0x01;
	}
	h_rerun(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}
END_TEST

/* The cached CAPKEY request ICV belongs to one channel token: another token fails. */
START_TEST(capkey_other_token)
{
	enum osd_version v = ver(_i);
	static const uint8_t other[] = "channel-token-02";
	struct osd_credential c;
	struct h_req r;

	secure_setup(v, OSD_SEC_CAPKEY);
	c = cred(v, P1, O1, OSD_PERM_READ, OSD_SEC_CAPKEY);
	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 8;
	r.data_in = 8;
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_int_eq(osd_target_execute(ht.tgt, &r.x, other, sizeof(other)), 0);
	ck_assert_uint_eq(r.x.status, OSD_STATUS_CHECK_CONDITION);
	ck_assert_int_eq(osd_target_execute(ht.tgt, &r.x, NULL, 0), 0);
	ck_assert_uint_eq(r.x.status, OSD_STATUS_CHECK_CONDITION);
	h_rerun(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}
END_TEST

/* Many threads share one cached capability: each command checks an entry out. */
#define SHARE_THREADS 4
#define SHARE_READS 200

struct share_arg {
	enum osd_version v;
	const struct osd_credential *c;
	int good;
};

static void *share_reader(void *p)
{
	struct share_arg *a = p;

	for (int i = 0; i < SHARE_READS; i++)
		a->good += read_with(a->v, a->c) == OSD_STATUS_GOOD;
	return NULL;
}

START_TEST(cached_capability_shared_by_threads)
{
	enum osd_version v = ver(_i & 1);
	enum osd_sec_method m = _i & 2 ? OSD_SEC_CMDRSP : OSD_SEC_CAPKEY;
	struct share_arg a[SHARE_THREADS];
	pthread_t th[SHARE_THREADS];
	struct osd_credential c;
	uint8_t new_work[OSD_HMAC_LEN];

	secure_setup(v, m);
	c = cred(v, P1, O1, OSD_PERM_READ, m);
	for (int i = 0; i < SHARE_THREADS; i++) {
		a[i] = (struct share_arg){ v, &c, 0 };
		ck_assert_int_eq(pthread_create(&th[i], NULL, share_reader, &a[i]), 0);
	}
	for (int i = 0; i < SHARE_THREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_int_eq(a[i].good, SHARE_READS);
	}
	set_key(v, P1, OSD_KEY_WORKING, part_key, 0x55, new_work);
	ck_assert_int_eq(read_with(v, &c), OSD_STATUS_CHECK_CONDITION);
}
END_TEST

static Suite *security_suite(void)
{
	Suite *s = suite_create("target_security");
	TCase *tc = tcase_create("security");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, methods_accepted, 0, 2);
	tcase_add_loop_test(tc, response_icv, 0, 2);
	tcase_add_loop_test(tc, nosec_refused_when_required, 0, 2);
	tcase_add_loop_test(tc, wrong_key, 0, 2);
	tcase_add_loop_test(tc, expired, 0, 2);
	tcase_add_loop_test(tc, wrong_object_and_partition, 0, 2);
	tcase_add_loop_test(tc, missing_permission, 0, 2);
	tcase_add_loop_test(tc, policy_tag, 0, 2);
	tcase_add_loop_test(tc, forged_icv, 0, 2);
	tcase_add_loop_test(tc, replayed_and_stale_nonce, 0, 2);
	tcase_add_loop_test(tc, alldata_tampered, 0, 2);
	tcase_add_loop_test(tc, key_rotation, 0, 2);
	tcase_add_loop_test(tc, key_rotation_new_key_works, 0, 2);
	tcase_add_loop_test(tc, frozen_working_key, 0, 2);
	tcase_add_loop_test(tc, keys_persist, 0, 2);
	tcase_add_loop_test(tc, cached_capability_after_rotation, 0, 4);
	tcase_add_loop_test(tc, cached_capability_after_root_key_change, 0, 2);
	tcase_add_loop_test(tc, cached_capability_after_format, 0, 2);
	tcase_add_loop_test(tc, noncanonical_capability, 0, 2);
	tcase_add_loop_test(tc, capkey_other_token, 0, 2);
	tcase_add_loop_test(tc, cached_capability_shared_by_threads, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(security_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
