/*
 * I/O errors injected into the backend at every step of a workload: each
 * call must fail cleanly with a negative errno (never crash or hang), and
 * the filesystem left behind must mount again with no dangling entry and no
 * corrupt directory (what an interrupted operation may leave is an
 * unreferenced object or a link count one too high, for fsck). And a
 * backend that fails reads of more than one directory block still serves
 * every lookup.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <check.h>

#include <osdfs/backends.h>
#include <osdfs/fsck.h>

#include "fs_fixture.h"

#define ROOT OSDFS_ROOT_INO

struct fault {
	const struct osdfs_backend_ops *ops;
	void *impl;
	long countdown; /* fail the operation that brings it to 0 */
	int sticky;     /* keep failing after the first failure */
	int failed;
	long count;
	size_t read_max;  /* reads of more bytes fail (0: any size works) */
	long big_reads;   /* reads failed so */
	size_t biggest;   /* the longest read asked for */
	long over_block;  /* reads of more than 4096 bytes */
	/* writes ('w'), attribute sets ('a') and flushes ('f'), in order */
	char op[64];
	uint64_t oid[64];
	int nops;
	int fail_flush;   /* flushes fail */
};

static void note(struct fault *f, char op, uint64_t oid)
{
	if (f->nops < 64) {
		f->op[f->nops] = op;
		f->oid[f->nops++] = oid;
	}
}

/* A fault backend over the fixture's that fails nothing until told to. */
static struct fault fault_over_fixture(void)
{
	return (struct fault){ .ops = osdfs_backend_ops_of(fx.inst.be),
			       .impl = osdfs_backend_impl(fx.inst.be) };
}

static int tick(struct fault *f)
{
	f->count++;
	if (f->failed && f->sticky)
		return 1;
	if (f->countdown > 0 && --f->countdown == 0) {
		f->failed = 1;
		return 1;
	}
	return 0;
}

#define F ((struct fault *)impl)

static int f_create(void *impl, uint64_t oid, const struct osdfs_attr *a, int n)
{
	return tick(F) ? -EIO : F->ops->create(F->impl, oid, a, n);
}

/* The class hint goes on, so files on a layout underneath stay striped. */
static int f_create_class(void *impl, uint64_t oid, enum osdfs_obj_class cls,
			  const struct osdfs_attr *a, int n)
{
	if (tick(F))
		return -EIO;
	if (F->ops->create_class)
		return F->ops->create_class(F->impl, oid, cls, a, n);
	return F->ops->create(F->impl, oid, a, n);
}

static int f_remove(void *impl, uint64_t oid)
{
	return tick(F) ? -EIO : F->ops->remove(F->impl, oid);
}

static ssize_t f_read(void *impl, uint64_t oid, uint64_t off, const struct iovec *iov, int c)
{
	size_t len = 0;

	for (int i = 0; i < c; i++)
		len += iov[i].iov_len;
	if (len > F->biggest)
		F->biggest = len;
	if (len > 4096)
		F->over_block++;
	if (F->read_max && len > F->read_max) {
		F->big_reads++;
		return -EIO;
	}
	return tick(F) ? -EIO : F->ops->read(F->impl, oid, off, iov, c);
}

static ssize_t f_write(void *impl, uint64_t oid, uint64_t off, const struct iovec *iov, int c,
		       const struct osdfs_attr *a, int n)
{
	note(F, 'w', oid);
	return tick(F) ? -EIO : F->ops->write(F->impl, oid, off, iov, c, a, n);
}

static int f_truncate(void *impl, uint64_t oid, uint64_t size)
{
	return tick(F) ? -EIO : F->ops->truncate(F->impl, oid, size);
}

static int f_punch(void *impl, uint64_t oid, uint64_t off, uint64_t len)
{
	return tick(F) ? -EIO : F->ops->punch(F->impl, oid, off, len);
}

static int f_get_attrs(void *impl, uint64_t oid, struct osdfs_attr *a, int n)
{
	return tick(F) ? -EIO : F->ops->get_attrs(F->impl, oid, a, n);
}

static int f_set_attrs(void *impl, uint64_t oid, const struct osdfs_attr *a, int n)
{
	note(F, 'a', oid);
	return tick(F) ? -EIO : F->ops->set_attrs(F->impl, oid, a, n);
}

static int f_size(void *impl, uint64_t oid, uint64_t *size)
{
	return tick(F) ? -EIO : F->ops->size(F->impl, oid, size);
}

static int f_list(void *impl, uint64_t start, uint64_t *ids, size_t max, size_t *n,
		  uint64_t *next)
{
	return tick(F) ? -EIO : F->ops->list(F->impl, start, ids, max, n, next);
}

