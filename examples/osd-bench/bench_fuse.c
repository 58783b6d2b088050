/*
 * osd-bench --fuse: osdfs-mount next to a FUSE passthrough of a local
 * directory (osd-bench-passthrough, same FUSE options) and the native
 * directory itself, running the same workloads through the kernel, in the
 * same run, one system after the other inside each phase (the first one
 * rotating from run to run, and a sync() before each) so that load on the
 * machine and dirty data affect all three alike.
 *
 * osdfs-mount runs on an embedded software target made in a temporary
 * directory (-o mkfs); both FUSE daemons are child processes run with -f and
 * are unmounted and reaped at the end, also after an error. Needs root and
 * /dev/fuse; exits 77 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

#define MODE "--fuse"
#define MAX_RUNS 21
#define MAX_FILES 1000000u
#define MAX_MIB 65536u
#define BIG (1u << 20)
#define SMALL 4096u
#define SKIP 77
#define MOUNT_WAIT_NS (30ull * 1000000000ull)

enum { S_OSDFS, S_PT, S_NATIVE, NUM_S };
static const char *const sys_name[NUM_S] = { "osdfs-mount", "passthrough", "native" };

/* The goal a row belongs to: osdfs/passthrough at least 1/2 (metadata) or
 * 1/1.5 (sequential I/O). */
enum goal { G_NONE, G_META, G_SEQ };

struct phase {
	const char *label;
	enum goal goal;
};

enum {
	P_CREATE, P_STAT, P_READDIR, P_RENAME, P_UNLINK, P_MKDIR, P_SMALL,
	P_SEQW, P_SEQR, P_RANDR, NUM_P
};

static const struct phase phases[NUM_P] = {
	[P_CREATE] = { "create empty files (/s)", G_META },
	[P_STAT] = { "stat (/s)", G_META },
	[P_READDIR] = { "readdir (entries/s)", G_META },
	[P_RENAME] = { "rename (/s)", G_META },
	[P_UNLINK] = { "unlink (/s)", G_META },
	[P_MKDIR] = { "mkdir tree (/s)", G_META },
	[P_SMALL] = { "4 KiB file create+write+close (/s)", G_META },
	[P_SEQW] = { "seq write 1 MiB + fsync (MiB/s)", G_SEQ },
	[P_SEQR] = { "seq read, caches dropped (MiB/s)", G_SEQ },
	[P_RANDR] = { "random 4 KiB read, cold (/s)", G_NONE },
};

struct params {
	const char *base;
	const char *mount_bin, *pt_bin;
	unsigned runs, files, mib, reads;
};

struct fsys {
	char root[PATH_MAX];  /* where the workloads run */
	char src[PATH_MAX];   /* passthrough: the directory it mirrors */
	char run[PATH_MAX];   /* root/run: one run's files, removed after it */
	pid_t pid;            /* FUSE daemon, 0 for native */
	int mounted;
};

struct bench {
	struct params p;
	char work[PATH_MAX];  /* the temporary directory holding everything */
	char target[PATH_MAX];
	struct fsys sys[NUM_S];
	double v[NUM_P][NUM_S][MAX_RUNS];
	char *buf;
	int dropped;          /* drop_caches works */
	const char *fstype;   /* of the directory everything is in */
	int run;
};

/* ---------------------------------------------------------------------- */
/* timing helpers */

static double per_sec(double n, uint64_t t0)
{
	uint64_t dt = bench_now_ns() - t0;

	return n * 1e9 / (double)(dt ? dt : 1);
}

static int fail(const char *what, const char *path, int err)
{
	fprintf(stderr, "osd-bench " MODE ": %s %s: %s\n", what, path, strerror(err));
	return -err;
}

/* ---------------------------------------------------------------------- */
/* metadata workloads: --files names in one directory, by descriptor */

static void name_of(unsigned i, char c, char *buf)
{
	snprintf(buf, 16, "%c%07u", c, i);
}

/* One step of a metadata workload on name number @p i. 0 or -errno. */
typedef int (*item_fn)(struct bench *b, int dfd, unsigned i);

static int each_name(struct bench *b, int dfd, item_fn fn, double *rate)
{
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < b->p.files; i++) {
		int rc = fn(b, dfd, i);

		if (rc < 0)
			return rc;
	}
	*rate = per_sec(b->p.files, t0);
	return 0;
}

