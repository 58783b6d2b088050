/*
 * The round trip required of osdfs: a generated tree of more than 5,000
 * files (nested directories, short and long symlinks, hard-link groups
 * within and across directories, sparse files, a multi-MiB file, a fifo,
 * odd modes including set-id, sticky and read-only directories, mtimes with
 * nanoseconds) is copied in with `osdfs cp -r` (plus a `put` in a second
 * run, so the filesystem is remounted), copied out with `osdfs cp -r`, and
 * compared byte for byte and attribute for attribute; then fsck is clean.
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
#include "tool_runner.h"

/* snprintf into a path buffer, asserting nothing was cut */
#define PATHF(buf, ...) \
	ck_assert_int_lt(snprintf(buf, sizeof(buf), __VA_ARGS__), (int)sizeof(buf))

#define NDIRS 50
#define FILES_PER_DIR 101
#define BIG_SIZE (6u << 20)

static char *dir;
static unsigned stamp;     /* mtime sequence */
static uint32_t rng = 12345;

static uint32_t next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8;
}

static void fill(char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)(next_rand() & 0xff);
}

static void write_at(const char *path, const char *buf, size_t len, off_t off, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, buf, len, off), (ssize_t)len);
	if (size)
		ck_assert_int_eq(ftruncate(fd, size), 0);
	close(fd);
}

static void set_time(const char *path)
{
	struct timespec ts[2];

	stamp++;
	ts[0].tv_sec = 1500000000 + stamp;
	ts[0].tv_nsec = (long)((stamp * 104729u) % 1000000000u);
	ts[1].tv_sec = 1600000000 + (time_t)stamp * 37;
	ts[1].tv_nsec = (long)((stamp * 7919u + 1u) % 1000000000u);
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static const mode_t file_modes[] = { 0644, 0600, 0755, 0444, 04755, 02750, 0640, 0700,
				     06711, 01644, 0404, 0750 };

static void make_leaf(const char *d, int k, const char *first_file)
{
	char p[512], buf[4096], target[4001];

	for (int i = 0; i < FILES_PER_DIR; i++) {
		size_t len = next_rand() % 3000;

		PATHF(p, "%s/f%03d", d, i);
		fill(buf, len);
		write_at(p, buf, len, 0, 0);
		ck_assert_int_eq(chmod(p, file_modes[(i + k) % 12]), 0);
		set_time(p);
	}
	/* a short (inline) and a long (data) symlink */
	PATHF(p, "%s/short", d);
	ck_assert_int_eq(symlink("f001", p), 0);
	set_time(p);
	memset(target, 'x', sizeof(target) - 1);
	target[sizeof(target) - 1] = '\0';
	for (size_t i = 50; i < sizeof(target) - 1; i += 51)
		target[i] = '/';
	target[k % 2 ? 300 : 4000] = '\0';
	PATHF(p, "%s/long", d);
	ck_assert_int_eq(symlink(target, p), 0);
	set_time(p);
	/* hard links: one inside the directory, one to another directory's file */
	PATHF(p, "%s/f002", d);
	PATHF(buf, "%s/hard", d);
	ck_assert_int_eq(link(p, buf), 0);
	if (first_file) {
		PATHF(buf, "%s/cross", d);
		ck_assert_int_eq(link(first_file, buf), 0);
	}
}

static void make_tree(const char *root)
{
	char d[512], p[512], first[512], *big;

	ck_assert_int_eq(mkdir(root, 0755), 0);
	for (int t = 0; t < 5; t++) {
		PATHF(d, "%s/t%d", root, t);
		ck_assert_int_eq(mkdir(d, t == 3 ? 02755 : 0755), 0);
		for (int s = 0; s < NDIRS / 5; s++) {
			int k = t * (NDIRS / 5) + s;

			PATHF(d, "%s/t%d/s%d", root, t, s);
			if (s == 2) { /* deeper nesting */
				PATHF(d, "%s/t%d/s%d", root, t, s);
				ck_assert_int_eq(mkdir(d, 0750), 0);
				PATHF(d, "%s/t%d/s%d/deep", root, t, s);
				ck_assert_int_eq(mkdir(d, 0700), 0);
				PATHF(d, "%s/t%d/s%d/deep/deeper", root, t, s);
			}
			ck_assert_int_eq(mkdir(d, s == 4 ? 01777 : 0755), 0);
			make_leaf(d, k, k ? first : NULL);
			if (k == 0)
				PATHF(first, "%s/f000", d);
		}
	}
	/* sparse files: data in the middle and at the end, or only a hole */
	PATHF(d, "%s/sparse", root);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	for (int i = 0; i < 6; i++) {
		char buf[10000];

		fill(buf, sizeof(buf));
		PATHF(p, "%s/s%d", d, i);
		if (i == 0) {
			write_at(p, buf, 0, 0, 3 << 20); /* all hole */
		} else {
			write_at(p, buf, sizeof(buf), (off_t)i << 20, 0);
			write_at(p, buf, 100, (off_t)(4 << 20), i % 2 ? (off_t)(5 << 20) : 0);
		}
		set_time(p);
	}
	/* a large file, and a fifo */
	big = malloc(BIG_SIZE);
	ck_assert_ptr_nonnull(big);
	fill(big, BIG_SIZE);
	PATHF(p, "%s/big", d);
	write_at(p, big, BIG_SIZE, 0, 0);
	free(big);
	set_time(p);
	PATHF(p, "%s/fifo", d);
	ck_assert_int_eq(mkfifo(p, 0620), 0);
	set_time(p);
	/* a read-only directory with contents */
	PATHF(d, "%s/ro", root);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	PATHF(p, "%s/ro/inside", root);
	write_at(p, "inside\n", 7, 0, 0);
	set_time(p);
	ck_assert_int_eq(chmod(d, 0555), 0);
}

/* Directory times last, deepest first (adding entries changes them). */
static void time_dirs(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		char p[1024];

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		PATHF(p, "%s/%s", path, de->d_name);
		time_dirs(p);
	}
	closedir(d);
	set_time(path);
}