static int f_flush(void *impl, uint64_t oid)
{
	note(F, 'f', oid);
	if (F->fail_flush)
		return -EIO;
	return tick(F) ? -EIO : F->ops->flush(F->impl, oid);
}

static int f_format(void *impl, uint64_t capacity)
{
	return F->ops->format(F->impl, capacity);
}

static int f_statfs(void *impl, struct osdfs_backend_stat *st)
{
	return tick(F) ? -EIO : F->ops->statfs(F->impl, st);
}

static void f_destroy(void *impl)
{
	(void)impl;
}

static const struct osdfs_backend_ops fault_ops = {
	.version = OSDFS_BACKEND_VERSION,
	.create = f_create, .remove = f_remove, .read = f_read, .write = f_write,
	.truncate = f_truncate, .punch = f_punch, .get_attrs = f_get_attrs,
	.set_attrs = f_set_attrs, .size = f_size, .list = f_list, .flush = f_flush,
	.format = f_format, .statfs = f_statfs, .destroy = f_destroy,
	.create_class = f_create_class,
};

static void setup(void)
{
	fx_start(0);
	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	fx.fs = NULL;
}

static void teardown(void)
{
	fx_stop();
}

static void expect_errno(long rc)
{
	ck_assert_msg(rc >= 0 || (rc >= -4095 && rc != -EFAULT), "bad return %ld", rc);
}

/* A workload touching every kind of operation, including directory splits. */
static void workload(osdfs *fs)
{
	static char data[10000];
	struct osdfs_stat st, set = { 0 };
	osdfs_file *fh = NULL;
	char name[32];
	uint64_t a = 0, b = 0;

	expect_errno(osdfs_mkdir(fs, ROOT, "a", 0755, NULL, &st));
	if (osdfs_lookup(fs, ROOT, "a", &st) == 0)
		a = st.ino;
	expect_errno(osdfs_mkdir(fs, ROOT, "b", 0755, NULL, &st));
	if (osdfs_lookup(fs, ROOT, "b", &st) == 0)
		b = st.ino;
	expect_errno(osdfs_create(fs, a ? a : ROOT, "f", 0644, O_RDWR, NULL, &st, &fh));
	if (fh) {
		expect_errno(osdfs_write(fs, fh, data, sizeof(data), 0));
		expect_errno(osdfs_write(fs, fh, "tail", 4, 1 << 20));
		expect_errno(osdfs_fallocate(fs, fh, OSDFS_FALLOC_KEEP_SIZE |
					     OSDFS_FALLOC_PUNCH_HOLE, 0, 4096));
		expect_errno(osdfs_read(fs, fh, data, sizeof(data), 0));
		expect_errno(osdfs_release(fs, fh));
	}
	expect_errno(osdfs_symlink(fs, ROOT, "fast", "a/f", NULL, NULL));
	memset(name, 'L', 31);
	name[31] = '\0';
	{
		char slow[400];

		memset(slow, 's', sizeof(slow) - 1);
		slow[sizeof(slow) - 1] = '\0';
		expect_errno(osdfs_symlink(fs, ROOT, "slow", slow, NULL, NULL));
	}
	for (int i = 0; i < 160; i++) {
		snprintf(name, sizeof(name), "entry-%03d", i);
		expect_errno(osdfs_mknod(fs, b ? b : ROOT, name, S_IFREG | 0600, 0, NULL, NULL));
	}
	for (int i = 0; i < 160; i += 3) {
		snprintf(name, sizeof(name), "entry-%03d", i);
		expect_errno(osdfs_unlink(fs, b ? b : ROOT, name));
	}
	if (osdfs_lookup(fs, a ? a : ROOT, "f", &st) == 0) {
		expect_errno(osdfs_link(fs, st.ino, ROOT, "hard", NULL));
		set.mode = 0600;
		set.size = 100;
		expect_errno(osdfs_setattr(fs, st.ino, &set, OSDFS_SET_MODE | OSDFS_SET_SIZE, NULL));
		expect_errno(osdfs_setxattr(fs, st.ino, "user.k", "v", 1, 0));
	}
	expect_errno(osdfs_rename(fs, a ? a : ROOT, "f", b ? b : ROOT, "entry-001", 0));
	expect_errno(osdfs_mkdir(fs, a ? a : ROOT, "sub", 0755, NULL, NULL));
	expect_errno(osdfs_rename(fs, ROOT, "a", b ? b : ROOT, "moved", 0));
	expect_errno(osdfs_rename(fs, ROOT, "fast", ROOT, "slow", OSDFS_RENAME_EXCHANGE));
	expect_errno(osdfs_mkdir(fs, ROOT, "empty", 0755, NULL, NULL));
	expect_errno(osdfs_rmdir(fs, ROOT, "empty"));
	expect_errno(osdfs_fsync(fs, ROOT, 0));
	expect_errno(osdfs_sync(fs));
}

