/*
 * A root with a root key is secured (docs/security.md section 5, check 2):
 * every command whose capability describes the root needs at least CAPKEY,
 * whatever the root's default security method says; only a GET ATTRIBUTES of
 * the OSD SYSTEM ID and CLOCK is answered keyless. Each refusal is checked
 * for its exact sense and for leaving the store as it was. Also the store's
 * file modes: 0700 directories and 0600 files, repaired at open.
 * Loop index 0 = OSD-1, 1 = OSD-2.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define P1 0x10000ULL
#define P2 0x10001ULL
#define O1 0x10000ULL
#define RINFO (OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION)
#define RPOL (OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY)
#define FP_METHOD 82 /* capability byte 2 (the capability is at CDB byte 80) */

static struct h_target ht;
static osd_cred_issuer *iss;
static const uint8_t root_key[OSD_HMAC_LEN] = "root-key-0123456789";

static enum osd_version ver(int i)
{
	return i ? OSD_V2 : OSD_V1;
}

/* A root credential from the test's security manager. */
static struct osd_credential root_cred(enum osd_version v, uint16_t perms, enum osd_sec_method m)
{
	struct osd_cred_request rq = { 0 };
	struct osd_credential c;

	rq.version = v;
	rq.permissions = perms;
	rq.method = m;
	ck_assert_int_eq(osd_cred_issue(iss, &rq, &c), 0);
	return c;
}

/* Runs @p r (keyless when @p c is NULL) and expects the method check's refusal. */
static void expect_refused(struct h_req *r, const struct osd_credential *c)
{
	r->cred = c;
	h_run(&ht, r);
	h_expect_field(r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, FP_METHOD);
	ck_assert_uint_eq(r->x.in_xferred, 0);
	h_req_free(r);
}

/* P1 with O1 = "original", made while the root is still NOSEC; then the root key. */
static void keyed_store(enum osd_version v)
{
	uint8_t id[OSD_SYSTEM_ID_LEN];

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_write(&ht, v, P1, O1, 0, "original", 8);
	ck_assert_int_eq(osd_target_root_secured(ht.tgt), 0);
	ck_assert_int_eq(osd_target_set_root_key(ht.tgt, root_key), 0);
	ck_assert_int_eq(osd_target_root_secured(ht.tgt), 1);
	osd_target_system_id(ht.tgt, id);
	ck_assert_int_eq(osd_cred_issuer_new(&iss, id), 0);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(iss, root_key), 0);
}

/* P1 and O1 are intact, P2 was never made, the root's method is @p method. */
static void expect_unchanged(enum osd_version v, uint8_t method)
{
	struct osd_credential c = root_cred(v, OSD_PERM_GET_ATTR, OSD_SEC_ALLDATA);
	uint8_t buf[8];
	struct h_req r;
	const uint8_t *val;
	uint16_t len;

	ck_assert_uint_eq(h_read(&ht, v, P1, O1, 0, buf, 8), 8);
	ck_assert_mem_eq(buf, "original", 8);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
	h_get(&r, RINFO, OSD_ATTR_RI_NUM_PARTITIONS);
	h_get(&r, RPOL, OSD_ATTR_PS_DEFAULT_METHOD);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, RINFO, OSD_ATTR_RI_NUM_PARTITIONS), 1);
	if (h_attr(&r, RPOL, OSD_ATTR_PS_DEFAULT_METHOD, &val, &len) && len)
		ck_assert_uint_eq(val[0], method);
	else
		ck_assert_uint_eq(method, OSD_SEC_NOSEC);
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
	iss = NULL;
	h_target_close(&ht);
}

