/*
 * Directories: the hashed index at scale, readdir cookies that survive
 * concurrent changes, corrupt blocks, running out of space, and threads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <check.h>

#include "fs_fixture.h"
#include "core/format.h"
#include "lebytes.h"

#define ROOT OSDFS_ROOT_INO

static void setup(void)
{
	fx_start(0);
}

static void teardown(void)
{
	fx_stop();
}

struct seen {
	unsigned char *count; /* per index of "n%07u" names */
	size_t max;
	size_t total, dots, others;
	uint64_t last_cookie;
	size_t stop_after, emitted;
};

static int count_cb(const struct osdfs_dirent *e, void *payload)
{
	struct seen *s = payload;
	unsigned int idx;

	if (s->stop_after && s->emitted == s->stop_after)
		return 1;
	s->emitted++;
	s->total++;
	s->last_cookie = e->next;
	ck_assert_uint_eq(e->namelen, strlen(e->name));
	if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
		s->dots++;
	else if (sscanf(e->name, "n%7u", &idx) == 1 && idx < s->max && e->namelen == 8)
		s->count[idx]++;
	else
		s->others++;
	return 0;
}

static void name_of(char *buf, unsigned int i)
{
	snprintf(buf, 16, "n%07u", i);
}

/* 100,000 entries on the mem backend, 10,000 on the others (to keep the run
 * short); OSDFS_TEST_BIG_DIR caps it (the sanitizer runs make it smaller,
 * never larger). */
static unsigned int big_dir_entries(void)
{
	const char *v = getenv("OSDFS_TEST_BIG_DIR"), *be = getenv("OSDFS_TEST_BACKEND");
	unsigned int n = !be || !*be || strcmp(be, "mem") == 0 ? 100000 : 10000;

	if (v && atoi(v) > 0 && (unsigned int)atoi(v) < n)
		n = (unsigned int)atoi(v);
	return n;
}

START_TEST(test_big_directory)
{
	const unsigned int n = big_dir_entries();
	struct seen s = { calloc(n, 1), n, 0, 0, 0, 0, 0, 0 };
	struct osdfs_stat st;
	uint64_t d = fx_mkdir(ROOT, "big");
	char name[16];

	for (unsigned int i = 0; i < n; i++) {
		name_of(name, i);
		ck_assert_int_eq(osdfs_mknod(fx.fs, d, name, S_IFREG | 0644, 0, NULL, NULL), 0);
	}
	for (unsigned int i = 0; i < n; i += 97) {
		name_of(name, i);
		ck_assert_int_eq(osdfs_lookup(fx.fs, d, name, &st), 0);
		ck_assert_int_eq(osdfs_mknod(fx.fs, d, name, S_IFREG, 0, NULL, NULL), -EEXIST);
	}
	ck_assert_int_eq(osdfs_lookup(fx.fs, d, "n9999999", &st), -ENOENT);
	for (unsigned int i = 0; i < n; i += 10) {
		name_of(name, i);
		ck_assert_int_eq(osdfs_unlink(fx.fs, d, name), 0);
	}
	fx_remount();
	ck_assert_int_eq(osdfs_readdir(fx.fs, d, 0, count_cb, &s), 0);
	ck_assert_uint_eq(s.dots, 2);
	ck_assert_uint_eq(s.others, 0);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_uint_eq(s.count[i], i % 10 ? 1 : 0);
	name_of(name, n - 3);
	ck_assert_int_eq(osdfs_lookup(fx.fs, d, name, &st), 0);
	name_of(name, n - 10);
	ck_assert_int_eq(osdfs_lookup(fx.fs, d, name, &st), -ENOENT);
	ck_assert_int_eq(osdfs_getattr(fx.fs, d, &st), 0);
	ck_assert_uint_eq(st.size % 4096, 0);
	ck_assert_uint_gt(st.size, (uint64_t)n / 1000 * 4096);
	free(s.count);
}
END_TEST