struct walk {
	uint64_t dir;
	size_t entries;
	int bad;
	char names[512][16];
	uint64_t inos[512];
	size_t n;
};

static int walk_cb(const struct osdfs_dirent *e, void *payload)
{
	struct walk *w = payload;

	if (strcmp(e->name, ".") && strcmp(e->name, "..") && w->n < 512) {
		snprintf(w->names[w->n], sizeof(w->names[0]), "%s", e->name);
		w->inos[w->n++] = e->ino;
	}
	return 0;
}

/*
 * Every entry leads to an inode, every directory lists cleanly; with
 * strict, ".." of every directory is its parent as well (an interrupted
 * cross-directory rename may leave that to fsck).
 */
static size_t check_tree(osdfs *fs, uint64_t dir, int depth, int strict)
{
	struct walk *w = calloc(1, sizeof(*w));
	size_t total = 0;

	ck_assert_int_lt(depth, 10);
	ck_assert_int_eq(osdfs_readdir(fs, dir, 0, walk_cb, w), 0);
	for (size_t i = 0; i < w->n; i++) {
		struct osdfs_stat st;
		int rc = osdfs_getattr(fs, w->inos[i], &st);

		ck_assert_msg(rc == 0, "entry %s -> inode %llu: %d", w->names[i],
			      (unsigned long long)w->inos[i], rc);
		ck_assert_int_eq(osdfs_lookup(fs, dir, w->names[i], &st), 0);
		ck_assert_uint_eq(st.ino, w->inos[i]);
		ck_assert_uint_ge(st.nlink, 1);
		if (S_ISDIR(st.mode)) {
			struct osdfs_stat up;

			ck_assert_int_eq(osdfs_lookup(fs, st.ino, "..", &up), 0);
			if (strict)
				ck_assert_uint_eq(up.ino, dir);
			total += check_tree(fs, st.ino, depth + 1, strict);
		}
		total++;
	}
	free(w);
	return total;
}

