/* libosd requests over the iSCSI initiator against the osd-targetd daemon
 * on 127.0.0.1, in both OSD versions, with digests off and on. Skipped
 * (77) when the daemon is not built. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <osd/osd.h>
#include "daemon_wait.h"
#include <osd/iscsi.h>
#include <osdtarget/target.h>

#ifndef OSD_TARGETD_PATH
#define OSD_TARGETD_PATH ""
#endif

#define UI_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION)
#define APP_PAGE 0x10003u
#define INFLIGHT 48
#define START_WAIT_MS 15000

static char dir[512];
static pid_t daemon_pid = -1;
static unsigned port;
static char target[OSD_ISCSI_NAME_MAX + 1];
static osd_dev *dev;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static const uint8_t ROOT_KEY[OSD_HMAC_LEN] = {
	0x52, 0x4f, 0x4f, 0x54, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
};

/* Starts osd-targetd on a fresh store; with @root_key the store gets the
 * root key first (out of band, as its owner would). */
static void daemon_start(int root_key)
{
	const char *tmp = getenv("TMPDIR");
	char portfile[600], store[600];
	struct osd_iscsi_target_info *v = NULL;
	size_t n = 0;
	int rc;

	snprintf(dir, sizeof(dir), "%s/osdiscsi.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(portfile, sizeof(portfile), "%s/port", dir);
	snprintf(store, sizeof(store), "%s/store", dir);
	if (root_key) {
		struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
		osd_target *tgt;

		ck_assert_int_eq(osd_target_open(&tgt, store, &to), 0);
		ck_assert_int_eq(osd_target_set_root_key(tgt, ROOT_KEY), 0);
		osd_target_close(tgt);
	}
	daemon_pid = fork();
	ck_assert_int_ge(daemon_pid, 0);
	if (daemon_pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0 && !getenv("OSD_TEST_VERBOSE"))
			dup2(null, 1), dup2(null, 2);
		execl(OSD_TARGETD_PATH, "osd-targetd", "--listen", "127.0.0.1:0", "--port-file",
		      portfile, "--create", store, (char *)NULL);
		_exit(127);
	}
	port = osd_test_wait_port(portfile, &daemon_pid, START_WAIT_MS);
	ck_assert_msg(port != 0, "osd-targetd did not start");
	snprintf(portfile, sizeof(portfile), "127.0.0.1:%u", port);
	rc = osd_iscsi_discover(&v, &n, portfile, NULL);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_ge(n, 1);
	snprintf(target, sizeof(target), "%s", v[0].name);
	free(v);
}

static void daemon_up(void)
{
	daemon_start(0);
}

static void daemon_up_keyed(void)
{
	daemon_start(1);
}

static void daemon_down(void)
{
	int status;

	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, &status, 0);
	}
	daemon_pid = -1;
	if (dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = '\0';
}

static void open_dev_with(enum osd_version_select v, int digests, struct osd_dev_options *d);

static void open_dev(enum osd_version_select v, int digests)
{
	struct osd_dev_options d = OSD_DEV_OPTIONS_INIT;

	open_dev_with(v, digests, &d);
}

static void open_dev_with(enum osd_version_select v, int digests, struct osd_dev_options *d)
{
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	char url[512], err[256] = "";
	int rc;

	o.header_digest = o.data_digest = digests ? OSD_ISCSI_DIGEST_CRC32C : OSD_ISCSI_DIGEST_NONE;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/%s/0", port, target);
	rc = osd_iscsi_transport_new(&tp, url, &o);
	ck_assert_msg(rc == 0, "%s: %s", url, err);
	d->osd_version = v;
	rc = osd_dev_open(&dev, &tp, d);
	if (rc)
		tp.ops->destroy(tp.impl);
	ck_assert_msg(rc == 0, "osd_dev_open: %d", rc);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

#define EXEC(req) do {                                                          \
		int rc_ = osd_req_execute(req);                                 \
		ck_assert_msg(rc_ == 0, "%s: %s", osd_action_name(osd_req_action(req)), \
			      osd_req_error(req));                              \
	} while (0)

struct async_ctx {
	int done, failed;
};

static void async_cb(osd_req *req, int result, void *p)
{
	struct async_ctx *a = p;

	a->done++;
	if (result)
		a->failed++;
	osd_req_free(req);
}

