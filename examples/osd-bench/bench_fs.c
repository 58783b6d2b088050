/*
 * osd-bench --fs: what the filesystem costs. The same metadata and data
 * workloads run on three stacks in one process, interleaved run by run so
 * that load on the machine hits them alike:
 *
 *   osdfs/mem  osdfs mounted on the in-memory backend (no OSD at all);
 *   osdfs/osd  osdfs mounted on the osd backend, libosd over the loopback
 *              transport to a software target in a temporary directory;
 *   raw osd    the same work as backend calls on the same device, without
 *              the filesystem: create of an object with one 112-byte
 *              attribute (as an inode), get_attrs of that attribute by
 *              object id, list of the partition's ids, write/read of 1 MiB.
 *
 * Every figure is the median of --runs runs. Durability: the create and
 * write runs end with osdfs_sync() (osdfs) or the backend's flush of the
 * whole partition (raw: FLUSH PARTITION), included in their time.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <osd/request.h>
#include <osdfs/backends.h>
#include <osdfs/osdfs.h>
#include <osdtarget/target.h>
#include "bench.h"

#define MAX_RUNS 21
#define BIG (1u << 20)
#define NAME_LEN 12               /* "f" + 7 digits + NUL, padded */
#define MAX_COUNT 9999999u        /* what NAME_LEN can name */
#define MAX_MIB 65536u
#define FS_PARTITION 0x10000ULL   /* osdfs/osd */
#define RAW_PARTITION 0x10001ULL  /* raw osd, same device */
#define RAW_PAGE 0x10001u         /* application page, where osdfs keeps its inode */
#define RAW_ATTR_LEN 112u         /* an osdfs inode's fixed part */
#define LIST_BATCH 1024u          /* ids per raw list call */
#define LOOKUP_SEED 0x9e3779b97f4a7c15ULL

enum stack_id { ST_MEM, ST_OSD, ST_RAW, NUM_STACKS };
enum metric { M_CREATE, M_LOOKUP, M_READDIR, M_WRITE, M_READ, NUM_METRICS };

static const char *const stack_names[NUM_STACKS] = { "osdfs/mem", "osdfs/osd", "raw osd" };

struct params {
	const char *base;   /* parent of the temporary store directory */
	int runs;
	unsigned files;     /* files per create run */
	unsigned entries;   /* entries of the lookup directory */
	unsigned lookups;   /* lookups per run */
	unsigned mib;       /* MiB per sequential run */
};

/* One filesystem stack: the mount and the inodes the workloads use. */
struct fs_stack {
	const char *name;
	osdfs *fs;
	uint64_t lookup_dir;
	osdfs_file *seq;
};

/* The raw object path: a backend driven directly. */
struct raw_stack {
	osdfs_backend *be;
	const struct osdfs_backend_ops *ops;
	void *impl;
	uint64_t lookup_base, create_base, seq_oid;
};

struct bench {
	struct params p;
	char dir[600];
	int dir_made;
	osd_target *tgt;
	osd_dev *dev;
	struct fs_stack fs[ST_OSD + 1]; /* ST_MEM, ST_OSD */
	struct raw_stack raw;
	char (*names)[NAME_LEN];    /* "f0000000".. for max(entries, files) */
	uint8_t *buf;               /* 1 MiB pattern */
	uint8_t *rbuf;              /* 1 MiB read buffer */
	double v[NUM_METRICS][NUM_STACKS][MAX_RUNS];
};

static int report(const char *stack, const char *what, int rc, const char *detail)
{
	fprintf(stderr, "osd-bench --fs: %s: %s: %s\n", stack, what,
		detail && *detail ? detail : strerror(-rc));
	return rc;
}

static int fs_fail(struct fs_stack *s, const char *what, int rc)
{
	return report(s->name, what, rc, osdfs_error(s->fs));
}

/* A byte count from osdfs or a backend: anything but @want is a failure. */
static int io_fail(const char *stack, const char *what, ssize_t n, const char *detail)
{
	return report(stack, what, n < 0 ? (int)n : -EIO, n < 0 ? detail : "short transfer");
}

static int raw_fail(struct bench *b, const char *what, int rc)
{
	return report("raw osd", what, rc, b->dev ? osd_dev_error(b->dev) : NULL);
}

static double per_sec(double count, uint64_t t0)
{
	uint64_t ns = bench_now_ns() - t0;

	return count * 1e9 / (double)(ns ? ns : 1);
}

