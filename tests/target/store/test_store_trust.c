/*
 * Read trust (docs/target-store.md, "Read trust"): a block verified once, or
 * written whole, is read without a check while its page stays in the page
 * cache; a block whose page was dropped is verified again, so damage on
 * disk is a MEDIUM ERROR and never returned; every change ends the trust of
 * what it touched; a file changed by another process is not trusted;
 * verify_reads verifies every READ. What was verified and what was trusted
 * is seen in the store's counters. Beside trust, the page cache the store
 * leaves behind: reads do not touch the host atime, and the checkpoint and
 * log kept for salvage do not stay cached. The store lives in the build
 * tree, on a disk filesystem whose pages can be dropped (tmpfs pages
 * cannot).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_helpers.h"
#include "store/internal.h"

#define P1 0x10000ull
#define O1 0x10000ull
#define BLK 4096u
#define MIB (1u << 20)
#define NBLK (MIB / BLK)

static char *dir;
static struct osd_store *st;
static uint8_t *data, *back;
static char last_log[1024];
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER; /* readers in threads log too */

static void log_cb(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level != OSD_STORE_LOG_ERR)
		return;
	pthread_mutex_lock(&log_mu);
	snprintf(last_log, sizeof(last_log), "%s", msg);
	pthread_mutex_unlock(&log_mu);
}

static struct osd_store *open_store(int create, int verify_reads)
{
	struct osd_store_options o = { .create = create, .log = log_cb,
				       .verify_reads = verify_reads };
	struct osd_store *s = NULL;
	char err[512];
	int r = osd_store_open(&s, dir, &o, err, sizeof(err));
	ck_assert_msg(r == 0, "open: %d %s", r, err);
	return s;
}