static long run_with_fault(long countdown, int sticky)
{
	struct osdfs_mount_options o = fx_mount_options();
	struct fault f = fault_over_fixture();
	osdfs_backend *be;
	osdfs *fs;
	int rc;

	f.countdown = countdown;
	f.sticky = sticky;

	ck_assert_int_eq(osdfs_mkfs(fx.inst.be, NULL), 0);
	ck_assert_int_eq(osdfs_backend_new(&be, &fault_ops, &f, "fault"), 0);
	rc = osdfs_mount(&fs, be, &o);
	if (rc == 0) {
		workload(fs);
		expect_errno(osdfs_unmount(fs));
	} else {
		ck_assert_int_eq(rc, -EIO);
	}
	osdfs_backend_free(be);
	/* whatever happened, the filesystem is consistent */
	o.flags |= OSDFS_MOUNT_FORCE;
	ck_assert_int_eq(osdfs_mount(&fs, fx.inst.be, &o), 0);
	check_tree(fs, ROOT, 0, countdown == 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	return f.count;
}

START_TEST(test_every_single_fault)
{
	long total = run_with_fault(0, 0);

	ck_assert_uint_gt(total, 400);
	for (long k = 1; k <= total; k++)
		run_with_fault(k, 0);
}
END_TEST

START_TEST(test_device_dies)
{
	long total = run_with_fault(0, 1);

	for (long k = 1; k <= total; k += 11)
		run_with_fault(k, 1);
}
END_TEST

START_TEST(test_clean_run_tree)
{
	struct osdfs_mount_options o = fx_mount_options();
	osdfs *fs;

	run_with_fault(0, 0);
	ck_assert_int_eq(osdfs_mount(&fs, fx.inst.be, &o), 0);
	/* root: b, fast, slow, hard; b: 106 entries + moved; moved: sub */
	ck_assert_uint_eq(check_tree(fs, ROOT, 0, 1), 4 + 107 + 1);
	{
		struct osdfs_stat st;

		ck_assert_int_eq(osdfs_lookup(fs, ROOT, "b", &st), 0);
		ck_assert_uint_ge(st.size, 2 * 4096); /* the workload split a block */
	}
	ck_assert_int_eq(osdfs_unmount(fs), 0);
}
END_TEST

/* Makes directory "d" of the 3,000 even names "entry-%04d" below 6,000
 * (over 16 blocks); returns its inode number. */
static uint64_t make_big_dir(void)
{
	struct osdfs_mount_options o = fx_mount_options();
	struct osdfs_stat st;
	char name[32];
	osdfs *fs;

	ck_assert_int_eq(osdfs_mount(&fs, fx.inst.be, &o), 0);
	ck_assert_int_eq(osdfs_mkdir(fs, ROOT, "d", 0755, NULL, &st), 0);
	for (int i = 0; i < 6000; i += 2) {
		snprintf(name, sizeof(name), "entry-%04d", i);
		ck_assert_int_eq(osdfs_mknod(fs, st.ino, name, S_IFREG | 0600, 0, NULL, NULL), 0);
	}
	ck_assert_int_eq(osdfs_getattr(fs, st.ino, &st), 0);
	ck_assert_uint_gt(st.size, 16 * 4096);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	return st.ino;
}

/* Mounts again on the fault backend of @p f with a cache of @p dir_cache
 * blocks (0: the default). */
static osdfs *mount_through(struct fault *f, uint32_t dir_cache, osdfs_backend **be)
{
	struct osdfs_mount_options o = fx_mount_options();
	osdfs *fs;

	o.dir_cache = dir_cache;
	ck_assert_int_eq(osdfs_backend_new(be, &fault_ops, f, "fault"), 0);
	ck_assert_int_eq(osdfs_mount(&fs, *be, &o), 0);
	return fs;
}

static const struct osdfs_backend_ops *raw_ops(void **impl)
{
	*impl = osdfs_backend_impl(fx.inst.be);
	return osdfs_backend_ops_of(fx.inst.be);
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* An attribute of object @p oid as stored, @p len bytes exactly. */
static void attr_io(uint64_t oid, uint32_t page, uint32_t number, uint8_t *buf, uint32_t len,
		    int set)
{
	void *impl;
	const struct osdfs_backend_ops *ops = raw_ops(&impl);
	struct osdfs_attr a = { page, number, buf, len };

	if (set) {
		ck_assert_int_eq(ops->set_attrs(impl, oid, &a, 1), 0);
	} else {
		ck_assert_int_eq(ops->get_attrs(impl, oid, &a, 1), 0);
		ck_assert_uint_eq(a.len, len);
	}
}

/* Directory d's header (osdfs-format.md 4.1): 24 bytes, page 0x10002. */
#define DIR_OID(d) (0x10000ULL + (d))
static void dirhdr_io(uint64_t d, uint8_t h[24], int set)
{
	attr_io(DIR_OID(d), 0x10002, 1, h, 24, set);
}

/* Voids d's name summary snapshot, as an interrupted change would: the
 * header's stamp (bytes 16..23) zeroed. */
static void void_snapshot(uint64_t d)
{
	uint8_t h[24];

	dirhdr_io(d, h, 0);
	memset(h + 16, 0, 8);
	dirhdr_io(d, h, 1);
}

/* mount_through() and looks every name below 6,000 up in make_big_dir()'s
 * directory: even ones are found, odd ones absent. */
static void lookups_all(struct fault *f, uint64_t d, uint32_t dir_cache)
{
	struct osdfs_stat st;
	osdfs_backend *be;
	osdfs *fs = mount_through(f, dir_cache, &be);
	char name[32];

	for (int i = 0; i < 6000; i++) {
		snprintf(name, sizeof(name), "entry-%04d", i);
		ck_assert_int_eq(osdfs_lookup(fs, d, name, &st), i % 2 ? -ENOENT : 0);
	}
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	osdfs_backend_free(be);
}

/* lookups_all() in a directory without a snapshot: its blocks are read. */
static void lookups_through(struct fault *f, uint32_t dir_cache)
{
	uint64_t d = make_big_dir();

	void_snapshot(d);
	lookups_all(f, d, dir_cache);
}

/*
 * A directory block missing from the cache is read with its run of up to 64
 * (libosdfs/core/dir.c); a backend that fails such a read (a bad sector in
 * the run) must still serve the block alone: every lookup answers right.
 */
START_TEST(test_run_read_fails)
{
	struct fault f = fault_over_fixture();

	f.read_max = 4096;
	lookups_through(&f, 0);
	ck_assert_int_gt(f.big_reads, 0);
}
END_TEST

/*
 * A run is no longer than a quarter of the name summaries kept: with a
 * cache of one block (32 summaries) runs are 8 blocks, so a run never
 * evicts the summaries it just made (runs of 64 there read and hashed the
 * whole directory on every lookup of a new name).
 */
START_TEST(test_run_fits_summaries)
{
	struct fault f = fault_over_fixture();

	lookups_through(&f, 1);
	ck_assert_uint_eq(f.biggest, 8 * 4096);
}
END_TEST

/*
 * Creates, links, renames and unlinks read the one block they change, never
 * its run: they need that block whatever the summaries say, and a run for
 * each made the first creates in a directory of 10M entries cost 250 us.
 * Lookups still read runs.
 */
START_TEST(test_changes_read_alone)
{
	struct fault f = fault_over_fixture();
	uint64_t d = make_big_dir();
	struct osdfs_stat st;
	osdfs_backend *be;
	osdfs *fs;
	char name[32], to[32];

	void_snapshot(d);
	fs = mount_through(&f, 0, &be);

	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "new-%04d", i);
		ck_assert_int_eq(osdfs_mknod(fs, d, name, S_IFREG | 0600, 0, NULL, &st), 0);
		snprintf(to, sizeof(to), "link-%04d", i);
		ck_assert_int_eq(osdfs_link(fs, st.ino, d, to, NULL), 0);
		snprintf(name, sizeof(name), "entry-%04d", 4 * i);
		snprintf(to, sizeof(to), "moved-%04d", i);
		ck_assert_int_eq(osdfs_rename(fs, d, name, d, to, 0), 0);
		snprintf(name, sizeof(name), "entry-%04d", 4 * i + 2);
		ck_assert_int_eq(osdfs_unlink(fs, d, name), 0);
	}
	ck_assert_uint_eq(f.biggest, 4096);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	osdfs_backend_free(be);
	void_snapshot(d);
	fs = mount_through(&f, 0, &be);
	ck_assert_int_eq(osdfs_lookup(fs, d, "moved-0001", &st), 0);
	ck_assert_uint_gt(f.biggest, 4096);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	osdfs_backend_free(be);
}
END_TEST

