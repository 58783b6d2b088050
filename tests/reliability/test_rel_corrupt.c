/*
 * test_rel_corrupt: corrupted filesystems never crash the readers or fsck.
 * For each seed a filesystem with a seeded tree (a directory big enough to
 * split, files, fast and slow symlinks, hard links, xattrs) is damaged
 * through the backend API: random bytes, bit flips, truncation or deletion
 * of directory data, directory headers and table chunks, inode attributes,
 * xattr attributes, symlink data and the superblock's attributes (byte
 * offsets from docs/osdfs-format.md). Then:
 *   - a read-only mount (forced) walks everything like "osdfs ls -R" plus
 *     reads: errors are fine, crashes are not (ASan in the sanitizer run);
 *   - fsck, fsck --repair twice, fsck: each returns 0 or -EUCLEAN, and the
 *     last finds nothing, unless the superblock or the root directory is
 *     damaged (not repairable: fsck then repairs nothing);
 *   - after a clean fsck the filesystem mounts read-write and walks without
 *     any error.
 * Every 8th seed runs on an embedded OSD target directory and also runs the
 * osdfs tool (ls -R -l, fsck, fsck --repair, fsck) on it: no signal, and an
 * exit status from the documented set.
 *
 * OSD_REL_SCALE (default 1) scales the number of seeds, OSD_REL_SEED the
 * first seed.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <osdfs/backends.h>
#include <osdfs/fsck.h>
#include <osdfs/osdfs.h>

#include "rel_env.h"
#include "toolcommon.h"

#define OID(ino) (0x10000ULL + (ino))
#define SUPER_OID 0x10000ULL
#define PAGE_SUPER 0x10000u
#define PAGE_INODE 0x10001u
#define PAGE_DIR 0x10002u
#define PAGE_XATTR 0x10003u
#define PARTITION 0x10000ULL
#define BASE_SEEDS 320

struct totals {
	unsigned inputs, damages, cli_runs, mounts_refused, walk_errors, crashes;
	unsigned unrepairable_sb;
	uint64_t found[OSDFS_FSCK_KIND_COUNT];
};

static uint64_t rng;

static uint64_t rnd(uint64_t n)
{
	uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return n ? (z ^ (z >> 31)) % n : 0;
}

/* ---- the seeded tree ---- */

static void put_file(osdfs *fs, uint64_t dir, const char *name, size_t len, uint64_t *ino)
{
	char buf[9000];
	struct osdfs_stat st;
	osdfs_file *fh;

	for (size_t i = 0; i < len && i < sizeof(buf); i++)
		buf[i] = (char)rnd(256);
	ck_assert_int_eq(osdfs_create(fs, dir, name, 0644, O_WRONLY, NULL, &st, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, buf, len, 0), (ssize_t)len);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	if (ino)
		*ino = st.ino;
}

static void make_tree(osdfs_backend *be)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	struct osdfs_stat d1, d2, d3;
	char name[64], target[400];
	uint64_t f;
	osdfs *fs;

	ck_assert_int_eq(osdfs_mkfs(be, NULL), 0);
	mo.flags = OSDFS_MOUNT_KEEP_BACKEND;
	ck_assert_int_eq(osdfs_mount(&fs, be, &mo), 0);
	ck_assert_int_eq(osdfs_mkdir(fs, OSDFS_ROOT_INO, "big", 0755, NULL, &d1), 0);
	ck_assert_int_eq(osdfs_mkdir(fs, OSDFS_ROOT_INO, "small", 0755, NULL, &d2), 0);
	ck_assert_int_eq(osdfs_mkdir(fs, d2.ino, "sub", 0700, NULL, &d3), 0);
	/* enough long names to split "big" into several blocks */
	for (unsigned i = 0, n = 60 + (unsigned)rnd(120); i < n; i++) {
		snprintf(name, sizeof(name), "entry-with-a-longer-name-%04u-%llu", i,
			 (unsigned long long)rnd(1000000));
		put_file(fs, d1.ino, name, rnd(64), NULL);
	}
	put_file(fs, d2.ino, "data", 1 + rnd(9000), &f);
	ck_assert_int_eq(osdfs_link(fs, f, d3.ino, "hardlink", NULL), 0);
	ck_assert_int_eq(osdfs_setxattr(fs, f, "user.a", "value-a", 7, 0), 0);
	ck_assert_int_eq(osdfs_setxattr(fs, d2.ino, "user.b", "bee", 3, 0), 0);
	ck_assert_int_eq(osdfs_symlink(fs, d2.ino, "fast", "data", NULL, NULL), 0);
	memset(target, 'x', sizeof(target) - 1);
	target[sizeof(target) - 1] = '\0';
	ck_assert_int_eq(osdfs_symlink(fs, d3.ino, "slow", target, NULL, NULL), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
}

