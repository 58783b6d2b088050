/* Request ICV signing and verification, bound ICVs, nonces. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <osd/capability.h>
#include <osd/cdb.h>
#include <osd/security.h>

#include "sec_testutil.h"
#include "security/cdb_icv.h"

#define NOW_MS 0x018C2A3B4C5DULL

static const uint8_t working_key[20] = {
	0x3a, 0x11, 0x92, 0x07, 0xc4, 0x5e, 0x6f, 0x80, 0x21, 0xb3,
	0x44, 0xd5, 0x66, 0xf7, 0x08, 0x19, 0x2a, 0x3b, 0x4c, 0x5d,
};
static const uint8_t system_id[OSD_SYSTEM_ID_LEN] = "osd-system-id-000001";
static const uint8_t token[] = "iSCSI I_T nexus token";

struct signed_case {
	enum osd_version v;
	enum osd_sec_method method;
	size_t len, icv_off, icv_len, nonce_off;
	uint8_t cdb[OSD_CDB_MAX_LEN];
	uint8_t cap_key[20];
	osd_key *capkey;
	osd_key *secret;
};

static void case_of(int i, enum osd_version *v, enum osd_sec_method *m)
{
	*v = (i & 4) ? OSD_V2 : OSD_V1;
	*m = (enum osd_sec_method)(i & 3);
}

/* A READ CDB built by hand: header, pattern operands, capability, garbage security fields. */
static void make_cdb(struct signed_case *c, enum osd_version v, enum osd_sec_method m)
{
	struct osd_obj_id obj = { 0x10000, 0x10005 };
	struct osd_capability cap;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->v = v;
	c->method = m;
	c->len = v == OSD_V1 ? OSD_CDB_V1_LEN : OSD_CDB_V2_LEN;
	c->icv_off = v == OSD_V1 ? 160 : 184;
	c->icv_len = v == OSD_V1 ? 20 : 32;
	c->nonce_off = v == OSD_V1 ? 180 : 216;
	c->cdb[0] = 0x7F;
	c->cdb[7] = (uint8_t)(c->len - 8);
	c->cdb[8] = 0x88;
	c->cdb[9] = v == OSD_V1 ? 0x05 : 0x85;
	for (i = 10; i < 80; i++)
		c->cdb[i] = (uint8_t)(i * 3);
	osd_capability_init(&cap, v, &obj, 0, OSD_PERM_READ, m);
	cap.key_version = 2;
	cap.icv_algorithm = OSD_ICV_ALG_HMAC_SHA1;
	ck_assert_int_eq(osd_capability_encode(v, &cap, c->cdb + 80, c->len - 80),
			 v == OSD_V1 ? OSD_CAP_V1_LEN : OSD_CAP_V2_LEN);
	memset(c->cdb + c->icv_off, 0xEE, c->len - c->icv_off);
	/* data-in / data-out ICV offsets: covered like any other byte */
	memcpy(c->cdb + c->len - 8, "\xff\xff\xff\xff\x00\x00\x00\x10", 8);

	ck_assert_int_eq(osd_key_new(&c->secret, working_key, sizeof(working_key)), 0);
	ck_assert_int_eq(osd_capability_key(c->secret, v, &cap, system_id, c->cap_key), 0);
	ck_assert_int_eq(osd_key_new(&c->capkey, c->cap_key, 20), 0);
}

static void free_case(struct signed_case *c)
{
	osd_key_free(c->capkey);
	osd_key_free(c->secret);
}

static int is_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/* Target side: recompute the capability key from the CDB's capability and verify. */
static int target_verify(const struct signed_case *c, const uint8_t *cdb,
			 const uint8_t *tok, size_t tok_len)
{
	struct osd_capability cap;
	uint8_t ck[20];
	osd_key *k;
	int rc;

	uint8_t canon[OSD_CAP_V2_LEN];
	int n;

	if (osd_capability_decode(c->v, cdb + 80, c->len - 80, &cap) < 0)
		return -EACCES;
	/* docs/security.md section 5, check 1: reserved bits must be zero (canonical encoding). */
	n = osd_capability_encode(c->v, &cap, canon, sizeof(canon));
	if (n < 0 || memcmp(canon, cdb + 80, (size_t)n) != 0)
		return -EACCES;
	if (osd_capability_key(c->secret, c->v, &cap, system_id, ck) < 0)
		return -EACCES;
	ck_assert_int_eq(osd_key_new(&k, ck, 20), 0);
	rc = osd_sec_verify_cdb(k, c->method, cdb, c->len, tok, tok_len);
	osd_key_free(k);
	return rc;
}