/* The i-th lookup of a run: a fixed pseudo-random sequence per run, so
 * every stack looks up the same entries in the same order. */
static unsigned lookup_index(uint64_t *state, unsigned entries)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (unsigned)(*state % entries);
}

/* ---- setup ---- */

static int mount_fs(struct fs_stack *s, const char *name, osdfs_backend *be)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	char err[256] = "";
	int rc;

	s->name = name;
	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mkfs(be, NULL);
	if (rc)
		return report(name, "mkfs", rc, NULL);
	rc = osdfs_mount(&s->fs, be, &mo);
	if (rc)
		return report(name, "mount", rc, err);
	return 0;
}

/* The lookup directory with its entries and the sequential file, each
 * made durable; nothing of this is timed. */
static int fill_fs(struct bench *b, struct fs_stack *s)
{
	struct osdfs_stat st;
	int rc = osdfs_mkdir(s->fs, OSDFS_ROOT_INO, "lookup", 0755, NULL, &st);

	if (rc)
		return fs_fail(s, "mkdir", rc);
	s->lookup_dir = st.ino;
	for (unsigned i = 0; i < b->p.entries; i++)
		if ((rc = osdfs_mknod(s->fs, s->lookup_dir, b->names[i], S_IFREG | 0644, 0,
				      NULL, NULL)))
			return fs_fail(s, "create", rc);
	rc = osdfs_create(s->fs, OSDFS_ROOT_INO, "seq", 0644, O_RDWR | O_EXCL, NULL, NULL,
			  &s->seq);
	if (rc)
		return fs_fail(s, "create", rc);
	for (unsigned i = 0; i < b->p.mib; i++) {
		ssize_t n = osdfs_write(s->fs, s->seq, b->buf, BIG, (uint64_t)i * BIG);

		if (n != (ssize_t)BIG)
			return io_fail(s->name, "write", n, osdfs_error(s->fs));
	}
	if ((rc = osdfs_sync(s->fs)))
		return fs_fail(s, "sync", rc);
	return 0;
}

static int fill_raw(struct bench *b)
{
	struct raw_stack *r = &b->raw;
	uint8_t attr[RAW_ATTR_LEN] = { 1 };
	struct osdfs_attr a = { RAW_PAGE, 1, attr, RAW_ATTR_LEN };
	struct iovec iov = { b->buf, BIG };
	int rc;

	r->lookup_base = OSD_FIRST_ID;
	r->create_base = r->lookup_base + b->p.entries;
	r->seq_oid = r->create_base + (uint64_t)b->p.runs * b->p.files;
	for (unsigned i = 0; i < b->p.entries; i++)
		if ((rc = r->ops->create(r->impl, r->lookup_base + i, &a, 1)))
			return raw_fail(b, "create", rc);
	if ((rc = r->ops->create(r->impl, r->seq_oid, NULL, 0)))
		return raw_fail(b, "create", rc);
	for (unsigned i = 0; i < b->p.mib; i++) {
		ssize_t n = r->ops->write(r->impl, r->seq_oid, (uint64_t)i * BIG, &iov, 1, NULL, 0);

		if (n != (ssize_t)BIG)
			return io_fail("raw osd", "write", n, osd_dev_error(b->dev));
	}
	if ((rc = r->ops->flush(r->impl, 0)))
		return raw_fail(b, "flush", rc);
	return 0;
}

static int open_target(struct bench *b)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	int rc;

	if ((rc = bench_mkdtemp(b->p.base, "osd-bench-fs", b->dir, sizeof(b->dir))))
		return report("target", b->p.base, rc, NULL);
	b->dir_made = 1;
	if ((rc = osd_target_open(&b->tgt, b->dir, &to)))
		return report("target", b->dir, rc, NULL);
	if ((rc = osd_target_loopback(b->tgt, &tp)))
		return report("target", "loopback", rc, osd_target_error(b->tgt));
	o.osd_version = OSD_VERSION_2;
	if ((rc = osd_dev_open(&b->dev, &tp, &o))) {
		tp.ops->destroy(tp.impl);
		return report("device", "open", rc, NULL);
	}
	return 0;
}