/*
 * Name summary snapshots (osdfs-format.md 4.6). Checks the bytes an unmount
 * leaves: the feature bit, a stamp in the header, the snapshot past the
 * last block vouching for it.
 */
static uint32_t snapshot_at(uint64_t d, uint8_t sh[32])
{
	void *impl;
	const struct osdfs_backend_ops *ops = raw_ops(&impl);
	uint8_t h[24], sb[160];
	uint32_t nblocks;

	dirhdr_io(d, h, 0);
	nblocks = (uint32_t)get_le(h + 4, 4);
	attr_io(0x10000, 0x10000, 1, sb, sizeof(sb), 0);
	ck_assert_uint_eq(get_le(sb + 24, 8) & 0x2, 0x2); /* ro_compat DIRSUMS */
	ck_assert_uint_ne(get_le(h + 16, 8), 0);
	struct iovec iov = { sh, 32 };
	ck_assert_int_eq(ops->read(impl, DIR_OID(d), (uint64_t)nblocks * 4096, &iov, 1), 32);
	ck_assert_int_eq(memcmp(sh, "DSUM\x01\x00\x20\x00", 8), 0);
	ck_assert_uint_eq(get_le(sh + 8, 4), nblocks);
	ck_assert_uint_eq(get_le(sh + 12, 4), 4096 / 32);
	ck_assert_uint_eq(get_le(sh + 16, 8), get_le(h + 16, 8));
	return nblocks;
}

/* A fresh mount answers from the snapshot: one read of it, no run read,
 * every lookup right, and fsck finds nothing. */
START_TEST(test_snapshot_answers_lookups)
{
	struct fault f = fault_over_fixture();
	uint64_t d = make_big_dir();
	uint8_t sh[32];
	uint32_t nblocks = snapshot_at(d, sh);

	lookups_all(&f, d, 0);
	ck_assert_int_eq(f.over_block, 1);
	ck_assert_uint_eq(f.biggest, 32 + (size_t)nblocks * 128);
	ck_assert_int_eq(osdfs_fsck(fx.inst.be, NULL, NULL), 0);
}
END_TEST

/*
 * Summaries kept in chunks smaller than the directory (libosdfs/core/sums.c):
 * with 2 blocks cached (64 summaries, chunks of 8 blocks) the unmount
 * writes the snapshot from several chunks and the next mount loads it into
 * them: one read, every lookup right, fsck content. With 1 block cached (32
 * summaries) a directory of more than 32 blocks loads none and its blocks
 * are read in runs of 8.
 */