START_TEST(test_sign_verify_roundtrip)
{
	struct signed_case c;
	enum osd_version v;
	enum osd_sec_method m;
	uint8_t before[OSD_CDB_MAX_LEN], want[20], copy[OSD_CDB_MAX_LEN];

	case_of(_i, &v, &m);
	make_cdb(&c, v, m);
	memcpy(before, c.cdb, c.len);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, m, c.cdb, c.len, token, sizeof(token),
					  NOW_MS), 0);
	/* Everything before the security parameters and the ICV offsets is untouched. */
	ck_assert_mem_eq(c.cdb, before, c.icv_off);
	ck_assert_mem_eq(c.cdb + c.nonce_off + 12, before + c.nonce_off + 12, 8);
	ck_assert(is_zero(c.cdb + c.icv_off + 20, c.icv_len - 20));
	switch (m) {
	case OSD_SEC_NOSEC:
		ck_assert(is_zero(c.cdb + c.icv_off, c.icv_len + 12));
		break;
	case OSD_SEC_CAPKEY:
		ck_assert_int_eq(sec_cli_hmac_sha1(c.cap_key, 20, token, sizeof(token), want), 0);
		ck_assert_mem_eq(c.cdb + c.icv_off, want, 20);
		ck_assert(is_zero(c.cdb + c.nonce_off, 12));
		break;
	default:
		memcpy(copy, c.cdb, c.len);
		memset(copy + c.icv_off, 0, c.icv_len);
		ck_assert_int_eq(sec_cli_hmac_sha1(c.cap_key, 20, copy, c.len, want), 0);
		ck_assert_mem_eq(c.cdb + c.icv_off, want, 20);
		ck_assert_uint_eq(osd_nonce_time(c.cdb + c.nonce_off), NOW_MS);
		break;
	}
	ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, m, c.cdb, c.len, token, sizeof(token)), 0);
	ck_assert_int_eq(target_verify(&c, c.cdb, token, sizeof(token)), 0);
	free_case(&c);
}
END_TEST

/* CMDRSP/ALLDATA: every single-bit change anywhere in the CDB is detected. */
START_TEST(test_every_cdb_bit)
{
	struct signed_case c;
	enum osd_version v;
	enum osd_sec_method m;
	size_t bit;

	case_of(_i, &v, &m);
	make_cdb(&c, v, m);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, m, c.cdb, c.len, NULL, 0, NOW_MS), 0);
	for (bit = 0; bit < c.len * 8; bit++) {
		c.cdb[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_msg(osd_sec_verify_cdb(c.capkey, m, c.cdb, c.len, NULL, 0) == -EACCES,
			      "bit %zu not detected", bit);
		c.cdb[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, m, c.cdb, c.len, NULL, 0), 0);
	/* The token plays no part in these methods. */
	ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, m, c.cdb, c.len, token, sizeof(token)), 0);
	free_case(&c);
}
END_TEST

/* Every method: a changed capability changes the key the target computes. */
START_TEST(test_every_capability_bit)
{
	struct signed_case c;
	enum osd_version v;
	enum osd_sec_method m;
	size_t bit, caplen;

	case_of(_i, &v, &m);
	if (m == OSD_SEC_NOSEC)
		return;
	make_cdb(&c, v, m);
	caplen = v == OSD_V1 ? OSD_CAP_V1_LEN : OSD_CAP_V2_LEN;
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, m, c.cdb, c.len, token, sizeof(token),
					  NOW_MS), 0);
	for (bit = 0; bit < caplen * 8; bit++) {
		uint8_t *p = c.cdb + 80 + bit / 8;

		*p ^= (uint8_t)(1u << (bit % 8));
		ck_assert_msg(target_verify(&c, c.cdb, token, sizeof(token)) == -EACCES,
			      "capability bit %zu not detected", bit);
		*p ^= (uint8_t)(1u << (bit % 8));
	}
	ck_assert_int_eq(target_verify(&c, c.cdb, token, sizeof(token)), 0);
	free_case(&c);
}
END_TEST

