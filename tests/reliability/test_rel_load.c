/* Concurrent load on one target with every byte verified (issue 7):
 * (a) LOAD_THREADS threads, each with its own osd_dev on one embedded target
 *     (loopback), while a rotator replaces the working key half-way: clients
 *     refresh their credentials and go on; a request signed with the old key
 *     is refused with the ICV sense and changes nothing;
 * (b) LOAD_PROCS processes, each with its own iSCSI session to one
 *     osd-targetd, which is then killed (SIGKILL) after the clients flushed.
 * Both end with a verification pass of every client's objects on the target
 * reopened from its store. CAPKEY throughout. Each phase runs for
 * LOAD_SECONDS * $OSD_REL_SCALE seconds; $OSD_REL_SEED changes the seeds. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <osd/iscsi.h>
#include <osdtarget/iscsi.h>
#include <osdtarget/target.h>
#include "test_rel_load_client.h"
#include "rel_env.h"

#ifndef OSD_TARGETD_PATH
#define OSD_TARGETD_PATH ""
#endif

#define LOAD_THREADS 8
#define LOAD_PROCS 4
#define LOAD_SECONDS 15.0
#define PROC_CID_BASE 32               /* process clients use other slices/ids */
#define PROBE_LEN 4096

static const uint8_t ROOT_KEY[OSD_HMAC_LEN] = "load-test-root-key!";

/* One phase's target, keys and shared objects. */
struct load_env {
	char dir[256], store[300];
	osd_target *tgt;             /* embedded target (phase a, and verification) */
	pid_t daemon;                /* osd-targetd (phase b) */
	unsigned port;
	struct load_keys keys;
	uint64_t partition;
	uint64_t shared[LOAD_SHARED];
	uint64_t probe;              /* object the rotation test writes with an old key */
	uint64_t seed;
};

static uint64_t seed_base(void)
{
	return rel_seed(0x10ADull);
}

/* ---- target, devices and keys ---- */

static void env_init(struct load_env *e)
{
	const char *tmp = getenv("TMPDIR");

	memset(e, 0, sizeof(*e));
	e->daemon = -1;
	snprintf(e->dir, sizeof(e->dir), "%s/rel-load.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(e->dir));
	snprintf(e->store, sizeof(e->store), "%s/store", e->dir);
	ck_assert_int_eq(pthread_rwlock_init(&e->keys.lock, NULL), 0);
	e->seed = seed_base();
}

static void env_fini(struct load_env *e)
{
	int status;

	if (e->daemon > 0) {
		kill(e->daemon, SIGKILL);
		waitpid(e->daemon, &status, 0);
	}
	osd_target_close(e->tgt);
	osd_cred_issuer_free(e->keys.iss);
	pthread_rwlock_destroy(&e->keys.lock);
	rel_rmtree(e->dir);
}

/* Open the store embedded; the first time also install the root key in it
 * and in a new issuer. */
static void target_open(struct load_env *e)
{
	uint8_t sid[OSD_SYSTEM_ID_LEN];

	ck_assert_int_eq(osd_target_open(&e->tgt, e->store, NULL), 0);
	if (e->keys.iss)
		return;
	ck_assert_int_eq(osd_target_set_root_key(e->tgt, ROOT_KEY), 0);
	osd_target_system_id(e->tgt, sid);
	ck_assert_int_eq(osd_cred_issuer_new(&e->keys.iss, sid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(e->keys.iss, ROOT_KEY), 0);
}

static void target_close(struct load_env *e)
{
	osd_target_close(e->tgt);
	e->tgt = NULL;
}

/* A CAPKEY device on the embedded target, or over iSCSI to the daemon.
 * NULL on failure (usable in a forked child). */
static osd_dev *dev_open(struct load_env *e)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	char url[512];
	osd_dev *dev;
	int rc;

	o.osd_version = OSD_VERSION_2;
	o.security = OSD_SEC_CAPKEY;
	o.cred_source = load_issue;
	o.cred_payload = &e->keys;
	if (e->tgt) {
		rc = osd_target_loopback(e->tgt, &tp);
	} else {
		snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/%s/0", e->port,
			 OSD_TARGET_ISCSI_DEFAULT_NAME);
		rc = osd_iscsi_transport_new(&tp, url, &io);
	}
	if (rc)
		return NULL;
	if (osd_dev_open(&dev, &tp, &o)) {
		tp.ops->destroy(tp.impl);
		return NULL;
	}
	return dev;
}

