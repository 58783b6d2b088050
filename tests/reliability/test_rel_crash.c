/*
 * test_rel_crash: crash consistency of osdfs. Each iteration forks a
 * workload process (test_rel_crash_work.c) on the filesystem and SIGKILLs,
 * after a random number of acknowledged operations plus a random delay of
 * up to 2 ms:
 *   kill_target  the osd-targetd serving the store over iSCSI (then the
 *                workload, which can no longer reach it), restarting the
 *                daemon on the same store;
 *   kill_fs      the workload process itself, which runs osdfs on the
 *                embedded target of a store directory.
 * Recovery alternates between a forced (takeover) read-write mount, which
 * must repair by itself so that fsck afterwards is clean, and fsck first
 * (check, repair, check again: clean) followed by a read-only mount. Either
 * way the whole tree is walked and every file fsync'ed in any iteration so
 * far must hold exactly its bytes.
 *
 * OSD_REL_SCALE (default 1) scales the iterations, OSD_REL_SEED the seed.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <osdfs/backends.h>
#include <osdfs/fsck.h>

#include "daemon_wait.h"
#include "rel_env.h"
#include "test_rel_crash.h"
#include "toolcommon.h"

#define PARTITION 0x10000ULL
#define OPS_PER_ITER 400u

struct stats {
	unsigned iterations, kills, orphans;
	uint64_t fsynced, verified, bytes, walked, losses;
	uint64_t found[OSDFS_FSCK_KIND_COUNT];
};

struct run {
	int remote;           /* kill_target mode */
	char dir[256];        /* temp directory */
	char store[300];      /* the target's store */
	char url[128];        /* mode kill_target: the daemon's URL */
	pid_t targetd;
	uint64_t rng;
	struct rc_journal j;
	struct stats st;
};

static double scale(void)
{
	return rel_scale(0);
}

static uint64_t base_seed(void)
{
	return rel_seed(20261203u);
}

/* ---- osd-targetd ---- */

static void start_targetd(struct run *r, int create)
{
	char portfile[400];
	unsigned port;

	snprintf(portfile, sizeof(portfile), "%s/port", r->dir);
	unlink(portfile);
	r->targetd = fork();
	ck_assert_int_ge(r->targetd, 0);
	if (r->targetd == 0) {
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a failed test */
		dup2(null, STDERR_FILENO); /* its log of the broken connections */
		if (create)
			execl(OSD_TARGETD_PATH, "osd-targetd", "--listen", "127.0.0.1:0",
			      "--port-file", portfile, "--create", r->store, (char *)NULL);
		else
			execl(OSD_TARGETD_PATH, "osd-targetd", "--listen", "127.0.0.1:0",
			      "--port-file", portfile, r->store, (char *)NULL);
		_exit(127);
	}
	port = osd_test_wait_port(portfile, &r->targetd, 20000);
	ck_assert_msg(port != 0, "osd-targetd did not start on %s", r->store);
	snprintf(r->url, sizeof(r->url), "iscsi://127.0.0.1:%u/iqn.2026-12.org.osd:target/0",
		 port);
}

static void kill_wait(pid_t *pid, int sig)
{
	if (*pid <= 0)
		return;
	kill(*pid, sig);
	waitpid(*pid, NULL, 0);
	*pid = -1;
}

/* ---- device and backend ---- */

static int open_backend(const struct run *r, struct tc_device *dev, osdfs_backend **be, int create)
{
	struct tc_device_opts o = TC_DEVICE_OPTS_INIT;
	int rc;

	o.target_dir = r->remote ? r->url : r->store;
	o.remote = r->remote;
	rc = tc_device_open(dev, &o, create);
	if (rc < 0)
		return rc;
	rc = osdfs_backend_osd_new(be, dev->dev, PARTITION);
	if (rc < 0)
		tc_device_close(dev);
	return rc;
}

static void close_backend(struct tc_device *dev, osdfs_backend *be)
{
	osdfs_backend_free(be);
	tc_device_close(dev);
}

/* ---- the workload process ---- */