/* Every method: a key differing in one bit fails. */
START_TEST(test_every_key_bit)
{
	struct signed_case c;
	enum osd_version v;
	enum osd_sec_method m;
	uint8_t key[20];
	size_t bit;
	osd_key *k;

	case_of(_i, &v, &m);
	if (m == OSD_SEC_NOSEC)
		return;
	make_cdb(&c, v, m);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, m, c.cdb, c.len, token, sizeof(token),
					  NOW_MS), 0);
	for (bit = 0; bit < 160; bit++) {
		memcpy(key, c.cap_key, 20);
		key[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(osd_key_new(&k, key, 20), 0);
		ck_assert_int_eq(osd_sec_verify_cdb(k, m, c.cdb, c.len, token, sizeof(token)),
				 -EACCES);
		osd_key_free(k);
	}
	free_case(&c);
}
END_TEST

START_TEST(test_capkey_token)
{
	struct signed_case c;
	uint8_t tok[sizeof(token)];
	size_t bit;
	enum osd_version v = _i ? OSD_V2 : OSD_V1;

	make_cdb(&c, v, OSD_SEC_CAPKEY);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_CAPKEY, c.cdb, c.len, token,
					  sizeof(token), NOW_MS), 0);
	for (bit = 0; bit < sizeof(token) * 8; bit++) {
		memcpy(tok, token, sizeof(tok));
		tok[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, OSD_SEC_CAPKEY, c.cdb, c.len, tok,
						    sizeof(tok)), -EACCES);
	}
	ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, OSD_SEC_CAPKEY, c.cdb, c.len, token,
					    sizeof(token) - 1), -EACCES);
	ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, OSD_SEC_CAPKEY, c.cdb, c.len, NULL, 0),
			 -EACCES);
	/* ICV field bits, including the v2 zero tail, are checked. */
	for (bit = 0; bit < c.icv_len * 8; bit++) {
		c.cdb[c.icv_off + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, OSD_SEC_CAPKEY, c.cdb, c.len, token,
						    sizeof(token)), -EACCES);
		c.cdb[c.icv_off + bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	/* CAPKEY does not cover the command fields (docs/security.md 3.2). */
	c.cdb[20] ^= 1;
	ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, OSD_SEC_CAPKEY, c.cdb, c.len, token,
					    sizeof(token)), 0);
	/* Loopback: empty token. */
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_CAPKEY, c.cdb, c.len, NULL, 0,
					  NOW_MS), 0);
	ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, OSD_SEC_CAPKEY, c.cdb, c.len, NULL, 0), 0);
	free_case(&c);
}
END_TEST

/* The request layer signs CAPKEY CDBs with an ICV computed once per key and
 * token: that path must write exactly the bytes osd_sec_sign_cdb() writes. */