/* Lists in small batches while entries come and go between the calls. */
START_TEST(test_readdir_stable)
{
	const unsigned int n = 3000;
	struct seen s = { calloc(n + 2000, 1), n + 2000, 0, 0, 0, 0, 0, 0 };
	uint64_t d = fx_mkdir(ROOT, "d"), cookie = 0;
	unsigned char *removed = calloc(n, 1);
	unsigned int added = n, round = 0;
	char name[16];

	for (unsigned int i = 0; i < n; i++) {
		name_of(name, i);
		ck_assert_int_eq(osdfs_mknod(fx.fs, d, name, S_IFREG | 0644, 0, NULL, NULL), 0);
	}
	for (;;) {
		size_t before = s.total;

		s.stop_after = 37;
		s.emitted = 0;
		ck_assert_int_eq(osdfs_readdir(fx.fs, d, cookie, count_cb, &s), 0);
		if (s.total == before)
			break;
		cookie = s.last_cookie;
		/* remove some names (seen or not), add new ones: splits happen */
		for (unsigned int k = 0; k < 5; k++) {
			unsigned int victim = (round * 7919u + k * 104729u) % n;

			if (!removed[victim]) {
				name_of(name, victim);
				ck_assert_int_eq(osdfs_unlink(fx.fs, d, name), 0);
				removed[victim] = 1;
			}
		}
		for (unsigned int k = 0; k < 20 && added < n + 2000; k++, added++) {
			name_of(name, added);
			ck_assert_int_eq(osdfs_mknod(fx.fs, d, name, S_IFREG, 0, NULL, NULL), 0);
		}
		round++;
		ck_assert_uint_lt(round, 10000);
	}
	ck_assert_uint_eq(s.dots, 2);
	for (unsigned int i = 0; i < n + 2000; i++) {
		ck_assert_uint_le(s.count[i], 1);                 /* never twice */
		if (i < n && !removed[i])
			ck_assert_uint_eq(s.count[i], 1);         /* present throughout */
	}
	free(removed);
	free(s.count);
}
END_TEST

/* A cookie resumes right after the entry it came with, even across remounts. */
START_TEST(test_readdir_cookies)
{
	struct seen a = { calloc(500, 1), 500, 0, 0, 0, 0, 0, 0 };
	struct seen b = { calloc(500, 1), 500, 0, 0, 0, 0, 0, 0 };
	uint64_t d = fx_mkdir(ROOT, "d");
	char name[16];

	for (unsigned int i = 0; i < 500; i++) {
		name_of(name, i);
		ck_assert_int_eq(osdfs_mknod(fx.fs, d, name, S_IFIFO | 0600, 0, NULL, NULL), 0);
	}
	a.stop_after = 250;
	ck_assert_int_eq(osdfs_readdir(fx.fs, d, 0, count_cb, &a), 0);
	ck_assert_uint_eq(a.total, 250);
	fx_remount();
	ck_assert_int_eq(osdfs_readdir(fx.fs, d, a.last_cookie, count_cb, &b), 0);
	ck_assert_uint_eq(a.total + b.total, 502);
	for (unsigned int i = 0; i < 500; i++)
		ck_assert_uint_eq(a.count[i] + b.count[i], 1);
	/* past the end */
	b.total = 0;
	ck_assert_int_eq(osdfs_readdir(fx.fs, d, UINT64_MAX, count_cb, &b), 0);
	ck_assert_uint_eq(b.total, 0);
	free(a.count);
	free(b.count);
}
END_TEST

static void poke(uint64_t ino, uint64_t off, const void *bytes, size_t len)
{
	const struct osdfs_backend_ops *ops = osdfs_backend_ops_of(fx.inst.be);
	struct iovec iov = { (void *)bytes, len };

	ck_assert_int_eq(ops->write(osdfs_backend_impl(fx.inst.be), OSDFS__OID_BASE + ino, off,
				    &iov, 1, NULL, 0), (ssize_t)len);
}

static int count_only(const struct osdfs_dirent *e, void *payload)
{
	(void)e;
	++*(size_t *)payload;
	return 0;
}

