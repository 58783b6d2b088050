/*
 * osd-bench --scale: how the software target and osdfs scale with the number
 * of objects. For each count N it builds, in a scratch directory,
 *
 *   store A  one partition of N user objects (CREATE of 65,535 objects per
 *            command, then FLUSH OSD), no data;
 *   store B  an osdfs with N empty files in one directory and one sparse
 *            file (1 MiB at 0 and 1 MiB at 20 GiB - 1 MiB),
 *
 * then measures each figure in a fresh child process (fork), so that what
 * the build left in memory is not counted, after the scratch directory's
 * filesystem has written back what earlier steps left dirty: the open time
 * of A after a clean close and after kill -9 of a writer, the resident
 * memory (VmRSS after open and a LIST walk, VmHWM) of that process, a full
 * LIST walk, the log bytes a read-only pass appends, the log records per
 * small WRITE, the small-object rate, and on B osdfs fsck (the median of
 * three runs), lookups, negative lookups, creates and st_blocks.
 * Each goal line prints the figure at every N, the ratio to the first N and
 * whether the goal is met.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <osd/osd.h>
#include <osd/request.h>
#include <osdfs/backends.h>
#include <osdfs/fsck.h>
#include <osdfs/osdfs.h>
#include <osdtarget/target.h>
#include "bench.h"

#define MODE "--scale"
#define MAX_COUNTS 4
#define MAX_OBJECTS 100000000u
#define PID 0x10000ULL
#define CREATE_BATCH 65535u       /* CREATE's NUMBER OF USER OBJECTS is 16 bits */
#define SMALL 4096u
#define SPARSE_SIZE (20ULL << 30)
#define SPARSE_CHUNK (1u << 20)
#define LIST_WALKS 5
#define RO_OBJECTS 2000u          /* objects the read-only pass touches */
#define MAX_DATA (1u << 20)       /* --data at most */
#define CHURN 2000u               /* objects removed and created again */
#define KILL_OBJECTS 5000u        /* objects the killed writer creates and writes */
#define UPD_PAGE 0x10010u         /* the user page it sets a value in */
#define REC_HDR 9u                /* CRC32C(4) | length(4) | type(1) */
#define KILL_BASE 0x100000000ULL  /* ids of the killed writer's objects */
#define SMALL_BASE 0x200000000ULL /* ids of the small-object runs */
#define FSCK_RUNS 3 /* the fsck figure is the median of this many */

struct figures {
	double build_s, fs_build_s;
	double open_s, open_kill_s;
	double open_upd_s, upd_rss_mib, upd_log_mib; /* after the killed updater */
	double upd_hwm_mib;        /* the updater's peak resident memory */
	double remove_us, recreate_us; /* REMOVE of random objects, CREATE of them again */
	double rss_mib, hwm_mib;
	double list_s;
	uint64_t listed;
	double recs_per_write;     /* < 0: the log was compacted meanwhile */
	double small_rate;
	double fsck_s;
	double lookup_us, neg_us, create_us;
	double fs_rss_mib;
	double ro_d;               /* log bytes the read-only pass appended */
	double sparse_mib;         /* st_blocks * 512 of the sparse file */
};

struct scale {
	const char *base;
	char dir[512];
	unsigned counts[MAX_COUNTS];
	int ncounts;
	unsigned small;        /* objects per small-object run */
	unsigned flush_every;  /* FLUSH OSD after this many small objects */
	unsigned ops;          /* osdfs lookups, negative lookups, creates */
	unsigned updates;      /* SET ATTRIBUTES of the killed updater */
	unsigned data;         /* bytes each of the N objects holds (0: none) */
	int keep;
	struct figures f[MAX_COUNTS];
};

/* ---- helpers ---- */

/* The next of a xorshift64 sequence in *@p x: the fixed pseudo-random picks
 * of the updater, the churn and the osdfs lookups. */
static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static double secs(uint64_t t0)
{
	return (double)(bench_now_ns() - t0) / 1e9;
}

/* VmRSS or VmHWM of this process in MiB (/proc/self/status, proc(5)). */
static double proc_mib(const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	double v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtod(line + kl + 1, NULL) / 1024.0;
			break;
		}
	fclose(f);
	return v;
}

static void open_dev(const char *dir, osd_target **tgt, osd_dev **dev)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	int rc = osd_target_open(tgt, dir, &to);

	if (rc)
		bench_die(MODE, dir, rc, NULL);
	if ((rc = osd_target_loopback(*tgt, &tp)))
		bench_die(MODE, "loopback", rc, NULL);
	o.osd_version = OSD_VERSION_2;
	if ((rc = osd_dev_open(dev, &tp, &o)))
		bench_die(MODE, "device", rc, NULL);
}

static void close_dev(osd_target *tgt, osd_dev *dev)
{
	osd_dev_close(dev);
	osd_target_close(tgt);
}