START_TEST(test_capkey_precomputed_icv)
{
	struct signed_case c;
	uint8_t fresh[OSD_CDB_MAX_LEN], icv[OSD_HMAC_LEN], before[OSD_CDB_MAX_LEN];
	enum osd_version v = _i ? OSD_V2 : OSD_V1;

	make_cdb(&c, v, OSD_SEC_CAPKEY);
	memset(c.cdb + c.icv_off, 0xEE, c.icv_len + OSD_NONCE_LEN);
	memcpy(fresh, c.cdb, c.len);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_CAPKEY, fresh, c.len, token,
					  sizeof(token), NOW_MS), 0);
	ck_assert_int_eq(osd__sec_capkey_icv(c.capkey, token, sizeof(token), icv), 0);
	ck_assert_int_eq(osd__sec_sign_cdb_capkey(c.cdb, c.len, icv), 0);
	ck_assert_int_eq(memcmp(c.cdb, fresh, c.len), 0);
	/* Empty token, as on the loopback. */
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_CAPKEY, fresh, c.len, NULL, 0,
					  NOW_MS), 0);
	ck_assert_int_eq(osd__sec_capkey_icv(c.capkey, NULL, 0, icv), 0);
	ck_assert_int_eq(osd__sec_sign_cdb_capkey(c.cdb, c.len, icv), 0);
	ck_assert_int_eq(memcmp(c.cdb, fresh, c.len), 0);
	ck_assert_int_eq(osd__sec_capkey_icv(NULL, NULL, 0, icv), -EINVAL);
	ck_assert_int_eq(osd__sec_capkey_icv(c.capkey, NULL, 4, icv), -EINVAL);
	/* Wrong length or a capability stating another method: refused, CDB untouched. */
	memcpy(before, c.cdb, c.len);
	ck_assert_int_eq(osd__sec_sign_cdb_capkey(c.cdb, c.len - 1, icv), -EINVAL);
	c.cdb[osd_cdb_cap_offset(v) + 2] = (uint8_t)((c.cdb[osd_cdb_cap_offset(v) + 2] & 0xF0) | OSD_SEC_CMDRSP);
	before[osd_cdb_cap_offset(v) + 2] = c.cdb[osd_cdb_cap_offset(v) + 2];
	ck_assert_int_eq(osd__sec_sign_cdb_capkey(c.cdb, c.len, icv), -EINVAL);
	ck_assert_int_eq(memcmp(c.cdb, before, c.len), 0);
	free_case(&c);
}
END_TEST

START_TEST(test_fresh_nonce_each_sign)
{
	struct signed_case c;
	uint8_t first[OSD_CDB_MAX_LEN];

	make_cdb(&c, OSD_V2, OSD_SEC_CMDRSP);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_CMDRSP, c.cdb, c.len, NULL, 0,
					  NOW_MS), 0);
	memcpy(first, c.cdb, c.len);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_CMDRSP, c.cdb, c.len, NULL, 0,
					  NOW_MS + 1), 0);
	ck_assert_mem_ne(first + c.nonce_off, c.cdb + c.nonce_off, 12);
	ck_assert_mem_ne(first + c.icv_off, c.cdb + c.icv_off, 20);
	ck_assert_uint_eq(osd_nonce_time(c.cdb + c.nonce_off), NOW_MS + 1);
	free_case(&c);
}
END_TEST

START_TEST(test_nosec_and_method_mismatch)
{
	struct signed_case c;
	uint8_t before[OSD_CDB_MAX_LEN];

	make_cdb(&c, OSD_V1, OSD_SEC_NOSEC);
	ck_assert_int_eq(osd_sec_sign_cdb(NULL, OSD_SEC_NOSEC, c.cdb, c.len, NULL, 0, NOW_MS), 0);
	ck_assert(is_zero(c.cdb + c.icv_off, c.icv_len + 12));
	ck_assert_int_eq(osd_sec_verify_cdb(NULL, OSD_SEC_NOSEC, c.cdb, c.len, NULL, 0), 0);
	/* The CDB's capability says NOSEC: signing or verifying as CMDRSP is refused. */
	memcpy(before, c.cdb, c.len);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_CMDRSP, c.cdb, c.len, NULL, 0,
					  NOW_MS), -EINVAL);
	ck_assert_mem_eq(c.cdb, before, c.len);
	ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, OSD_SEC_CMDRSP, c.cdb, c.len, NULL, 0),
			 -EACCES);
	free_case(&c);

	/* A CMDRSP capability does not verify as NOSEC (no silent downgrade). */
	make_cdb(&c, OSD_V2, OSD_SEC_CMDRSP);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_CMDRSP, c.cdb, c.len, NULL, 0,
					  NOW_MS), 0);
	ck_assert_int_eq(osd_sec_verify_cdb(NULL, OSD_SEC_NOSEC, c.cdb, c.len, NULL, 0), -EACCES);
	free_case(&c);
}
END_TEST