/* ---- damage ---- */

/* Every object id of the filesystem. */
static size_t list_oids(const struct osdfs_backend_ops *ops, void *impl, uint64_t *ids,
			size_t max)
{
	size_t n = 0, got;
	uint64_t start = 0, next;

	do {
		ck_assert_int_eq(ops->list(impl, start, ids + n, max - n, &got, &next), 0);
		n += got;
		start = next;
	} while (next != 0 && n < max);
	return n;
}

/* Damages a value in place: flip bits, overwrite bytes, cut, or garbage. */
static uint32_t mangle(uint8_t *v, uint32_t len, uint32_t cap)
{
	switch (rnd(5)) {
	case 0: /* bit flips */
		for (int i = 0, n = 1 + (int)rnd(3); i < n && len; i++)
			v[rnd(len)] ^= (uint8_t)(1u << rnd(8));
		return len;
	case 1: /* random bytes at a random place */
		for (uint32_t i = len ? (uint32_t)rnd(len) : 0, n = 1 + (uint32_t)rnd(16);
		     n-- && i < len; i++)
			v[i] = (uint8_t)rnd(256);
		return len;
	case 2: /* truncated */
		return len ? (uint32_t)rnd(len) : 0;
	case 3: /* all garbage, random length */
		len = 1 + (uint32_t)rnd(cap);
		for (uint32_t i = 0; i < len; i++)
			v[i] = (uint8_t)rnd(256);
		return len;
	default: /* one 8-byte little-endian field set to an extreme */
		if (len >= 8) {
			uint32_t off = (uint32_t)rnd(len / 8) * 8;

			memset(v + off, rnd(2) ? 0xFF : 0x00, 8);
			v[off] ^= (uint8_t)rnd(256);
		}
		return len;
	}
}

static void damage_attr(const struct osdfs_backend_ops *ops, void *impl, uint64_t oid,
			uint32_t page, uint32_t number)
{
	static uint8_t v[0xFFFE];
	struct osdfs_attr a = { page, number, v, sizeof(v) };

	if (ops->get_attrs(impl, oid, &a, 1) < 0)
		return;
	if (a.len > sizeof(v))
		a.len = sizeof(v);
	a.len = mangle(v, a.len, 300);
	ops->set_attrs(impl, oid, &a, 1); /* length 0 deletes it */
}

static void damage_data(const struct osdfs_backend_ops *ops, void *impl, uint64_t oid)
{
	uint8_t buf[4096];
	uint64_t size, off;
	struct iovec iov = { buf, sizeof(buf) };
	ssize_t n;

	if (ops->size(impl, oid, &size) < 0 || size == 0)
		return;
	if (rnd(6) == 0) {
		ops->truncate(impl, oid, rnd(size));
		return;
	}
	off = rnd(size) & ~(uint64_t)4095;
	n = ops->read(impl, oid, off, &iov, 1);
	if (n <= 0)
		return;
	iov.iov_len = mangle(buf, (uint32_t)n, (uint32_t)n);
	if (iov.iov_len)
		ops->write(impl, oid, off, &iov, 1, NULL, 0);
}