static void exec_ok(osd_req *req)
{
	int rc = osd_req_execute(req);

	ck_assert_msg(rc == 0, "%s", osd_req_error(req));
}

/* SET KEY of the partition key or of working key 0 with a new seed; the
 * issuer learns the new key too. The caller holds the keys' write lock
 * when clients run. */
static void set_key(struct load_env *e, osd_dev *dev, enum osd_key_to_set which,
		    const uint8_t parent[OSD_HMAC_LEN], uint8_t seed_byte, uint8_t child[OSD_HMAC_LEN])
{
	struct osd_cred_request cr = { .version = OSD_V2, .obj = { e->partition, 0 },
				       .permissions = OSD_PERM_POL_SEC, .method = OSD_SEC_CAPKEY };
	struct osd_set_key_params kp = { .key_to_set = which, .partition = e->partition };
	struct osd_credential cred;
	osd_key *pk;
	osd_req *req;

	memset(kp.seed, seed_byte, sizeof(kp.seed));
	snprintf((char *)kp.key_id, OSD_KEY_ID_LEN, "k%02x", seed_byte);
	ck_assert_int_eq(osd_cred_issue_set_key(e->keys.iss, &cr, (uint8_t)which, &cred), 0);
	ck_assert_int_eq(osd_req_set_key(&req, dev, &kp), 0);
	ck_assert_int_eq(osd_req_set_credential(req, &cred), 0);
	exec_ok(req);
	osd_req_free(req);
	ck_assert_int_eq(osd_key_new(&pk, parent, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_key_derive(pk, kp.seed, kp.key_id, (uint8_t)which, 0, child), 0);
	osd_key_free(pk);
	if (which == OSD_KEY_PARTITION)
		ck_assert_int_eq(osd_cred_issuer_set_partition_key(e->keys.iss, e->partition, child), 0);
	else
		ck_assert_int_eq(osd_cred_issuer_set_working_key(e->keys.iss, e->partition, 0, child), 0);
}

static uint64_t create_one(osd_dev *dev, uint64_t partition)
{
	struct osd_obj_id obj = { partition, 0 };
	osd_req *req;

	ck_assert_int_eq(osd_req_create(&req, dev, &obj, 1), 0);
	exec_ok(req);
	ck_assert_int_eq(osd_req_created_id(req, &obj), 0);
	osd_req_free(req);
	return obj.id;
}

/* A partition that requires CAPKEY, keyed, with the shared and probe objects. */
static uint8_t partition_key[OSD_HMAC_LEN];

static void setup_partition(struct load_env *e, osd_dev *dev)
{
	struct osd_obj_id part = { 0, 0 };
	uint8_t wkey[OSD_HMAC_LEN], method = OSD_SEC_CAPKEY;
	osd_req *req;

	ck_assert_int_eq(osd_req_create_partition(&req, dev, 0), 0);
	exec_ok(req);
	ck_assert_int_eq(osd_req_created_id(req, &part), 0);
	osd_req_free(req);
	e->partition = part.partition;
	set_key(e, dev, OSD_KEY_PARTITION, ROOT_KEY, 1, partition_key);
	set_key(e, dev, OSD_KEY_WORKING, partition_key, 2, wkey);
	ck_assert_int_eq(osd_set_attr(dev, &part, OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
				      OSD_ATTR_PS_DEFAULT_METHOD, &method, 1), 0);
	for (unsigned s = 0; s < LOAD_SHARED; s++)
		e->shared[s] = create_one(dev, e->partition);
	e->probe = create_one(dev, e->partition);
}

/* ---- reporting ---- */

static void sum_stats(struct load_stats *t, const struct load_stats *s)
{
	t->ops += s->ops;
	t->commands += s->commands;
	t->bytes_written += s->bytes_written;
	t->bytes_verified += s->bytes_verified;
	t->rekeys += s->rekeys;
	t->errors += s->errors;
	t->losses += s->losses;
}

static void report(const char *what, unsigned clients, const struct load_stats *t,
		   uint64_t verified_after, double secs, const char *faults)
{
	printf("REL %s: clients=%u seconds=%.1f faults=%s ops=%llu commands=%llu bytes_written=%llu "
	       "bytes_verified=%llu (+%llu after restart) write_MiB/s=%.1f verify_MiB/s=%.1f "
	       "ops/s=%.0f rekeys=%llu errors=%llu losses=%llu\n",
	       what, clients, secs, faults, (unsigned long long)t->ops, (unsigned long long)t->commands,
	       (unsigned long long)t->bytes_written, (unsigned long long)t->bytes_verified,
	       (unsigned long long)verified_after, t->bytes_written / secs / 1048576.0,
	       t->bytes_verified / secs / 1048576.0, t->commands / secs,
	       (unsigned long long)t->rekeys, (unsigned long long)t->errors,
	       (unsigned long long)t->losses);
}

/* Every client's model against the store reopened by an embedded target. */
static uint64_t verify_all(struct load_env *e, struct load_client *cl, unsigned n)
{
	struct load_stats t = { 0 };
	osd_dev *dev;
	uint64_t before;

	target_open(e);
	dev = dev_open(e);
	ck_assert_ptr_nonnull(dev);
	for (unsigned i = 0; i < n; i++) {
		before = cl[i].st.bytes_verified;
		load_client_verify(&cl[i], dev);
		ck_assert_msg(!cl[i].st.errors, "after restart: %s", cl[i].st.why);
		t.bytes_verified += cl[i].st.bytes_verified - before;
	}
	osd_dev_close(dev);
	return t.bytes_verified;
}

/* ---- (a) threads and key rotation ---- */

struct rotator {
	struct load_env *e;
	osd_dev *dev;
	uint64_t at_ms;
	char why[200];
	int rotated;
};

static void *client_thread(void *p)
{
	struct load_client *c = p;

	load_client_run(c, load_now_ms() + (uint64_t)(LOAD_SECONDS * rel_scale(0.05) * 1000), 0);
	return NULL;
}

/* WRITE + SET ATTRIBUTES of the probe with @p cred; returns the result. */
static int probe_write(struct load_env *e, osd_dev *dev, const struct osd_credential *cred,
		       uint8_t pattern, struct osd_sense *sense)
{
	static uint8_t data[PROBE_LEN];
	struct iovec iov = { data, sizeof(data) };
	struct osd_obj_id obj = { e->partition, e->probe };
	osd_req *req;
	int rc;

	memset(data, pattern, sizeof(data));
	ck_assert_int_eq(osd_req_write(&req, dev, &obj, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_add_set_attr(req, LOAD_APP_PAGE, 1, data, LOAD_ATTR_LEN), 0);
	if (cred)
		ck_assert_int_eq(osd_req_set_credential(req, cred), 0);
	rc = osd_req_execute(req);
	if (sense && osd_req_sense(req))
		*sense = *osd_req_sense(req);
	osd_req_free(req);
	return rc;
}

/* The probe holds @p pattern in its data and attribute. */
static void probe_check(struct load_env *e, osd_dev *dev, uint8_t pattern)
{
	uint8_t back[PROBE_LEN], attr[LOAD_ATTR_LEN];
	struct iovec iov = { back, sizeof(back) };
	struct osd_obj_id obj = { e->partition, e->probe };
	size_t got = 0;
	osd_req *req;

	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &iov, 1), 0);
	exec_ok(req);
	osd_req_free(req);
	for (size_t i = 0; i < sizeof(back); i++)
		ck_assert_msg(back[i] == pattern, "probe byte %zu is %02x, not %02x", i, back[i],
			      pattern);
	ck_assert_int_eq(osd_get_attr(dev, &obj, LOAD_APP_PAGE, 1, attr, sizeof(attr), &got), 0);
	ck_assert_uint_eq(got, LOAD_ATTR_LEN);
	for (size_t i = 0; i < sizeof(attr); i++)
		ck_assert_uint_eq(attr[i], pattern);
}