static void flush_osd(osd_dev *dev)
{
	osd_req *req;
	int rc = osd_req_flush_osd(&req, dev, OSD_FLUSH_RANGE);

	if (rc)
		bench_die(MODE, "flush", rc, dev);
	bench_exec_or_die(MODE, dev, req, "flush");
}

static void path_of(char *buf, size_t size, const struct scale *s, unsigned n, const char *what)
{
	snprintf(buf, size, "%s/%s-%u", s->dir, what, n);
}

/* Opens the store of count n built for what ("objects" or "osdfs"); its path in dir. */
static void open_store(const struct scale *s, unsigned n, const char *what, char *dir, size_t size,
		       osd_target **tgt, osd_dev **dev)
{
	path_of(dir, size, s, n, what);
	open_dev(dir, tgt, dev);
}

static int64_t file_size(const char *dir, const char *name)
{
	char p[700];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) ? -1 : (int64_t)st.st_size;
}

/* Writes back what earlier steps left dirty in the page cache (a 10M build
 * leaves gigabytes): otherwise the kernel's writeback runs during the next
 * measurement and, on a 2-core machine, takes its CPU and memory bandwidth. */
static void settle(const struct scale *s)
{
	int fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || syncfs(fd) != 0)
		bench_die(MODE, s->dir, -errno, NULL);
	close(fd);
}