static int setup(struct bench *b)
{
	osdfs_backend *be;
	int rc;

	if ((rc = osdfs_backend_mem_new(&be, 0)))
		return report("mem", "backend", rc, NULL);
	if ((rc = mount_fs(&b->fs[ST_MEM], stack_names[ST_MEM], be))) {
		osdfs_backend_free(be);
		return rc;
	}
	if ((rc = open_target(b)))
		return rc;
	if ((rc = osdfs_backend_osd_new(&be, b->dev, FS_PARTITION)))
		return report("osd", "backend", rc, NULL);
	if ((rc = mount_fs(&b->fs[ST_OSD], stack_names[ST_OSD], be))) {
		osdfs_backend_free(be);
		return rc;
	}
	if ((rc = osdfs_backend_osd_new(&b->raw.be, b->dev, RAW_PARTITION)))
		return report("raw osd", "backend", rc, NULL);
	b->raw.ops = osdfs_backend_ops_of(b->raw.be);
	b->raw.impl = osdfs_backend_impl(b->raw.be);
	if ((rc = b->raw.ops->format(b->raw.impl, 0)))
		return raw_fail(b, "format", rc);
	for (int s = ST_MEM; s <= ST_OSD; s++)
		if ((rc = fill_fs(b, &b->fs[s])))
			return rc;
	return fill_raw(b);
}

static int teardown(struct bench *b)
{
	int rc = 0, r;

	for (int s = ST_MEM; s <= ST_OSD; s++) {
		struct fs_stack *f = &b->fs[s];

		if (!f->fs)
			continue;
		if (f->seq && (r = osdfs_release(f->fs, f->seq)) && !rc)
			rc = fs_fail(f, "release", r);
		if ((r = osdfs_unmount(f->fs)) && !rc)
			rc = report(f->name, "unmount", r, NULL);
	}
	osdfs_backend_free(b->raw.be);
	osd_dev_close(b->dev);
	osd_target_close(b->tgt);
	if (b->dir_made && (r = bench_rmtree(b->dir)) && !rc)
		rc = report("cleanup", b->dir, r, NULL);
	return rc;
}

/* ---- timed runs: osdfs ---- */

static int fs_create(struct bench *b, struct fs_stack *s, int run, double *rate)
{
	struct osdfs_stat st;
	char dname[24];
	uint64_t t0;
	int rc;

	snprintf(dname, sizeof(dname), "create%d", run);
	if ((rc = osdfs_mkdir(s->fs, OSDFS_ROOT_INO, dname, 0755, NULL, &st)))
		return fs_fail(s, "mkdir", rc);
	t0 = bench_now_ns();
	for (unsigned i = 0; i < b->p.files; i++)
		if ((rc = osdfs_mknod(s->fs, st.ino, b->names[i], S_IFREG | 0644, 0, NULL, NULL)))
			return fs_fail(s, "create", rc);
	if ((rc = osdfs_sync(s->fs)))
		return fs_fail(s, "sync", rc);
	*rate = per_sec(b->p.files, t0);
	return 0;
}

static int fs_lookup(struct bench *b, struct fs_stack *s, int run, double *rate)
{
	uint64_t state = LOOKUP_SEED + (uint64_t)run, t0 = bench_now_ns();
	struct osdfs_stat st;

	for (unsigned i = 0; i < b->p.lookups; i++) {
		int rc = osdfs_lookup(s->fs, s->lookup_dir,
				      b->names[lookup_index(&state, b->p.entries)], &st);

		if (rc)
			return fs_fail(s, "lookup", rc);
	}
	*rate = per_sec(b->p.lookups, t0);
	return 0;
}

static int count_entry(const struct osdfs_dirent *ent, void *payload)
{
	if (strcmp(ent->name, ".") && strcmp(ent->name, ".."))
		++*(unsigned *)payload;
	return 0;
}

static int fs_readdir(struct bench *b, struct fs_stack *s, double *rate)
{
	uint64_t t0 = bench_now_ns();
	unsigned n = 0;
	int rc = osdfs_readdir(s->fs, s->lookup_dir, 0, count_entry, &n);

	if (rc)
		return fs_fail(s, "readdir", rc);
	*rate = per_sec(n, t0);
	if (n != b->p.entries)
		return report(s->name, "readdir", -EIO, "wrong number of entries");
	return 0;
}

static int fs_write(struct bench *b, struct fs_stack *s, double *rate)
{
	uint64_t t0 = bench_now_ns();
	int rc;

	for (unsigned i = 0; i < b->p.mib; i++) {
		ssize_t n = osdfs_write(s->fs, s->seq, b->buf, BIG, (uint64_t)i * BIG);

		if (n != (ssize_t)BIG)
			return io_fail(s->name, "write", n, osdfs_error(s->fs));
	}
	if ((rc = osdfs_sync(s->fs)))
		return fs_fail(s, "sync", rc);
	*rate = per_sec(b->p.mib, t0);
	return 0;
}