START_TEST(test_corrupt_block)
{
	static const uint8_t zero_len[2] = { 0, 0 }, huge_len[2] = { 0xF8, 0x7F };
	static const uint8_t odd_len[2] = { 13, 0 }, magic[4] = { 'X', 'B', 'L', 'K' };
	const uint8_t *bad[] = { zero_len, huge_len, odd_len };
	uint64_t d = fx_mkdir(ROOT, "d");
	struct osdfs_stat st;
	size_t n;

	fx_mkfile(d, "a", "");
	fx_mkfile(d, "b", "");
	for (int i = 0; i < 3; i++) {
		/* the first record's rec_len (block header 16 + offset 8) */
		poke(d, 16 + 8, bad[i], 2);
		fx_remount();
		n = 0;
		ck_assert_int_eq(osdfs_readdir(fx.fs, d, 0, count_only, &n), -EUCLEAN);
		ck_assert_ptr_nonnull(strstr(osdfs_error(fx.fs), "record length"));
		ck_assert_int_eq(osdfs_lookup(fx.fs, d, "a", &st), -EUCLEAN);
		ck_assert_int_eq(osdfs_mknod(fx.fs, d, "c", S_IFREG, 0, NULL, NULL), -EUCLEAN);
		ck_assert_int_eq(osdfs_rmdir(fx.fs, ROOT, "d"), -ENOTEMPTY);
	}
	/* a bad name length and a bad magic */
	poke(d, 16 + 8, (const uint8_t[]){ 24, 0, 200 }, 3);
	fx_remount();
	ck_assert_int_eq(osdfs_lookup(fx.fs, d, "a", &st), -EUCLEAN);
	poke(d, 0, magic, 4);
	fx_remount();
	ck_assert_int_eq(osdfs_lookup(fx.fs, d, "a", &st), -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(osdfs_error(fx.fs), "magic"));
	/* the rest of the filesystem still works */
	ck_assert_int_eq(osdfs_mkdir(fx.fs, ROOT, "ok", 0755, NULL, NULL), 0);
}
END_TEST

/* Mount again keeping only @p blocks directory blocks cached. */
static void remount_dir_cache(uint32_t blocks)
{
	struct osdfs_mount_options o = fx_mount_options();

	o.dir_cache = blocks;
	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	fx.fs = NULL;
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), 0);
}

/* Every name "n%07u" below 2n: even ones present but each sixth, odd absent. */
static void check_names(uint64_t d, unsigned int n)
{
	struct osdfs_stat st;
	char name[16];

	for (unsigned int i = 0; i < 2 * n; i++) {
		name_of(name, i);
		ck_assert_int_eq(osdfs_lookup(fx.fs, d, name, &st),
				 i % 2 || i % 6 == 0 ? -ENOENT : 0);
	}
}

/*
 * Name summaries (bcache.c): with 1 block cached (32 summaries) in a
 * directory of about 50 blocks, lookups of absent names are answered from
 * the summaries, which follow every create, unlink and split and are
 * evicted and made again: a name created after a lookup that found it
 * absent is found, an unlinked one is not. With 4 blocks cached (128
 * summaries, all of them kept) and every block then made unreadable on the
 * backend, absent names still answer -ENOENT without a read (but for the
 * filter's rare false positives, which read and report the damage), while
 * present ones not in the block cache must read theirs.
 */