/* Half-way: replace working key 0 while the clients run, then show that a
 * capability of the old key is refused and executes nothing. */
static void rotate(struct rotator *r)
{
	struct load_env *e = r->e;
	struct osd_cred_request want = { .version = OSD_V2, .obj = { e->partition, e->probe },
					 .permissions = OSD_PERM_READ | OSD_PERM_WRITE |
							OSD_PERM_GET_ATTR | OSD_PERM_SET_ATTR,
					 .method = OSD_SEC_CAPKEY };
	struct osd_credential old;
	struct osd_sense sense;
	uint8_t wkey[OSD_HMAC_LEN];

	ck_assert_int_eq(probe_write(e, r->dev, NULL, 0x11, NULL), 0);
	ck_assert_int_eq(load_issue(&want, &old, &e->keys), 0);
	while (load_now_ms() < r->at_ms)
		poll(NULL, 0, 20); /* waiting for the rotation time, bounded by it */
	pthread_rwlock_wrlock(&e->keys.lock);
	set_key(e, r->dev, OSD_KEY_WORKING, partition_key, 3, wkey);
	pthread_rwlock_unlock(&e->keys.lock);
	r->rotated = 1;

	memset(&sense, 0, sizeof(sense));
	ck_assert_int_eq(probe_write(e, r->dev, &old, 0x22, &sense), -EACCES);
	ck_assert_uint_eq(sense.key, OSD_SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(sense.asc, 0x2400);
	ck_assert(sense.has_field && sense.field_in_cdb);
	ck_assert_uint_eq(sense.field_pointer, 184); /* the v2 request ICV */
	ck_assert(sense.has_object);
	ck_assert_uint_eq(sense.completed, 0);
	osd_dev_forget_credentials(r->dev, NULL);
	probe_check(e, r->dev, 0x11);
	printf("REL load-rotation: old capability refused: key %u ASC %04x field %u; "
	       "probe unchanged\n", sense.key, sense.asc, sense.field_pointer);
}

START_TEST(threads_with_key_rotation)
{
	static struct load_client cl[LOAD_THREADS];
	pthread_t th[LOAD_THREADS];
	osd_dev *devs[LOAD_THREADS];
	struct load_stats t = { 0 };
	struct load_env e;
	struct rotator r = { &e, NULL, 0, "", 0 };
	uint64_t t0, verified;
	double secs = LOAD_SECONDS * rel_scale(0.05);

	env_init(&e);
	target_open(&e);
	r.dev = dev_open(&e);
	ck_assert_ptr_nonnull(r.dev);
	setup_partition(&e, r.dev);
	for (unsigned i = 0; i < LOAD_THREADS; i++) {
		ck_assert_int_eq(load_client_init(&cl[i], i, e.seed + i, e.partition, e.shared), 0);
		devs[i] = cl[i].dev = dev_open(&e);
		ck_assert_ptr_nonnull(devs[i]);
	}
	t0 = load_now_ms();
	r.at_ms = t0 + (uint64_t)(secs * 500);
	for (unsigned i = 0; i < LOAD_THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, client_thread, &cl[i]), 0);
	rotate(&r);
	for (unsigned i = 0; i < LOAD_THREADS; i++) {
		pthread_join(th[i], NULL);
		sum_stats(&t, &cl[i].st);
	}
	secs = (double)(load_now_ms() - t0) / 1000.0;
	for (unsigned i = 0; i < LOAD_THREADS; i++) {
		ck_assert_msg(!cl[i].st.errors, "%s", cl[i].st.why);
		osd_dev_close(devs[i]);
		cl[i].dev = NULL;
	}
	osd_dev_close(r.dev);
	target_close(&e);
	verified = verify_all(&e, cl, LOAD_THREADS);
	report("load-threads", LOAD_THREADS, &t, verified, secs, "1(key-rotation)");
	ck_assert(r.rotated);
	ck_assert_uint_ge(t.rekeys, 1);
	ck_assert_uint_eq(t.losses, 0);
	for (unsigned i = 0; i < LOAD_THREADS; i++)
		load_client_free(&cl[i]);
	env_fini(&e);
}
END_TEST