/* Runs fn in a child process and copies its figures back into *f. */
static void in_child(void (*fn)(struct scale *, unsigned, struct figures *), struct scale *s,
		     unsigned n, struct figures *f)
{
	int pfd[2], status;
	pid_t pid;

	settle(s);
	fflush(NULL);
	if (pipe(pfd))
		bench_die(MODE, "pipe", -errno, NULL);
	pid = fork();
	if (pid < 0)
		bench_die(MODE, "fork", -errno, NULL);
	if (pid == 0) {
		close(pfd[0]);
		fn(s, n, f);
		if (write(pfd[1], f, sizeof(*f)) != (ssize_t)sizeof(*f))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	ssize_t got = read(pfd[0], f, sizeof(*f));

	close(pfd[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    got != (ssize_t)sizeof(*f)) {
		fprintf(stderr, "osd-bench %s: a measuring process failed at %u objects\n", MODE, n);
		exit(1);
	}
}

/* ---- store A: N user objects ---- */

/* --data: a WRITE of @p bytes to each of the @p k objects from @p first,
 * then a FLUSH OSD (the objects' data is durable, as a real store's). */
static void write_data(osd_dev *dev, uint64_t first, unsigned k, unsigned bytes)
{
	static uint8_t buf[MAX_DATA];
	struct iovec iov = { buf, bytes };

	memset(buf, 0x3c, bytes);
	for (unsigned i = 0; i < k; i++) {
		struct osd_obj_id o = { PID, first + i };
		osd_req *req;
		int rc = osd_req_write(&req, dev, &o, 0, &iov, 1);

		if (rc)
			bench_die(MODE, "write", rc, dev);
		bench_exec_or_die(MODE, dev, req, "write");
	}
	flush_osd(dev);
}

static void build_objects(struct scale *s, unsigned n, struct figures *f)
{
	char dir[600];
	osd_target *tgt;
	osd_dev *dev;
	osd_req *req;
	uint64_t t0 = bench_now_ns();
	int rc;

	path_of(dir, sizeof(dir), s, n, "objects");
	if (mkdir(dir, 0700))
		bench_die(MODE, dir, -errno, NULL);
	open_dev(dir, &tgt, &dev);
	if ((rc = osd_req_create_partition(&req, dev, PID)))
		bench_die(MODE, "create partition", rc, dev);
	bench_exec_or_die(MODE, dev, req, "create partition");
	for (unsigned done = 0; done < n;) {
		struct osd_obj_id want = { PID, 0 };
		unsigned k = n - done < CREATE_BATCH ? n - done : CREATE_BATCH;

		if ((rc = osd_req_create(&req, dev, &want, k)))
			bench_die(MODE, "create", rc, dev);
		bench_exec_or_die(MODE, dev, req, "create");
		if (s->data)
			write_data(dev, OSD_FIRST_ID + done, k, s->data);
		done += k;
	}
	flush_osd(dev);
	close_dev(tgt, dev);
	f->build_s = secs(t0);
}

/* A full LIST walk of the partition: 64 KiB answers, about 8,000 ids each. */
static uint64_t list_walk(osd_dev *dev)
{
	struct osd_list_cursor cur = { 0, 0 };
	uint64_t count = 0;

	do {
		struct osd_list_result res;
		osd_req *req;
		int rc = osd_req_list(&req, dev, PID, &cur, 0);

		if (rc == 0)
			rc = osd_req_execute(req);
		if (rc == 0)
			rc = osd_req_list_result(req, &res, &cur);
		if (rc)
			bench_die(MODE, "list", rc, dev);
		count += res.num_ids;
		osd_req_free(req);
	} while (cur.next_id);
	return count;
}

/* GET ATTRIBUTES (timestamps page) and a READ of RO_OBJECTS objects. */
static void read_only_pass(osd_dev *dev, unsigned n)
{
	uint8_t buf[SMALL];
	struct iovec iov = { buf, sizeof(buf) };
	unsigned step = n / RO_OBJECTS ? n / RO_OBJECTS : 1;

	for (unsigned i = 0; i < n && i / step < RO_OBJECTS; i += step) {
		struct osd_obj_id o = { PID, OSD_FIRST_ID + i };
		osd_req *req;
		int rc = osd_req_get_attributes(&req, dev, &o);

		if (rc == 0)
			rc = osd_req_get_page(req, OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS, 256);
		if (rc)
			bench_die(MODE, "get attributes", rc, dev);
		bench_exec_or_die(MODE, dev, req, "get attributes");
		if ((rc = osd_req_read(&req, dev, &o, 0, &iov, 1)))
			bench_die(MODE, "read", rc, dev);
		bench_exec_or_die(MODE, dev, req, "read");
	}
}

static void measure_open(struct scale *s, unsigned n, struct figures *f)
{
	char dir[600];
	osd_target *tgt;
	osd_dev *dev;
	uint64_t t0 = bench_now_ns();

	open_store(s, n, "objects", dir, sizeof(dir), &tgt, &dev);
	f->open_s = secs(t0);
	/* the fastest of LIST_WALKS walks: one walk of 100k ids takes well
	 * under a millisecond, where a single run is mostly noise */
	for (int i = 0; i < LIST_WALKS; i++) {
		t0 = bench_now_ns();
		f->listed = list_walk(dev);
		double t = secs(t0);

		if (i == 0 || t < f->list_s)
			f->list_s = t;
	}
	f->rss_mib = proc_mib("VmRSS");
	int64_t before = file_size(dir, "log");

	read_only_pass(dev, n);
	close_dev(tgt, dev);
	f->ro_d = (double)(file_size(dir, "log") - before);
	f->hwm_mib = proc_mib("VmHWM");
	if (f->hwm_mib < f->rss_mib) /* the kernel folds RSS into VmHWM lazily */
		f->hwm_mib = f->rss_mib;
}

/* Counts the records in the log from byte @p from on (-1: no log). */
static long count_records(const char *dir, int64_t from)
{
	char p[700];
	uint8_t hdr[REC_HDR];
	long count = 0;
	int fd;

	snprintf(p, sizeof(p), "%s/log", dir);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return -1;
	while (pread(fd, hdr, REC_HDR, from) == (ssize_t)REC_HDR) {
		uint32_t len = (uint32_t)hdr[4] << 24 | (uint32_t)hdr[5] << 16 |
			       (uint32_t)hdr[6] << 8 | hdr[7];

		count++;
		from += REC_HDR + len;
	}
	close(fd);
	return count;
}

static void create_ids(osd_dev *dev, uint64_t first, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		struct osd_obj_id o = { PID, first + i };
		osd_req *req;
		int rc = osd_req_create(&req, dev, &o, 1);

		if (rc)
			bench_die(MODE, "create", rc, dev);
		bench_exec_or_die(MODE, dev, req, "create");
	}
}

static void write_small(osd_dev *dev, uint64_t oid, uint8_t *buf)
{
	struct osd_obj_id o = { PID, oid };
	struct iovec iov = { buf, SMALL };
	osd_req *req;
	int rc = osd_req_write(&req, dev, &o, 0, &iov, 1);

	if (rc)
		bench_die(MODE, "write", rc, dev);
	bench_exec_or_die(MODE, dev, req, "write");
}

/* CREATE + 4 KiB WRITE per object, FLUSH OSD every flush_every objects;
 * then the log records a first 4 KiB WRITE of a new object appends. */
static void measure_small(struct scale *s, unsigned n, struct figures *f)
{
	char dir[600];
	uint8_t buf[SMALL];
	osd_target *tgt;
	osd_dev *dev;
	uint64_t first = SMALL_BASE;
	unsigned k = s->small / 4 ? s->small / 4 : 1;

	memset(buf, 0x5a, sizeof(buf));
	open_store(s, n, "objects", dir, sizeof(dir), &tgt, &dev);
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < s->small; i++) {
		create_ids(dev, first + i, 1);
		write_small(dev, first + i, buf);
		if ((i + 1) % s->flush_every == 0 || i + 1 == s->small)
			flush_osd(dev);
	}
	f->small_rate = s->small / secs(t0);
	first += s->small;
	create_ids(dev, first, k);
	flush_osd(dev);
	struct stat a, b;
	char lp[700];

	snprintf(lp, sizeof(lp), "%s/log", dir);
	int64_t before = file_size(dir, "log");

	stat(lp, &a);
	for (unsigned i = 0; i < k; i++)
		write_small(dev, first + i, buf);
	flush_osd(dev);
	stat(lp, &b);
	long recs = count_records(dir, before);

	f->recs_per_write = a.st_ino == b.st_ino && recs >= 0 ? (double)recs / k : -1;
	close_dev(tgt, dev);
}