/* The attack: keyless FORMAT, CREATE PARTITION, LIST and the method raise. */
START_TEST(keyless_root_commands_refused)
{
	enum osd_version v = ver(_i);
	uint8_t one = OSD_SEC_CAPKEY;
	struct h_req r;

	keyed_store(v);
	h_req(&r, v, OSD_ACT_FORMAT_OSD, 0, 0);
	expect_refused(&r, NULL);
	h_req(&r, v, OSD_ACT_CREATE_PARTITION, P2, 0);
	expect_refused(&r, NULL);
	h_req(&r, v, OSD_ACT_LIST, 0, 0);
	r.cdb.length = 4096;
	r.data_in = 4096;
	expect_refused(&r, NULL);
	h_req(&r, v, OSD_ACT_FLUSH_OSD, 0, 0);
	expect_refused(&r, NULL);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, 0, 0);
	h_set(&r, RPOL, OSD_ATTR_PS_DEFAULT_METHOD, &one, 1);
	expect_refused(&r, NULL);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, 0, 0);
	h_set(&r, RINFO, OSD_ATTR_RI_OSD_NAME, "evil", 4);
	expect_refused(&r, NULL);
	/* SET KEY of a partition key is the root key's to sign, even on a NOSEC partition */
	h_req(&r, v, OSD_ACT_SET_KEY, P1, 0);
	r.cdb.cmd_options = OSD_KEY_PARTITION;
	memset(r.cdb.seed, 0x11, OSD_SEED_LEN);
	memcpy(r.cdb.key_id, "KEYID-1", OSD_KEY_ID_LEN);
	expect_refused(&r, NULL);
	expect_unchanged(v, OSD_SEC_NOSEC);
	/* no partition key was set: its identifier is still undefined */
	{
		struct osd_credential c = root_cred(v, OSD_PERM_GET_ATTR, OSD_SEC_CAPKEY);
		const uint8_t *val;
		uint16_t len;

		h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, 0);
		h_get(&r, OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
		      OSD_ATTR_PS_PARTITION_KEY_ID);
		h_run(&ht, &r);
		h_expect_good(&r);
		ck_assert(!h_attr(&r, OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
				  OSD_ATTR_PS_PARTITION_KEY_ID, &val, &len) || len == 0);
		h_req_free(&r);
		(void)c;
	}
}
END_TEST

/* The root's attribute says NOSEC; a keyed root still wants CAPKEY, not less. */
START_TEST(nosec_capability_refused_capkey_accepted)
{
	enum osd_version v = ver(_i);
	struct osd_credential nosec, capkey;
	struct h_req r;

	keyed_store(v);
	nosec = root_cred(v, OSD_PERM_CREATE, OSD_SEC_NOSEC);
	h_req(&r, v, OSD_ACT_CREATE_PARTITION, P2, 0);
	expect_refused(&r, &nosec);
	expect_unchanged(v, OSD_SEC_NOSEC);
	capkey = root_cred(v, OSD_PERM_CREATE, OSD_SEC_CAPKEY);
	h_req(&r, v, OSD_ACT_CREATE_PARTITION, P2, 0);
	r.cred = &capkey;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}
END_TEST

/* The system id and the clock (alone or together) are answered keyless. */
START_TEST(system_id_and_clock_keyless)
{
	enum osd_version v = ver(_i);
	static const uint32_t lists[3][2] = {
		{ OSD_ATTR_RI_SYSTEM_ID, OSD_ATTR_RI_CLOCK },
		{ OSD_ATTR_RI_CLOCK, OSD_ATTR_RI_SYSTEM_ID },
		{ OSD_ATTR_RI_SYSTEM_ID, 0 },
	};
	uint8_t id[OSD_SYSTEM_ID_LEN];
	const uint8_t *val;
	uint16_t len;

	keyed_store(v);
	osd_target_system_id(ht.tgt, id);
	for (int i = 0; i < 3; i++) {
		struct h_req r;

		h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
		for (int j = 0; j < 2; j++)
			if (lists[i][j])
				h_get(&r, RINFO, lists[i][j]);
		h_run(&ht, &r);
		h_expect_good(&r);
		ck_assert(h_attr(&r, RINFO, OSD_ATTR_RI_SYSTEM_ID, &val, &len));
		ck_assert_uint_eq(len, OSD_SYSTEM_ID_LEN);
		ck_assert_mem_eq(val, id, OSD_SYSTEM_ID_LEN);
		if (lists[i][1]) {
			ck_assert(h_attr(&r, RINFO, OSD_ATTR_RI_CLOCK, &val, &len));
			ck_assert_uint_eq(len, 6);
		}
		h_req_free(&r);
	}
}
END_TEST

/* Any other root attribute, or the system id with anything more, is refused keyless. */
START_TEST(other_root_attributes_refused_keyless)
{
	enum osd_version v = ver(_i);
	uint8_t two = OSD_SEC_CMDRSP;
	struct h_req r;

	keyed_store(v);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
	h_get(&r, RINFO, OSD_ATTR_RI_VENDOR_ID);
	expect_refused(&r, NULL);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
	h_get(&r, RINFO, OSD_ATTR_RI_SYSTEM_ID);
	h_get(&r, RPOL, OSD_ATTR_PS_DEFAULT_METHOD);
	expect_refused(&r, NULL);
	/* page mode: the whole root information page */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
	h_get(&r, RINFO, 0);
	r.page_mode = 1;
	expect_refused(&r, NULL);
	/* a get of the system id that also sets something */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
	h_get(&r, RINFO, OSD_ATTR_RI_SYSTEM_ID);
	h_set(&r, RPOL, OSD_ATTR_PS_DEFAULT_METHOD, &two, 1);
	expect_refused(&r, NULL);
	/* a SET ATTRIBUTES that only gets the system id is no bootstrap GET */
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, 0, 0);
	h_get(&r, RINFO, OSD_ATTR_RI_SYSTEM_ID);
	expect_refused(&r, NULL);
	expect_unchanged(v, OSD_SEC_NOSEC);
}
END_TEST