static int create_one(struct bench *b, int dfd, unsigned i)
{
	char name[16];
	int fd;

	(void)b;
	name_of(i, 'f', name);
	fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail("create", name, errno);
	return close(fd) < 0 ? fail("close", name, errno) : 0;
}

static int stat_one(struct bench *b, int dfd, unsigned i)
{
	char name[16];
	struct stat st;

	(void)b;
	name_of(i, 'f', name);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fail("stat", name, errno);
	return st.st_size == 0 && S_ISREG(st.st_mode) ? 0 : fail("stat", name, EIO);
}

static int rename_one(struct bench *b, int dfd, unsigned i)
{
	char from[16], to[16];

	(void)b;
	name_of(i, 'f', from);
	name_of(i, 'g', to);
	return renameat(dfd, from, dfd, to) < 0 ? fail("rename", from, errno) : 0;
}

static int unlink_one(struct bench *b, int dfd, unsigned i)
{
	char name[16];

	(void)b;
	name_of(i, 'g', name);
	return unlinkat(dfd, name, 0) < 0 ? fail("unlink", name, errno) : 0;
}

/* A tree, 10 per level: d5 holds d50..d59, d50 holds d500..d509, ... */
static int mkdir_one(struct bench *b, int dfd, unsigned i)
{
	unsigned chain[12], n = 0; /* ancestors: i/10, i/100, ... down to 1 */
	char path[128];
	size_t len = 0;

	(void)b;
	for (unsigned a = i / 10; a > 0; a /= 10)
		chain[n++] = a;
	while (n > 0)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "d%u/", chain[--n]);
	snprintf(path + len, sizeof(path) - len, "d%u", i);
	return mkdirat(dfd, path, 0755) < 0 ? fail("mkdir", path, errno) : 0;
}

static int small_one(struct bench *b, int dfd, unsigned i)
{
	char name[16];
	int fd, e = 0;

	name_of(i, 's', name);
	fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail("create", name, errno);
	if (write(fd, b->buf, SMALL) != (ssize_t)SMALL)
		e = errno ? errno : EIO;
	if (close(fd) < 0 && !e)
		e = errno;
	return e ? fail("write", name, e) : 0;
}

static int w_readdir(struct bench *b, int dfd, double *rate)
{
	uint64_t t0 = bench_now_ns();
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	unsigned n = 0;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return fail("opendir", "m", errno);
	}
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	if (n != b->p.files) {
		fprintf(stderr, "osd-bench " MODE ": readdir saw %u entries, not %u\n", n,
			b->p.files);
		return -EIO;
	}
	*rate = per_sec(n, t0);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* data workloads on one file of --size MiB, written in 1 MiB blocks */

static int w_seq_write(struct bench *b, int dfd, double *rate)
{
	uint64_t t0 = bench_now_ns();
	int fd = openat(dfd, "big", O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);

	if (fd < 0)
		return fail("create", "big", errno);
	for (unsigned i = 0; i < b->p.mib; i++) {
		if (write(fd, b->buf, BIG) != (ssize_t)BIG) {
			int e = errno ? errno : EIO;

			close(fd);
			return fail("write", "big", e);
		}
	}
	/* durability is part of the figure */
	if (fsync(fd) < 0) {
		int e = errno;

		close(fd);
		return fail("fsync", "big", e);
	}
	if (close(fd) < 0)
		return fail("close", "big", errno);
	*rate = per_sec(b->p.mib, t0);
	return 0;
}

/* Write @p what ("2": dentries and inodes, "3": those and the page cache)
 * to /proc/sys/vm/drop_caches, if root may; b->dropped says whether it can.
 * Only clean entries go: the caller syncs first. */
static void drop_kernel_caches(struct bench *b, const char *what)
{
	size_t len = strlen(what);
	int pfd;

	if (!b->dropped)
		return;
	pfd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (pfd < 0 || write(pfd, what, len) != (ssize_t)len)
		b->dropped = 0;
	if (pfd >= 0)
		close(pfd);
}

/* Cold caches: the kernel's (all of them, if root may), else this file's. */
static void drop_caches(struct bench *b, int fd)
{
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (b->dropped)
		sync();
	drop_kernel_caches(b, "3\n");
}