static void setup(void)
{
	char cwd[2048];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	dir = malloc(4096);
	ck_assert_ptr_nonnull(dir);
	snprintf(dir, 4096, "%s/osdtrust-XXXXXX", cwd);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	last_log[0] = 0;
	st = open_store(1, 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	data = malloc(MIB);
	back = malloc(MIB);
	ck_assert(data && back);
	th_fill(data, MIB, 7, 0);
}

static void teardown(void)
{
	osd_store_close(st);
	th_rmtree(dir);
	free(data);
	free(back);
}

static void reopen(int verify_reads)
{
	osd_store_close(st);
	st = open_store(0, verify_reads);
}

static int wr(uint64_t off, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	return osd_store_write(st, P1, O1, off, &iov, 1, 0);
}

/* Read [off, off + len) into back; the blocks it verified and trusted. */
static int rd(uint64_t off, size_t len, size_t *got, uint64_t *verified, uint64_t *trusted)
{
	uint64_t v0, t0, v1, t1;
	struct iovec iov = { back, len };
	osd__store_read_counts(st, &v0, &t0);
	int r = osd_store_read(st, P1, O1, off, &iov, 1, got);
	osd__store_read_counts(st, &v1, &t1);
	*verified = v1 - v0;
	*trusted = t1 - t0;
	return r;
}

/* Read all of the first MiB: right bytes, @p v blocks verified, @p t trusted. */
static void rd_mib(uint64_t v, uint64_t t)
{
	size_t got;
	uint64_t vv, tt;
	ck_assert_int_eq(rd(0, MIB, &got, &vv, &tt), 0);
	ck_assert_uint_eq(got, MIB);
	ck_assert_mem_eq(back, data, MIB);
	ck_assert_uint_eq(vv, v);
	ck_assert_uint_eq(tt, t);
}

static void data_path(char *out, size_t n)
{
	snprintf(out, n, "%s/data/01/0000000000000001", dir);
}

/* Pages of the first @p len bytes of file @p fd in the page cache (mincore). */
static unsigned resident_of(int fd, size_t len)
{
	size_t pages = (len + BLK - 1) / BLK;
	unsigned char *vec = malloc(pages);
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert(vec && m != MAP_FAILED);
	ck_assert_int_eq(mincore(m, len, vec), 0);
	munmap(m, len);
	unsigned n = 0;
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/* Pages of the data file's first MiB in the page cache. */
static unsigned resident(int fd)
{
	return resident_of(fd, MIB);
}

/* Write the data file's pages back and drop them from the page cache, as
 * memory pressure would; checked with mincore (bounded retries). */
static void drop_pages(void)
{
	char path[4200];
	data_path(path, sizeof(path));
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	unsigned left = NBLK;
	for (int i = 0; i < 1000 && left; i++) {
		ck_assert_int_eq(fdatasync(fd), 0);
		ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
		left = resident(fd);
	}
	close(fd);
	ck_assert_msg(left == 0, "%u pages of %s stay in the page cache (tmpfs?)", left, path);
}

/* The store's object O1 (a reference, put by the caller). */
static struct osd__obj *obj(void)
{
	struct osd__obj *o = osd__ns_get(st, P1, O1);
	ck_assert_ptr_nonnull(o);
	return o;
}

static int trusted_blocks(uint64_t lo, uint64_t hi)
{
	struct osd__obj *o = obj();
	pthread_mutex_lock(&o->mu);
	int r = osd__trust_covers(o, lo, hi);
	pthread_mutex_unlock(&o->mu);
	osd__obj_put(st, o);
	return r;
}

/* Whole blocks written are trusted: read without a check, again and again. */
START_TEST(t_written_trusted)
{
	ck_assert_int_eq(wr(0, data, MIB), 0);
	ck_assert(trusted_blocks(0, NBLK));
	rd_mib(0, NBLK);
	rd_mib(0, NBLK);
	/* unaligned reads inside trusted blocks too */
	size_t got;
	uint64_t v, t;
	ck_assert_int_eq(rd(100, 3 * BLK, &got, &v, &t), 0);
	ck_assert_uint_eq(got, 3 * BLK);
	ck_assert_mem_eq(back, data + 100, 3 * BLK);
	ck_assert_uint_eq(v, 0);
	ck_assert_uint_eq(t, 4);
}
END_TEST

/* After a reopen nothing is trusted: the first READ verifies, the next trusts. */
START_TEST(t_first_read_verifies)
{
	size_t got;
	uint64_t v, t;
	ck_assert_int_eq(wr(0, data, MIB), 0);
	reopen(0);
	ck_assert(!trusted_blocks(0, 1));
	/* a READ from inside a block checks that block's other bytes, read
	 * apart from the copy: it trusts nothing */
	ck_assert_int_eq(rd(100, 3 * BLK, &got, &v, &t), 0);
	ck_assert_mem_eq(back, data + 100, 3 * BLK);
	ck_assert_uint_eq(v, 4);
	ck_assert(!trusted_blocks(0, 1));
	ck_assert(!trusted_blocks(1, 2));
	/* one ending inside a block trusts none of that block's 64 KiB */
	ck_assert_int_eq(rd(0, 20 * BLK + 10, &got, &v, &t), 0);
	ck_assert_mem_eq(back, data, 20 * BLK + 10);
	ck_assert_uint_eq(v, 21);
	ck_assert(trusted_blocks(0, 16));
	ck_assert(!trusted_blocks(16, 17));
	ck_assert_int_eq(rd(0, 16 * BLK, &got, &v, &t), 0);
	ck_assert_uint_eq(t, 16);
	rd_mib(NBLK, 0);
	ck_assert(trusted_blocks(0, NBLK));
	rd_mib(0, NBLK);
}
END_TEST

/* verify_reads: every READ verifies, nothing is trusted. */
START_TEST(t_verify_reads)
{
	reopen(1);
	ck_assert_int_eq(wr(0, data, MIB), 0);
	ck_assert(!trusted_blocks(0, 1));
	rd_mib(NBLK, 0);
	rd_mib(NBLK, 0);
	ck_assert(!trusted_blocks(0, 1));
}
END_TEST

/* A trusted block whose page left the page cache is verified again. */
START_TEST(t_dropped_page_verified)
{
	ck_assert_int_eq(wr(0, data, MIB), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	rd_mib(0, NBLK);
	drop_pages();
	ck_assert(trusted_blocks(0, NBLK)); /* the store has not noticed yet */
	rd_mib(NBLK, 0);
	rd_mib(0, NBLK); /* verified as it came back: trusted again */
}
END_TEST

/*
 * A block damaged on disk after its page was dropped: MEDIUM ERROR at the
 * bad block, never its bytes. The ctime the flip left is made the store's
 * own first, as if the disk had changed beneath the filesystem (what the
 * store cannot see), so only the page's absence can save the read.
 */
START_TEST(t_disk_damage_after_drop)
{
	char path[4200];
	const uint64_t at = 5 * BLK + 123;
	ck_assert_int_eq(wr(0, data, MIB), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	rd_mib(0, NBLK);
	data_path(path, sizeof(path));
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	uint8_t b = data[at] ^ 0x40;
	ck_assert_int_eq(pwrite(fd, &b, 1, (off_t)at), 1);
	ck_assert_int_eq(fdatasync(fd), 0);
	close(fd);
	drop_pages();
	struct osd__obj *o = obj();
	struct timespec now;
	pthread_mutex_lock(&o->mu);
	ck_assert_int_eq(osd__trust_ctime(o->io->fd, &now), 0);
	osd__trust_change_end(o, &now);
	pthread_mutex_unlock(&o->mu);
	osd__obj_put(st, o);
	ck_assert(trusted_blocks(0, NBLK));

	size_t got;
	uint64_t v, t;
	memset(back, 0, MIB);
	ck_assert_int_eq(rd(0, MIB, &got, &v, &t), -EIO);
	ck_assert_uint_eq(got, 5 * BLK); /* the bytes before the bad block */
	ck_assert_mem_eq(back, data, 5 * BLK);
	ck_assert_uint_eq(t, 0);
	ck_assert_ptr_nonnull(strstr(last_log, "checksum mismatch at byte 20480"));
	/* the damage stays an error however it is read */
	ck_assert(!trusted_blocks(5, 6));
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(rd(5 * BLK, BLK, &got, &v, &t), -EIO);
		ck_assert_uint_eq(got, 0);
		ck_assert_uint_eq(t, 0);
	}
	/* the blocks around it still read, and are trusted once verified */
	ck_assert_int_eq(rd(6 * BLK, BLK, &got, &v, &t), 0);
	ck_assert_mem_eq(back, data + 6 * BLK, BLK);
}
END_TEST

/* Wait (bounded) until a change of @p fd gets a ctime other than its
 * present one: before Linux 6.13 the ctime moves with the kernel's coarse
 * clock, so a change within the same tick keeps it. */
static void ctime_tick(int fd)
{
	struct stat sb;
	struct timespec now, t0, t;
	ck_assert_int_eq(fstat(fd, &sb), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		clock_gettime(CLOCK_MONOTONIC, &t);
		ck_assert_msg(t.tv_sec - t0.tv_sec < 5, "the coarse clock does not move");
	} while (now.tv_sec < sb.st_ctim.tv_sec ||
		 (now.tv_sec == sb.st_ctim.tv_sec && now.tv_nsec <= sb.st_ctim.tv_nsec));
}

/* A data file another process wrote (through the page cache) is not trusted
 * (the ctime tells, when it moved: see ctime_tick). */
START_TEST(t_other_writer)
{
	char path[4200];
	ck_assert_int_eq(wr(0, data, MIB), 0);
	rd_mib(0, NBLK);
	data_path(path, sizeof(path));
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ctime_tick(fd);
	uint8_t b = data[9000] ^ 0x01;
	ck_assert_int_eq(pwrite(fd, &b, 1, 9000), 1);
	close(fd);
	size_t got;
	uint64_t v, t;
	ck_assert_int_eq(rd(0, MIB, &got, &v, &t), -EIO);
	ck_assert_uint_eq(got, 2 * BLK);
	ck_assert_uint_eq(t, 0);
	ck_assert(!trusted_blocks(0, 1));
	/* a write of the store's own does not launder it */
	ck_assert_int_eq(wr(MIB, data, BLK), 0);
	ck_assert_int_eq(rd(0, MIB, &got, &v, &t), -EIO);
	ck_assert_uint_eq(got, 2 * BLK);
	ck_assert_uint_eq(t, 0);
}
END_TEST

/* Writes, punch and truncate end the trust of what they touch. */
START_TEST(t_changes_end_trust)
{
	size_t got;
	uint64_t v, t;
	ck_assert_int_eq(wr(0, data, MIB), 0);
	rd_mib(0, NBLK);
	/* a partial write: its block's checksum merged bytes it read: verified */
	memset(data + 40 * BLK + 10, 0xA5, 100);
	ck_assert_int_eq(wr(40 * BLK + 10, data + 40 * BLK + 10, 100), 0);
	ck_assert(!trusted_blocks(40, 41));
	ck_assert(trusted_blocks(0, 32));
	ck_assert(trusted_blocks(48, NBLK));
	rd_mib(NBLK, 0);
	rd_mib(0, NBLK);
	/* punch: the hole's blocks and their neighbours verify */
	memset(data + 100 * BLK, 0, 3 * BLK);
	ck_assert_int_eq(osd_store_punch(st, P1, O1, 100 * BLK, 3 * BLK, 0), 0);
	ck_assert(!trusted_blocks(100, 103));
	rd_mib(NBLK, 0);
	rd_mib(0, NBLK);
	/* truncate: everything from the cut on */
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, MIB / 2 + 100, 0), 0);
	ck_assert(!trusted_blocks(128, 129));
	ck_assert_int_eq(rd(0, MIB, &got, &v, &t), 0);
	ck_assert_uint_eq(got, MIB / 2 + 100);
	ck_assert_mem_eq(back, data, got);
	ck_assert_uint_eq(v, NBLK / 2 + 1);
	ck_assert_int_eq(rd(0, MIB, &got, &v, &t), 0);
	ck_assert_uint_eq(got, MIB / 2 + 100);
	ck_assert_uint_eq(t, NBLK / 2 + 1); /* the last block, to the length, too */
	ck_assert_uint_eq(v, 0);
	/* extended again: the bytes past the old length read as zeros, verified */
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, MIB, 0), 0);
	memset(data + MIB / 2 + 100, 0, MIB / 2 - 100);
	ck_assert_int_eq(rd(0, MIB, &got, &v, &t), 0);
	ck_assert_mem_eq(back, data, MIB);
	ck_assert_uint_ge(v, NBLK / 2);
	/* remove: a new object of the same id starts with nothing trusted */
	ck_assert_int_eq(osd_store_object_remove(st, P1, O1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	th_fill(data, MIB, 8, 0);
	ck_assert_int_eq(wr(0, data, MIB / 2), 0);
	ck_assert_int_eq(rd(0, MIB, &got, &v, &t), 0);
	ck_assert_uint_eq(got, MIB / 2);
	ck_assert_mem_eq(back, data, MIB / 2);
	ck_assert_uint_eq(t, NBLK / 2);
}
END_TEST

/* Copy slots: a copy is alone unless another in flight may bring in its
 * blocks (widened to 64 KiB folios); four at most. */
START_TEST(t_copy_slots)
{
	struct osd__obj *o = calloc(1, sizeof(*o));
	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_nonnull(osd__obj_io_locked(o));
	int a = osd__trust_copy_begin(o, 0, 256);
	int b = osd__trust_copy_begin(o, 300, 400);
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(b, 0);
	ck_assert_int_ne(a, b);
	ck_assert(osd__trust_copy_alone(o, a, 0, 256));
	ck_assert(osd__trust_copy_alone(o, b, 300, 400));
	int c = osd__trust_copy_begin(o, 257, 258); /* block 257: folio 256-271 */
	ck_assert_int_ge(c, 0);
	ck_assert(osd__trust_copy_alone(o, a, 0, 256));
	ck_assert(!osd__trust_copy_alone(o, a, 0, 257));
	ck_assert(!osd__trust_copy_alone(o, b, 270, 400));
	ck_assert(osd__trust_copy_alone(o, b, 300, 400));
	int d = osd__trust_copy_begin(o, 1000, 1001);
	ck_assert_int_ge(d, 0);
	ck_assert_int_eq(osd__trust_copy_begin(o, 5000, 5001), -1);
	osd__trust_copy_end(o, c);
	ck_assert(osd__trust_copy_alone(o, a, 0, 288)); /* b: 288-399 */
	ck_assert_int_eq(osd__trust_copy_begin(o, 5000, 5001), c);
	/* the epoch: every fault moves it, a grant needs it unmoved */
	o->io->tvalid = 1;
	uint64_t e = osd__trust_fault(o, 0, 1);
	osd__trust_grant(o, e, 0, 100);
	ck_assert(osd__trust_covers(o, 0, 100));
	ck_assert(!osd__trust_covers(o, 0, 101));
	uint64_t e2 = osd__trust_fault(o, 70, 71); /* clears its 64 KiB: 64-79 */
	ck_assert_uint_eq(e2, e + 1);
	ck_assert(osd__trust_covers(o, 0, 64));
	ck_assert(!osd__trust_covers(o, 64, 65));
	ck_assert(!osd__trust_covers(o, 79, 80));
	ck_assert(osd__trust_covers(o, 80, 100));
	osd__trust_grant(o, e, 64, 80); /* stale epoch: nothing */
	ck_assert(!osd__trust_covers(o, 64, 80));
	osd__trust_drop(o);
	ck_assert(!osd__trust_covers(o, 0, 1));
	osd__obj_io_free(o);
	free(o);
}
END_TEST

/* Readers racing pages dropped and read back from disk (threads.) */
#define READERS 4
#define READS 150
static atomic_int readers_left;
static atomic_int wrong, odd;

static void *reader(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	uint8_t *buf = malloc(MIB);
	ck_assert_ptr_nonnull(buf);
	for (int i = 0; i < READS; i++) {
		/* even readers cross the damaged block 5, odd ones read past it */
		uint64_t off = id % 2 ? 8 * BLK : 0;
		size_t len = MIB - (size_t)off, got = 0;
		struct iovec iov = { buf, len };
		int r = osd_store_read(st, P1, O1, off, &iov, 1, &got);
		if (id % 2 == 0 && (r != -EIO || got != 5 * BLK))
			atomic_fetch_add(&odd, 1);
		if (id % 2 == 1 && (r != 0 || got != len))
			atomic_fetch_add(&odd, 1);
		if (memcmp(buf, data + off, got) != 0)
			atomic_fetch_add(&wrong, 1);
	}
	free(buf);
	atomic_fetch_sub(&readers_left, 1);
	return NULL;
}

/*
 * Block 5 damaged on disk behind trusted blocks (as in
 * t_disk_damage_after_drop) while readers run and another thread drops the
 * file's pages again and again: no read returns a wrong byte, every read of
 * block 5 fails there, every other read succeeds.
 */
START_TEST(t_threads_drop_damage)
{
	char path[4200];
	ck_assert_int_eq(wr(0, data, MIB), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	data_path(path, sizeof(path));
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	uint8_t b = data[5 * BLK + 7] ^ 0x10;
	ck_assert_int_eq(pwrite(fd, &b, 1, 5 * BLK + 7), 1);
	ck_assert_int_eq(fdatasync(fd), 0);
	drop_pages();
	struct osd__obj *o = obj();
	struct timespec now;
	pthread_mutex_lock(&o->mu);
	ck_assert_int_eq(osd__trust_ctime(o->io->fd, &now), 0);
	osd__trust_change_end(o, &now);
	pthread_mutex_unlock(&o->mu);
	osd__obj_put(st, o);
	ck_assert(trusted_blocks(0, NBLK));

	pthread_t th[READERS];
	atomic_store(&readers_left, READERS);
	atomic_store(&wrong, 0);
	atomic_store(&odd, 0);
	for (uintptr_t i = 0; i < READERS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, reader, (void *)i), 0);
	unsigned drops = 0;
	do { /* at least once, even if the readers were done before we ran */
		ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
		drops++;
	} while (atomic_load(&readers_left) > 0);
	for (int i = 0; i < READERS; i++)
		pthread_join(th[i], NULL);
	close(fd);
	ck_assert_int_eq(atomic_load(&wrong), 0);
	ck_assert_int_eq(atomic_load(&odd), 0);
	ck_assert_uint_gt(drops, 0);
}
END_TEST

/* Scrub reads from the page cache too: it ends trust until it verified. */
START_TEST(t_scrub_then_read)
{
	uint64_t bytes, bad;
	ck_assert_int_eq(wr(0, data, MIB), 0);
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), 0);
	ck_assert_uint_eq(bytes, MIB);
	rd_mib(NBLK, 0);
	rd_mib(0, NBLK);
}
END_TEST