static void child_main(struct run *r, int fd, unsigned iter, uint64_t seed)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	struct tc_device dev;
	osdfs_backend *be;
	char err[256] = "";
	osdfs *fs;
	int rc = open_backend(r, &dev, &be, 0);

	if (rc < 0)
		_exit(2);
	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mount(&fs, be, &mo);
	if (rc < 0) {
		fprintf(stderr, "workload: mount: %s (%s)\n", strerror(-rc), err);
		_exit(2);
	}
	rc = rc_workload(fs, &r->j, fd, iter, seed, OPS_PER_ITER);
	if (rc < 0 && !r->remote) /* remote: errors once the target is killed */
		fprintf(stderr, "workload: %s (%s)\n", strerror(-rc), osdfs_error(fs));
	if (rc < 0)
		_exit(1);
	for (;;)
		pause(); /* no unmount: only the kill ends an iteration */
}

/* Applies one report line of the workload to the journal. */
static void apply_line(struct run *r, char *line, unsigned *acks)
{
	unsigned long long len, seed;
	char path[RC_PATH_MAX];
	long idx;

	if (line[0] == 'A') {
		(*acks)++;
	} else if (line[0] == 'O') {
		r->st.orphans++;
	} else if (sscanf(line, "S %llu %llu %511s", &len, &seed, path) == 3) {
		ck_assert_int_ge(rc_journal_add(&r->j, path, len, seed), 0);
		r->st.fsynced++;
	} else if (sscanf(line, "M %ld %511s", &idx, path) == 2) {
		ck_assert(idx >= 0 && (size_t)idx < r->j.n);
		snprintf(r->j.v[idx].alt, sizeof(r->j.v[idx].alt), "%s", path);
		r->j.v[idx].pending = 1;
	} else if (sscanf(line, "m %ld", &idx) == 1) {
		ck_assert(idx >= 0 && (size_t)idx < r->j.n && r->j.v[idx].pending);
		memcpy(r->j.v[idx].path, r->j.v[idx].alt, sizeof(r->j.v[idx].path));
		r->j.v[idx].pending = 0;
	} else {
		ck_abort_msg("bad report line '%s'", line);
	}
}

/* Reads reports until @p stop acknowledgements (0: to the end). Returns 0
 * at end of file. */
static int read_reports(struct run *r, int fd, char *buf, size_t *fill, unsigned *acks,
			unsigned stop)
{
	for (;;) {
		char *nl;
		ssize_t n;

		while ((nl = memchr(buf, '\n', *fill)) != NULL) {
			*nl = '\0';
			apply_line(r, buf, acks);
			*fill -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, *fill);
			if (stop && *acks >= stop)
				return 1;
		}
		n = read(fd, buf + *fill, 4096 - *fill);
		if (n <= 0)
			return 0;
		*fill += (size_t)n;
	}
}

static void jitter(struct run *r)
{
	struct timespec ts = { 0, (long)(rc_rand(&r->rng) % 2000000u) };

	nanosleep(&ts, NULL); /* where the kill lands inside an operation */
}