/* Table chunk attributes of a directory at its current depth. */
static uint32_t table_attr(const struct osdfs_backend_ops *ops, void *impl, uint64_t oid)
{
	uint8_t h[64];
	struct osdfs_attr a = { PAGE_DIR, 1, h, sizeof(h) };
	uint32_t depth = 0;

	if (ops->get_attrs(impl, oid, &a, 1) == 0 && a.len >= 2 && h[1] <= 20)
		depth = h[1];
	return 2 + (depth << 12) + (depth > 10 ? (uint32_t)rnd(1u << (depth - 10)) : 0);
}

static void damage_once(const struct osdfs_backend_ops *ops, void *impl)
{
	uint64_t ids[1024];
	size_t n = list_oids(ops, impl, ids, 1024);
	uint64_t oid = n ? ids[rnd(n)] : SUPER_OID;
	unsigned what = (unsigned)rnd(100);

	if (what < 6) {
		/* superblock object: the superblock itself rarely, else counters,
		 * mount record or orphan list (garbage where there was none) */
		damage_attr(ops, impl, SUPER_OID, PAGE_SUPER, rnd(4) ? 2 + (uint32_t)rnd(3) : 1);
	} else if (oid == SUPER_OID) {
		damage_attr(ops, impl, SUPER_OID, PAGE_SUPER, 3);
	} else if (what < 35) {
		damage_attr(ops, impl, oid, PAGE_INODE, 1);
	} else if (what < 55) {
		damage_data(ops, impl, oid); /* directory blocks, symlink or file data */
	} else if (what < 70) {
		damage_attr(ops, impl, oid, PAGE_DIR, 1);
	} else if (what < 85) {
		damage_attr(ops, impl, oid, PAGE_DIR, table_attr(ops, impl, oid));
	} else {
		damage_attr(ops, impl, oid, PAGE_XATTR, 1);
	}
}

/* ---- readers ---- */

struct walk {
	osdfs *fs;
	uint64_t dirs[4096];
	size_t n;
	unsigned errors;
};

static int walk_cb(const struct osdfs_dirent *d, void *payload)
{
	struct walk *w = payload;
	struct osdfs_stat st;
	char buf[4200];

	if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0)
		return 0;
	if (osdfs_getattr(w->fs, d->ino, &st) < 0) {
		if (getenv("OSD_REL_VERBOSE"))
			fprintf(stderr, "  walk: getattr %s: %s\n", d->name, osdfs_error(w->fs));
		w->errors++;
		return 0;
	}
	if (S_ISDIR(st.mode) && w->n < sizeof(w->dirs) / sizeof(w->dirs[0]))
		w->dirs[w->n++] = d->ino;
	if (S_ISLNK(st.mode) && osdfs_readlink(w->fs, d->ino, buf, sizeof(buf)) < 0) {
		if (getenv("OSD_REL_VERBOSE"))
			fprintf(stderr, "  walk: readlink %s: %s\n", d->name, osdfs_error(w->fs));
		w->errors++;
	}
	return 0;
}

/* "ls -R -l" plus reading every file and every xattr; returns the errors seen. */
static unsigned walk_all(osdfs *fs)
{
	static struct walk w;
	char buf[8192], list[1024];

	w.fs = fs;
	w.n = 0;
	w.errors = 0;
	w.dirs[w.n++] = OSDFS_ROOT_INO;
	for (size_t i = 0; i < w.n; i++) {
		uint64_t ino = w.dirs[i];
		ssize_t len;

		if (osdfs_readdir(fs, ino, 0, walk_cb, &w) < 0) {
			if (getenv("OSD_REL_VERBOSE"))
				fprintf(stderr, "  walk: readdir %llu: %s\n",
					(unsigned long long)ino, osdfs_error(fs));
			w.errors++;
		}
		len = osdfs_listxattr(fs, ino, list, sizeof(list));
		for (ssize_t p = 0; len > 0 && p < len; p += (ssize_t)strlen(list + p) + 1)
			if (osdfs_getxattr(fs, ino, list + p, buf, sizeof(buf)) < 0)
				w.errors++;
		if (len < 0 && len != -ENOTSUP && getenv("OSD_REL_VERBOSE"))
			fprintf(stderr, "  walk: listxattr %llu: %s\n", (unsigned long long)ino,
				osdfs_error(fs));
		if (len < 0)
			w.errors++;
	}
	/* read every inode that exists, directly by number */
	for (uint64_t ino = 2; ino < 400; ino++) {
		osdfs_file *fh;

		if (osdfs_open(fs, ino, O_RDONLY, &fh) < 0)
			continue;
		for (uint64_t off = 0; off < 65536; off += sizeof(buf))
			if (osdfs_read(fs, fh, buf, sizeof(buf), off) <= 0)
				break;
		osdfs_release(fs, fh);
	}
	return w.errors;
}