/* ---- (b) processes over iSCSI to osd-targetd ---- */

static void daemon_start(struct load_env *e)
{
	e->daemon = rel_targetd_start(OSD_TARGETD_PATH, e->dir, e->store, &e->port);
	ck_assert_msg(e->daemon > 0, "osd-targetd did not start");
}

/* A client process: run, flush, send the stats, exit. */
static void child_main(struct load_env *e, unsigned cid, int fd, pid_t parent)
{
	struct load_client c;
	ssize_t n;

	rel_die_with_parent(parent);
	if (load_client_init(&c, cid, e->seed + cid, e->partition, e->shared))
		_exit(2);
	c.dev = dev_open(e);
	if (!c.dev) {
		c.st.errors = 1;
		snprintf(c.st.why, sizeof(c.st.why), "client %u: cannot connect", cid);
	} else {
		load_client_run(&c, load_now_ms() + (uint64_t)(LOAD_SECONDS * rel_scale(0.05) * 1000), 0);
		osd_dev_close(c.dev);
	}
	n = write(fd, &c.st, sizeof(c.st));
	_exit(n == (ssize_t)sizeof(c.st) ? 0 : 3);
}

/* Start the clients; returns after reading every client's stats. */
static void run_children(struct load_env *e, struct load_stats *st)
{
	pid_t pid[LOAD_PROCS], self = getpid();
	int fds[LOAD_PROCS][2], status;

	for (unsigned i = 0; i < LOAD_PROCS; i++) {
		ck_assert_int_eq(pipe(fds[i]), 0);
		fflush(stdout);
		pid[i] = fork();
		ck_assert_int_ge(pid[i], 0);
		if (pid[i] == 0)
			child_main(e, PROC_CID_BASE + i, fds[i][1], self);
		close(fds[i][1]);
	}
	for (unsigned i = 0; i < LOAD_PROCS; i++) {
		ssize_t n = read(fds[i][0], &st[i], sizeof(st[i]));

		close(fds[i][0]);
		waitpid(pid[i], &status, 0);
		ck_assert_msg(n == (ssize_t)sizeof(st[i]) && WIFEXITED(status) &&
			      WEXITSTATUS(status) == 0, "client process %u died (status 0x%x)", i,
			      status);
		ck_assert_msg(!st[i].errors, "%s", st[i].why);
	}
}

