/* The osd backend beyond the conformance suite: what it puts on the OSD,
 * checked through libosd directly, in both OSD versions. */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <osd/attributes.h>
#include <osd/request.h>
#include <osdfs/backends.h>

#include "backend_factory.h"

#define OID(n) (OSD_FIRST_ID + (uint64_t)(n))
#define APP_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_APP_FIRST)
#define PART_QUOTAS (OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS)
#define PART_INFO (OSD_APAGE_PARTITION_BASE + OSD_APAGE_INFORMATION)
#define PART_POLICY (OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY)

static char base_dir[4096];
static struct be_instance inst;
static const struct osdfs_backend_ops *ops;
static void *impl;
static osd_dev *dev;

static void suite_setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base_dir, sizeof(base_dir), "%s/osdfs-osdbe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base_dir))
		abort();
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void suite_teardown(void)
{
	nftw(base_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* _i selects the OSD version: 0 = OSD-1, 1 = OSD-2. */
static void open_version(int i)
{
	const struct be_factory *f = be_factory_find(i ? "osd2" : "osd1");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->open(&inst, base_dir), 0);
	ops = osdfs_backend_ops_of(inst.be);
	impl = osdfs_backend_impl(inst.be);
	dev = ((struct be_osd_env *)inst.priv)->dev;
	ck_assert_int_eq(osd_dev_version(dev), i ? OSD_V2 : OSD_V1);
}

static void close_version(int i)
{
	be_factory_find(i ? "osd2" : "osd1")->close(&inst);
}

static struct osd_obj_id obj(uint64_t oid)
{
	struct osd_obj_id o = { BE_OSD_PARTITION, oid };

	return o;
}

START_TEST(test_new_arguments)
{
	osdfs_backend *be = (osdfs_backend *)1;

	ck_assert_int_eq(osdfs_backend_osd_new(&be, NULL, BE_OSD_PARTITION), -EINVAL);
	ck_assert_ptr_null(be);
	open_version(_i);
	ck_assert_int_eq(osdfs_backend_osd_new(&be, dev, OSD_FIRST_ID - 1), -EINVAL);
	ck_assert_int_eq(osdfs_backend_osd_new(NULL, dev, BE_OSD_PARTITION), -EINVAL);
	ck_assert_int_eq(osdfs_backend_osd_new(&be, dev, BE_OSD_PARTITION), 0);
	ck_assert_str_eq(osdfs_backend_name(be), "osd");
	osdfs_backend_free(be);
	close_version(_i);
}
END_TEST

static int count_id(uint64_t id, void *payload)
{
	(void)id;
	(*(uint64_t *)payload)++;
	return 0;
}

START_TEST(test_format_sets_quota_and_replaces)
{
	struct osd_obj_id part = obj(0), o = obj(OID(5)), c = obj(OID(6));
	uint64_t v;
	osd_req *req;

	open_version(_i);
	ck_assert_int_eq(ops->format(impl, 1ULL << 30), 0);
	ck_assert_int_eq(osd_get_attr_u64(dev, &part, PART_QUOTAS, OSD_ATTR_Q_PARTITION_CAPACITY, &v), 0);
	ck_assert_uint_eq(v, 1ULL << 30);
	/* An object made behind the backend's back goes with the next format. */
	ck_assert_int_eq(osd_req_create(&req, dev, &o, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	osd_req_free(req);
	if (_i) {
		/* ... and so does a collection (OSD-2). */
		ck_assert_int_eq(osd_req_create_collection(&req, dev, &c), 0);
		ck_assert_int_eq(osd_req_execute(req), 0);
		osd_req_free(req);
	}
	/* The partition is emptied in place, keeping its attributes. */
	ck_assert_int_eq(osd_set_attr(dev, &part, PART_POLICY, OSD_ATTR_PS_NONCE_LIST_DEPTH,
				      "\0\x09", 2), 0);
	ck_assert_int_eq(ops->format(impl, 0), 0);
	ck_assert_int_eq(osd_get_attr_u64(dev, &o, OSD_APAGE_INFORMATION,
					  OSD_ATTR_UI_LOGICAL_LENGTH, &v), -ENOENT);
	ck_assert_int_eq(osd_get_attr_u64(dev, &part, PART_INFO, OSD_ATTR_PI_NUM_OBJECTS, &v), 0);
	ck_assert_uint_eq(v, 0);
	if (_i) {
		v = 0;
		ck_assert_int_eq(osd_list_foreach(dev, OSD_ACT_LIST_COLLECTION, &part, count_id, &v), 0);
		ck_assert_uint_eq(v, 0);
	}
	ck_assert_int_eq(osd_get_attr_u64(dev, &part, PART_POLICY, OSD_ATTR_PS_NONCE_LIST_DEPTH, &v), 0);
	ck_assert_uint_eq(v, 9);
	ck_assert_int_eq(osd_get_attr_u64(dev, &part, PART_QUOTAS, OSD_ATTR_Q_PARTITION_CAPACITY, &v), 0);
	ck_assert_uint_eq(v, 0);
	close_version(_i);
}
END_TEST

START_TEST(test_attributes_on_the_osd)
{
	struct osd_obj_id o = obj(OID(1));
	struct osdfs_attr a = { APP_PAGE + 3, 9, "piggy", 5 };
	struct iovec iov = { "0123456789", 10 };
	char buf[16];
	size_t got = 0;
	uint64_t v;

	open_version(_i);
	ck_assert_int_eq(ops->format(impl, 0), 0);
	ck_assert_int_eq(ops->create(impl, OID(1), &a, 1), 0);
	ck_assert_int_eq(osd_get_attr(dev, &o, APP_PAGE + 3, 9, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, 5);
	ck_assert_mem_eq(buf, "piggy", 5);
	a.value = "write";
	ck_assert_int_eq(ops->write(impl, OID(1), 0, &iov, 1, &a, 1), 10);
	ck_assert_int_eq(osd_get_attr(dev, &o, APP_PAGE + 3, 9, buf, sizeof(buf), &got), 0);
	ck_assert_mem_eq(buf, "write", 5);
	/* truncate is the logical-length attribute. */
	ck_assert_int_eq(ops->truncate(impl, OID(1), 12345), 0);
	ck_assert_int_eq(osd_get_attr_u64(dev, &o, OSD_APAGE_INFORMATION,
					  OSD_ATTR_UI_LOGICAL_LENGTH, &v), 0);
	ck_assert_uint_eq(v, 12345);
	ck_assert_int_eq(osd_set_attr_u64(dev, &o, OSD_APAGE_INFORMATION,
					  OSD_ATTR_UI_LOGICAL_LENGTH, 7), 0);
	ck_assert_int_eq(ops->size(impl, OID(1), &v), 0);
	ck_assert_uint_eq(v, 7);
	close_version(_i);
}
END_TEST

START_TEST(test_statfs_matches_osd)
{
	struct osd_obj_id part = obj(0);
	struct osdfs_backend_stat st;
	uint64_t objects;

	open_version(_i);
	ck_assert_int_eq(ops->format(impl, 5ULL << 20), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(ops->create(impl, OID(i), NULL, 0), 0);
	ck_assert_int_eq(ops->statfs(impl, &st), 0);
	ck_assert_int_eq(osd_get_attr_u64(dev, &part, PART_INFO, OSD_ATTR_PI_NUM_OBJECTS, &objects), 0);
	ck_assert_uint_eq(objects, 3);
	ck_assert_uint_eq(st.objects, 3);
	ck_assert_uint_eq(st.capacity, 5ULL << 20);
	ck_assert_uint_gt(st.device_free, 0);
	close_version(_i);
}
END_TEST

START_TEST(test_poll_idle)
{
	open_version(_i);
	ck_assert_ptr_nonnull(ops->poll);
	ck_assert_int_eq(ops->poll(impl), 0); /* nothing in flight: returns at once */
	close_version(_i);
}
END_TEST

/* ---- security: the backend under CAPKEY/CMDRSP/ALLDATA ---- */

#include <osd/capability.h>
#include <osd/security.h>
#include <osdtarget/target.h>

static const uint8_t root_key[OSD_HMAC_LEN] = "0123456789abcdefghij";

struct sec_env {
	osd_target *tgt;
	osd_dev *dev;
	osd_cred_issuer *iss;
};

static int issue_cb(const struct osd_cred_request *want, struct osd_credential *out, void *payload)
{
	return osd_cred_issue(payload, want, out);
}

/* SET KEY of the partition key or working key 0 of BE_OSD_PARTITION, and the
 * same key in the issuer. */
static void set_key(struct sec_env *e, enum osd_version v, enum osd_sec_method m,
		    enum osd_key_to_set which, const uint8_t parent[OSD_HMAC_LEN],
		    uint8_t child[OSD_HMAC_LEN])
{
	struct osd_cred_request cr = { .version = v, .obj = { BE_OSD_PARTITION, 0 },
				       .permissions = OSD_PERM_POL_SEC, .method = m };
	struct osd_set_key_params kp = { .key_to_set = which, .partition = BE_OSD_PARTITION };
	struct osd_credential cred;
	osd_key *pk;
	osd_req *req;

	memset(kp.seed, which, sizeof(kp.seed));
	memcpy(kp.key_id, which == OSD_KEY_PARTITION ? "partkey" : "workkey", OSD_KEY_ID_LEN);
	ck_assert_int_eq(osd_cred_issue_set_key(e->iss, &cr, (uint8_t)which, &cred), 0);
	ck_assert_int_eq(osd_req_set_key(&req, e->dev, &kp), 0);
	ck_assert_int_eq(osd_req_set_credential(req, &cred), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	osd_req_free(req);
	ck_assert_int_eq(osd_key_new(&pk, parent, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_key_derive(pk, kp.seed, kp.key_id, (uint8_t)which, 0, child), 0);
	osd_key_free(pk);
	if (which == OSD_KEY_PARTITION)
		ck_assert_int_eq(osd_cred_issuer_set_partition_key(e->iss, BE_OSD_PARTITION, child), 0);
	else
		ck_assert_int_eq(osd_cred_issuer_set_working_key(e->iss, BE_OSD_PARTITION, 0, child), 0);
}

/* A keyed target, a device signing with @m, and a keyed partition. */
static void sec_open(struct sec_env *e, enum osd_version v, enum osd_sec_method m)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	uint8_t sysid[OSD_SYSTEM_ID_LEN], pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	char path[4200];
	osd_req *req;

	snprintf(path, sizeof(path), "%s/sec-XXXXXX", base_dir);
	ck_assert_ptr_nonnull(mkdtemp(path));
	ck_assert_int_eq(osd_target_open(&e->tgt, path, NULL), 0);
	ck_assert_int_eq(osd_target_set_root_key(e->tgt, root_key), 0);
	osd_target_system_id(e->tgt, sysid);
	ck_assert_int_eq(osd_cred_issuer_new(&e->iss, sysid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(e->iss, root_key), 0);
	ck_assert_int_eq(osd_target_loopback(e->tgt, &tp), 0);
	o.osd_version = (enum osd_version_select)v;
	o.security = m;
	o.cred_source = issue_cb;
	o.cred_payload = e->iss;
	ck_assert_int_eq(osd_dev_open(&e->dev, &tp, &o), 0);
	ck_assert_int_eq(osd_req_create_partition(&req, e->dev, BE_OSD_PARTITION), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	osd_req_free(req);
	set_key(e, v, m, OSD_KEY_PARTITION, root_key, pkey);
	set_key(e, v, m, OSD_KEY_WORKING, pkey, wkey);
}

static void sec_close(struct sec_env *e)
{
	osd_dev_close(e->dev);
	osd_target_close(e->tgt);
	osd_cred_issuer_free(e->iss);
}

static void sec_done(struct osdfs_op *op)
{
	(*(int *)op->priv)++;
}

/* _i: bit 0 = OSD version (0: OSD-1), bits 1-2 = security method 1..3. */
START_TEST(test_security_methods)
{
	enum osd_version v = (_i & 1) ? OSD_V2 : OSD_V1;
	enum osd_sec_method m = (enum osd_sec_method)(1 + (_i >> 1));
	struct sec_env e;
	osdfs_backend *be;
	const struct osdfs_backend_ops *o;
	void *im;
	char buf[16];
	struct osdfs_attr a = { APP_PAGE, 1, "secret", 6 };
	struct osdfs_attr g = { APP_PAGE, 1, buf, sizeof(buf) };
	struct iovec iov = { "signed data", 11 }, riov = { buf, sizeof(buf) };
	struct osdfs_backend_stat st;
	struct osdfs_op op = { .kind = OSDFS_OP_READ, .oid = OID(1), .iov = &riov, .iovcnt = 1,
			       .done = sec_done };
	uint64_t ids[4], next, sz;
	size_t n;
	int done = 0;

	sec_open(&e, v, m);
	ck_assert_int_eq(osdfs_backend_osd_new(&be, e.dev, BE_OSD_PARTITION), 0);
	o = osdfs_backend_ops_of(be);
	im = osdfs_backend_impl(be);
	ck_assert_int_eq(o->create(im, OID(1), &a, 1), 0);
	ck_assert_int_eq(o->create(im, OID(1), NULL, 0), -EEXIST);
	ck_assert_int_eq(o->write(im, OID(1), 0, &iov, 1, NULL, 0), 11);
	ck_assert_int_eq(o->read(im, OID(1), 0, &riov, 1), 11);
	ck_assert_mem_eq(buf, "signed data", 11);
	ck_assert_int_eq(o->get_attrs(im, OID(1), &g, 1), 0);
	ck_assert_uint_eq(g.len, 6);
	ck_assert_mem_eq(buf, "secret", 6);
	ck_assert_int_eq(o->truncate(im, OID(1), 6), 0);
	ck_assert_int_eq(o->punch(im, OID(1), 0, 2), 0);
	ck_assert_int_eq(o->size(im, OID(1), &sz), 0);
	ck_assert_uint_eq(sz, 6);
	ck_assert_int_eq(o->list(im, 0, ids, 4, &n, &next), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ids[0], OID(1));
	ck_assert_int_eq(o->flush(im, OID(1)), 0);
	ck_assert_int_eq(o->flush(im, 0), 0);
	ck_assert_int_eq(o->statfs(im, &st), 0);
	ck_assert_uint_eq(st.objects, 1);
	op.priv = &done;
	ck_assert_int_eq(o->submit(im, &op), 0);
	while (!done)
		ck_assert_int_eq(o->poll(im), 0);
	ck_assert_int_eq(op.result, 6);
	ck_assert_mem_eq(buf, "\0\0gned", 6);
	/* format keeps the partition's keys: the filesystem goes, access stays. */
	ck_assert_int_eq(o->format(im, 0), 0);
	ck_assert_int_eq(o->list(im, 0, ids, 4, &n, &next), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(o->create(im, OID(1), &a, 1), 0);
	/* A credential signed with the wrong working key is refused. */
	ck_assert_int_eq(osd_cred_issuer_set_working_key(e.iss, BE_OSD_PARTITION, 0, root_key), 0);
	osd_dev_forget_credentials(e.dev, NULL);
	ck_assert_int_eq(o->read(im, OID(1), 0, &riov, 1), -EACCES);
	ck_assert_int_eq(o->remove(im, OID(1)), -EACCES);
	osdfs_backend_free(be);
	sec_close(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("backend_osd");
	TCase *tc = tcase_create("osd");
	SRunner *sr;
	int failed;

	tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_new_arguments, 0, 2);
	tcase_add_loop_test(tc, test_format_sets_quota_and_replaces, 0, 2);
	tcase_add_loop_test(tc, test_attributes_on_the_osd, 0, 2);
	tcase_add_loop_test(tc, test_statfs_matches_osd, 0, 2);
	tcase_add_loop_test(tc, test_poll_idle, 0, 2);
	tcase_add_loop_test(tc, test_security_methods, 0, 6);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