static void on_finding(enum osdfs_fsck_kind kind, const char *msg, void *payload)
{
	fprintf(stderr, "  %s: %s: %s\n", (const char *)payload, osdfs_fsck_kind_name(kind), msg);
}

static int fsck_pass(osdfs_backend *be, int repair, struct osdfs_fsck_report *rep)
{
	struct osdfs_fsck_options fo = OSDFS_FSCK_OPTIONS_INIT;
	int rc;

	fo.repair = repair;
	if (getenv("OSD_REL_VERBOSE")) {
		fo.cb = on_finding;
		fo.payload = repair ? "repair" : "check";
	}
	rc = osdfs_fsck(be, &fo, rep);
	ck_assert_msg(rc == 0 || rc == -EUCLEAN, "fsck%s: %s", repair ? " --repair" : "",
		      strerror(-rc));
	return rc;
}

static void check_one(osdfs_backend *be, struct totals *t, uint64_t seed)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	struct osdfs_fsck_report rep;
	osdfs *fs;
	int rc;

	mo.flags = OSDFS_MOUNT_KEEP_BACKEND | OSDFS_MOUNT_RDONLY | OSDFS_MOUNT_FORCE;
	if (osdfs_mount(&fs, be, &mo) == 0) {
		t->walk_errors += walk_all(fs);
		osdfs_unmount(fs);
	} else {
		t->mounts_refused++;
	}
	fsck_pass(be, 0, &rep);
	for (int k = 0; k < OSDFS_FSCK_KIND_COUNT; k++)
		t->found[k] += rep.found[k];
	fsck_pass(be, 1, &rep);
	fsck_pass(be, 1, &rep);
	rc = fsck_pass(be, 0, &rep);
	if (rc == 0) {
		ck_assert_uint_eq(rep.total, 0);
		mo.flags = OSDFS_MOUNT_KEEP_BACKEND;
		ck_assert_int_eq(osdfs_mount(&fs, be, &mo), 0);
		ck_assert_msg(walk_all(fs) == 0, "seed %llu: errors walking after a clean fsck",
			      (unsigned long long)seed);
		ck_assert_int_eq(osdfs_unmount(fs), 0);
	} else {
		/* superblock or root damage stops fsck before any repair */
		ck_assert_msg(rep.found[OSDFS_FSCK_SUPERBLOCK] > 0,
			      "seed %llu: fsck --repair twice left %llu findings, and no "
			      "superblock or root damage", (unsigned long long)seed,
			      (unsigned long long)rep.total);
		t->unrepairable_sb++;
	}
}

/* ---- the osdfs tool on an embedded target ---- */

static int run_tool(const char *store, const char *a1, const char *a2, const char *a3)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execl(OSDFS_TOOL_PATH, "osdfs", "--target", store, a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "osdfs %s %s %s: killed by signal %d", a1,
		      a2 ? a2 : "", a3 ? a3 : "", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return WEXITSTATUS(status);
}

static int fsck_status_ok(int s)
{
	return s == 0 || s == 1 || s == 4;
}

static void cli_round(const char *store, struct totals *t)
{
	int s;

	s = run_tool(store, "ls", "-R", "-l");
	ck_assert_msg(s == 0 || s == 1, "osdfs ls -R -l: exit %d", s);
	s = run_tool(store, "fsck", NULL, NULL);
	ck_assert_msg(fsck_status_ok(s), "osdfs fsck: exit %d", s);
	s = run_tool(store, "fsck", "--repair", NULL);
	ck_assert_msg(fsck_status_ok(s), "osdfs fsck --repair: exit %d", s);
	s = run_tool(store, "fsck", NULL, NULL);
	ck_assert_msg(s == 0 || s == 4, "osdfs fsck after repair: exit %d", s);
	t->cli_runs += 4;
}