/* A writer killed with SIGKILL in the middle of its work, then a timed open. */
/* A child about to be killed says it is ready, with its peak resident
 * memory, and waits. */
static void tell_ready(int ready)
{
	double hwm = proc_mib("VmHWM");

	if (write(ready, &hwm, sizeof(hwm)) != (ssize_t)sizeof(hwm))
		_exit(1);
	for (;;)
		pause();
}

static void killed_writer(struct scale *s, unsigned n, int ready)
{
	char dir[600];
	uint8_t buf[SMALL];
	osd_target *tgt;
	osd_dev *dev;
	uint64_t first = KILL_BASE;

	memset(buf, 0xa5, sizeof(buf));
	open_store(s, n, "objects", dir, sizeof(dir), &tgt, &dev);
	for (unsigned i = 0; i < KILL_OBJECTS; i++) {
		create_ids(dev, first + i, 1);
		write_small(dev, first + i, buf);
		if (i % 1000 == 999 && i + 1000 < KILL_OBJECTS)
			flush_osd(dev);
	}
	/* the last objects unflushed: their records are in the log file or lost */
	tell_ready(ready);
}

/* An updater killed with SIGKILL once it has sent --updates SET ATTRIBUTES to
 * objects picked at random among the N (on disk since the build): the open
 * replays a log whose every record changes an object it must load. */
static void killed_updater(struct scale *s, unsigned n, int ready)
{
	char dir[600];
	osd_target *tgt;
	osd_dev *dev;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	uint8_t v[16] = { 0 };

	open_store(s, n, "objects", dir, sizeof(dir), &tgt, &dev);
	for (unsigned i = 0; i < s->updates; i++) {
		struct osd_obj_id o = { PID, OSD_FIRST_ID + xorshift(&x) % n };
		osd_req *req;
		int rc = osd_req_set_attributes(&req, dev, &o);

		memcpy(v, &i, sizeof(i));
		if (rc == 0 && (rc = osd_req_add_set_attr(req, UPD_PAGE, 1, v, sizeof(v))))
			osd_req_free(req);
		if (rc)
			bench_die(MODE, "set attributes", rc, dev);
		bench_exec_or_die(MODE, dev, req, "set attributes");
	}
	flush_osd(dev);
	tell_ready(ready);
}

/* Runs @p child until it says it is ready (*@p hwm: its peak resident
 * memory), kills it with SIGKILL and times the open of the store it left;
 * the target stays open in *tgt, *dev. */
static double open_after_kill(struct scale *s, unsigned n,
			      void (*child)(struct scale *, unsigned, int), osd_target **tgt,
			      osd_dev **dev, double *hwm)
{
	char dir[600];
	int pfd[2];

	if (pipe(pfd))
		bench_die(MODE, "pipe", -errno, NULL);
	pid_t pid = fork();

	if (pid < 0)
		bench_die(MODE, "fork", -errno, NULL);
	if (pid == 0) {
		close(pfd[0]);
		child(s, n, pfd[1]);
	}
	close(pfd[1]);
	if (read(pfd[0], hwm, sizeof(*hwm)) != (ssize_t)sizeof(*hwm))
		bench_die(MODE, "killed process", -EIO, NULL);
	close(pfd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	path_of(dir, sizeof(dir), s, n, "objects");
	uint64_t t0 = bench_now_ns();

	open_dev(dir, tgt, dev);
	return secs(t0);
}

static void measure_open_after_kill(struct scale *s, unsigned n, struct figures *f)
{
	osd_target *tgt;
	osd_dev *dev;
	double hwm;

	f->open_kill_s = open_after_kill(s, n, killed_writer, &tgt, &dev, &hwm);
	close_dev(tgt, dev);
}

/* CHURN distinct objects picked at random among the N: each REMOVEd, then
 * each CREATEd again (ids below the highest: both change the middle of the
 * partition's index). Leaves the namespace as it was. */
static void measure_churn(struct scale *s, unsigned n, struct figures *f)
{
	static uint64_t ids[CHURN];
	unsigned k = n < CHURN ? n : CHURN;
	uint64_t x = 0x2545f4914f6cdd1dULL, t0;
	osd_target *tgt;
	osd_dev *dev;
	char dir[600];

	for (unsigned i = 0; i < k; i++) {
		int dup;

		do {
			ids[i] = OSD_FIRST_ID + xorshift(&x) % n;
			dup = 0;
			for (unsigned j = 0; j < i && !dup; j++)
				dup = ids[j] == ids[i];
		} while (dup);
	}
	open_store(s, n, "objects", dir, sizeof(dir), &tgt, &dev);
	for (int pass = 0; pass < 2; pass++) {
		t0 = bench_now_ns();
		for (unsigned i = 0; i < k; i++) {
			struct osd_obj_id o = { PID, ids[i] };
			osd_req *req;
			int rc = pass ? osd_req_create(&req, dev, &o, 1) : osd_req_remove(&req, dev, &o);

			if (rc)
				bench_die(MODE, pass ? "create" : "remove", rc, dev);
			bench_exec_or_die(MODE, dev, req, pass ? "create" : "remove");
		}
		*(pass ? &f->recreate_us : &f->remove_us) = secs(t0) * 1e6 / k;
	}
	flush_osd(dev);
	close_dev(tgt, dev);
}

static void measure_open_after_updates(struct scale *s, unsigned n, struct figures *f)
{
	char dir[600];
	osd_target *tgt;
	osd_dev *dev;

	f->open_upd_s = open_after_kill(s, n, killed_updater, &tgt, &dev, &f->upd_hwm_mib);
	f->upd_rss_mib = proc_mib("VmRSS");
	path_of(dir, sizeof(dir), s, n, "objects");
	f->upd_log_mib = (double)file_size(dir, "log") / (1 << 20);
	close_dev(tgt, dev);
}

/* ---- store B: osdfs with N files in one directory ---- */

static void fs_die(osdfs *fs, const char *what, int rc)
{
	fprintf(stderr, "osd-bench %s: %s: %s\n", MODE, what,
		fs && *osdfs_error(fs) ? osdfs_error(fs) : strerror(-rc));
	exit(1);
}

static osdfs *fs_mount(osd_dev *dev)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	osdfs_backend *be;
	osdfs *fs = NULL; /* fs_die() exits, which clang does not see */
	int rc = osdfs_backend_osd_new(&be, dev, PID);

	if (rc == 0 && (rc = osdfs_mount(&fs, be, &mo)))
		osdfs_backend_free(be);
	if (rc)
		fs_die(NULL, "mount", rc);
	return fs;
}