START_TEST(test_negative_lookup_summaries)
{
	const unsigned int n = 6000;
	static const uint8_t magic[4] = { 'X', 'B', 'L', 'K' };
	uint64_t d = fx_mkdir(ROOT, "d");
	struct osdfs_stat st;
	unsigned int absent = 0, damaged = 0;
	char name[16];

	remount_dir_cache(1);
	for (unsigned int i = 0; i < n; i++) {
		name_of(name, 2 * i);
		ck_assert_int_eq(osdfs_lookup(fx.fs, d, name, &st), -ENOENT);
		ck_assert_int_eq(osdfs_mknod(fx.fs, d, name, S_IFREG | 0644, 0, NULL, NULL), 0);
		ck_assert_int_eq(osdfs_lookup(fx.fs, d, name, &st), 0);
	}
	for (unsigned int i = 0; i < 2 * n; i++) {
		name_of(name, i);
		ck_assert_int_eq(osdfs_lookup(fx.fs, d, name, &st), i % 2 ? -ENOENT : 0);
	}
	for (unsigned int i = 0; i < 2 * n; i += 6) {
		name_of(name, i);
		ck_assert_int_eq(osdfs_unlink(fx.fs, d, name), 0);
		ck_assert_int_eq(osdfs_lookup(fx.fs, d, name, &st), -ENOENT);
	}
	check_names(d, n);
	ck_assert_int_eq(osdfs_getattr(fx.fs, d, &st), 0);
	ck_assert_uint_gt(st.size / 4096, 32); /* more blocks than summaries */
	ck_assert_uint_lt(st.size / 4096, 128);
	remount_dir_cache(4);
	check_names(d, n);
	/* Every block unreadable: only the summaries know the names. */
	for (uint64_t off = 0; off < st.size; off += 4096)
		poke(d, off, magic, 4);
	for (unsigned int i = 1; i < 2 * n; i += 2) {
		int rc;

		name_of(name, i);
		rc = osdfs_lookup(fx.fs, d, name, &st);
		ck_assert_msg(rc == -ENOENT || rc == -EUCLEAN, "lookup %s: %d", name, rc);
		absent += rc == -ENOENT;
	}
	ck_assert_uint_ge(absent, n * 95 / 100);
	for (unsigned int i = 2; i < 2 * n; i += 6) {
		int rc;

		name_of(name, i);
		rc = osdfs_lookup(fx.fs, d, name, &st);
		ck_assert_msg(rc == 0 || rc == -EUCLEAN, "lookup %s: %d", name, rc);
		damaged += rc == -EUCLEAN;
	}
	ck_assert_uint_gt(damaged, 0);
}
END_TEST

START_TEST(test_corrupt_inode)
{
	const struct osdfs_backend_ops *ops = osdfs_backend_ops_of(fx.inst.be);
	uint64_t f = fx_mkfile(ROOT, "f", "x");
	uint8_t junk[8] = { 9, 9, 9, 9 };
	struct osdfs_attr a = { OSDFS__PAGE_INODE, OSDFS__ATTR_INODE, junk, sizeof(junk) };
	struct osdfs_stat st;

	fx_remount();
	ck_assert_int_eq(ops->set_attrs(osdfs_backend_impl(fx.inst.be), OSDFS__OID_BASE + f, &a, 1),
			 0);
	ck_assert_int_eq(osdfs_lookup(fx.fs, ROOT, "f", &st), -EUCLEAN);
	ck_assert_int_eq(osdfs_getattr(fx.fs, f, &st), -EUCLEAN);
}
END_TEST

START_TEST(test_enospc)
{
	static char data[1 << 16];
	struct osdfs_statfs sf;
	osdfs_file *fh;
	ssize_t n = 0;
	uint64_t off = 0;
	char name[16];
	int i, rc = 0;

	fx_stop();
	fx_start(1 << 20);
	memset(data, 'd', sizeof(data));
	ck_assert_int_eq(osdfs_create(fx.fs, ROOT, "fill", 0644, O_RDWR, NULL, NULL, &fh), 0);
	for (i = 0; i < 64; i++) {
		n = osdfs_write(fx.fs, fh, data, sizeof(data), off);
		if (n < 0)
			break;
		off += (uint64_t)n;
	}
	ck_assert_int_eq(n, -ENOSPC);
	ck_assert_uint_gt(off, 512 * 1024);
	{
		struct osdfs_stat st;

		ck_assert_int_eq(osdfs_getattr(fx.fs, osdfs_file_ino(fh), &st), 0);
		ck_assert_uint_eq(st.size, off); /* the failed write changed nothing */
	}
	/* metadata runs out too, with ENOSPC and no damage */
	for (i = 0; i < 100000; i++) {
		name_of(name, (unsigned int)i);
		rc = osdfs_mkdir(fx.fs, ROOT, name, 0755, NULL, NULL);
		if (rc < 0)
			break;
	}
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_int_eq(osdfs_release(fx.fs, fh), 0);
	ck_assert_int_eq(osdfs_statfs(fx.fs, &sf), 0);
	ck_assert_uint_lt(sf.bfree, 4);
	/* recovery after deletion */
	ck_assert_int_eq(osdfs_unlink(fx.fs, ROOT, "fill"), 0);
	ck_assert_int_eq(osdfs_mkdir(fx.fs, ROOT, name, 0755, NULL, NULL), 0);
	ck_assert_int_eq(osdfs_create(fx.fs, ROOT, "again", 0644, O_RDWR, NULL, NULL, &fh), 0);
	ck_assert_int_eq(osdfs_write(fx.fs, fh, data, sizeof(data), 0), (ssize_t)sizeof(data));
	ck_assert_int_eq(osdfs_release(fx.fs, fh), 0);
	fx_remount();
	for (int j = 0; j <= i; j++) {
		name_of(name, (unsigned int)j);
		ck_assert_int_eq(osdfs_lookup(fx.fs, ROOT, name, NULL), 0);
	}
}
END_TEST