/* Drives the device's fd like an event loop until the queue is empty. */
static void drain(void)
{
	uint64_t end = osd_test_now_ms() + 30000;

	while (osd_dev_queue_length(dev)) {
		struct pollfd pfd = { .fd = osd_dev_get_fd(dev),
				      .events = (short)osd_dev_which_events(dev) };

		ck_assert_uint_lt(osd_test_now_ms(), end);
		poll(&pfd, 1, 100);
		ck_assert_int_eq(osd_dev_service(dev, pfd.revents), 0);
	}
}

/* _i: bit 0 = OSD-2, bit 1 = digests */
START_TEST(commands)
{
	static uint8_t data[200000], back[200000];
	static uint8_t many[INFLIGHT][4096], many_back[INFLIGHT][4096];
	struct iovec out[2] = { { data, 1000 }, { data + 1000, sizeof(data) - 1000 } };
	struct iovec in = { back, sizeof(back) };
	struct osd_obj_id part = { 0, 0 }, obj;
	struct osd_list_cursor cur = { 0, 0 };
	struct osd_list_result res;
	struct async_ctx a = { 0, 0 };
	struct osd_attr at;
	uint8_t v[32];
	uint64_t n;
	size_t got;
	osd_req *req;

	if (!OSD_TARGETD_PATH[0])
		return;
	open_dev(_i & 1 ? OSD_VERSION_2 : OSD_VERSION_1, _i >> 1);
	ck_assert_int_eq(osd_dev_version(dev), _i & 1 ? OSD_V2 : OSD_V1);
	ck_assert_int_ge(osd_dev_get_fd(dev), 0);

	ck_assert_int_eq(osd_req_format(&req, dev, 0), 0);
	EXEC(req);
	osd_req_free(req);
	ck_assert_int_eq(osd_req_create_partition(&req, dev, 0), 0);
	EXEC(req);
	ck_assert_int_eq(osd_req_created_id(req, &part), 0);
	osd_req_free(req);
	obj.partition = part.partition;
	obj.id = 0;
	ck_assert_int_eq(osd_req_create(&req, dev, &obj, 1), 0);
	EXEC(req);
	ck_assert_int_eq(osd_req_created_id(req, &obj), 0);
	osd_req_free(req);

	/* a write larger than any burst, with a piggy-backed get (bidirectional) */
	fill(data, sizeof(data), (unsigned)_i);
	ck_assert_int_eq(osd_req_write(&req, dev, &obj, 0, out, 2), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH), 0);
	EXEC(req);
	ck_assert_int_eq(osd_req_find_attr(req, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &at), 0);
	ck_assert_uint_eq(osd_attr_get_u64(&at, 0), sizeof(data));
	osd_req_free(req);
	memset(back, 0xEE, sizeof(back));
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &in, 1), 0);
	EXEC(req);
	ck_assert_uint_eq(osd_req_bytes_read(req), sizeof(back));
	osd_req_free(req);
	ck_assert_mem_eq(back, data, sizeof(data));

	/* attributes */
	ck_assert_int_eq(osd_set_attr(dev, &obj, APP_PAGE, 1, "over-iscsi", 10), 0);
	ck_assert_int_eq(osd_get_attr(dev, &obj, APP_PAGE, 1, v, sizeof(v), &got), 0);
	ck_assert_uint_eq(got, 10);
	ck_assert_mem_eq(v, "over-iscsi", 10);
	ck_assert_int_eq(osd_get_attr_u64(dev, &obj, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &n), 0);
	ck_assert_uint_eq(n, sizeof(data));

	/* list */
	ck_assert_int_eq(osd_req_list(&req, dev, part.partition, &cur, 4096), 0);
	EXEC(req);
	ck_assert_int_eq(osd_req_list_result(req, &res, &cur), 0);
	ck_assert_uint_eq(res.num_ids, 1);
	osd_req_free(req);

	/* many requests in flight on the one session */
	for (int i = 0; i < INFLIGHT; i++) {
		struct iovec iov = { many[i], sizeof(many[i]) };

		fill(many[i], sizeof(many[i]), (unsigned)i + 7);
		ck_assert_int_eq(osd_req_write(&req, dev, &obj, (uint64_t)i * 4096, &iov, 1), 0);
		ck_assert_int_eq(osd_req_submit(req, async_cb, &a), 0);
	}
	drain();
	ck_assert_int_eq(a.done, INFLIGHT);
	ck_assert_int_eq(a.failed, 0);
	for (int i = 0; i < INFLIGHT; i++) {
		struct iovec iov = { many_back[i], sizeof(many_back[i]) };

		ck_assert_int_eq(osd_req_read(&req, dev, &obj, (uint64_t)i * 4096, &iov, 1), 0);
		ck_assert_int_eq(osd_req_submit(req, async_cb, &a), 0);
	}
	drain();
	ck_assert_int_eq(a.done, 2 * INFLIGHT);
	ck_assert_int_eq(a.failed, 0);
	ck_assert_mem_eq(many_back, many, sizeof(many));

	/* remove: the object is gone */
	ck_assert_int_eq(osd_req_remove(&req, dev, &obj), 0);
	EXEC(req);
	osd_req_free(req);
	ck_assert_int_ne(osd_get_attr_u64(dev, &obj, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &n), 0);
	osd_dev_close(dev); /* logs out */
	dev = NULL;
}
END_TEST