/* One workload run, killed at a random point. */
static void crash_once(struct run *r, unsigned iter)
{
	unsigned acks = 0, stop = 3 + (unsigned)(rc_rand(&r->rng) % (OPS_PER_ITER - 50));
	uint64_t seed = rc_rand(&r->rng);
	char buf[4096];
	size_t fill = 0;
	int p[2], status;
	pid_t child;

	ck_assert_int_eq(pipe(p), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		child_main(r, p[1], iter, seed);
	}
	close(p[1]);
	if (read_reports(r, p[0], buf, &fill, &acks, stop)) {
		jitter(r);
		if (r->remote)
			kill_wait(&r->targetd, SIGKILL);
		kill(child, SIGKILL);
		r->st.kills++;
	}
	read_reports(r, p[0], buf, &fill, &acks, 0);
	close(p[0]);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	/* without its target the workload may fail and exit before its kill */
	ck_assert_msg((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
		      (r->remote && r->targetd < 0 && WIFEXITED(status) && WEXITSTATUS(status) == 1),
		      "iteration %u: the workload ended by itself (status 0x%x) after %u of %u "
		      "operations", iter, status, acks, stop);
}

/* ---- recovery ---- */

/* Findings a test cannot judge from the report's counts alone. */
struct tally {
	unsigned too_low;      /* non-directories whose link count is too low */
	unsigned unnamed_dirs; /* corrupt directories no entry names (a torn mkdir) */
};

/* Rule 4 of docs/crash-model.md: a crash may leave a file's link count too
 * high, never too low. (A directory's count is written with the block of its
 * parent, so one torn write may leave it low; it decides nothing.) */
static void on_finding(enum osdfs_fsck_kind kind, const char *msg, void *payload)
{
	struct tally *t = payload;
	unsigned long long ino;
	unsigned have, want;

	if (getenv("OSD_REL_VERBOSE"))
		printf("  fsck: %s: %s\n", osdfs_fsck_kind_name(kind), msg);
	if (kind == OSDFS_FSCK_LINK_COUNT &&
	    sscanf(msg, "inode %llu: link count %u, should be %u", &ino, &have, &want) == 3 &&
	    have < want)
		t->too_low++;
	if (kind == OSDFS_FSCK_CORRUPT_DIR && strncmp(msg, "directory #", 11) == 0)
		t->unnamed_dirs++;
}

static int fsck_run(osdfs_backend *be, int repair, struct osdfs_fsck_report *rep,
		    struct tally *t)
{
	struct osdfs_fsck_options fo = OSDFS_FSCK_OPTIONS_INIT;
	struct tally scratch = { 0, 0 };
	int rc;

	fo.repair = repair;
	fo.cb = on_finding;
	fo.payload = t ? t : &scratch;
	rc = osdfs_fsck(be, &fo, rep);
	ck_assert_msg(fo.payload == &scratch || t->too_low == 0,
		      "%u file link counts too low after a crash", t ? t->too_low : 0);
	return rc;
}

static void count_findings(struct run *r, const struct osdfs_fsck_report *rep,
			   const struct tally *t, unsigned iter)
{
	static const enum osdfs_fsck_kind never[] = {
		OSDFS_FSCK_SUPERBLOCK, OSDFS_FSCK_BAD_INODE, OSDFS_FSCK_DANGLING_ENTRY,
		OSDFS_FSCK_CORRUPT_DIR,
	};

	for (int k = 0; k < OSDFS_FSCK_KIND_COUNT; k++)
		r->st.found[k] += rep->found[k];
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		uint64_t n = rep->found[never[i]];

		if (never[i] == OSDFS_FSCK_CORRUPT_DIR)
			n -= t->unnamed_dirs;
		ck_assert_msg(n == 0, "iteration %u: %llu '%s' findings after a crash", iter,
			      (unsigned long long)n, osdfs_fsck_kind_name(never[i]));
	}
}

static void check_mounted(struct run *r, osdfs_backend *be, unsigned flags, unsigned iter)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	struct rc_check c;
	char err[256] = "";
	osdfs *fs;
	int rc;

	memset(&c, 0, sizeof(c));
	mo.flags = flags | OSDFS_MOUNT_KEEP_BACKEND;
	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mount(&fs, be, &mo);
	ck_assert_msg(rc == 0, "iteration %u: mount: %s (%s)", iter, strerror(-rc), err);
	rc = rc_check_fs(fs, &r->j, &c);
	ck_assert_msg(rc == 0, "iteration %u: walking the tree: %s (%s)", iter, strerror(-rc),
		      osdfs_error(fs));
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	r->st.verified += c.files_verified;
	r->st.bytes += c.bytes_verified;
	r->st.walked += c.walked;
	r->st.losses += c.losses;
	ck_assert_msg(c.losses == 0, "iteration %u: %llu fsync'ed files lost, first %s", iter,
		      (unsigned long long)c.losses, c.first_loss);
}