struct worker {
	uint64_t dir;
	int id;
	int errors;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	char name[32];
	struct osdfs_stat st;

	for (int i = 0; i < 400; i++) {
		osdfs_file *fh;

		snprintf(name, sizeof(name), "w%d-%d", w->id, i);
		if (osdfs_create(fx.fs, w->dir, name, 0644, O_RDWR, NULL, NULL, &fh) != 0) {
			w->errors++;
			continue;
		}
		if (osdfs_write(fx.fs, fh, name, strlen(name), 0) != (ssize_t)strlen(name))
			w->errors++;
		osdfs_release(fx.fs, fh);
		if (osdfs_lookup(fx.fs, w->dir, name, &st) != 0 || st.size != strlen(name))
			w->errors++;
		if (osdfs_fsync(fx.fs, st.ino, i & 1) != 0 || osdfs_fsync(fx.fs, w->dir, 0) != 0)
			w->errors++;
		if (i % 3 == 0 && osdfs_unlink(fx.fs, w->dir, name) != 0)
			w->errors++;
	}
	return NULL;
}

START_TEST(test_threads)
{
	uint64_t shared = fx_mkdir(ROOT, "shared");
	struct worker w[4];
	pthread_t t[4];
	size_t n = 0;

	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ i % 2 ? shared : fx_mkdir(ROOT, i ? "p2" : "p0"), i, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(w[i].errors, 0);
	}
	ck_assert_int_eq(osdfs_readdir(fx.fs, shared, 0, count_only, &n), 0);
	ck_assert_uint_eq(n, 2 + 2 * (400 - 134));
}
END_TEST

/* The smallest and largest block sizes: splits, lookups and listing. */
START_TEST(test_block_sizes)
{
	static const uint32_t sizes[] = { 1024, 32768 };
	struct osdfs_mount_options o = fx_mount_options();

	for (size_t k = 0; k < 2; k++) {
		struct osdfs_mkfs_options mo = OSDFS_MKFS_OPTIONS_INIT;
		struct seen s = { calloc(3000, 1), 3000, 0, 0, 0, 0, 0, 0 };
		struct osdfs_stat st;
		char name[16];
		uint64_t d;

		ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
		mo.block_size = sizes[k];
		ck_assert_int_eq(osdfs_mkfs(fx.inst.be, &mo), 0);
		ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), 0);
		d = fx_mkdir(ROOT, "d");
		for (unsigned int i = 0; i < 3000; i++) {
			name_of(name, i);
			ck_assert_int_eq(osdfs_mknod(fx.fs, d, name, S_IFREG, 0, NULL, NULL), 0);
		}
		fx_remount();
		ck_assert_int_eq(osdfs_getattr(fx.fs, d, &st), 0);
		ck_assert_uint_eq(st.blksize, sizes[k]);
		ck_assert_uint_eq(st.size % sizes[k], 0);
		ck_assert_int_eq(osdfs_readdir(fx.fs, d, 0, count_cb, &s), 0);
		for (unsigned int i = 0; i < 3000; i++) {
			ck_assert_uint_eq(s.count[i], 1);
			name_of(name, i);
			ck_assert_int_eq(osdfs_lookup(fx.fs, d, name, &st), 0);
		}
		free(s.count);
	}
}
END_TEST