START_TEST(test_bad_arguments)
{
	struct signed_case c;
	uint8_t before[OSD_CDB_MAX_LEN];

	make_cdb(&c, OSD_V2, OSD_SEC_ALLDATA);
	memcpy(before, c.cdb, c.len);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_ALLDATA, c.cdb, 235, NULL, 0, NOW_MS),
			 -EINVAL);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_ALLDATA, c.cdb, 201, NULL, 0, NOW_MS),
			 -EINVAL);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, (enum osd_sec_method)4, c.cdb, c.len, NULL, 0,
					  NOW_MS), -EINVAL);
	ck_assert_int_eq(osd_sec_sign_cdb(NULL, OSD_SEC_ALLDATA, c.cdb, c.len, NULL, 0, NOW_MS),
			 -EINVAL);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_ALLDATA, c.cdb, c.len, NULL, 5,
					  NOW_MS), -EINVAL);
	ck_assert_int_eq(osd_sec_sign_cdb(c.capkey, OSD_SEC_ALLDATA, NULL, c.len, NULL, 0, NOW_MS),
			 -EINVAL);
	ck_assert_mem_eq(c.cdb, before, c.len);
	ck_assert_int_eq(osd_sec_verify_cdb(c.capkey, OSD_SEC_ALLDATA, c.cdb, 199, NULL, 0),
			 -EINVAL);
	ck_assert_int_eq(osd_sec_verify_cdb(NULL, OSD_SEC_ALLDATA, c.cdb, c.len, NULL, 0),
			 -EINVAL);
	free_case(&c);
}
END_TEST

START_TEST(test_data_and_bound_icv)
{
	uint8_t key[20], r[20], a[] = "payload bytes", b[] = "set list", msg[64], want[20], got[20];
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	uint8_t kinds[4][20];
	osd_key *k;
	int kind;

	memset(key, 0x5A, sizeof(key));
	memset(r, 0xC3, sizeof(r));
	ck_assert_int_eq(osd_key_new(&k, key, 20), 0);

	memcpy(msg, a, sizeof(a));
	memcpy(msg + sizeof(a), b, sizeof(b));
	ck_assert_int_eq(sec_cli_hmac_sha1(key, 20, msg, sizeof(a) + sizeof(b), want), 0);
	ck_assert_int_eq(osd_sec_data_icv(k, iov, 2, got), 0);
	ck_assert_mem_eq(got, want, 20);

	for (kind = OSD_ICV_DATA_OUT; kind <= OSD_ICV_CONTINUATION; kind++) {
		msg[0] = (uint8_t)kind;
		memcpy(msg + 1, r, 20);
		memcpy(msg + 21, a, sizeof(a));
		memcpy(msg + 21 + sizeof(a), b, sizeof(b));
		ck_assert_int_eq(sec_cli_hmac_sha1(key, 20, msg, 21 + sizeof(a) + sizeof(b), want),
				 0);
		ck_assert_int_eq(osd_sec_bound_icv(k, (enum osd_icv_kind)kind, r, iov, 2,
						   kinds[kind - 1]), 0);
		ck_assert_mem_eq(kinds[kind - 1], want, 20);
	}
	ck_assert_mem_ne(kinds[0], kinds[1], 20);
	ck_assert_mem_ne(kinds[1], kinds[2], 20);
	ck_assert_mem_ne(kinds[2], kinds[3], 20);
	/* Bound to the request: another request ICV gives another value. */
	r[19] ^= 1;
	ck_assert_int_eq(osd_sec_bound_icv(k, OSD_ICV_DATA_OUT, r, iov, 2, got), 0);
	ck_assert_mem_ne(got, kinds[0], 20);
	ck_assert_int_eq(osd_sec_bound_icv(k, (enum osd_icv_kind)0, r, iov, 2, got), -EINVAL);
	ck_assert_int_eq(osd_sec_bound_icv(k, (enum osd_icv_kind)5, r, iov, 2, got), -EINVAL);
	ck_assert_int_eq(osd_sec_bound_icv(k, OSD_ICV_DATA_IN, NULL, iov, 2, got), -EINVAL);
	ck_assert_int_eq(osd_sec_bound_icv(k, OSD_ICV_DATA_IN, r, iov, -1, got), -EINVAL);
	osd_key_free(k);
}
END_TEST