static int fs_read(struct bench *b, struct fs_stack *s, double *rate)
{
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < b->p.mib; i++) {
		ssize_t n = osdfs_read(s->fs, s->seq, b->rbuf, BIG, (uint64_t)i * BIG);

		if (n != (ssize_t)BIG)
			return io_fail(s->name, "read", n, osdfs_error(s->fs));
	}
	*rate = per_sec(b->p.mib, t0);
	if (memcmp(b->rbuf, b->buf, BIG))
		return report(s->name, "read", -EIO, "data read back differs");
	return 0;
}

/* ---- timed runs: raw object path ---- */

static int raw_create(struct bench *b, int run, double *rate)
{
	struct raw_stack *r = &b->raw;
	uint8_t attr[RAW_ATTR_LEN] = { 1 };
	struct osdfs_attr a = { RAW_PAGE, 1, attr, RAW_ATTR_LEN };
	uint64_t first = r->create_base + (uint64_t)run * b->p.files, t0 = bench_now_ns();
	int rc;

	for (unsigned i = 0; i < b->p.files; i++)
		if ((rc = r->ops->create(r->impl, first + i, &a, 1)))
			return raw_fail(b, "create", rc);
	if ((rc = r->ops->flush(r->impl, 0)))
		return raw_fail(b, "flush", rc);
	*rate = per_sec(b->p.files, t0);
	return 0;
}

static int raw_lookup(struct bench *b, int run, double *rate)
{
	struct raw_stack *r = &b->raw;
	uint64_t state = LOOKUP_SEED + (uint64_t)run, t0 = bench_now_ns();
	uint8_t attr[RAW_ATTR_LEN];

	for (unsigned i = 0; i < b->p.lookups; i++) {
		struct osdfs_attr a = { RAW_PAGE, 1, attr, sizeof(attr) };
		uint64_t oid = r->lookup_base + lookup_index(&state, b->p.entries);
		int rc = r->ops->get_attrs(r->impl, oid, &a, 1);

		if (rc)
			return raw_fail(b, "get_attrs", rc);
		if (a.len != RAW_ATTR_LEN)
			return report("raw osd", "get_attrs", -EIO, "attribute missing");
	}
	*rate = per_sec(b->p.lookups, t0);
	return 0;
}

/* Lists the lookup set's ids (the partition holds others above them). */
static int raw_readdir(struct bench *b, double *rate)
{
	struct raw_stack *r = &b->raw;
	uint64_t ids[LIST_BATCH], start = r->lookup_base, end = r->lookup_base + b->p.entries;
	uint64_t t0 = bench_now_ns();
	unsigned count = 0;

	while (start && start < end) {
		size_t n;
		int rc = r->ops->list(r->impl, start, ids, LIST_BATCH, &n, &start);

		if (rc)
			return raw_fail(b, "list", rc);
		for (size_t i = 0; i < n && ids[i] < end; i++)
			count++;
	}
	*rate = per_sec(count, t0);
	if (count != b->p.entries)
		return report("raw osd", "list", -EIO, "wrong number of ids");
	return 0;
}

static int raw_io(struct bench *b, int write, double *rate)
{
	struct raw_stack *r = &b->raw;
	struct iovec iov = { write ? b->buf : b->rbuf, BIG };
	uint64_t t0 = bench_now_ns();
	int rc;

	for (unsigned i = 0; i < b->p.mib; i++) {
		uint64_t off = (uint64_t)i * BIG;
		ssize_t n = write ? r->ops->write(r->impl, r->seq_oid, off, &iov, 1, NULL, 0)
				  : r->ops->read(r->impl, r->seq_oid, off, &iov, 1);

		if (n != (ssize_t)BIG)
			return io_fail("raw osd", write ? "write" : "read", n,
				       osd_dev_error(b->dev));
	}
	if (write && (rc = r->ops->flush(r->impl, 0)))
		return raw_fail(b, "flush", rc);
	*rate = per_sec(b->p.mib, t0);
	if (!write && memcmp(b->rbuf, b->buf, BIG))
		return report("raw osd", "read", -EIO, "data read back differs");
	return 0;
}