static void recover(struct run *r, unsigned iter)
{
	struct osdfs_fsck_report rep;
	struct tally t = { 0, 0 };
	struct tc_device dev;
	osdfs_backend *be;
	int rc;

	if (r->remote)
		start_targetd(r, 0);
	ck_assert_int_eq(open_backend(r, &dev, &be, 0), 0);
	if (iter % 2) {
		/* takeover: the forced mount repairs; fsck then finds nothing */
		check_mounted(r, be, OSDFS_MOUNT_FORCE, iter);
		rc = fsck_run(be, 0, &rep, &t);
		count_findings(r, &rep, &t, iter);
		ck_assert_msg(rc == 0 && rep.total == 0, "iteration %u: fsck after the takeover "
			      "mount: %s, %llu findings", iter, strerror(-rc),
			      (unsigned long long)rep.total);
	} else {
		rc = fsck_run(be, 0, &rep, &t);
		ck_assert_msg(rc == 0 || rc == -EUCLEAN, "iteration %u: fsck: %s", iter,
			      strerror(-rc));
		ck_assert_msg(rep.found[OSDFS_FSCK_MOUNT_RECORD] == 1,
			      "iteration %u: no stale mount record after the kill", iter);
		count_findings(r, &rep, &t, iter);
		rc = fsck_run(be, 1, &rep, NULL);
		ck_assert_msg(rc == 0 && rep.unrepaired == 0, "iteration %u: fsck --repair left "
			      "%llu findings (%s)", iter, (unsigned long long)rep.unrepaired,
			      strerror(-rc));
		rc = fsck_run(be, 0, &rep, NULL);
		ck_assert_msg(rc == 0 && rep.total == 0, "iteration %u: fsck after the repair "
			      "found %llu", iter, (unsigned long long)rep.total);
		check_mounted(r, be, OSDFS_MOUNT_RDONLY, iter);
	}
	close_backend(&dev, be);
}

/* ---- the runs ---- */

static void setup_run(struct run *r, int remote)
{
	struct tc_device dev;
	osdfs_backend *be;
	const char *tmp = getenv("TMPDIR");

	memset(r, 0, sizeof(*r));
	r->remote = remote;
	r->targetd = -1;
	r->rng = base_seed() + (uint64_t)remote;
	snprintf(r->dir, sizeof(r->dir), "%s/rel_crash.XXXXXX", tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(r->dir));
	snprintf(r->store, sizeof(r->store), "%s/store", r->dir);
	if (remote)
		start_targetd(r, 1);
	ck_assert_int_eq(open_backend(r, &dev, &be, 1), 0);
	ck_assert_int_eq(osdfs_mkfs(be, NULL), 0);
	close_backend(&dev, be);
}

static void print_stats(const struct run *r, const char *mode)
{
	printf("rel_crash %s: seed %llu, iterations %u, kills %u, files fsync'ed %llu, "
	       "sealed-file checks passed %llu, bytes verified %llu, entries walked %llu, "
	       "open-unlinked files at kills %u, findings:", mode,
	       (unsigned long long)base_seed(), r->st.iterations, r->st.kills,
	       (unsigned long long)r->st.fsynced, (unsigned long long)r->st.verified,
	       (unsigned long long)r->st.bytes, (unsigned long long)r->st.walked, r->st.orphans);
	for (int k = 0; k < OSDFS_FSCK_KIND_COUNT; k++)
		if (r->st.found[k])
			printf(" %s=%llu", osdfs_fsck_kind_name((enum osdfs_fsck_kind)k),
			       (unsigned long long)r->st.found[k]);
	printf(", losses %llu\n", (unsigned long long)r->st.losses);
	fflush(stdout);
}

static void run_mode(int remote, unsigned base_iters)
{
	unsigned iters = (unsigned)(base_iters * scale() + 0.5);
	struct run r;
	char cmd[400];

	if (iters < 2)
		iters = 2;
	setup_run(&r, remote);
	for (unsigned i = 0; i < iters; i++) {
		crash_once(&r, i);
		recover(&r, i);
		r.st.iterations++;
	}
	print_stats(&r, remote ? "kill_target" : "kill_fs");
	kill_wait(&r.targetd, SIGTERM);
	rc_journal_free(&r.j);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r.dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(kill_fs)
{
	run_mode(0, 40);
}
END_TEST

START_TEST(kill_target)
{
	run_mode(1, 40);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("crash");

	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, kill_fs);
	rel_add_daemon_test(tc, kill_target, OSD_TARGETD_PATH);
	return rel_run_tcase("rel_crash", tc);
}