static void build_fs(struct scale *s, unsigned n, struct figures *f)
{
	char dir[600], name[32];
	static uint8_t chunk[SPARSE_CHUNK];
	struct osdfs_stat st;
	osdfs_backend *be;
	osd_target *tgt;
	osd_dev *dev;
	osdfs_file *fh;
	uint64_t t0 = bench_now_ns();
	int rc;

	path_of(dir, sizeof(dir), s, n, "osdfs");
	if (mkdir(dir, 0700))
		bench_die(MODE, dir, -errno, NULL);
	open_dev(dir, &tgt, &dev);
	if ((rc = osdfs_backend_osd_new(&be, dev, PID)) || (rc = osdfs_mkfs(be, NULL)))
		fs_die(NULL, "mkfs", rc);
	osdfs_backend_free(be);
	osdfs *fs = fs_mount(dev);

	if ((rc = osdfs_mkdir(fs, OSDFS_ROOT_INO, "big", 0755, NULL, &st)))
		fs_die(fs, "mkdir", rc);
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%09u", i);
		if ((rc = osdfs_mknod(fs, st.ino, name, S_IFREG | 0644, 0, NULL, NULL)))
			fs_die(fs, "create", rc);
	}
	rc = osdfs_create(fs, OSDFS_ROOT_INO, "sparse", 0644, O_RDWR | O_EXCL, NULL, NULL, &fh);
	if (rc)
		fs_die(fs, "create", rc);
	memset(chunk, 0x33, sizeof(chunk));
	if (osdfs_write(fs, fh, chunk, SPARSE_CHUNK, 0) != SPARSE_CHUNK ||
	    osdfs_write(fs, fh, chunk, SPARSE_CHUNK, SPARSE_SIZE - SPARSE_CHUNK) != SPARSE_CHUNK)
		fs_die(fs, "write", -EIO);
	if ((rc = osdfs_release(fs, fh)) || (rc = osdfs_unmount(fs)))
		fs_die(NULL, "unmount", rc);
	close_dev(tgt, dev);
	f->fs_build_s = secs(t0);
}

static double lookups(osdfs *fs, uint64_t dir, const char *fmt, unsigned n, unsigned ops,
		      int want)
{
	uint64_t state = 0x9e3779b97f4a7c15ULL, t0 = bench_now_ns();
	struct osdfs_stat st;
	char name[32];

	for (unsigned i = 0; i < ops; i++) {
		snprintf(name, sizeof(name), fmt, (unsigned)(xorshift(&state) % n));
		int rc = osdfs_lookup(fs, dir, name, &st);

		if (rc != want)
			fs_die(fs, "lookup", rc ? rc : -EEXIST);
	}
	return secs(t0) * 1e6 / ops;
}