/* One run of every workload on every stack, stacks interleaved. */
static int run_all(struct bench *b, int run)
{
	double (*v)[NUM_STACKS][MAX_RUNS] = b->v;
	int rc = 0;

	for (int s = ST_MEM; s <= ST_OSD && !rc; s++) {
		struct fs_stack *f = &b->fs[s];

		if (!(rc = fs_create(b, f, run, &v[M_CREATE][s][run])) &&
		    !(rc = fs_lookup(b, f, run, &v[M_LOOKUP][s][run])) &&
		    !(rc = fs_readdir(b, f, &v[M_READDIR][s][run])) &&
		    !(rc = fs_write(b, f, &v[M_WRITE][s][run])))
			rc = fs_read(b, f, &v[M_READ][s][run]);
	}
	if (!rc && !(rc = raw_create(b, run, &v[M_CREATE][ST_RAW][run])) &&
	    !(rc = raw_lookup(b, run, &v[M_LOOKUP][ST_RAW][run])) &&
	    !(rc = raw_readdir(b, &v[M_READDIR][ST_RAW][run])) &&
	    !(rc = raw_io(b, 1, &v[M_WRITE][ST_RAW][run])))
		rc = raw_io(b, 0, &v[M_READ][ST_RAW][run]);
	return rc;
}

/* ---- output ---- */

static void print_table(struct bench *b)
{
	char label[NUM_METRICS][64];
	double m[NUM_STACKS];

	snprintf(label[M_CREATE], sizeof(label[0]), "create empty file, %u/dir (/s)", b->p.files);
	snprintf(label[M_LOOKUP], sizeof(label[0]), "lookup in %u-entry dir (/s)", b->p.entries);
	snprintf(label[M_READDIR], sizeof(label[0]), "readdir %u entries (entries/s)",
		 b->p.entries);
	snprintf(label[M_WRITE], sizeof(label[0]), "seq write 1 MiB x %u (MiB/s)", b->p.mib);
	snprintf(label[M_READ], sizeof(label[0]), "seq read 1 MiB x %u (MiB/s)", b->p.mib);

	printf("osd-bench --fs: osdfs on the mem backend (osdfs/mem), osdfs on the osd backend\n"
	       "  (osdfs/osd) and the raw object path (raw osd); software target in %s\n"
	       "  via loopback, OSD-2, NOSEC, default target and mount options\n", b->p.base);
	printf("  median of %d runs; the three stacks interleaved within each run\n", b->p.runs);
	printf("  durability: create and write runs end with osdfs_sync() (raw: backend flush\n"
	       "    of the partition, FLUSH PARTITION), included in their time\n");
	printf("  raw osd: same device, own partition; create = CREATE with one %u-byte\n"
	       "    attribute, lookup = GET ATTRIBUTES of it by object id, readdir = LIST\n"
	       "    (%u ids per command), seq = 1 MiB WRITE / READ\n", RAW_ATTR_LEN, LIST_BATCH);
	printf("  create: each run fills a new directory; lookup: %u pseudo-random names per\n"
	       "    run, osdfs caches as mounted; seq: runs overwrite a %u MiB file (object)\n"
	       "    written before the runs\n\n", b->p.lookups, b->p.mib);
	printf("  %-36s %12s %12s %12s %8s %8s\n", "figure", stack_names[ST_MEM],
	       stack_names[ST_OSD], stack_names[ST_RAW], "osd/mem", "osd/raw");
	for (int k = 0; k < NUM_METRICS; k++) {
		for (int s = 0; s < NUM_STACKS; s++)
			m[s] = bench_median(b->v[k][s], b->p.runs);
		printf("  %-36s %12.0f %12.0f %12.0f %8.3f %8.3f\n", label[k], m[ST_MEM], m[ST_OSD],
		       m[ST_RAW], m[ST_MEM] > 0 ? m[ST_OSD] / m[ST_MEM] : 0.0,
		       m[ST_RAW] > 0 ? m[ST_OSD] / m[ST_RAW] : 0.0);
	}
}

/* ---- options ---- */

/* Sizes a --quick run uses unless given explicitly. */
static const struct params quick_sizes = { NULL, 5, 1000, 5000, 2000, 8 };