START_TEST(autodetect)
{
	if (!OSD_TARGETD_PATH[0])
		return;
	open_dev(OSD_VERSION_AUTO, 0);
	ck_assert_int_ge(osd_dev_version(dev), OSD_V1);
	osd_dev_close(dev);
	dev = NULL;
}
END_TEST

/* Several threads run synchronous requests on one device at once: each
 * waits by polling the shared fd, and completions land in whichever thread
 * services the transport. */
#define THREADS 4
#define ROUNDS 10

struct worker {
	uint64_t partition;
	int failed;
	char why[256];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct osd_obj_id obj = { w->partition, 0 };
	uint8_t data[8192], back[8192];
	struct iovec out = { data, sizeof(data) }, in = { back, sizeof(back) };
	osd_req *req = NULL;
	int rc;

	rc = osd_req_create(&req, dev, &obj, 1);
	if (rc == 0)
		rc = osd_req_execute(req);
	if (rc == 0)
		rc = osd_req_created_id(req, &obj);
	osd_req_free(req);
	for (int i = 0; i < ROUNDS && rc == 0; i++) {
		fill(data, sizeof(data), (unsigned)(obj.id + (uint64_t)i));
		rc = osd_req_write(&req, dev, &obj, 0, &out, 1);
		if (rc == 0)
			rc = osd_req_execute(req);
		osd_req_free(req);
		memset(back, 0, sizeof(back));
		if (rc == 0)
			rc = osd_req_read(&req, dev, &obj, 0, &in, 1);
		if (rc == 0)
			rc = osd_req_execute(req);
		osd_req_free(req);
		if (rc == 0 && memcmp(back, data, sizeof(data)))
			rc = -EILSEQ;
	}
	if (rc) {
		w->failed = 1;
		snprintf(w->why, sizeof(w->why), "%s", strerror(-rc));
	}
	return NULL;
}

START_TEST(threads)
{
	struct worker w[THREADS];
	pthread_t th[THREADS];
	struct osd_obj_id part;
	osd_req *req;

	if (!OSD_TARGETD_PATH[0])
		return;
	open_dev(OSD_VERSION_2, 1);
	ck_assert_int_eq(osd_req_format(&req, dev, 0), 0);
	EXEC(req);
	osd_req_free(req);
	ck_assert_int_eq(osd_req_create_partition(&req, dev, 0), 0);
	EXEC(req);
	ck_assert_int_eq(osd_req_created_id(req, &part), 0);
	osd_req_free(req);
	for (int i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].partition = part.partition;
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(!w[i].failed, "thread %d: %s", i, w[i].why);
	}
	osd_dev_close(dev);
	dev = NULL;
}
END_TEST

static int issue(const struct osd_cred_request *want, struct osd_credential *out, void *p)
{
	return osd_cred_issue(p, want, out);
}

static void set_key(osd_cred_issuer *iss, uint64_t pid, enum osd_key_to_set kind,
		    const char *id, osd_key *parent, uint8_t child[OSD_HMAC_LEN])
{
	struct osd_set_key_params p;
	struct osd_cred_request r;
	struct osd_credential cr;
	osd_req *req;

	memset(&p, 0, sizeof(p));
	memset(p.seed, 0x3C, sizeof(p.seed));
	memcpy(p.key_id, id, OSD_KEY_ID_LEN);
	p.partition = pid;
	p.key_to_set = kind;
	ck_assert_int_eq(osd_key_derive(parent, p.seed, p.key_id, (uint8_t)kind, 0, child), 0);
	memset(&r, 0, sizeof(r));
	r.version = OSD_V2;
	r.obj.partition = pid;
	r.permissions = OSD_PERM_POL_SEC;
	r.method = OSD_SEC_CAPKEY;
	ck_assert_int_eq(osd_cred_issue_set_key(iss, &r, (uint8_t)kind, &cr), 0);
	ck_assert_int_eq(osd_req_set_key(&req, dev, &p), 0);
	ck_assert_int_eq(osd_req_set_credential(req, &cr), 0);
	EXEC(req);
	osd_req_free(req);
}