static int cmp_nonce(const void *a, const void *b)
{
	return memcmp(a, b, OSD_NONCE_LEN);
}

START_TEST(test_nonces)
{
	enum { N = 20000 };
	uint8_t (*n)[OSD_NONCE_LEN] = malloc(N * OSD_NONCE_LEN);
	const uint8_t hand[OSD_NONCE_LEN] = { 0x01, 0x8c, 0x2a, 0x3b, 0x4c, 0x5d,
					      0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	int i;

	ck_assert_ptr_nonnull(n);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(osd_nonce_make(n[i], NOW_MS), 0);
		ck_assert_mem_eq(n[i], hand, 6);
		ck_assert_uint_eq(osd_nonce_time(n[i]), NOW_MS);
	}
	qsort(n, N, OSD_NONCE_LEN, cmp_nonce);
	for (i = 1; i < N; i++)
		ck_assert_mem_ne(n[i - 1], n[i], OSD_NONCE_LEN);
	free(n);
	ck_assert_uint_eq(osd_nonce_time(hand), 0x018C2A3B4C5DULL);
	ck_assert_int_eq(osd_nonce_make(NULL, NOW_MS), -EINVAL);
}
END_TEST

/* A forked child must not hand out the nonces its parent has buffered. */
START_TEST(test_nonce_after_fork)
{
	uint8_t parent[OSD_NONCE_LEN], child[OSD_NONCE_LEN];
	int fds[2], status;
	pid_t pid;

	ck_assert_int_eq(osd_nonce_make(parent, NOW_MS), 0); /* fills this thread's buffer */
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int ok = osd_nonce_make(child, NOW_MS) == 0 &&
			 write(fds[1], child, sizeof(child)) == (ssize_t)sizeof(child);
		_exit(ok ? 0 : 1);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], child, sizeof(child)), (ssize_t)sizeof(child));
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(osd_nonce_make(parent, NOW_MS), 0);
	ck_assert_mem_ne(parent, child, OSD_NONCE_LEN);
}
END_TEST

START_TEST(test_now_ms)
{
	struct timespec ts;
	uint64_t a, b, ref;

	a = osd_now_ms();
	clock_gettime(CLOCK_REALTIME, &ts);
	b = osd_now_ms();
	ref = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	ck_assert_uint_le(a, ref);
	ck_assert_uint_ge(b, ref);
	ck_assert_uint_gt(a, 1577836800000ULL); /* after 2020-01-01 */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("security_sign");
	TCase *tc = tcase_create("sign");
	TCase *tn = tcase_create("nonce");
	SRunner *sr;
	int failed;

	if (!sec_cli_available()) {
		fprintf(stderr, "openssl command-line tool not found: skipping\n");
		return 77;
	}
	/* loop index: bit 2 = version (v1/v2), bits 1-0 = security method */
	tcase_add_loop_test(tc, test_sign_verify_roundtrip, 0, 8);
	tcase_add_loop_test(tc, test_every_cdb_bit, 2, 4);
	tcase_add_loop_test(tc, test_every_cdb_bit, 6, 8);
	tcase_add_loop_test(tc, test_every_capability_bit, 0, 8);
	tcase_add_loop_test(tc, test_every_key_bit, 0, 8);
	tcase_add_loop_test(tc, test_capkey_token, 0, 2);
	tcase_add_loop_test(tc, test_capkey_precomputed_icv, 0, 2);
	tcase_add_test(tc, test_fresh_nonce_each_sign);
	tcase_add_test(tc, test_nosec_and_method_mismatch);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_data_and_bound_icv);
	tcase_add_test(tn, test_nonces);
	tcase_add_test(tn, test_nonce_after_fork);
	tcase_add_test(tn, test_now_ms);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tn);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