/* Hard-link groups: original inode -> copy's inode must be one-to-one. */
struct ino_pair {
	ino_t a, b;
};
static struct ino_pair pairs[20000];
static size_t npairs;
static unsigned long files_compared;

static void check_pair(ino_t a, ino_t b, const char *path)
{
	for (size_t i = 0; i < npairs; i++) {
		if (pairs[i].a == a || pairs[i].b == b) {
			ck_assert_msg(pairs[i].a == a && pairs[i].b == b, "%s: hard links differ", path);
			return;
		}
	}
	ck_assert_uint_lt(npairs, sizeof(pairs) / sizeof(pairs[0]));
	pairs[npairs++] = (struct ino_pair){ a, b };
}

static void compare_files(const char *a, const char *b, off_t size)
{
	static char ba[1 << 16], bb[1 << 16];
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);

	ck_assert_int_ge(fa, 0);
	ck_assert_int_ge(fb, 0);
	for (off_t off = 0; off < size;) {
		ssize_t na = pread(fa, ba, sizeof(ba), off), nb = pread(fb, bb, sizeof(bb), off);

		ck_assert_int_gt(na, 0);
		ck_assert_int_eq(na, nb);
		ck_assert_msg(memcmp(ba, bb, (size_t)na) == 0, "%s: contents differ at %lld", b,
			      (long long)off);
		off += na;
	}
	close(fa);
	close(fb);
}