/*
 * The owner raises the root's method to CMDRSP with the root key: CAPKEY is
 * refused from then on, CMDRSP works, and the bootstrap GET stays keyless.
 */
START_TEST(owner_raises_root_method)
{
	enum osd_version v = ver(_i);
	uint8_t two = OSD_SEC_CMDRSP;
	struct osd_credential c;
	struct h_req r;

	keyed_store(v);
	c = root_cred(v, OSD_PERM_SET_ATTR, OSD_SEC_CAPKEY);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, 0, 0);
	h_set(&r, RPOL, OSD_ATTR_PS_DEFAULT_METHOD, &two, 1);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	c = root_cred(v, OSD_PERM_CREATE, OSD_SEC_CAPKEY);
	h_req(&r, v, OSD_ACT_CREATE_PARTITION, P2, 0);
	expect_refused(&r, &c);
	expect_unchanged(v, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
	h_get(&r, RINFO, OSD_ATTR_RI_SYSTEM_ID);
	h_get(&r, RINFO, OSD_ATTR_RI_CLOCK);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	c = root_cred(v, OSD_PERM_CREATE, OSD_SEC_CMDRSP);
	h_req(&r, v, OSD_ACT_CREATE_PARTITION, P2, 0);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}
END_TEST

/* A signed FORMAT keeps the root key: the new, empty store is secured at once. */
START_TEST(format_keeps_root_secured)
{
	enum osd_version v = ver(_i);
	struct osd_credential c;
	struct h_req r;

	keyed_store(v);
	c = root_cred(v, OSD_PERM_DEV_MGMT, OSD_SEC_CAPKEY);
	h_req(&r, v, OSD_ACT_FORMAT_OSD, 0, 0);
	r.cred = &c;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	ck_assert_int_eq(osd_target_root_secured(ht.tgt), 1);
	h_req(&r, v, OSD_ACT_CREATE_PARTITION, P2, 0);
	expect_refused(&r, NULL);
	h_target_reopen(&ht);
	ck_assert_int_eq(osd_target_root_secured(ht.tgt), 1);
	h_req(&r, v, OSD_ACT_FORMAT_OSD, 0, 0);
	expect_refused(&r, NULL);
}
END_TEST

/* Without a root key nothing changes: the root is NOSEC (out of the box). */
START_TEST(no_root_key_nosec_root)
{
	enum osd_version v = ver(_i);

	ck_assert_int_eq(osd_target_root_secured(ht.tgt), 0);
	ck_assert_int_eq(osd_target_root_secured(NULL), -EINVAL);
	h_create_partition(&ht, v, P1);
}
END_TEST

/* ---- store permissions ---------------------------------------------------------- */

static unsigned mode_of(const char *dir, const char *name)
{
	char p[512];
	struct stat sb;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	ck_assert_msg(lstat(p, &sb) == 0, "%s missing", p);
	return (unsigned)(sb.st_mode & 07777);
}

static const char *const files[] = { "superblock", "checkpoint", "log", "lock" };

static void expect_private(const char *dir)
{
	ck_assert_uint_eq(mode_of(dir, "."), 0700);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		ck_assert_msg(mode_of(dir, files[i]) == 0600, "%s is %04o", files[i],
			      mode_of(dir, files[i]));
	ck_assert_uint_eq(mode_of(dir, "data"), 0700);
	ck_assert_uint_eq(mode_of(dir, "data/00"), 0700);
	ck_assert_uint_eq(mode_of(dir, "data/ff"), 0700);
	ck_assert_uint_eq(mode_of(dir, "data/pool"), 0700);
}

struct warnings {
	int n;
	char last[512];
};