/* One osdfs_fsck of store B (check only). */
static void measure_fsck(struct scale *s, unsigned n, struct figures *f)
{
	char dir[600];
	osdfs_backend *be;
	osd_target *tgt;
	osd_dev *dev;
	int rc;

	open_store(s, n, "osdfs", dir, sizeof(dir), &tgt, &dev);
	uint64_t t0 = bench_now_ns();

	if ((rc = osdfs_backend_osd_new(&be, dev, PID)))
		fs_die(NULL, "backend", rc);
	if ((rc = osdfs_fsck(be, NULL, NULL)))
		fs_die(NULL, "fsck", rc);
	f->fsck_s = secs(t0);
	osdfs_backend_free(be);
	close_dev(tgt, dev);
}

/* The median of FSCK_RUNS fscks, each in a fresh process: one run of
 * 0.4 s at 100k files moved the ratio to 10M by a tenth from run to run. */
static void measure_fsck_median(struct scale *s, unsigned n, struct figures *f)
{
	double t[FSCK_RUNS];

	for (int i = 0; i < FSCK_RUNS; i++) {
		in_child(measure_fsck, s, n, f);
		t[i] = f->fsck_s;
	}
	f->fsck_s = bench_median(t, FSCK_RUNS);
}

static void measure_fs(struct scale *s, unsigned n, struct figures *f)
{
	char dir[600], name[32];
	osd_target *tgt;
	osd_dev *dev;
	struct osdfs_stat st;
	uint64_t big;
	int rc;

	open_store(s, n, "osdfs", dir, sizeof(dir), &tgt, &dev);
	osdfs *fs = fs_mount(dev);

	if ((rc = osdfs_resolve(fs, "/big", 1, &big)))
		fs_die(fs, "/big", rc);
	f->lookup_us = lookups(fs, big, "f%09u", n, s->ops, 0);
	f->neg_us = lookups(fs, big, "g%09u", n, s->ops, -ENOENT);
	uint64_t t0 = bench_now_ns();
	for (unsigned i = 0; i < s->ops; i++) {
		snprintf(name, sizeof(name), "n%09u", i);
		if ((rc = osdfs_mknod(fs, big, name, S_IFREG | 0644, 0, NULL, NULL)))
			fs_die(fs, "create", rc);
	}
	if ((rc = osdfs_sync(fs)))
		fs_die(fs, "sync", rc);
	f->create_us = secs(t0) * 1e6 / s->ops;
	if ((rc = osdfs_stat_path(fs, "/sparse", 1, &st)))
		fs_die(fs, "stat", rc);
	f->sparse_mib = (double)st.blocks * 512 / (1 << 20);
	f->fs_rss_mib = proc_mib("VmRSS");
	if ((rc = osdfs_unmount(fs)))
		fs_die(NULL, "unmount", rc);
	close_dev(tgt, dev);
}

/* ---- report ---- */

enum verdict_kind { AT_MOST, AT_LEAST, EQUAL, LINEAR, FLAT };

struct goal {
	const char *what;       /* goal line */
	const char *unit;
	enum verdict_kind kind;
	double limit;           /* bound, or the allowed ratio to the first count */
	size_t off;             /* offset of the double figure in struct figures */
};

static double fig(const struct figures *f, size_t off)
{
	return *(const double *)((const char *)f + off);
}

/* LINEAR: time(N) / time(N0) at most limit * (N/N0) (1.2: 12x per 10x);
 * FLAT: time per operation at N at most limit times that at N0. */
static int met(const struct scale *s, const struct goal *g)
{
	const struct figures *f0 = &s->f[0];

	for (int i = 0; i < s->ncounts; i++) {
		double v = fig(&s->f[i], g->off), r = v / fig(f0, g->off);
		double nr = (double)s->counts[i] / s->counts[0];

		if (v < 0)
			return 0;
		switch (g->kind) {
		case AT_MOST: if (v > g->limit) return 0; break;
		case AT_LEAST: if (v < g->limit) return 0; break;
		case EQUAL: if (v != g->limit) return 0; break;
		case LINEAR: if (r > g->limit * nr) return 0; break;
		case FLAT: if (r > g->limit) return 0; break;
		}
	}
	return 1;
}

static void print_goal(const struct scale *s, const struct goal *g)
{
	printf("  %-52s", g->what);
	for (int i = 0; i < s->ncounts; i++) {
		double v = fig(&s->f[i], g->off);

		if (v < 0)
			printf(" %10s", "n/a");
		else
			printf(" %10.*f", v >= 100 || v == (double)(long)v ? 0 : v >= 1 ? 2 : 4, v);
	}
	printf(" %-5s", g->unit);
	for (int i = 1; i < s->ncounts; i++) {
		double b = fig(&s->f[0], g->off);

		printf(" %7.2fx", b > 0 ? fig(&s->f[i], g->off) / b : 0.0);
	}
	printf("  %s\n", met(s, g) ? "met" : "NOT MET");
}

#define OFF(m) offsetof(struct figures, m)