static size_t count_entries(const char *path)
{
	DIR *d = opendir(path);
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void compare(const char *a, const char *b)
{
	struct stat sa, sb;

	ck_assert_int_eq(lstat(a, &sa), 0);
	ck_assert_msg(lstat(b, &sb) == 0, "%s missing", b);
	ck_assert_msg(sa.st_mode == sb.st_mode, "%s: mode %o, want %o", b, sb.st_mode, sa.st_mode);
	ck_assert_uint_eq(sa.st_uid, sb.st_uid);
	ck_assert_uint_eq(sa.st_gid, sb.st_gid);
	ck_assert_msg(sa.st_mtim.tv_sec == sb.st_mtim.tv_sec &&
		      sa.st_mtim.tv_nsec == sb.st_mtim.tv_nsec, "%s: mtime %lld.%09ld, want %lld.%09ld",
		      b, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec,
		      (long long)sa.st_mtim.tv_sec, sa.st_mtim.tv_nsec);
	if (!S_ISDIR(sa.st_mode)) {
		ck_assert_msg(sa.st_size == sb.st_size, "%s: size", b);
		ck_assert_uint_eq(sa.st_nlink, sb.st_nlink);
		check_pair(sa.st_ino, sb.st_ino, b);
	}
	if (S_ISREG(sa.st_mode)) {
		compare_files(a, b, sa.st_size);
		if (strstr(a, "/sparse/s"))
			ck_assert_msg(sb.st_blocks * 512 < sb.st_size / 2, "%s: holes filled", b);
		files_compared++;
	} else if (S_ISLNK(sa.st_mode)) {
		char ta[4100], tb[4100];
		ssize_t na = readlink(a, ta, sizeof(ta)), nb = readlink(b, tb, sizeof(tb));

		ck_assert_int_gt(na, 0);
		ck_assert_int_eq(na, nb);
		ck_assert(memcmp(ta, tb, (size_t)na) == 0);
	} else if (S_ISDIR(sa.st_mode)) {
		DIR *d = opendir(a);
		struct dirent *de;

		ck_assert_ptr_nonnull(d);
		ck_assert_uint_eq(count_entries(a), count_entries(b));
		while ((de = readdir(d)) != NULL) {
			char pa[1024], pb[1024];

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			PATHF(pa, "%s/%s", a, de->d_name);
			PATHF(pb, "%s/%s", b, de->d_name);
			compare(pa, pb);
		}
		closedir(d);
	}
}

START_TEST(round_trip_5000_files)
{
	char store[512], src[512], out[512], extra[512];
	struct run_result r;

	dir = run_mkdtemp("roundtrip");
	PATHF(store, "%s/store", dir);
	PATHF(src, "%s/src", dir);
	PATHF(out, "%s/out", dir);
	PATHF(extra, "%s/extra.bin", dir);
	make_tree(src);
	time_dirs(src);
	{
		char buf[70000];

		fill(buf, sizeof(buf));
		write_at(extra, buf, sizeof(buf), 0, 0);
		set_time(extra);
	}

	ck_assert_int_eq(run_tool(&r, store, "mkfs", NULL), 0);
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, store, "cp", "-r", src, ":/tree", NULL), 0);
	ck_assert_msg(r.err[0] == '\0', "cp in: %s", r.err);
	run_free(&r);
	/* a second run: remount, add a file */
	ck_assert_int_eq(run_tool(&r, store, "put", extra, ":/extra.bin", NULL), 0);
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, store, "cp", "-r", ":/tree", out, NULL), 0);
	ck_assert_msg(r.err[0] == '\0', "cp out: %s", r.err);
	run_free(&r);
	snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s", "-extra");
	ck_assert_int_eq(run_tool(&r, store, "get", ":/extra.bin", out, NULL), 0);
	run_free(&r);
	compare(extra, out);
	out[strlen(out) - 6] = '\0';

	compare(src, out);
	ck_assert_uint_ge(files_compared, 5000);

	ck_assert_int_eq(run_tool(&r, store, "fsck", NULL), 0);
	ck_assert_ptr_nonnull(strstr(r.out, "clean: "));
	run_free(&r);
	run_rmtree(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("osdfs_roundtrip");
	TCase *tc = tcase_create("roundtrip");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, round_trip_5000_files);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