static int tool_built(void)
{
	return OSDFS_TOOL_PATH[0] && access(OSDFS_TOOL_PATH, X_OK) == 0;
}

/* One seed on the embedded target in @p dir; the tool runs on it too. */
static void seed_on_target(const char *dir, uint64_t seed, struct totals *t)
{
	struct tc_device_opts o = TC_DEVICE_OPTS_INIT;
	struct tc_device dev;
	osdfs_backend *be;
	char store[300], cmd[400];

	snprintf(store, sizeof(store), "%s/s%llu", dir, (unsigned long long)seed);
	o.target_dir = store;
	ck_assert_int_eq(tc_device_open(&dev, &o, 1), 0);
	ck_assert_int_eq(osdfs_backend_osd_new(&be, dev.dev, PARTITION), 0);
	make_tree(be);
	for (unsigned i = 0, n = 1 + (unsigned)rnd(4); i < n; i++, t->damages++)
		damage_once(osdfs_backend_ops_of(be), osdfs_backend_impl(be));
	if (tool_built()) {
		osdfs_backend_free(be);
		tc_device_close(&dev); /* the tool takes the store's lock */
		cli_round(store, t);
		ck_assert_int_eq(tc_device_open(&dev, &o, 0), 0);
		ck_assert_int_eq(osdfs_backend_osd_new(&be, dev.dev, PARTITION), 0);
	}
	check_one(be, t, seed);
	osdfs_backend_free(be);
	tc_device_close(&dev);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", store);
	ck_assert_int_eq(system(cmd), 0);
}

static void seed_in_memory(uint64_t seed, struct totals *t)
{
	osdfs_backend *be;

	ck_assert_int_eq(osdfs_backend_mem_new(&be, 0), 0);
	make_tree(be);
	for (unsigned i = 0, n = 1 + (unsigned)rnd(4); i < n; i++, t->damages++)
		damage_once(osdfs_backend_ops_of(be), osdfs_backend_impl(be));
	check_one(be, t, seed);
	osdfs_backend_free(be);
}

START_TEST(corrupt_seeds)
{
	const char *tmp = getenv("TMPDIR");
	unsigned seeds = (unsigned)(BASE_SEEDS * rel_scale(0) + 0.5);
	uint64_t first = rel_seed(1);
	struct totals t;
	char dir[256], cmd[300];

	memset(&t, 0, sizeof(t));
	snprintf(dir, sizeof(dir), "%s/rel_corrupt.XXXXXX", tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	if (seeds < 8)
		seeds = 8;
	for (unsigned i = 0; i < seeds; i++, t.inputs++) {
		uint64_t seed = first + i;

		rng = seed * 0x2545F4914F6CDD1DULL;
		if (i % 8 == 0)
			seed_on_target(dir, seed, &t);
		else
			seed_in_memory(seed, &t);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	printf("rel_corrupt: seeds %llu..%llu, inputs tried %u, damages injected %u, tool runs %u%s, "
	       "read-only mounts refused %u, reader errors %u, left with superblock damage %u, "
	       "findings:", (unsigned long long)first, (unsigned long long)(first + seeds - 1),
	       t.inputs, t.damages, t.cli_runs, tool_built() ? "" : " (osdfs tool not built)",
	       t.mounts_refused, t.walk_errors, t.unrepairable_sb);
	for (int k = 0; k < OSDFS_FSCK_KIND_COUNT; k++)
		if (t.found[k])
			printf(" %s=%llu", osdfs_fsck_kind_name((enum osdfs_fsck_kind)k),
			       (unsigned long long)t.found[k]);
	printf(", crashes 0\n");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rel_corrupt");
	TCase *tc = tcase_create("corrupt");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, corrupt_seeds);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