static void report(struct scale *s)
{
	static const struct goal goals[] = {
		{ "resident memory after open + LIST <= 256 MiB", "MiB", AT_MOST, 256, OFF(rss_mib) },
		{ "peak resident memory (VmHWM) <= 256 MiB", "MiB", AT_MOST, 256, OFF(hwm_mib) },
		{ "open after a clean close <= 1 s", "s", AT_MOST, 1, OFF(open_s) },
		{ "open after kill -9 of a writer <= 1 s", "s", AT_MOST, 1, OFF(open_kill_s) },
		{ "peak resident memory of that updater <= 256 MiB", "MiB", AT_MOST, 256,
		  OFF(upd_hwm_mib) },
		{ "open after kill -9 of an updater (see above) <= 1 s", "s", AT_MOST, 1,
		  OFF(open_upd_s) },
		{ "resident memory after that open <= 256 MiB", "MiB", AT_MOST, 256,
		  OFF(upd_rss_mib) },
		{ "full LIST walk: <= 12x the time per 10x objects", "s", LINEAR, 1.2, OFF(list_s) },
		{ "osdfs fsck: <= 12x the time per 10x objects", "s", LINEAR, 1.2, OFF(fsck_s) },
		{ "log bytes appended by a read-only pass = 0", "B", EQUAL, 0, OFF(ro_d) },
		{ "log records per first 4 KiB WRITE <= 1", "rec", AT_MOST, 1, OFF(recs_per_write) },
		{ "CREATE + 4 KiB WRITE + FLUSH >= 50k objects/s", "/s", AT_LEAST, 50000, OFF(small_rate) },
		{ "osdfs lookup: time per op within 1.5x", "us", FLAT, 1.5, OFF(lookup_us) },
		{ "osdfs negative lookup: time per op within 1.5x", "us", FLAT, 1.5, OFF(neg_us) },
		{ "osdfs create: time per op within 1.5x", "us", FLAT, 1.5, OFF(create_us) },
		{ "osdfs st_blocks of 2 MiB in 20 GiB = 2 MiB", "MiB", AT_MOST, 2.0625, OFF(sparse_mib) },
	};

	printf("osd-bench --scale: software target in %s via loopback, OSD-2, no security\n",
	       s->base);
	if (s->data)
		printf("  the N objects hold %u bytes of data each (--data)\n", s->data);
	else
		printf("  the N objects hold no data (see --data)\n");
	printf("  each figure measured in a fresh process, dirty pages written back before;\n"
	       "  small objects: FLUSH OSD every %u objects (%u objects per run);\n"
	       "  updater: %u SET ATTRIBUTES of objects picked at random, then SIGKILL;\n"
	       "  churn: %u objects picked at random REMOVEd, then CREATEd again;\n"
	       "  osdfs: %u lookups, negative lookups and creates (then osdfs_sync) in one\n"
	       "  directory of N files\n\n",
	       s->flush_every, s->small, s->updates, CHURN, s->ops);
	printf("  %-52s", "objects (N)");
	for (int i = 0; i < s->ncounts; i++)
		printf(" %10u", s->counts[i]);
	printf(" %-5s", "");
	for (int i = 1; i < s->ncounts; i++)
		printf(" %7s", "ratio");
	printf("\n");
	printf("  %-52s", "build: CREATE of N objects (s, not a goal)");
	for (int i = 0; i < s->ncounts; i++)
		printf(" %10.2f", s->f[i].build_s);
	printf("\n  %-52s", "build: osdfs with N files (s, not a goal)");
	for (int i = 0; i < s->ncounts; i++)
		printf(" %10.2f", s->f[i].fs_build_s);
	printf("\n  %-52s", "osdfs resident memory after the ops (MiB)");
	for (int i = 0; i < s->ncounts; i++)
		printf(" %10.1f", s->f[i].fs_rss_mib);
	printf("\n  %-52s", "log the killed updater left (MiB, not a goal)");
	for (int i = 0; i < s->ncounts; i++)
		printf(" %10.1f", s->f[i].upd_log_mib);
	printf("\n  %-52s", "REMOVE of a random object (us, not a goal)");
	for (int i = 0; i < s->ncounts; i++)
		printf(" %10.2f", s->f[i].remove_us);
	printf("\n  %-52s", "CREATE of it again (us, not a goal)");
	for (int i = 0; i < s->ncounts; i++)
		printf(" %10.2f", s->f[i].recreate_us);
	printf("\n");
	for (size_t i = 0; i < sizeof(goals) / sizeof(goals[0]); i++)
		print_goal(s, &goals[i]);
}

/* ---- options ---- */