/* CAPKEY over iSCSI: the request ICV binds each command to the channel's
 * security token (ISID + TSIH), which initiator and daemon must agree on. */
START_TEST(capkey)
{
	struct osd_dev_options d = OSD_DEV_OPTIONS_INIT;
	uint8_t sid[OSD_SYSTEM_ID_LEN], pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	uint8_t data[5000], back[5000], method = OSD_SEC_CAPKEY;
	struct iovec out = { data, sizeof(data) }, in = { back, sizeof(back) };
	struct osd_obj_id part = { 0, 0 }, obj;
	struct osd_cred_request r;
	struct osd_credential cr;
	osd_cred_issuer *iss;
	osd_key *root, *pk;
	osd_req *req;

	if (!OSD_TARGETD_PATH[0])
		return;
	/* the system id names the OSD in every capability key: read it first */
	open_dev(OSD_VERSION_2, _i);
	ck_assert_int_eq(osd_dev_system_id(dev, sid), 0);
	osd_dev_close(dev);
	d.security = OSD_SEC_CAPKEY;
	open_dev_with(OSD_VERSION_2, _i, &d);
	ck_assert_int_eq(osd_cred_issuer_new(&iss, sid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(iss, ROOT_KEY), 0);
	osd_dev_set_cred_source(dev, issue, iss);

	ck_assert_int_eq(osd_req_create_partition(&req, dev, 0), 0);
	EXEC(req);
	ck_assert_int_eq(osd_req_created_id(req, &part), 0);
	osd_req_free(req);
	ck_assert_int_eq(osd_key_new(&root, ROOT_KEY, OSD_HMAC_LEN), 0);
	set_key(iss, part.partition, OSD_KEY_PARTITION, "PART001", root, pkey);
	ck_assert_int_eq(osd_cred_issuer_set_partition_key(iss, part.partition, pkey), 0);
	ck_assert_int_eq(osd_key_new(&pk, pkey, OSD_HMAC_LEN), 0);
	set_key(iss, part.partition, OSD_KEY_WORKING, "WORK000", pk, wkey);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(iss, part.partition, 0, wkey), 0);
	osd_key_free(pk);
	osd_key_free(root);
	ck_assert_int_eq(osd_set_attr(dev, &part, OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
				      OSD_ATTR_PS_DEFAULT_METHOD, &method, 1), 0);

	obj.partition = part.partition;
	obj.id = 0;
	ck_assert_int_eq(osd_req_create(&req, dev, &obj, 1), 0);
	EXEC(req);
	ck_assert_int_eq(osd_req_created_id(req, &obj), 0);
	osd_req_free(req);
	fill(data, sizeof(data), 7);
	ck_assert_int_eq(osd_req_write(&req, dev, &obj, 0, &out, 1), 0);
	EXEC(req);
	osd_req_free(req);
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &in, 1), 0);
	EXEC(req);
	osd_req_free(req);
	ck_assert_mem_eq(back, data, sizeof(data));

	/* the partition now requires CAPKEY: a NOSEC credential is refused */
	memset(&r, 0, sizeof(r));
	r.version = OSD_V2;
	r.obj = obj;
	r.permissions = OSD_PERM_READ;
	r.method = OSD_SEC_NOSEC;
	ck_assert_int_eq(osd_cred_issue(iss, &r, &cr), 0);
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &in, 1), 0);
	ck_assert_int_eq(osd_req_set_credential(req, &cr), 0);
	ck_assert_int_eq(osd_req_execute(req), -EACCES);
	osd_req_free(req);

	osd_dev_close(dev);
	dev = NULL;
	osd_cred_issuer_free(iss);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iscsi_targetd");
	TCase *tc = tcase_create("targetd");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, daemon_up, daemon_down);
	tcase_add_loop_test(tc, commands, 0, 4);
	tcase_add_test(tc, autodetect);
	tcase_add_test(tc, threads);
	suite_add_tcase(s, tc);
	tc = tcase_create("security");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, daemon_up_keyed, daemon_down);
	tcase_add_loop_test(tc, capkey, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (!OSD_TARGETD_PATH[0] || access(OSD_TARGETD_PATH, X_OK)) {
		fprintf(stderr, "osd-targetd not built: skipped\n");
		return 77;
	}
	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