/* Reads leave the host atime alone: under relatime, the first read after a
 * write would dirty the file's inode (an inode write per osdfs create). */
START_TEST(t_reads_keep_atime)
{
	char path[4200];
	struct stat sb;
	ck_assert_int_eq(wr(0, data, MIB), 0);
	data_path(path, sizeof(path));
	/* an atime older than the mtime: relatime would update it */
	struct timespec ts[2] = { { 1000, 0 }, { 0, UTIME_OMIT } };
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
	for (int i = 0; i < 2; i++) {
		size_t got;
		uint64_t v, t;
		ck_assert_int_eq(rd(0, MIB, &got, &v, &t), 0);
		ck_assert_uint_eq(got, MIB);
		ck_assert_mem_eq(back, data, MIB);
	}
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq(sb.st_atim.tv_sec, 1000);
}
END_TEST

/* Pages of file @p name of the store in the page cache. */
static unsigned file_resident(const char *name)
{
	char path[4200];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	unsigned n = resident_of(fd, (size_t)sb.st_size);
	close(fd);
	return n;
}

/* The checkpoint and log a compaction keeps for salvage leave the page
 * cache; the new checkpoint the objects load from stays. */
START_TEST(t_prev_not_cached)
{
	uint8_t v[64];
	memset(v, 0x5a, sizeof(v));
	for (uint64_t i = 1; i <= 2000; i++) {
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + i, OSD_OBJ_USER, 0), 0);
		ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + i, 0x10001, 1, v, sizeof(v), 0), 0);
	}
	ck_assert_int_eq(wr(0, data, MIB), 0);
	ck_assert_int_eq(osd__store_compact(st), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + 1, 0x10001, 2, v, 8, 0), 0);
	ck_assert_int_eq(osd__store_compact(st), 0);
	ck_assert_uint_gt(file_resident("checkpoint"), 16);
	ck_assert_uint_eq(file_resident("checkpoint.prev"), 0);
	ck_assert_uint_eq(file_resident("log.prev"), 0);
	/* the objects load from the new checkpoint after a reopen */
	reopen(0);
	uint8_t got[64];
	size_t len = 0;
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1 + 2000, 0x10001, 1, got, sizeof(got), &len),
			 0);
	ck_assert_uint_eq(len, sizeof(v));
	ck_assert_mem_eq(got, v, sizeof(v));
	rd_mib(NBLK, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store_trust");
	TCase *tc = tcase_create("trust");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_written_trusted);
	tcase_add_test(tc, t_first_read_verifies);
	tcase_add_test(tc, t_verify_reads);
	tcase_add_test(tc, t_dropped_page_verified);
	tcase_add_test(tc, t_disk_damage_after_drop);
	tcase_add_test(tc, t_other_writer);
	tcase_add_test(tc, t_changes_end_trust);
	tcase_add_test(tc, t_scrub_then_read);
	tcase_add_test(tc, t_threads_drop_damage);
	tcase_add_test(tc, t_copy_slots);
	tcase_add_test(tc, t_reads_keep_atime);
	tcase_add_test(tc, t_prev_not_cached);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