/* "100k", "1M", "2000": a count with an optional k or M suffix. */
static int parse_counts(struct scale *s, char *arg)
{
	char *save = NULL;

	s->ncounts = 0;
	for (char *t = strtok_r(arg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(t, &end, 10);
		if (*end == 'k' || *end == 'K')
			v *= 1000, end++;
		else if (*end == 'M' || *end == 'm')
			v *= 1000000, end++;
		if (errno || end == t || *end || *t == '-' || v < 1 || v > MAX_OBJECTS ||
		    s->ncounts == MAX_COUNTS) {
			fprintf(stderr, "osd-bench %s: bad object count '%s' (1..100M, at most %d)\n",
				MODE, t, MAX_COUNTS);
			return -EINVAL;
		}
		s->counts[s->ncounts++] = (unsigned)v;
	}
	return s->ncounts ? 0 : -EINVAL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: osd-bench --scale [--objects N,N,...] [--dir DIR] [--small N]\n"
		   "                         [--flush-every N] [--ops N] [--updates N] [--data B]\n"
		   "                         [--keep]\n"
		   "  --objects LIST   object counts, k and M suffixes (default 100k,1M;\n"
		   "                   at most 4; 10M works but takes long); ratios are to\n"
		   "                   the first count\n"
		   "  --dir DIR        scratch disk: the stores are made in a temporary\n"
		   "                   directory under DIR (default $TMPDIR or /tmp)\n"
		   "  --small N        objects per small-object run (default 20000)\n"
		   "  --flush-every N  FLUSH OSD after every N small objects (default 1000)\n"
		   "  --ops N          osdfs lookups, negative lookups and creates (default 20000)\n"
		   "  --updates N      SET ATTRIBUTES of the updater killed before an open\n"
		   "                   (default 500000)\n"
		   "  --data B         each of the N objects holds B bytes (a WRITE after its\n"
		   "                   CREATE; 1..1M, default 0: none): the open, LIST and\n"
		   "                   memory figures of a store whose objects hold data\n"
		   "  --keep           keep the stores (their path is printed)\n");
}

int osd_bench_scale(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "objects", required_argument, NULL, 'o' },
		{ "dir", required_argument, NULL, 'd' },
		{ "small", required_argument, NULL, 's' },
		{ "flush-every", required_argument, NULL, 'f' },
		{ "ops", required_argument, NULL, 'p' },
		{ "updates", required_argument, NULL, 'u' },
		{ "data", required_argument, NULL, 'D' },
		{ "keep", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct scale s = { .counts = { 100000, 1000000 }, .ncounts = 2, .small = 20000,
				  .flush_every = 1000, .ops = 20000, .updates = 500000 };
	int c, rc;

	s.base = getenv("TMPDIR");
	if (!s.base || !*s.base)
		s.base = "/tmp";
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (parse_counts(&s, optarg) < 0)
				return 2;
			break;
		case 'd': s.base = optarg; break;
		case 's':
			if (bench_parse_count(MODE, optarg, 10000000, &s.small) < 0)
				return 2;
			break;
		case 'f':
			if (bench_parse_count(MODE, optarg, 10000000, &s.flush_every) < 0)
				return 2;
			break;
		case 'p':
			if (bench_parse_count(MODE, optarg, 10000000, &s.ops) < 0)
				return 2;
			break;
		case 'u':
			if (bench_parse_count(MODE, optarg, 100000000, &s.updates) < 0)
				return 2;
			break;
		case 'D':
			if (bench_parse_count(MODE, optarg, MAX_DATA, &s.data) < 0)
				return 2;
			break;
		case 'k': s.keep = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if ((rc = bench_mkdtemp(s.base, "osd-bench-scale", s.dir, sizeof(s.dir))))
		bench_die(MODE, s.base, rc, NULL);
	for (int i = 0; i < s.ncounts; i++) {
		struct figures *f = &s.f[i];
		unsigned n = s.counts[i];

		in_child(build_objects, &s, n, f);
		in_child(build_fs, &s, n, f);
		in_child(measure_open, &s, n, f);
		if (f->listed != n) {
			fprintf(stderr, "osd-bench %s: LIST returned %llu ids of %u\n", MODE,
				(unsigned long long)f->listed, n);
			return 1;
		}
		in_child(measure_open_after_kill, &s, n, f);
		in_child(measure_small, &s, n, f);
		in_child(measure_churn, &s, n, f);
		in_child(measure_open_after_updates, &s, n, f);
		measure_fsck_median(&s, n, f);
		in_child(measure_fs, &s, n, f);
		if (bench_verbose)
			fprintf(stderr, "osd-bench %s: %u objects done\n", MODE, n);
		if (!s.keep) {
			char dir[600];

			path_of(dir, sizeof(dir), &s, n, "objects");
			bench_rmtree(dir);
			path_of(dir, sizeof(dir), &s, n, "osdfs");
			bench_rmtree(dir);
		}
	}
	report(&s);
	if (s.keep)
		printf("\n  stores kept in %s\n", s.dir);
	else if ((rc = bench_rmtree(s.dir)))
		bench_die(MODE, s.dir, rc, NULL);
	return 0;
}