static void collect(void *arg, int severity, const char *msg)
{
	struct warnings *w = arg;

	ck_assert_int_eq(severity, OSD_TARGET_LOG_WARNING);
	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

/* A new store is its owner's alone, whatever the umask; an object file too. */
START_TEST(store_created_private)
{
	struct osd_target_options o = OSD_TARGET_OPTIONS_INIT;
	struct warnings w = { 0 };
	char store[300];
	mode_t old = umask(0);
	osd_target *t;

	snprintf(store, sizeof(store), "%s/new", ht.dir);
	o.log_event = collect;
	o.log_event_arg = &w;
	ck_assert_int_eq(osd_target_open(&t, store, &o), 0);
	umask(old);
	ck_assert_int_eq(w.n, 0);
	expect_private(store);
	osd_target_close(t);
}
END_TEST

/* Count regular files under data/ with group/other bits (object files). */
static int open_object_files(const char *store)
{
	char p[512];
	int n = 0;

	for (unsigned d = 0; d < 256; d++) {
		DIR *dd;
		struct dirent *e;

		snprintf(p, sizeof(p), "%s/data/%02x", store, d);
		if (!(dd = opendir(p)))
			continue;
		while ((e = readdir(dd)) != NULL)
			if (e->d_name[0] != '.' && (mode_of(p, e->d_name) & 077))
				n++;
		closedir(dd);
	}
	return n;
}

/*
 * A store left open to others (made before, or chmod'ed) is repaired at open
 * with one warning per path, through the log callback.
 */
START_TEST(store_repaired_on_open)
{
	struct osd_target_options o = OSD_TARGET_OPTIONS_INIT;
	struct warnings w = { 0 };
	char p[512];
	osd_target *t;

	h_create_partition(&ht, OSD_V2, P1);
	h_create_object(&ht, OSD_V2, P1, O1);
	h_write(&ht, OSD_V2, P1, O1, 0, "original", 8);
	ck_assert_int_eq(open_object_files(ht.dir), 0);
	osd_target_close(ht.tgt);
	ht.tgt = NULL;
	ck_assert_int_eq(chmod(ht.dir, 0755), 0);
	snprintf(p, sizeof(p), "%s/log", ht.dir);
	ck_assert_int_eq(chmod(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/checkpoint", ht.dir);
	ck_assert_int_eq(chmod(p, 0640), 0);
	snprintf(p, sizeof(p), "%s/data", ht.dir);
	ck_assert_int_eq(chmod(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/data/7f", ht.dir);
	ck_assert_int_eq(chmod(p, 0711), 0);
	o.create = 0;
	o.log_event = collect;
	o.log_event_arg = &w;
	ck_assert_int_eq(osd_target_open(&t, ht.dir, &o), 0);
	ck_assert_int_eq(w.n, 5);
	ck_assert_ptr_nonnull(strstr(w.last, "/data/7f was mode 0711, open to other users"));
	ck_assert_ptr_nonnull(strstr(w.last, "changed to 0700"));
	expect_private(ht.dir);
	ht.tgt = t;
	{
		uint8_t buf[8];

		ck_assert_uint_eq(h_read(&ht, OSD_V2, P1, O1, 0, buf, 8), 8);
		ck_assert_mem_eq(buf, "original", 8);
	}
	/* nothing left to repair: no warning the next time */
	w.n = 0;
	osd_target_close(ht.tgt);
	ck_assert_int_eq(osd_target_open(&ht.tgt, ht.dir, &o), 0);
	ck_assert_int_eq(w.n, 0);
}
END_TEST

/* Version 1 options (no salvage or log_event) and version 4 (no verify_reads)
 * are still accepted. */
START_TEST(options_version_1)
{
	struct osd_target_options o = OSD_TARGET_OPTIONS_INIT;
	osd_target *t;
	char store[300];

	snprintf(store, sizeof(store), "%s/v1", ht.dir);
	o.version = 1;
	ck_assert_int_eq(osd_target_open(&t, store, &o), 0);
	osd_target_close(t);
	/* version 4 (no verify_reads) too: the field is not read */
	o.version = 4;
	o.verify_reads = 12345;
	ck_assert_int_eq(osd_target_open(&t, store, &o), 0);
	osd_target_close(t);
	o.version = 5;
	o.verify_reads = 1;
	ck_assert_int_eq(osd_target_open(&t, store, &o), 0);
	osd_target_close(t);
	o.version = 99;
	ck_assert_int_eq(osd_target_open(&t, store, &o), -EINVAL);
}
END_TEST

static Suite *rootsec_suite(void)
{
	Suite *s = suite_create("target_rootsec");
	TCase *tc = tcase_create("root");
	TCase *tm = tcase_create("modes");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, keyless_root_commands_refused, 0, 2);
	tcase_add_loop_test(tc, nosec_capability_refused_capkey_accepted, 0, 2);
	tcase_add_loop_test(tc, system_id_and_clock_keyless, 0, 2);
	tcase_add_loop_test(tc, other_root_attributes_refused_keyless, 0, 2);
	tcase_add_loop_test(tc, owner_raises_root_method, 0, 2);
	tcase_add_loop_test(tc, format_keeps_root_secured, 0, 2);
	tcase_add_loop_test(tc, no_root_key_nosec_root, 0, 2);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tm, setup, teardown);
	tcase_set_timeout(tm, 60);
	tcase_add_test(tm, store_created_private);
	tcase_add_test(tm, store_repaired_on_open);
	tcase_add_test(tm, options_version_1);
	suite_add_tcase(s, tm);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rootsec_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