START_TEST(test_snapshot_chunks)
{
	struct fault f = fault_over_fixture();
	uint64_t d = make_big_dir();
	struct osdfs_mount_options o = fx_mount_options();
	uint8_t sh[32], again[32];
	uint32_t nblocks;
	char name[32];
	osdfs *fs;

	ck_assert_int_eq(osdfs_mount(&fs, fx.inst.be, &o), 0);
	for (int i = 0; i < 1000; i++) { /* past 32 blocks */
		snprintf(name, sizeof(name), "more-%04d", i);
		ck_assert_int_eq(osdfs_mknod(fs, d, name, S_IFREG | 0600, 0, NULL, NULL), 0);
	}
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	nblocks = snapshot_at(d, sh);
	ck_assert_uint_gt(nblocks, 32);
	ck_assert_uint_le(nblocks, 64);
	void_snapshot(d);
	lookups_all(&f, d, 2); /* summaries made from runs, in chunks */
	ck_assert_uint_eq(snapshot_at(d, again), nblocks);
	ck_assert_int_eq(memcmp(sh + 24, again + 24, 4) == 0, 0); /* a new stamp: new CRC */
	ck_assert_int_eq(osdfs_fsck(fx.inst.be, NULL, NULL), 0);
	f.over_block = 0;
	f.biggest = 0;
	lookups_all(&f, d, 2);
	ck_assert_int_eq(f.over_block, 1);
	ck_assert_uint_eq(f.biggest, 32 + (size_t)nblocks * 128);
	f.over_block = 0;
	f.biggest = 0;
	lookups_all(&f, d, 1);
	ck_assert_int_gt(f.over_block, 1);
	ck_assert_uint_eq(f.biggest, 8 * 4096);
}
END_TEST

/*
 * A damaged header counting 2^32 - 2 blocks under a stamp: the summaries
 * would not fit, so no snapshot is read (the count rounded up to whole
 * chunks once wrapped around 2^32 and asked for a 128 GiB buffer).
 */
START_TEST(test_snapshot_huge_count)
{
	struct fault f = fault_over_fixture();
	uint64_t d = make_big_dir();
	struct osdfs_stat st;
	osdfs_backend *be;
	osdfs *fs;
	uint8_t h[24];

	dirhdr_io(d, h, 0);
	ck_assert_uint_ne(get_le(h + 16, 8), 0);
	memcpy(h + 4, "\xfe\xff\xff\xff", 4);
	dirhdr_io(d, h, 1);
	fs = mount_through(&f, 0, &be);
	ck_assert_int_eq(osdfs_lookup(fs, d, "entry-0002", &st), 0);
	ck_assert_uint_le(f.biggest, 64 * 4096); /* a run of blocks at most */
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	osdfs_backend_free(be);
}
END_TEST

/* Is there a write to d's object before (op, oid) pairs a then f on it? */
static int voided_first(const struct fault *f, uint64_t d)
{
	int set = 0, flushed = 0;

	for (int i = 0; i < f->nops; i++) {
		if (f->oid[i] != DIR_OID(d))
			continue;
		if (f->op[i] == 'w')
			return flushed;
		if (f->op[i] == 'a')
			set = 1;
		if (f->op[i] == 'f' && set)
			flushed = 1;
	}
	return 0;
}

/* The first change voids the stamp, flushed, before it writes; a flush
 * that fails stops the change. The unmount stores a new snapshot, which
 * has the change. */