static void usage(FILE *f)
{
	fprintf(f, "usage: osd-bench --fs [--dir DIR] [--runs N] [--files N] [--entries N]\n"
		   "                      [--lookups N] [--mib N] [--quick]\n"
		   "  --dir DIR     disk for the software target: a fresh store is made in a\n"
		   "                temporary directory under DIR (default $TMPDIR or /tmp)\n"
		   "                and removed\n"
		   "  --runs N      runs per figure, the median is printed (default 5)\n"
		   "  --files N     empty files created per create run (default 20000)\n"
		   "  --entries N   entries of the lookup/readdir directory (default 100000)\n"
		   "  --lookups N   lookups per run (default 20000)\n"
		   "  --mib N       MiB written and read per sequential run (default 64)\n"
		   "  --quick       a smoke test: %u files, %u entries, %u lookups, %u MiB;\n"
		   "                sizes given explicitly still win\n"
		   "Counts are 1..%u (runs 1..%d, MiB 1..%u).\n",
		quick_sizes.files, quick_sizes.entries, quick_sizes.lookups, quick_sizes.mib,
		MAX_COUNT, MAX_RUNS, MAX_MIB);
}

/* 0: run, 1: --help printed, -EINVAL: bad options (message printed). */
static int parse_args(int argc, char **argv, struct params *p)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "runs", required_argument, NULL, 'r' },
		{ "files", required_argument, NULL, 'f' },
		{ "entries", required_argument, NULL, 'e' },
		{ "lookups", required_argument, NULL, 'l' },
		{ "mib", required_argument, NULL, 'm' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct params given = { NULL, 0, 0, 0, 0, 0 }; /* 0: not given */
	unsigned runs = 0;
	int quick = 0, c, rc = 0;

	optind = 1;
	while (!rc && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': p->base = optarg; break;
		case 'r': rc = bench_parse_count("--fs", optarg, MAX_RUNS, &runs); break;
		case 'f': rc = bench_parse_count("--fs", optarg, MAX_COUNT, &given.files); break;
		case 'e': rc = bench_parse_count("--fs", optarg, MAX_COUNT, &given.entries); break;
		case 'l': rc = bench_parse_count("--fs", optarg, MAX_COUNT, &given.lookups); break;
		case 'm': rc = bench_parse_count("--fs", optarg, MAX_MIB, &given.mib); break;
		case 'q': quick = 1; break;
		case 'h': usage(stdout); return 1;
		default: return -EINVAL; /* getopt printed the message */
		}
	}
	if (rc)
		return rc;
	if (optind < argc) {
		fprintf(stderr, "osd-bench --fs: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!*p->base) {
		fprintf(stderr, "osd-bench --fs: empty --dir\n");
		return -EINVAL;
	}
	if (quick) {
		p->files = quick_sizes.files;
		p->entries = quick_sizes.entries;
		p->lookups = quick_sizes.lookups;
		p->mib = quick_sizes.mib;
	}
	if (runs)
		p->runs = (int)runs;
	p->files = given.files ? given.files : p->files;
	p->entries = given.entries ? given.entries : p->entries;
	p->lookups = given.lookups ? given.lookups : p->lookups;
	p->mib = given.mib ? given.mib : p->mib;
	return 0;
}

static int alloc_buffers(struct bench *b)
{
	unsigned n = b->p.entries > b->p.files ? b->p.entries : b->p.files;

	b->names = malloc((size_t)n * sizeof(*b->names));
	b->buf = malloc(BIG);
	b->rbuf = malloc(BIG);
	if (!b->names || !b->buf || !b->rbuf)
		return report("setup", "memory", -ENOMEM, NULL);
	for (unsigned i = 0; i < n; i++)
		snprintf(b->names[i], NAME_LEN, "f%07u", i);
	for (unsigned i = 0; i < BIG; i++)
		b->buf[i] = (uint8_t)(i * 131 + 7);
	return 0;
}

int osd_bench_fs(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	const char *tmp = getenv("TMPDIR");
	int rc;

	if (!b) {
		fprintf(stderr, "osd-bench --fs: out of memory\n");
		return 1;
	}
	b->p = (struct params){ tmp && *tmp ? tmp : "/tmp", 5, 20000, 100000, 20000, 64 };
	rc = parse_args(argc, argv, &b->p);
	if (rc) {
		if (rc < 0)
			usage(stderr);
		free(b);
		return rc < 0 ? 2 : 0;
	}
	rc = alloc_buffers(b);
	if (!rc)
		rc = setup(b);
	for (int r = 0; r < b->p.runs && !rc; r++)
		rc = run_all(b, r);
	if (teardown(b) && !rc)
		rc = -EIO;
	if (!rc)
		print_table(b);
	free(b->names);
	free(b->buf);
	free(b->rbuf);
	free(b);
	return rc ? 1 : 0;
}