static int open_cold(struct bench *b, int dfd, int advice)
{
	int fd = openat(dfd, "big", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fail("open", "big", errno);
	posix_fadvise(fd, 0, 0, advice);
	drop_caches(b, fd);
	return fd;
}

static int check_block(const struct bench *b, const char *got, size_t len, uint64_t off)
{
	if (memcmp(got, b->buf + off % BIG, len)) {
		fprintf(stderr, "osd-bench " MODE ": wrong data read at offset %llu\n",
			(unsigned long long)off);
		return -EIO;
	}
	return 0;
}

static int w_seq_read(struct bench *b, int dfd, double *rate)
{
	char *rbuf = malloc(BIG);
	int fd = open_cold(b, dfd, POSIX_FADV_SEQUENTIAL);
	uint64_t t0 = bench_now_ns(), total = 0;
	ssize_t n = 1;
	int rc = fd < 0 ? fd : 0;

	if (!rbuf)
		rc = -ENOMEM;
	while (rc == 0 && (n = read(fd, rbuf, BIG)) > 0) {
		/* blocks all hold b->buf: check one at each end of the read */
		rc = check_block(b, rbuf, 64, total);
		total += (uint64_t)n;
	}
	if (rc == 0 && n < 0)
		rc = fail("read", "big", errno);
	if (rc == 0 && total != (uint64_t)b->p.mib * BIG)
		rc = fail("read", "big (short)", EIO);
	if (rc == 0)
		*rate = per_sec((double)total / BIG, t0);
	if (fd >= 0)
		close(fd);
	free(rbuf);
	return rc;
}

static int w_rand_read(struct bench *b, int dfd, double *rate)
{
	uint64_t blocks = (uint64_t)b->p.mib * (BIG / SMALL), x = 0x9e3779b97f4a7c15ULL;
	int fd = open_cold(b, dfd, POSIX_FADV_RANDOM);
	char rbuf[SMALL];
	uint64_t t0 = bench_now_ns();

	if (fd < 0)
		return fd;
	for (unsigned i = 0; i < b->p.reads; i++) {
		uint64_t off;

		/* the same offsets on every system: xorshift64 from a fixed seed */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		off = (x % blocks) * SMALL;
		if (pread(fd, rbuf, SMALL, (off_t)off) != (ssize_t)SMALL) {
			close(fd);
			return fail("pread", "big", errno ? errno : EIO);
		}
		if (check_block(b, rbuf, SMALL, off)) {
			close(fd);
			return -EIO;
		}
	}
	*rate = per_sec(b->p.reads, t0);
	close(fd);
	return 0;
}

typedef int (*workload_fn)(struct bench *b, int dfd, double *rate);

/* What each phase runs (a whole workload, or one step per name) and in
 * which directory of the run. */
static const struct {
	workload_fn fn;
	item_fn item;
	const char *dir;
} work[NUM_P] = {
	[P_CREATE] = { NULL, create_one, "m" }, [P_STAT] = { NULL, stat_one, "m" },
	[P_READDIR] = { w_readdir, NULL, "m" }, [P_RENAME] = { NULL, rename_one, "m" },
	[P_UNLINK] = { NULL, unlink_one, "m" }, [P_MKDIR] = { NULL, mkdir_one, "t" },
	[P_SMALL] = { NULL, small_one, "s" }, [P_SEQW] = { w_seq_write, NULL, "." },
	[P_SEQR] = { w_seq_read, NULL, "." }, [P_RANDR] = { w_rand_read, NULL, "." },
};

/* ---------------------------------------------------------------------- */
/* one run: every phase on every system, systems alternating inside a phase */

/* fsys->run and its subdirectories; returns a descriptor of fsys->run. */
static int make_run_dir(const struct fsys *f)
{
	static const char *const sub[] = { "m", "t", "s" };
	int rfd;

	if (mkdir(f->run, 0755) < 0)
		return fail("mkdir", f->run, errno);
	rfd = open(f->run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return fail("open", f->run, errno);
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		if (mkdirat(rfd, sub[i], 0755) < 0) {
			int e = errno;

			close(rfd);
			return fail("mkdir in", f->run, e);
		}
	}
	return rfd;
}

static int run_phase(struct bench *b, int p, int rfd, int s)
{
	int dfd = openat(rfd, work[p].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (dfd < 0)
		return fail("open in", b->sys[s].run, errno);
	/* what earlier phases left dirty is written back first, not timed:
	 * otherwise whichever system comes next pays for it */
	sync();
	/* Metadata rows start without cached dentries and inodes: otherwise a
	 * system whose row comes within the 1 s FUSE entry/attribute timeout of
	 * the row that made the names is answered by the kernel, not its daemon,
	 * and the ratio says which system came first (stat: 0.38 to 2.05).
	 * The sync() above left them clean. */
	if (phases[p].goal == G_META)
		drop_kernel_caches(b, "2\n");
	if (work[p].item)
		rc = each_name(b, dfd, work[p].item, &b->v[p][s][b->run]);
	else
		rc = work[p].fn(b, dfd, &b->v[p][s][b->run]);
	close(dfd);
	if (rc < 0)
		fprintf(stderr, "osd-bench " MODE ": %s failed on %s\n", phases[p].label,
			sys_name[s]);
	return rc;
}

/* Removes one run's files and makes that durable with an fsync of the
 * directory holding them: work a filesystem defers until then (the target
 * store unlinks removed objects' files at its next flush) is not billed to
 * the next run's timed phases. */
static int remove_run(const struct fsys *f)
{
	int fd, rc = 0;

	if (bench_rmtree(f->run) < 0)
		return fail("remove", f->run, errno);
	fd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		rc = fail("fsync", f->root, errno);
	if (fd >= 0)
		close(fd);
	return rc;
}

static int one_run(struct bench *b)
{
	int rfd[NUM_S], rc = 0, s;

	for (s = 0; s < NUM_S; s++) {
		rfd[s] = make_run_dir(&b->sys[s]);
		if (rfd[s] < 0) {
			rc = rfd[s];
			break;
		}
	}
	/* each run starts the phases with another system, so no system always
	 * comes right after the same one */
	for (int p = 0; p < NUM_P && !rc; p++)
		for (int k = 0; k < NUM_S && !rc; k++) {
			int i = (k + b->run) % NUM_S;

			rc = run_phase(b, p, rfd[i], i);
		}
	while (s-- > 0)
		close(rfd[s]);
	/* the next run starts from an empty directory (not timed) */
	for (s = 0; s < NUM_S && !rc; s++)
		rc = remove_run(&b->sys[s]);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* the FUSE daemons: children run with -f, found mounted by polling */

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO); /* stderr stays: their messages */
		execv(argv[0], argv);
		fprintf(stderr, "osd-bench " MODE ": cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	return pid;
}

static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Reaps the daemon if it has exited; returns 1 then (status in *ws). */
static int reaped(struct fsys *f, int *ws)
{
	if (f->pid > 0 && waitpid(f->pid, ws, WNOHANG) == f->pid) {
		f->pid = 0;
		return 1;
	}
	return 0;
}

/* Polls until @p f->root is a mount point (its device differs from the
 * directory holding it) or the daemon exits or 30 s pass. */
static int wait_mounted(struct bench *b, struct fsys *f, const char *name)
{
	uint64_t deadline = bench_now_ns() + MOUNT_WAIT_NS;
	struct stat top, st;
	int ws;

	if (stat(b->work, &top) < 0)
		return fail("stat", b->work, errno);
	while (bench_now_ns() < deadline) {
		if (reaped(f, &ws)) {
			fprintf(stderr, "osd-bench " MODE ": %s exited with status %d before "
				"mounting\n", name, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
			return -EIO;
		}
		if (stat(f->root, &st) == 0 && st.st_dev != top.st_dev) {
			f->mounted = 1;
			return 0;
		}
		pause_ms(5);
	}
	fprintf(stderr, "osd-bench " MODE ": %s did not mount within 30 s\n", name);
	return -ETIMEDOUT;
}

/* Waits up to 30 s for the daemon to end after the unmount; TERM, then KILL. */
static int reap_daemon(struct fsys *f, const char *name)
{
	uint64_t deadline = bench_now_ns() + MOUNT_WAIT_NS;
	int ws = 0, sig = SIGTERM;

	while (f->pid > 0 && !reaped(f, &ws)) {
		if (bench_now_ns() >= deadline) {
			kill(f->pid, sig);
			sig = SIGKILL;
			deadline = bench_now_ns() + MOUNT_WAIT_NS / 6;
		}
		pause_ms(5);
	}
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		fprintf(stderr, "osd-bench " MODE ": %s ended with status %d after the "
			"unmount\n", name, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
		return -EIO;
	}
	return 0;
}

static int stop_daemon(struct fsys *f, const char *name)
{
	if (f->mounted && umount2(f->root, 0) < 0 && umount2(f->root, MNT_DETACH) < 0)
		fail("unmount", f->root, errno);
	f->mounted = 0;
	if (f->pid <= 0)
		return 0;
	return reap_daemon(f, name);
}

static int start_daemons(struct bench *b)
{
	struct fsys *o = &b->sys[S_OSDFS], *pt = &b->sys[S_PT];
	char *margv[] = { (char *)b->p.mount_bin, "-f", "-o", "mkfs", b->target, o->root, NULL };
	char *pargv[] = { (char *)b->p.pt_bin, "-f", pt->src, pt->root, NULL };
	int rc;

	o->pid = spawn(margv);
	if (o->pid < 0)
		return fail("fork", "osdfs-mount", errno);
	rc = wait_mounted(b, o, "osdfs-mount");
	if (rc < 0)
		return rc;
	pt->pid = spawn(pargv);
	if (pt->pid < 0)
		return fail("fork", "osd-bench-passthrough", errno);
	return wait_mounted(b, pt, "osd-bench-passthrough");
}

/* ---------------------------------------------------------------------- */
/* setup and teardown */

static int join(char *out, const char *dir, const char *name)
{
	if ((size_t)snprintf(out, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		return fail("path", name, ENAMETOOLONG);
	return 0;
}

static int sub_path(struct bench *b, char *out, const char *name)
{
	return join(out, b->work, name);
}

static const char *fs_type(const char *path)
{
	static char other[32];
	struct statfs sf;

	if (statfs(path, &sf) < 0)
		return "?";
	switch ((unsigned long)sf.f_type) {
	case 0xEF53: return "ext4";
	case 0x58465342: return "xfs";
	case 0x01021994: return "tmpfs";
	case 0x9123683E: return "btrfs";
	case 0x794c7630: return "overlayfs";
	default:
		snprintf(other, sizeof(other), "type 0x%lx", (unsigned long)sf.f_type);
		return other;
	}
}

static int make_dirs(struct bench *b)
{
	int rc = bench_mkdtemp(b->p.base, "osd-bench-fuse", b->work, sizeof(b->work));

	if (rc < 0)
		return fail("temporary directory in", b->p.base, -rc);
	if (sub_path(b, b->target, "target") || sub_path(b, b->sys[S_OSDFS].root, "osdfs") ||
	    sub_path(b, b->sys[S_PT].src, "ptsrc") || sub_path(b, b->sys[S_PT].root, "pt") ||
	    sub_path(b, b->sys[S_NATIVE].root, "native"))
		return -ENAMETOOLONG;
	for (int s = 0; s < NUM_S; s++) {
		if (join(b->sys[s].run, b->sys[s].root, "run"))
			return -ENAMETOOLONG;
		if (mkdir(b->sys[s].root, 0755) < 0)
			return fail("mkdir", b->sys[s].root, errno);
	}
	if (mkdir(b->sys[S_PT].src, 0755) < 0)
		return fail("mkdir", b->sys[S_PT].src, errno);
	b->fstype = fs_type(b->work);
	return 0;
}

/* Unmounts (passthrough first, it is quick), reaps, removes everything. */
static int teardown(struct bench *b)
{
	int rc = stop_daemon(&b->sys[S_PT], "osd-bench-passthrough");

	if (stop_daemon(&b->sys[S_OSDFS], "osdfs-mount") < 0)
		rc = -EIO;
	if (*b->work && bench_rmtree(b->work) < 0 && !rc)
		rc = fail("remove", b->work, errno);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* the table */

static double goal_min(enum goal g)
{
	return g == G_META ? 1.0 / 2 : g == G_SEQ ? 1.0 / 1.5 : 0;
}

static void print_header(const struct bench *b)
{
	printf("osd-bench --fuse: the same workloads through osdfs-mount, a FUSE passthrough "
	       "and natively\n");
	printf("  osdfs-mount: embedded software target in %s (-o mkfs), default options\n",
	       b->target);
	printf("  passthrough: osd-bench-passthrough of %s\n", b->sys[S_PT].src);
	printf("  native: %s; all on %s\n", b->sys[S_NATIVE].root, b->fstype);
	printf("  FUSE (both): multithreaded, default_permissions, attr/entry timeout 1 s,\n"
	       "    max_write 1 MiB, readdirplus (auto), no writeback cache, no splice\n");
	printf("  caches before the reads: %s\n",
	       b->dropped ? "all dropped (/proc/sys/vm/drop_caches)"
			  : "file pages dropped (POSIX_FADV_DONTNEED) only");
	printf("  caches before each metadata row: %s\n",
	       b->dropped ? "dentries and inodes dropped" : "kept (drop_caches refused)");
	printf("  median of %u runs: %u names per metadata row, %u MiB file, %u random reads\n",
	       b->p.runs, b->p.files, b->p.mib, b->p.reads);
	printf("  %-38s %11s %11s %11s %9s %9s  %s\n", "workload", sys_name[S_OSDFS],
	       sys_name[S_PT], sys_name[S_NATIVE], "osdfs/pt", "osdfs/nat", "goal (osdfs/pt)");
}

static void print_table(struct bench *b)
{
	double worst[3] = { 1e300, 1e300, 1e300 };
	int worst_p[3] = { -1, -1, -1 };
	double med[NUM_S];

	print_header(b);
	for (int p = 0; p < NUM_P; p++) {
		enum goal g = phases[p].goal;
		double r;

		for (int s = 0; s < NUM_S; s++)
			med[s] = bench_median(b->v[p][s], (int)b->p.runs);
		r = med[S_OSDFS] / med[S_PT];
		printf("  %-38s %11.0f %11.0f %11.0f %9.2f %9.2f", phases[p].label, med[S_OSDFS],
		       med[S_PT], med[S_NATIVE], r, med[S_OSDFS] / med[S_NATIVE]);
		if (g != G_NONE)
			printf("  >= %.2f %s", goal_min(g), r >= goal_min(g) ? "met" : "not met");
		printf("\n");
		if (g != G_NONE && r < worst[g]) {
			worst[g] = r;
			worst_p[g] = p;
		}
	}
	printf("goal: metadata within 2x of passthrough: %s (lowest osdfs/pt %.2f, %s)\n",
	       worst[G_META] >= goal_min(G_META) ? "met" : "not met", worst[G_META],
	       phases[worst_p[G_META]].label);
	printf("goal: sequential I/O within 1.5x of passthrough: %s (lowest osdfs/pt %.2f, %s)\n",
	       worst[G_SEQ] >= goal_min(G_SEQ) ? "met" : "not met", worst[G_SEQ],
	       phases[worst_p[G_SEQ]].label);
}

/* ---------------------------------------------------------------------- */
/* options and the entry point */

static void usage(FILE *f)
{
	fprintf(f, "usage: osd-bench --fuse [--dir BASE] [--runs N] [--files N] [--size MiB]\n"
		   "                        [--reads N] [--osdfs-mount PATH] [--passthrough PATH]\n"
		   "  --dir BASE        where the temporary directory for the target, the\n"
		   "                    passthrough source and the native runs goes (default\n"
		   "                    $TMPDIR or /tmp); removed at the end\n"
		   "  --runs N          runs per figure, the median is printed (default 5)\n"
		   "  --files N         files (and directories) per metadata row (default 5000)\n"
		   "  --size MiB        size of the sequential file (default 256)\n"
		   "  --reads N         random 4 KiB reads per run (default 4000)\n"
		   "  --osdfs-mount P, --passthrough P   the programs to mount with (default:\n"
		   "                    next to osd-bench, or in ../osdfs-mount in a build tree)\n"
		   "Needs root and /dev/fuse (exits 77 without). Counts are 1..%u (runs 1..%d,\n"
		   "MiB 1..%u).\n", MAX_FILES, MAX_RUNS, MAX_MIB);
}

/* 0: run, 1: --help printed, -EINVAL: bad options (message printed). */
static int parse_args(int argc, char **argv, struct params *p)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "runs", required_argument, NULL, 'r' },
		{ "files", required_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "reads", required_argument, NULL, 'n' },
		{ "osdfs-mount", required_argument, NULL, 'm' },
		{ "passthrough", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	optind = 1;
	while (!rc && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': p->base = optarg; break;
		case 'r': rc = bench_parse_count(MODE, optarg, MAX_RUNS, &p->runs); break;
		case 'f': rc = bench_parse_count(MODE, optarg, MAX_FILES, &p->files); break;
		case 's': rc = bench_parse_count(MODE, optarg, MAX_MIB, &p->mib); break;
		case 'n': rc = bench_parse_count(MODE, optarg, MAX_FILES, &p->reads); break;
		case 'm': p->mount_bin = optarg; break;
		case 'p': p->pt_bin = optarg; break;
		case 'h': usage(stdout); return 1;
		default: return -EINVAL; /* getopt printed the message */
		}
	}
	if (!rc && optind < argc) {
		fprintf(stderr, "osd-bench " MODE ": unexpected argument '%s'\n", argv[optind]);
		rc = -EINVAL;
	}
	if (!rc && !*p->base) {
		fprintf(stderr, "osd-bench " MODE ": empty --dir\n");
		rc = -EINVAL;
	}
	return rc;
}

/* The first executable of <dir of osd-bench>/<rel>... into @p out. */
static const char *find_tool(const char *given, const char *const *rel, char *out)
{
	char self[PATH_MAX];
	ssize_t n;

	if (given)
		return given;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	for (; *rel; rel++) {
		if ((size_t)snprintf(out, PATH_MAX, "%s/%s", self, *rel) < PATH_MAX &&
		    access(out, X_OK) == 0)
			return out;
	}
	return NULL;
}

/* Why this cannot run here (the reason printed), or 0. */
static int cannot_run(struct bench *b, char *mbuf, char *pbuf)
{
	static const char *const mrel[] = { "osdfs-mount", "../osdfs-mount/osdfs-mount", NULL };
	/* the build tree keeps it beside osd-bench, an installed tree in libexec/osd */
	static const char *const prel[] = { "osd-bench-passthrough",
					    OSD_HELPERDIR_FROM_BINDIR "/osd-bench-passthrough",
					    NULL };
	int fd;

	if (geteuid() != 0) {
		printf("osd-bench " MODE ": skipped: needs root to mount FUSE filesystems and "
		       "drop caches\n");
		return SKIP;
	}
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("osd-bench " MODE ": skipped: /dev/fuse: %s\n", strerror(errno));
		return SKIP;
	}
	close(fd);
	b->p.mount_bin = find_tool(b->p.mount_bin, mrel, mbuf);
	b->p.pt_bin = find_tool(b->p.pt_bin, prel, pbuf);
	if (!b->p.mount_bin || !b->p.pt_bin) {
		printf("osd-bench " MODE ": skipped: %s not found (built without libfuse 3?); "
		       "give --osdfs-mount/--passthrough\n",
		       b->p.mount_bin ? "osd-bench-passthrough" : "osdfs-mount");
		return SKIP;
	}
	return 0;
}

static int run_bench(struct bench *b)
{
	int rc = make_dirs(b);

	if (rc == 0)
		rc = start_daemons(b);
	for (b->run = 0; rc == 0 && b->run < (int)b->p.runs; b->run++)
		rc = one_run(b);
	if (teardown(b) < 0 && rc == 0)
		rc = -EIO;
	return rc;
}

int osd_bench_fuse(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	const char *tmp = getenv("TMPDIR");
	char mbuf[PATH_MAX], pbuf[PATH_MAX];
	int rc;

	if (!b) {
		fprintf(stderr, "osd-bench " MODE ": out of memory\n");
		return 1;
	}
	b->p = (struct params){ tmp && *tmp ? tmp : "/tmp", NULL, NULL, 5, 5000, 256, 4000 };
	rc = parse_args(argc, argv, &b->p);
	if (rc == 0)
		rc = cannot_run(b, mbuf, pbuf);
	if (rc) {
		if (rc < 0)
			usage(stderr);
		free(b);
		return rc < 0 ? 2 : rc == 1 ? 0 : rc;
	}
	b->dropped = 1; /* until drop_caches refuses */
	b->buf = malloc(BIG);
	if (!b->buf) {
		free(b);
		return 1;
	}
	for (unsigned i = 0; i < BIG; i++)
		b->buf[i] = (char)(i * 131 + 7);
	fflush(stdout); /* the children must not inherit buffered output */
	rc = run_bench(b);
	if (rc == 0)
		print_table(b);
	free(b->buf);
	free(b);
	return rc ? 1 : 0;
}