START_TEST(test_snapshot_voided_first)
{
	struct fault f = fault_over_fixture();
	uint64_t d = make_big_dir();
	struct osdfs_stat st;
	osdfs_backend *be;
	osdfs *fs = mount_through(&f, 0, &be);
	uint8_t h[24], sh[32];

	ck_assert_int_eq(osdfs_lookup(fs, d, "entry-0002", &st), 0);
	f.fail_flush = 1;
	ck_assert_int_eq(osdfs_unlink(fs, d, "entry-0002"), -EIO);
	f.fail_flush = 0;
	f.nops = 0;
	ck_assert_int_eq(osdfs_mknod(fs, d, "entry-0003", S_IFREG | 0600, 0, NULL, NULL), 0);
	ck_assert(voided_first(&f, d));
	dirhdr_io(d, h, 0);
	ck_assert_uint_eq(get_le(h + 16, 8), 0);
	ck_assert_int_eq(osdfs_unlink(fs, d, "entry-0004"), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	osdfs_backend_free(be);
	snapshot_at(d, sh);
	fs = mount_through(&f, 0, &be);
	ck_assert_int_eq(osdfs_lookup(fs, d, "entry-0002", &st), 0);
	ck_assert_int_eq(osdfs_lookup(fs, d, "entry-0003", &st), 0);
	ck_assert_int_eq(osdfs_lookup(fs, d, "entry-0004", &st), -ENOENT);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	osdfs_backend_free(be);
}
END_TEST

/* Ways a snapshot stops vouching for its directory. */
enum spoil { SPOIL_SUMMARY, SPOIL_STAMP, SPOIL_FEATURE, SPOIL_NBLOCKS, SPOIL_CUT, SPOIL_N };

static void spoil(uint64_t d, uint32_t nblocks, enum spoil how)
{
	void *impl;
	const struct osdfs_backend_ops *ops = raw_ops(&impl);
	uint64_t at = (uint64_t)nblocks * 4096;
	uint8_t b[160];
	struct iovec iov = { b, 1 };

	switch (how) {
	case SPOIL_SUMMARY: /* a bit rots: the CRC no longer matches */
	case SPOIL_NBLOCKS:
		at += how == SPOIL_SUMMARY ? 32 + 5 : 8;
		ck_assert_int_eq(ops->read(impl, DIR_OID(d), at, &iov, 1), 1);
		b[0] ^= how == SPOIL_SUMMARY ? 0x40 : 0x01;
		ck_assert_int_eq(ops->write(impl, DIR_OID(d), at, &iov, 1, NULL, 0), 1);
		break;
	case SPOIL_STAMP:
		dirhdr_io(d, b, 0);
		b[17] ^= 0x01;
		dirhdr_io(d, b, 1);
		break;
	case SPOIL_FEATURE: /* as if written before the feature existed */
		attr_io(0x10000, 0x10000, 1, b, 160, 0);
		b[24] &= (uint8_t)~0x2;
		attr_io(0x10000, 0x10000, 1, b, 160, 1);
		break;
	case SPOIL_CUT:
		ck_assert_int_eq(ops->truncate(impl, DIR_OID(d), at + 100), 0);
		break;
	default:
		break;
	}
}

/* A spoiled snapshot is ignored, never trusted: the blocks are read in
 * runs, every lookup is right, and the unmount stores a good one again. */
START_TEST(test_snapshot_spoiled_ignored)
{
	uint64_t d = make_big_dir();
	uint8_t sh[32];

	for (int how = 0; how < SPOIL_N; how++) {
		struct fault f = fault_over_fixture();
		uint32_t nblocks = snapshot_at(d, sh);

		spoil(d, nblocks, (enum spoil)how);
		lookups_all(&f, d, 0);
		ck_assert_msg(f.biggest > 32 + (size_t)nblocks * 128, "spoil %d: not read in runs",
			      how);
		snapshot_at(d, sh);
	}
}
END_TEST

/* CRC32C (Castagnoli, reflected 0x82F63B78), bit by bit: the snapshot's. */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
	}
	return ~c;
}

/* Empties block 0's summary in d's snapshot and seals it with a right
 * CRC: a snapshot that passes every check but hides names. */
static void hide_names(uint64_t d, uint32_t nblocks)
{
	void *impl;
	const struct osdfs_backend_ops *ops = raw_ops(&impl);
	size_t len = 32 + (size_t)nblocks * 128;
	uint8_t *snap = malloc(len);
	struct iovec iov = { snap, len };
	uint32_t c;

	ck_assert_ptr_nonnull(snap);
	ck_assert_int_eq(ops->read(impl, DIR_OID(d), (uint64_t)nblocks * 4096, &iov, 1), len);
	memset(snap + 32, 0, 128);
	memset(snap + 24, 0, 4);
	c = crc32c(snap, len);
	for (int i = 0; i < 4; i++)
		snap[24 + i] = (uint8_t)(c >> 8 * i);
	ck_assert_int_eq(ops->write(impl, DIR_OID(d), (uint64_t)nblocks * 4096, &iov, 1, NULL, 0),
			 len);
	free(snap);
}

/* fsck checks a snapshot against the blocks: one that fails, or hides a
 * name, is a finding; the repair voids its stamp. */
START_TEST(test_snapshot_fsck)
{
	struct osdfs_fsck_options o = OSDFS_FSCK_OPTIONS_INIT;
	struct osdfs_fsck_report r;
	uint64_t d = make_big_dir();
	uint8_t sh[32], h[24];
	uint32_t nblocks = snapshot_at(d, sh);

	for (int how = 0; how < 2; how++) {
		if (how == 0)
			hide_names(d, nblocks);
		else
			spoil(d, nblocks, SPOIL_SUMMARY);
		o.repair = 0;
		ck_assert_int_eq(osdfs_fsck(fx.inst.be, &o, &r), -EUCLEAN);
		ck_assert_uint_eq(r.total, 1);
		ck_assert_uint_eq(r.found[OSDFS_FSCK_CORRUPT_DIR], 1);
		o.repair = 1;
		ck_assert_int_eq(osdfs_fsck(fx.inst.be, &o, &r), 0);
		ck_assert_uint_eq(r.repaired, 1);
		dirhdr_io(d, h, 0);
		ck_assert_uint_eq(get_le(h + 16, 8), 0);
		ck_assert_int_eq(osdfs_fsck(fx.inst.be, NULL, NULL), 0);
		/* a mount reads the blocks, and leaves a good snapshot again */
		struct fault f = fault_over_fixture();

		lookups_all(&f, d, 0);
		nblocks = snapshot_at(d, sh);
		ck_assert_int_eq(osdfs_fsck(fx.inst.be, NULL, NULL), 0);
	}
}
END_TEST