struct churner {
	uint64_t dir;
	int stop; /* __atomic */
	int errors;
};

/* Creates and unlinks names outside the stable set until told to stop. */
static void *churn(void *arg)
{
	struct churner *c = arg;
	char name[16];

	for (unsigned int i = 0; !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE); i++) {
		name_of(name, 5000 + i % 3000);
		if (i < 3000) {
			if (osdfs_mknod(fx.fs, c->dir, name, S_IFREG, 0, NULL, NULL) != 0)
				c->errors++;
		} else if (osdfs_unlink(fx.fs, c->dir, name) != 0 &&
			   osdfs_mknod(fx.fs, c->dir, name, S_IFREG, 0, NULL, NULL) != 0) {
			c->errors++;
		}
	}
	return NULL;
}

/* readdir in small batches while another thread changes the directory. */
START_TEST(test_readdir_concurrent)
{
	struct seen s = { calloc(8000, 1), 8000, 0, 0, 0, 0, 0, 0 };
	struct churner c = { fx_mkdir(ROOT, "d"), 0, 0 };
	uint64_t cookie = 0;
	pthread_t t;
	char name[16];

	for (unsigned int i = 0; i < 2000; i++) {
		name_of(name, i);
		ck_assert_int_eq(osdfs_mknod(fx.fs, c.dir, name, S_IFREG, 0, NULL, NULL), 0);
	}
	ck_assert_int_eq(pthread_create(&t, NULL, churn, &c), 0);
	for (int rounds = 0; rounds < 100000; rounds++) {
		size_t before = s.total;

		s.stop_after = 10;
		s.emitted = 0;
		ck_assert_int_eq(osdfs_readdir(fx.fs, c.dir, cookie, count_cb, &s), 0);
		if (s.total == before)
			break;
		cookie = s.last_cookie;
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ck_assert_int_eq(c.errors, 0);
	ck_assert_uint_eq(s.dots, 2);
	for (unsigned int i = 0; i < 8000; i++)
		ck_assert_uint_le(s.count[i], 1);
	for (unsigned int i = 0; i < 2000; i++)
		ck_assert_uint_eq(s.count[i], 1);
	free(s.count);
}
END_TEST

struct appender {
	osdfs_file *fh;
	char tag;
};

static void *append_records(void *arg)
{
	struct appender *a = arg;
	char rec[8];

	memset(rec, a->tag, sizeof(rec));
	rec[7] = '\n';
	for (int i = 0; i < 1000; i++)
		if (osdfs_write(fx.fs, a->fh, rec, sizeof(rec), 0) != (ssize_t)sizeof(rec))
			return (void *)1;
	return NULL;
}

/* O_APPEND writers sharing one file never overwrite each other's records. */
START_TEST(test_parallel_append)
{
	struct appender a[4];
	pthread_t t[4];
	struct osdfs_stat st;
	osdfs_file *rd;
	char *buf = malloc(4 * 1000 * 8);
	int counts[4] = { 0 };
	void *ret;

	ck_assert_int_eq(osdfs_create(fx.fs, ROOT, "log", 0644, O_WRONLY | O_APPEND, NULL, &st,
				      &a[0].fh), 0);
	for (int i = 0; i < 4; i++) {
		if (i)
			ck_assert_int_eq(osdfs_open(fx.fs, st.ino, O_WRONLY | O_APPEND, &a[i].fh), 0);
		a[i].tag = (char)('A' + i);
		ck_assert_int_eq(pthread_create(&t[i], NULL, append_records, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		ck_assert_ptr_null(ret);
		ck_assert_int_eq(osdfs_release(fx.fs, a[i].fh), 0);
	}
	ck_assert_int_eq(osdfs_getattr(fx.fs, st.ino, &st), 0);
	ck_assert_uint_eq(st.size, 4 * 1000 * 8);
	ck_assert_int_eq(osdfs_open(fx.fs, st.ino, O_RDONLY, &rd), 0);
	ck_assert_int_eq(osdfs_read(fx.fs, rd, buf, 4 * 1000 * 8, 0), 4 * 1000 * 8);
	ck_assert_int_eq(osdfs_release(fx.fs, rd), 0);
	for (int r = 0; r < 4000; r++) {
		const char *p = buf + r * 8;

		ck_assert(p[0] >= 'A' && p[0] <= 'D');
		ck_assert_int_eq(memcmp(p, p + 1, 6), 0);
		ck_assert_int_eq(p[7], '\n');
		counts[p[0] - 'A']++;
	}
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(counts[i], 1000);
	free(buf);
}
END_TEST

struct rw_peer {
	osdfs_file *fh;
	int writer;
	uint8_t seed;
};

/* A writer rewrites 64 records of 512 bytes, each all one byte; a reader
 * reads them back. Records are written whole, so a reader sees each record
 * as one byte repeated (an old or a new one), never a mix within 512 bytes
 * of one write call's range it did not overlap. */
static void *rw_worker(void *arg)
{
	struct rw_peer *p = arg;
	uint8_t rec[512];

	for (int i = 0; i < 400; i++) {
		uint64_t off = (uint64_t)((i * 7 + p->seed) % 64) * sizeof(rec);

		if (p->writer) {
			memset(rec, p->seed + i, sizeof(rec));
			if (osdfs_write(fx.fs, p->fh, rec, sizeof(rec), off) != (ssize_t)sizeof(rec))
				return (void *)1;
		} else if (osdfs_read(fx.fs, p->fh, rec, sizeof(rec), off) != (ssize_t)sizeof(rec)) {
			return (void *)2;
		}
	}
	return NULL;
}

/* Readers and writers of one file at once (file I/O holds fs->lock shared:
 * the inode's fields are shared under its own lock; ThreadSanitizer in CI
 * checks that nothing is read outside it). */
START_TEST(test_readers_and_writers)
{
	struct rw_peer p[4];
	pthread_t t[4];
	struct osdfs_stat st;
	osdfs_file *fh;
	uint8_t zero[64 * 512] = { 0 };
	void *ret;

	ck_assert_int_eq(osdfs_create(fx.fs, ROOT, "shared", 04755, O_RDWR, NULL, &st, &fh), 0);
	ck_assert_int_eq(osdfs_write(fx.fs, fh, zero, sizeof(zero), 0), (ssize_t)sizeof(zero));
	for (int i = 0; i < 4; i++) {
		p[i].writer = i < 2;
		p[i].seed = (uint8_t)(i * 31 + 1);
		ck_assert_int_eq(osdfs_open(fx.fs, st.ino, p[i].writer ? O_WRONLY : O_RDONLY,
					    &p[i].fh), 0);
		ck_assert_int_eq(pthread_create(&t[i], NULL, rw_worker, &p[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		ck_assert_ptr_null(ret);
		ck_assert_int_eq(osdfs_release(fx.fs, p[i].fh), 0);
	}
	ck_assert_int_eq(osdfs_release(fx.fs, fh), 0);
	ck_assert_int_eq(osdfs_getattr(fx.fs, st.ino, &st), 0);
	ck_assert_uint_eq(st.size, sizeof(zero));
	ck_assert_uint_eq(st.mode & 07777, 0755); /* the writes cleared set-user-id */
}
END_TEST

static Suite *dir_suite(void)
{
	Suite *s = suite_create("fs_dir");
	TCase *tc = tcase_create("dir");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 110);
	tcase_add_test(tc, test_big_directory);
	tcase_add_test(tc, test_readdir_stable);
	tcase_add_test(tc, test_readdir_cookies);
	tcase_add_test(tc, test_block_sizes);
	tcase_add_test(tc, test_readdir_concurrent);
	tcase_add_test(tc, test_corrupt_block);
	tcase_add_test(tc, test_negative_lookup_summaries);
	tcase_add_test(tc, test_corrupt_inode);
	tcase_add_test(tc, test_enospc);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_parallel_append);
	tcase_add_test(tc, test_readers_and_writers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	fx_require_backend();
	sr = srunner_create(dir_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