START_TEST(processes_over_iscsi)
{
	static struct load_client cl[LOAD_PROCS];
	struct load_stats st[LOAD_PROCS], t = { 0 };
	struct load_env e;
	uint64_t t0, verified;
	osd_dev *admin;
	double secs;
	int status;

	env_init(&e);
	target_open(&e); /* root key installed out of band, as the owner would */
	target_close(&e);
	daemon_start(&e);
	admin = dev_open(&e);
	ck_assert_ptr_nonnull(admin);
	setup_partition(&e, admin);
	osd_dev_close(admin);
	t0 = load_now_ms();
	run_children(&e, st);
	secs = (double)(load_now_ms() - t0) / 1000.0;
	/* acknowledged and flushed: must survive the daemon's sudden death */
	kill(e.daemon, SIGKILL);
	waitpid(e.daemon, &status, 0);
	e.daemon = -1;
	for (unsigned i = 0; i < LOAD_PROCS; i++) {
		sum_stats(&t, &st[i]);
		ck_assert_int_eq(load_client_init(&cl[i], PROC_CID_BASE + i, e.seed + PROC_CID_BASE + i,
						  e.partition, e.shared), 0);
		load_client_run(&cl[i], 0, st[i].ops); /* rebuild the model */
	}
	verified = verify_all(&e, cl, LOAD_PROCS);
	report("load-processes", LOAD_PROCS, &t, verified, secs, "1(SIGKILL-target)");
	ck_assert_uint_eq(t.losses, 0);
	for (unsigned i = 0; i < LOAD_PROCS; i++)
		load_client_free(&cl[i]);
	env_fini(&e);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("load");

	tcase_add_test(tc, threads_with_key_rotation);
	rel_add_daemon_test(tc, processes_over_iscsi, OSD_TARGETD_PATH);
	return rel_run_tcase("rel_load", tc);
}