/* Names "entry-%04d" below 6,000 (make_big_dir() leaves the even ones),
 * and "more-%04d" below 2,000: what d holds, as changes go. */
#define CYC_NAMES 8000
static void cyc_name(char *buf, size_t size, int i)
{
	if (i < 6000)
		snprintf(buf, size, "entry-%04d", i);
	else
		snprintf(buf, size, "more-%04d", i - 6000);
}

/* Every name of the universe looked up in d: found exactly when held. */
static void cyc_check(osdfs *fs, uint64_t d, const uint8_t *held)
{
	struct osdfs_stat st;
	char name[32];

	for (int i = 0; i < CYC_NAMES; i++) {
		cyc_name(name, sizeof(name), i);
		ck_assert_msg(osdfs_lookup(fs, d, name, &st) == (held[i] ? 0 : -ENOENT),
			      "%s: %s", name, held[i] ? "lost" : "still found");
	}
}

/*
 * Snapshots through changes: four mounts each create, unlink and rename
 * names at random (splitting blocks), look everything up, and unmount,
 * which stores a snapshot that the next mount loads. Every lookup on
 * every mount must match what the directory holds.
 */
START_TEST(test_snapshot_through_changes)
{
	uint64_t d = make_big_dir();
	uint8_t held[CYC_NAMES] = { 0 }, sh[32];
	uint64_t seed = 0x9E3779B97F4A7C15ULL;
	char a[32], b[32];

	for (int i = 0; i < 6000; i += 2)
		held[i] = 1;
	for (int cycle = 0; cycle < 4; cycle++) {
		struct fault f = fault_over_fixture();
		osdfs_backend *be;
		osdfs *fs;

		snapshot_at(d, sh);
		fs = mount_through(&f, 0, &be);
		cyc_check(fs, d, held);
		ck_assert_int_eq(f.over_block, 1); /* the snapshot, no run */
		for (int k = 0; k < 600; k++) {
			int i, j;

			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			i = (int)(seed % CYC_NAMES);
			j = (int)((seed >> 20) % CYC_NAMES);
			cyc_name(a, sizeof(a), i);
			cyc_name(b, sizeof(b), j);
			if (!held[i]) {
				ck_assert_int_eq(osdfs_mknod(fs, d, a, S_IFREG | 0600, 0, NULL, NULL),
						 0);
				held[i] = 1;
			} else if (k % 3 == 0 && !held[j]) {
				ck_assert_int_eq(osdfs_rename(fs, d, a, d, b, 0), 0);
				held[i] = 0;
				held[j] = 1;
			} else {
				ck_assert_int_eq(osdfs_unlink(fs, d, a), 0);
				held[i] = 0;
			}
		}
		cyc_check(fs, d, held);
		ck_assert_int_eq(osdfs_unmount(fs), 0);
		osdfs_backend_free(be);
	}
	ck_assert_int_eq(osdfs_fsck(fx.inst.be, NULL, NULL), 0);
}
END_TEST

static Suite *fault_suite(void)
{
	Suite *s = suite_create("fs_faults");
	TCase *tc = tcase_create("faults");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 110);
	tcase_add_test(tc, test_clean_run_tree);
	tcase_add_test(tc, test_every_single_fault);
	tcase_add_test(tc, test_device_dies);
	tcase_add_test(tc, test_run_read_fails);
	tcase_add_test(tc, test_run_fits_summaries);
	tcase_add_test(tc, test_changes_read_alone);
	tcase_add_test(tc, test_snapshot_answers_lookups);
	tcase_add_test(tc, test_snapshot_chunks);
	tcase_add_test(tc, test_snapshot_huge_count);
	tcase_add_test(tc, test_snapshot_voided_first);
	tcase_add_test(tc, test_snapshot_spoiled_ignored);
	tcase_add_test(tc, test_snapshot_fsck);
	tcase_add_test(tc, test_snapshot_through_changes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	fx_require_backend();
	sr = srunner_create(fault_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
