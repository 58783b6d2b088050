/* Tests of the target's durable object store: every operation, its errors,
 * persistence, recovery, locking and concurrency. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checksum/crc32c.h"
#include "proto/byteorder.h"
#include "store/internal.h"
#include "store_helpers.h"

#define P1 0x10000ULL
#define P2 0x10001ULL
#define O1 0x10000ULL

static char *dir;
static struct osd_store *st;
static int files_only; /* tests of the data files: no packed objects */

static void setup(void)
{
	dir = th_mkdtemp();
	files_only = 0;
	st = th_open(dir);
}

/* The rest of the test gives every new object a data file of its own. */
static void use_files(void)
{
	files_only = 1;
	osd_store_close(st);
	st = th_open_files(dir, 1);
}

static void teardown(void)
{
	osd_store_close(st);
	st = NULL;
	th_rmtree(dir);
	dir = NULL;
}

static void reopen(void)
{
	osd_store_close(st);
	st = th_open_files(dir, files_only);
}

/* 1 if buf[0..len) is all zero (one assertion instead of one per byte). */
static int all_zero(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i])
			return 0;
	return 1;
}

static int wr(uint64_t pid, uint64_t oid, uint64_t off, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	return osd_store_write(st, pid, oid, off, &iov, 1, 0);
}

static size_t rd(uint64_t pid, uint64_t oid, uint64_t off, void *buf, size_t len)
{
	struct iovec iov = { buf, len };
	size_t n = 0;
	ck_assert_int_eq(osd_store_read(st, pid, oid, off, &iov, 1, &n), 0);
	return n;
}

/* ---- CRC32C ---- */

START_TEST(t_crc32c)
{
	ck_assert_uint_eq(osd__crc32c(0, "123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(osd__crc32c_table(0, "123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(osd__crc32c(0, "", 0), 0);
	uint8_t buf[1000];
	th_fill(buf, sizeof(buf), 7, 0);
	for (size_t len = 0; len < sizeof(buf); len += 37) {
		uint32_t a = osd__crc32c(0, buf + 3, len - (len ? 3 : 0));
		ck_assert_uint_eq(a, osd__crc32c_table(0, buf + 3, len - (len ? 3 : 0)));
	}
	/* Continuation equals one pass. */
	ck_assert_uint_eq(osd__crc32c(osd__crc32c(0, buf, 100), buf + 100, 900),
			  osd__crc32c(0, buf, 1000));
	/* Blocks at once (folding, folding beside three crc32 streams in groups
	 * of 9, or three streams) equal the table, block by block, for the data
	 * checksums' 4 KiB and other sizes and counts (up to two groups and a
	 * remainder). */
	static uint8_t big[20 * 4096];
	uint32_t crcs[20];
	th_fill(big, sizeof(big), 11, 0);
	static const size_t sizes[] = { 4096, 256, 512, 768, 100, 8 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t n = 0; n <= 20 && n * sizes[s] <= sizeof(big); n++) {
			osd__crc32c_blocks(big, sizes[s], n, crcs);
			for (size_t i = 0; i < n; i++)
				ck_assert_uint_eq(crcs[i], osd__crc32c_table(0, big + i * sizes[s],
									       sizes[s]));
		}
	memset(big, 0, 4096);
	osd__crc32c_blocks(big, 4096, 1, crcs);
	ck_assert_uint_eq(crcs[0], osd__crc32c_table(0, big, 4096));
}
END_TEST

START_TEST(t_record_bytes)
{
	/* Hand-written record: crc | len=8 | type 1 | pid 0x10000 big-endian. */
	uint8_t exp[17] = { 0, 0, 0, 0, 0, 0, 0, 8, 1, 0, 0, 0, 0, 0, 1, 0, 0 };
	uint32_t crc = osd__crc32c(0, exp + 4, 13);
	exp[0] = (uint8_t)(crc >> 24);
	exp[1] = (uint8_t)(crc >> 16);
	exp[2] = (uint8_t)(crc >> 8);
	exp[3] = (uint8_t)crc;
	uint8_t pl[8] = { 0, 0, 0, 0, 0, 1, 0, 0 }, got[17];
	osd__rec_encode(got, OSD__REC_PART_CREATE, pl, 8, NULL, 0);
	ck_assert_mem_eq(got, exp, 17);
	struct osd__rec rec;
	ck_assert_uint_eq(osd__rec_parse(got, 17, &rec), 17);
	ck_assert_uint_eq(rec.type, 1);
	ck_assert_uint_eq(rec.len, 8);
	ck_assert_uint_eq(osd__rec_parse(got, 16, &rec), 0); /* short */
	got[12] ^= 1;
	ck_assert_uint_eq(osd__rec_parse(got, 17, &rec), 0); /* bad CRC */
	uint8_t huge[9] = { 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 5 };
	ck_assert_uint_eq(osd__rec_parse(huge, 9, &rec), 0); /* impossible length */
}
END_TEST

/* ---- open ---- */

START_TEST(t_open_missing)
{
	char *d = th_mkdtemp();
	char sub[4200], err[256] = "";
	struct osd_store *s = (void *)1;
	snprintf(sub, sizeof(sub), "%s/none", d);
	struct osd_store_options o = { .create = 0 };
	ck_assert_int_eq(osd_store_open(&s, sub, &o, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(osd_store_open(&s, d, NULL, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "no store"));
	o.create = 1;
	ck_assert_int_eq(osd_store_open(&s, sub, &o, err, sizeof(err)), 0);
	osd_store_close(s);
	ck_assert_int_eq(osd_store_open(&s, sub, NULL, err, sizeof(err)), 0);
	osd_store_close(s);
	th_rmtree(d);
}
END_TEST

START_TEST(t_busy)
{
	struct osd_store *s2 = NULL;
	char err[256] = "";
	ck_assert_int_eq(osd_store_open(&s2, dir, NULL, err, sizeof(err)), -EBUSY);
	ck_assert_ptr_nonnull(strstr(err, "already open"));
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) /* another process */
		_exit(osd_store_open(&s2, dir, NULL, NULL, 0) == -EBUSY ? 0 : 1);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	osd_store_close(st);
	ck_assert_int_eq(osd_store_open(&st, dir, NULL, err, sizeof(err)), 0);
}
END_TEST

START_TEST(t_damaged_superblock)
{
	char p[4200], err[256] = "";
	osd_store_close(st);
	st = NULL;
	th_path(p, sizeof(p), dir, "superblock");
	int fd = open(p, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "X", 1, 0), 1);
	close(fd);
	ck_assert_int_eq(osd_store_open(&st, dir, NULL, err, sizeof(err)), -EUCLEAN);
	ck_assert_ptr_null(st);
	ck_assert_ptr_nonnull(strstr(err, "superblock damaged"));
	/* A wrong length is damage too; create=1 must not reformat it. */
	fd = open(p, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "OSDSTORE", 8), 8);
	close(fd);
	struct osd_store_options o = { .create = 1 };
	ck_assert_int_eq(osd_store_open(&st, dir, &o, err, sizeof(err)), -EUCLEAN);
}
END_TEST

START_TEST(t_damaged_checkpoint)
{
	char p[4200], err[256] = "";
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd__store_compact(st), 0);
	osd_store_close(st);
	st = NULL;
	th_path(p, sizeof(p), dir, "checkpoint");
	int fd = open(p, O_RDWR);
	struct stat sb;
	fstat(fd, &sb);
	uint8_t b;
	ck_assert_int_eq(pread(fd, &b, 1, sb.st_size - 3), 1);
	b ^= 0x40;
	ck_assert_int_eq(pwrite(fd, &b, 1, sb.st_size - 3), 1);
	close(fd);
	ck_assert_int_eq(osd_store_open(&st, dir, NULL, err, sizeof(err)), -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(err, "checkpoint"));
}
END_TEST

/* ---- partitions ---- */

START_TEST(t_partitions)
{
	uint64_t ids[8], next, n64, max;
	size_t n;
	ck_assert_int_eq(osd_store_partition_create(st, 0, 0), -EINVAL);
	ck_assert_int_eq(osd_store_partition_create(st, P2, 0), 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), -EEXIST);
	ck_assert_int_eq(osd_store_partition_create(st, 0x20000, OSD_STORE_FUA), 0);
	ck_assert_int_eq(osd_store_partition_exists(st, P1), 1);
	ck_assert_int_eq(osd_store_partition_exists(st, 0), 0);
	ck_assert_int_eq(osd_store_partition_exists(st, 5), 0);
	ck_assert_int_eq(osd_store_partition_list(st, 0, ids, 2, &n, &next), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(ids[0], P1);
	ck_assert_uint_eq(ids[1], P2);
	ck_assert_uint_eq(next, 0x20000);
	ck_assert_int_eq(osd_store_partition_list(st, next, ids, 8, &n, &next), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ids[0], 0x20000);
	ck_assert_uint_eq(next, 0);
	ck_assert_int_eq(osd_store_partition_stats(st, &n64, &max), 0);
	ck_assert_uint_eq(n64, 3);
	ck_assert_uint_eq(max, 0x20000);
	ck_assert_int_eq(osd_store_object_type(st, P1, 0, NULL), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_partition_remove(st, P1, 0), -ENOTEMPTY);
	ck_assert_int_eq(osd_store_partition_remove(st, 0x30000, 0), -ENOENT);
	ck_assert_int_eq(osd_store_partition_remove(st, P2, 0), 0);
	ck_assert_int_eq(osd_store_partition_exists(st, P2), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P2, 0, 1, 1, "x", 1, 0), -ENOENT);
	ck_assert_int_eq(osd_store_object_remove(st, P1, O1, 0), 0);
	ck_assert_int_eq(osd_store_partition_remove(st, P1, 0), 0);
	reopen();
	ck_assert_int_eq(osd_store_partition_list(st, 0, ids, 8, &n, &next), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ids[0], 0x20000);
}
END_TEST

/* ---- objects ---- */

START_TEST(t_objects)
{
	enum osd_obj_type t;
	uint64_t ids[16], next, cnt, max;
	size_t n;
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), -ENOENT);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, 0, OSD_OBJ_USER, 0), -EINVAL);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_PARTITION, 0), -EINVAL);
	for (uint64_t i = 0; i < 10; i++)
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 9 - i,
							 i % 3 ? OSD_OBJ_USER : OSD_OBJ_COLLECTION, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 4, OSD_OBJ_COLLECTION, 0), -EEXIST);
	ck_assert_int_eq(osd_store_object_type(st, 0, 0, &t), 0);
	ck_assert_int_eq(t, OSD_OBJ_ROOT);
	ck_assert_int_eq(osd_store_object_type(st, P1, 0, &t), 0);
	ck_assert_int_eq(t, OSD_OBJ_PARTITION);
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 9, &t), 0); /* i = 0 */
	ck_assert_int_eq(t, OSD_OBJ_COLLECTION);
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 8, &t), 0);
	ck_assert_int_eq(t, OSD_OBJ_USER);
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 10, &t), -ENOENT);
	ck_assert_int_eq(osd_store_object_stats(st, P1, &cnt, &max), 0);
	ck_assert_uint_eq(cnt, 10);
	ck_assert_uint_eq(max, O1 + 9);
	ck_assert_int_eq(osd_store_object_stats(st, P2, &cnt, &max), -ENOENT);
	/* Full list in pages of 4 from start O1+1. */
	ck_assert_int_eq(osd_store_object_list(st, P1, O1 + 1, 0, ids, 4, &n, &next), 0);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < 4; i++)
		ck_assert_uint_eq(ids[i], O1 + 1 + i);
	ck_assert_uint_eq(next, O1 + 5);
	ck_assert_int_eq(osd_store_object_list(st, P1, next, 0, ids, 16, &n, &next), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(next, 0);
	/* Collections only: i = 0,3,6,9 -> ids O1+9, O1+6, O1+3, O1+0. */
	ck_assert_int_eq(osd_store_object_list(st, P1, 0, OSD_OBJ_COLLECTION, ids, 16, &n, &next), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(ids[0], O1);
	ck_assert_uint_eq(ids[3], O1 + 9);
	ck_assert_int_eq(osd_store_object_list(st, P1, 0, OSD_OBJ_USER, ids, 16, &n, &next), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_int_eq(osd_store_object_list(st, P2, 0, 0, ids, 16, &n, &next), -ENOENT);
	/* Counts for LIST's ADDITIONAL LENGTH, without collecting the ids. */
	ck_assert_int_eq(osd_store_object_count(st, P1, O1 + 1, 0, &cnt), 0);
	ck_assert_uint_eq(cnt, 9);
	ck_assert_int_eq(osd_store_object_count(st, P1, 0, OSD_OBJ_COLLECTION, &cnt), 0);
	ck_assert_uint_eq(cnt, 4);
	ck_assert_int_eq(osd_store_object_count(st, P1, O1 + 4, OSD_OBJ_COLLECTION, &cnt), 0);
	ck_assert_uint_eq(cnt, 2);
	ck_assert_int_eq(osd_store_object_count(st, P1, 0, OSD_OBJ_USER, &cnt), 0);
	ck_assert_uint_eq(cnt, 6);
	ck_assert_int_eq(osd_store_object_count(st, P1, O1 + 10, 0, &cnt), 0);
	ck_assert_uint_eq(cnt, 0);
	ck_assert_int_eq(osd_store_object_count(st, P2, 0, 0, &cnt), -ENOENT);
	ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + 3, 0), 0);
	ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + 3, 0), -ENOENT);
	ck_assert_int_eq(osd_store_object_remove(st, P1, 0, 0), -EINVAL);
	reopen();
	ck_assert_int_eq(osd_store_object_list(st, P1, 0, 0, ids, 16, &n, &next), 0);
	ck_assert_uint_eq(n, 9);
	ck_assert_uint_eq(ids[2], O1 + 2);
	ck_assert_uint_eq(ids[3], O1 + 4);
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 9, &t), 0);
	ck_assert_int_eq(t, OSD_OBJ_COLLECTION);
	/* The collection count is rebuilt by the replay and follows removals. */
	ck_assert_int_eq(osd_store_object_count(st, P1, 0, OSD_OBJ_COLLECTION, &cnt), 0);
	ck_assert_uint_eq(cnt, 3);
	for (uint64_t c = 0; c <= 9; c += 3)
		if (c != 3)
			ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + c, 0), 0);
	ck_assert_int_eq(osd_store_object_count(st, P1, 0, OSD_OBJ_COLLECTION, &cnt), 0);
	ck_assert_uint_eq(cnt, 0);
	ck_assert_int_eq(osd_store_object_count(st, P1, 0, OSD_OBJ_USER, &cnt), 0);
	ck_assert_uint_eq(cnt, 6);
	ck_assert_int_eq(osd_store_object_count(st, P1, O1 + 5, OSD_OBJ_USER, &cnt), 0);
	ck_assert_uint_eq(cnt, 3);
	/* No collections left: a LIST of user objects copies the ids as they are,
	 * pages and continuation included. */
	ck_assert_int_eq(osd_store_object_list(st, P1, O1 + 5, OSD_OBJ_USER, ids, 2, &n, &next), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(ids[0], O1 + 5);
	ck_assert_uint_eq(ids[1], O1 + 7);
	ck_assert_uint_eq(next, O1 + 8);
	ck_assert_int_eq(osd_store_object_list(st, P1, next, OSD_OBJ_USER, ids, 2, &n, &next), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ids[0], O1 + 8);
	ck_assert_uint_eq(next, 0);
	ck_assert_int_eq(osd_store_object_list(st, P1, 0, OSD_OBJ_COLLECTION, ids, 16, &n, &next), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(next, 0);
}
END_TEST

/* ---- data ---- */

/* Lists @p all (sorted) from each of several starts, in pages of @p page,
 * and checks every id and continuation against it. */
static void check_listing(const uint64_t *all, size_t nall, size_t page)
{
	static uint64_t got[2048];
	size_t starts[] = { 0, 1, 255, 256, 257, 300, 511, 777, nall - 1 };

	ck_assert_uint_le(page, 2048);
	for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
		size_t at = starts[s], n;
		uint64_t next = all[at];

		do {
			ck_assert_int_eq(osd_store_object_list(st, P1, next, 0, got, page, &n, &next), 0);
			ck_assert_uint_eq(n, nall - at < page ? nall - at : page);
			for (size_t k = 0; k < n; k++)
				ck_assert_msg(got[k] == all[at + k], "start %zu page %zu: id %zu is %llx, not %llx",
					      starts[s], page, at + k, (unsigned long long)got[k],
					      (unsigned long long)all[at + k]);
			at += n;
			ck_assert_uint_eq(next, at < nall ? all[at] : 0);
		} while (next);
		ck_assert_uint_eq(at, nall);
	}
}

/*
 * The store copies a stretch of ids whose ends are as far apart as its
 * length from its first id without reading the rest (copy_ids): stretches
 * dense, dense but for one gap (its end one further), dense up to a gap at
 * a stretch's edge, and sparse, in pages of every size around the
 * stretch's 256, before and after a reopen.
 */
START_TEST(t_list_dense_runs)
{
	static uint64_t all[2048];
	size_t nall = 0, n;
	uint64_t next = 1;

	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	/* an empty partition (no ids array yet) */
	ck_assert_int_eq(osd_store_object_list(st, P1, 0, 0, all, 16, &n, &next), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(next, 0);
	for (uint64_t i = 0; i < 1500; i++) {
		uint64_t id = i < 600 ? O1 + i : i < 900 ? O1 + 1000 + i : O1 + 5000 + 3 * i;

		if (i == 300 || i == 767 || i == 768)
			continue; /* a gap inside a stretch, one at a stretch's edge */
		all[nall++] = id;
	}
	for (size_t k = nall; k-- > 0;) /* in reverse: every create shifts the index */
		ck_assert_int_eq(osd_store_object_create(st, P1, all[k], OSD_OBJ_USER, 0), 0);
	for (int round = 0; round < 2; round++) {
		size_t pages[] = { 1, 7, 255, 256, 257, 512, 1000, 2048 };

		for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
			check_listing(all, nall, pages[i]);
		reopen();
	}
}
END_TEST

START_TEST(t_data)
{
	uint8_t a[8192], b[8192];
	uint64_t len, used, off;
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1, OSD_OBJ_COLLECTION, 0), 0);
	ck_assert_int_eq(wr(P1, O1 + 1, 0, "x", 1), -EINVAL);
	ck_assert_int_eq(wr(P1, O1 + 2, 0, "x", 1), -ENOENT);
	ck_assert_int_eq(osd_store_length(st, P1, O1, &len), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(rd(P1, O1, 0, b, 10), 0);
	/* Two iovecs at offset 100. */
	th_fill(a, sizeof(a), 1, 0);
	struct iovec iov[2] = { { a, 1000 }, { a + 1000, 3000 } };
	ck_assert_int_eq(osd_store_write(st, P1, O1, 100, iov, 2, 0), 0);
	ck_assert_int_eq(osd_store_length(st, P1, O1, &len), 0);
	ck_assert_uint_eq(len, 4100);
	memset(b, 0xEE, sizeof(b));
	ck_assert_uint_eq(rd(P1, O1, 0, b, sizeof(b)), 4100); /* short at the length */
	ck_assert(all_zero(b, 100)); /* leading hole */
	ck_assert_mem_eq(b + 100, a, 4000);
	ck_assert_uint_eq(b[4100], 0xEE);
	struct iovec riov[2] = { { b, 7 }, { b + 7, 50 } };
	size_t n;
	ck_assert_int_eq(osd_store_read(st, P1, O1, 150, riov, 2, &n), 0);
	ck_assert_uint_eq(n, 57);
	ck_assert_mem_eq(b, a + 50, 57);
	ck_assert_uint_eq(rd(P1, O1, 5000, b, 10), 0);
	/* Append. */
	ck_assert_int_eq(osd_store_append(st, P1, O1, iov, 1, 0, &off), 0);
	ck_assert_uint_eq(off, 4100);
	ck_assert_int_eq(osd_store_append(st, P1, O1, iov, 1, OSD_STORE_FUA, &off), 0);
	ck_assert_uint_eq(off, 5100);
	ck_assert_int_eq(osd_store_length(st, P1, O1, &len), 0);
	ck_assert_uint_eq(len, 6100);
	/* Truncate down, then up: the extension reads zeros. */
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, 200, 0), 0);
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, 300, 0), 0);
	ck_assert_uint_eq(rd(P1, O1, 0, b, sizeof(b)), 300);
	ck_assert_mem_eq(b + 100, a, 100);
	ck_assert(all_zero(b + 200, 100));
	/* Punch a large region: it reads zeros, length unchanged, used drops. */
	uint8_t *big = malloc(1 << 20);
	th_fill(big, 1 << 20, 2, 0);
	struct iovec biov = { big, 1 << 20 };
	ck_assert_int_eq(osd_store_write(st, P1, O1, 0, &biov, 1, 0), 0);
	ck_assert_int_eq(osd_store_used(st, P1, O1, &used), 0);
	ck_assert_uint_ge(used, 1 << 20);
	ck_assert_int_eq(osd_store_punch(st, P1, O1, 4096, (1 << 20) - 8192, 0), 0);
	uint64_t used2, pused, rused;
	ck_assert_int_eq(osd_store_used(st, P1, O1, &used2), 0);
	ck_assert_uint_le(used2, 16384);
	ck_assert_int_eq(osd_store_used(st, P1, 0, &pused), 0);
	ck_assert_int_eq(osd_store_used(st, 0, 0, &rused), 0);
	ck_assert_uint_eq(pused, used2);
	ck_assert_uint_eq(rused, used2);
	ck_assert_int_eq(osd_store_length(st, P1, O1, &len), 0);
	ck_assert_uint_eq(len, 1 << 20);
	ck_assert_uint_eq(rd(P1, O1, 0, big, 1 << 20), 1 << 20);
	ck_assert(th_check(big, 4096, 2, 0));
	ck_assert(all_zero(big + 4096, (1 << 20) - 8192));
	ck_assert(th_check(big + (1 << 20) - 4096, 4096, 2, (1 << 20) - 4096));
	/* Punch past the length is clipped; the length does not change. */
	ck_assert_int_eq(osd_store_punch(st, P1, O1, (1 << 20) - 10, 1000, 0), 0);
	ck_assert_int_eq(osd_store_length(st, P1, O1, &len), 0);
	ck_assert_uint_eq(len, 1 << 20);
	ck_assert_int_eq(osd_store_flush_object(st, P1, O1), 0);
	reopen();
	ck_assert_int_eq(osd_store_length(st, P1, O1, &len), 0);
	ck_assert_uint_eq(len, 1 << 20);
	ck_assert_uint_eq(rd(P1, O1, 0, big, 1 << 20), 1 << 20);
	ck_assert(th_check(big, 4096, 2, 0));
	ck_assert(all_zero(big + (1 << 20) - 10, 10));
	ck_assert_int_eq(osd_store_used(st, P1, 0, &pused), 0);
	ck_assert_int_eq(osd_store_used(st, P1, O1, &used2), 0);
	ck_assert_uint_eq(pused, used2);
	free(big);
}
END_TEST

START_TEST(t_remove_recreate)
{
	uint8_t a[5000], b[5000];
	uint64_t len, used;
	use_files();
	th_fill(a, sizeof(a), 3, 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(P1, O1, 0, a, sizeof(a)), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x10000, 1, "v", 1, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(osd_store_object_remove(st, P1, O1, 0), 0);
	ck_assert_int_eq(osd_store_used(st, P1, 0, &used), 0);
	ck_assert_uint_eq(used, 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_length(st, P1, O1, &len), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x10000, 1, NULL, 0, NULL), -ENODATA);
	ck_assert_int_eq(wr(P1, O1, 10, "new", 3), 0);
	reopen();
	ck_assert_int_eq(osd_store_length(st, P1, O1, &len), 0);
	ck_assert_uint_eq(len, 13);
	ck_assert_uint_eq(rd(P1, O1, 0, b, sizeof(b)), 13);
	ck_assert_mem_eq(b + 10, "new", 3);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x10000, 1, NULL, 0, NULL), -ENODATA);
	/* Exactly one data file and its checksum sidecar remain: the removed
	 * object's files left (for the pool). */
	ck_assert_uint_eq(th_data_entries(dir, NULL), 2);
}
END_TEST

/* ---- lazy fan-out directories ---- */

/* Fan-out directories made so far (data/ also holds pool/). */
static int data_dirs(void)
{
	char p[4300];
	int n = 0;
	snprintf(p, sizeof(p), "%s/data", dir);
	DIR *dh = opendir(p);
	ck_assert_ptr_nonnull(dh);
	struct dirent *de;
	while ((de = readdir(dh)))
		n += de->d_name[0] != '.' && strlen(de->d_name) == 2;
	closedir(dh);
	return n;
}

/* Remove every fan-out directory, as a store made before they were made up front. */
static void remove_data_dirs(void)
{
	char p[4300];

	for (unsigned d = 0; d < 256; d++) {
		snprintf(p, sizeof(p), "%s/data/%02x", dir, d);
		ck_assert_int_eq(rmdir(p), 0);
	}
}

START_TEST(t_fanout)
{
	uint8_t b[8];
	use_files();
	/* A new store has its 256 fan-out directories. A store without them (made
	 * before they were made up front) gets each when its first file needs it;
	 * CREATE makes none. */
	ck_assert_int_eq(data_dirs(), 256);
	remove_data_dirs();
	reopen();
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(data_dirs(), 0);
	/* The first file of a directory makes it; reopening scans what exists. */
	ck_assert_int_eq(wr(P1, O1, 0, "first", 5), 0);
	ck_assert_int_eq(data_dirs(), 1);
	ck_assert_int_eq(wr(P1, O1, 5, "+", 1), 0);
	ck_assert_int_eq(data_dirs(), 1);
	ck_assert_int_eq(wr(P1, O1 + 1, 0, "second", 6), 0);
	ck_assert_int_eq(data_dirs(), 2);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	reopen();
	ck_assert_uint_eq(rd(P1, O1, 0, b, sizeof(b)), 6);
	ck_assert_mem_eq(b, "first+", 6);
	ck_assert_uint_eq(rd(P1, O1 + 1, 0, b, sizeof(b)), 6);
	ck_assert_mem_eq(b, "second", 6);
}
END_TEST

/* ---- recycled data files (data/pool) ---- */

/* Files in data/pool; each must be empty (no space, no old data). @p name
 * gets the last one's path when not NULL. */
static int pool_files(char *name, size_t len)
{
	char p[4300], f[4600];
	int n = 0;
	snprintf(p, sizeof(p), "%s/data/pool", dir);
	DIR *dh = opendir(p);
	ck_assert_ptr_nonnull(dh);
	struct dirent *de;
	while ((de = readdir(dh))) {
		struct stat sb;
		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s", p, de->d_name);
		ck_assert_int_eq(stat(f, &sb), 0);
		ck_assert_int_eq(sb.st_size, 0);
		ck_assert_int_eq(sb.st_blocks, 0);
		if (name)
			snprintf(name, len, "%s", f);
		n++;
	}
	closedir(dh);
	return n;
}

/* Create, write @p len bytes of pattern @p seed, remove: its file is pooled
 * once the removal is durable. */
static void write_and_remove(uint64_t oid, size_t len, uint64_t seed)
{
	uint8_t buf[8192];
	ck_assert_uint_le(len, sizeof(buf));
	th_fill(buf, len, seed, 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, oid, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(P1, oid, 0, buf, len), 0);
	ck_assert_int_eq(osd_store_object_remove(st, P1, oid, 0), 0);
}

START_TEST(t_recycle)
{
	uint8_t b[64];
	uint64_t len, used;
	char pooled[4600], elsewhere[4300];
	use_files();

	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(pool_files(NULL, 0), 0);
	write_and_remove(O1, 8192, 7);
	/* Not before the REMOVE record is durable: a crash would bring it back. */
	ck_assert_int_eq(pool_files(NULL, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(pool_files(NULL, 0), 2); /* the data file and its checksums */
	/* The next object's files come from the pool, empty: no old bytes. */
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(P1, O1 + 1, 10, "new", 3), 0);
	ck_assert_int_eq(pool_files(NULL, 0), 0);
	ck_assert_int_eq(osd_store_length(st, P1, O1 + 1, &len), 0);
	ck_assert_uint_eq(len, 13);
	ck_assert_int_eq(osd_store_used(st, P1, O1 + 1, &used), 0);
	ck_assert_uint_le(used, 8192);
	memset(b, 0xee, sizeof(b));
	ck_assert_uint_eq(rd(P1, O1 + 1, 0, b, sizeof(b)), 13);
	ck_assert(all_zero(b, 10));
	ck_assert_mem_eq(b + 10, "new", 3);
	/* A reopened store adopts its pool and hands it out again. */
	write_and_remove(O1 + 2, 4096, 8);
	reopen();
	ck_assert_int_eq(pool_files(pooled, sizeof(pooled)), 2);
	ck_assert_int_eq(wr(P1, O1 + 1, 13, "!", 1), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 3, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(P1, O1 + 3, 0, "third", 5), 0);
	ck_assert_int_eq(pool_files(NULL, 0), 0);
	ck_assert_uint_eq(rd(P1, O1 + 3, 0, b, sizeof(b)), 5);
	ck_assert_mem_eq(b, "third", 5);
	ck_assert_uint_eq(rd(P1, O1 + 1, 0, b, sizeof(b)), 14);
	ck_assert_mem_eq(b + 10, "new!", 4);
	/* A pooled name with a second link (a crash without a journal can leave
	 * a renamed file under both names) is deleted, never handed out. */
	write_and_remove(O1 + 4, 100, 9);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(pool_files(pooled, sizeof(pooled)), 2);
	osd_store_close(st);
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", dir);
	ck_assert_int_eq(link(pooled, elsewhere), 0);
	/* So is a symlink; names that are not 16 hex digits are left alone. */
	char junk[4300], target[4300];
	snprintf(junk, sizeof(junk), "%s/data/pool/00000000000000aa", dir);
	ck_assert_int_eq(symlink(elsewhere, junk), 0);
	snprintf(target, sizeof(target), "%s/data/pool/not-a-pool-file", dir);
	ck_assert_int_eq(mkdir(target, 0755), 0);
	st = th_open_files(dir, 1);
	ck_assert_int_eq(rmdir(target), 0); /* left alone */
	ck_assert_int_eq(pool_files(NULL, 0), 1); /* the other file of the pair stays */
	ck_assert_int_eq(access(elsewhere, F_OK), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 6, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(P1, O1 + 6, 0, "sixth", 5), 0);
	struct stat esb;
	ck_assert_int_eq(stat(elsewhere, &esb), 0);
	ck_assert_int_eq(esb.st_size, 0); /* the store wrote to a file of its own */
	/* FORMAT empties the pool too. */
	write_and_remove(O1 + 5, 100, 10);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(pool_files(NULL, 0), 2);
	ck_assert_int_eq(osd_store_format(st, 0), 0);
	ck_assert_int_eq(pool_files(NULL, 0), 0);
}
END_TEST

/* Setting the value an attribute holds logs nothing, unless FUA asks for durability. */
START_TEST(t_attr_same_value)
{
	uint8_t v[2];
	size_t len = 0;
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, 0, 0x10000, 1, "ab", 2, 0), 0);
	uint64_t end = osd__log_end(&st->log);
	ck_assert_int_eq(osd_store_attr_set(st, P1, 0, 0x10000, 1, "ab", 2, 0), 0);
	ck_assert_uint_eq(osd__log_end(&st->log), end);
	ck_assert_int_eq(osd_store_attr_set(st, P1, 0, 0x10000, 1, "ab", 2, OSD_STORE_FUA), 0);
	ck_assert_uint_gt(osd__log_end(&st->log), end);
	end = osd__log_end(&st->log);
	ck_assert_int_eq(osd_store_attr_set(st, P1, 0, 0x10000, 1, "ac", 2, 0), 0);
	ck_assert_uint_gt(osd__log_end(&st->log), end);
	reopen();
	ck_assert_int_eq(osd_store_attr_get(st, P1, 0, 0x10000, 1, v, 2, &len), 0);
	ck_assert_uint_eq(len, 2);
	ck_assert_mem_eq(v, "ac", 2);
}
END_TEST

/*
 * OSD_STORE_LAZY (access times, docs/target-store.md "Access times"): in
 * memory only, never logged by itself, a flush or close; logged first by the
 * object's next logged set, even one of an unchanged value.
 */
START_TEST(t_attr_lazy)
{
	uint8_t v[2];
	size_t len = 0;
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 4, "t0", 2, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 5, "m0", 2, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	uint64_t end = osd__log_end(&st->log);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 4, "t1", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 2, "a1", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 4, v, 2, &len), 0);
	ck_assert_mem_eq(v, "t1", 2);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_uint_eq(osd__log_end(&st->log), end);
	reopen(); /* lost: nothing persisted them */
	end = osd__log_end(&st->log);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 4, v, 2, &len), 0);
	ck_assert_mem_eq(v, "t0", 2);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 2, v, 2, &len), -ENODATA);
	/* A lazy value, then a logged set of the same bytes: logged. */
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 4, "t2", 2, OSD_STORE_LAZY), 0);
	ck_assert_uint_eq(osd__log_end(&st->log), end);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 4, "t2", 2, 0), 0);
	ck_assert_uint_eq(osd__log_end(&st->log), end + OSD__REC_HDR + 24 + 2);
	/* Lazy values of O1, then an unchanged logged set: the lazy ones only. */
	end = osd__log_end(&st->log);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 4, "t3", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 2, "a3", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 5, "m0", 2, 0), 0);
	/* ...in one ATTRS record: pid, oid, then two entries of 10 + 2 bytes */
	ck_assert_uint_eq(osd__log_end(&st->log), end + OSD__REC_HDR + 16 + 2 * (10 + 2));
	/* Once logged they are ordinary: a lazy set of the same bytes is a no-op. */
	end = osd__log_end(&st->log);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 5, "m0", 2, 0), 0);
	ck_assert_uint_eq(osd__log_end(&st->log), end);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 4, "t4", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 5, "m4", 2, 0), 0);
	reopen();
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 4, v, 2, &len), 0);
	ck_assert_mem_eq(v, "t4", 2);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 2, v, 2, &len), 0);
	ck_assert_mem_eq(v, "a3", 2);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 5, v, 2, &len), 0);
	ck_assert_mem_eq(v, "m4", 2);
	/* A checkpoint saves lazy values with the rest. */
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 4, "t5", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd__store_compact(st), 0);
	reopen();
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 4, v, 2, &len), 0);
	ck_assert_mem_eq(v, "t5", 2);
}
END_TEST

/* ---- attributes ---- */

struct seen {
	uint32_t page[16], num[16];
	size_t len[16];
	int n, stop_at;
};

static int collect(uint32_t page, uint32_t num, const void *val, size_t len, void *payload)
{
	struct seen *s = payload;
	(void)val;
	if (s->n == s->stop_at)
		return 42;
	s->page[s->n] = page;
	s->num[s->n] = num;
	s->len[s->n] = len;
	s->n++;
	return 0;
}

START_TEST(t_attrs)
{
	uint8_t buf[0x10000], v[0xFFFF];
	size_t len;
	th_fill(v, sizeof(v), 4, 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1 + 1, 1, 1, buf, 10, &len), -ENOENT);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 1, 1, buf, 10, &len), -ENODATA);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + 1, 1, 1, "a", 1, 0), -ENOENT);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 1, 1, v, 0xFFFF, 0), -EINVAL);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x30000, 9, v, 0xFFFE, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x30000, 2, "two", 3, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x20000, 7, "seven", 5, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x30000, 2, "TWO!", 4, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x40000, 1, "gone", 4, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x40000, 1, NULL, 0, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x40000, 5, NULL, 0, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, 0, 0, 0x10000, 1, "root", 4, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, 0, 0x10000, 1, "part", 4, OSD_STORE_FUA), 0);
	for (int pass = 0; pass < 2; pass++) {
		ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x30000, 2, buf, 2, &len), 0);
		ck_assert_uint_eq(len, 4);
		ck_assert_mem_eq(buf, "TW", 2); /* truncated copy, full length */
		ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x30000, 9, buf, sizeof(buf), &len), 0);
		ck_assert_uint_eq(len, 0xFFFE);
		ck_assert_mem_eq(buf, v, 0xFFFE);
		ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x40000, 1, buf, 10, &len), -ENODATA);
		ck_assert_int_eq(osd_store_attr_get(st, 0, 0, 0x10000, 1, buf, 10, &len), 0);
		ck_assert_mem_eq(buf, "root", 4);
		ck_assert_int_eq(osd_store_attr_get(st, P1, 0, 0x10000, 1, buf, 10, &len), 0);
		ck_assert_mem_eq(buf, "part", 4);
		struct seen s = { .stop_at = -1 };
		ck_assert_int_eq(osd_store_attr_iterate(st, P1, O1, OSD_STORE_ALL_PAGES, collect, &s), 0);
		ck_assert_int_eq(s.n, 3);
		ck_assert_uint_eq(s.page[0], 0x20000);
		ck_assert_uint_eq(s.num[0], 7);
		ck_assert_uint_eq(s.page[1], 0x30000);
		ck_assert_uint_eq(s.num[1], 2);
		ck_assert_uint_eq(s.len[1], 4);
		ck_assert_uint_eq(s.num[2], 9);
		struct seen s2 = { .stop_at = -1 };
		ck_assert_int_eq(osd_store_attr_iterate(st, P1, O1, 0x30000, collect, &s2), 0);
		ck_assert_int_eq(s2.n, 2);
		ck_assert_uint_eq(s2.num[0], 2);
		struct seen s3 = { .stop_at = 1 };
		ck_assert_int_eq(osd_store_attr_iterate(st, P1, O1, OSD_STORE_ALL_PAGES, collect, &s3), 42);
		struct seen s4 = { .stop_at = -1 };
		ck_assert_int_eq(osd_store_attr_iterate(st, P1, O1, 0x25000, collect, &s4), 0);
		ck_assert_int_eq(s4.n, 0);
		ck_assert_int_eq(osd_store_attr_iterate(st, P1, O1 + 5, 0, collect, &s4), -ENOENT);
		reopen();
	}
	ck_assert_int_eq(osd__store_compact(st), 0);
	reopen();
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x30000, 9, buf, sizeof(buf), &len), 0);
	ck_assert_mem_eq(buf, v, 0xFFFE);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x30000, 2, buf, sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, 4);
}
END_TEST

/* ---- capacity and quotas ---- */

START_TEST(t_capacity)
{
	uint8_t a[8192];
	uint64_t total, used, q;
	th_fill(a, sizeof(a), 5, 0);
	ck_assert_int_eq(osd_store_capacity(st, &total, &used), 0);
	ck_assert_uint_gt(total, 0);
	ck_assert_uint_eq(used, 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_set_capacity(st, 12 * 1024, 0), 0);
	ck_assert_int_eq(wr(P1, O1, 0, a, 8192), 0);
	ck_assert_int_eq(wr(P1, O1, 8192, a, 8192), -ENOSPC);
	ck_assert_int_eq(wr(P1, O1, 60 * 1024, a, 8192), -ENOSPC); /* sparse: charged 8192 */
	ck_assert_int_eq(wr(P1, O1, 1ull << 30, a, 1), 0);         /* 1 byte, not 1 GiB */
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, 8192, 0), 0);
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, 1 << 20, 0), -ENOSPC); /* in full */
	ck_assert_int_eq(wr(P1, O1, 0, a, 8192), 0); /* overwrite is free */
	ck_assert_int_eq(osd_store_set_capacity(st, 0, 0), 0);
	ck_assert_int_eq(osd_store_get_quota(st, P1, 0, &q), 0);
	ck_assert_uint_eq(q, OSD_STORE_NO_QUOTA);
	ck_assert_int_eq(osd_store_set_quota(st, 0, 0, 5, 0), -EINVAL);
	ck_assert_int_eq(osd_store_set_quota(st, P2, 0, 5, 0), -ENOENT);
	ck_assert_int_eq(osd_store_set_quota(st, P1, 0, 20000, 0), 0);
	ck_assert_int_eq(wr(P1, O1 + 1, 0, a, 8192), 0);
	ck_assert_int_eq(wr(P1, O1 + 1, 8192, a, 8192), -EDQUOT); /* 8192 used + 8192 + 8192 */
	ck_assert_int_eq(osd_store_set_quota(st, P1, 0, OSD_STORE_NO_QUOTA, 0), 0);
	ck_assert_int_eq(osd_store_set_quota(st, P1, O1 + 1, 9000, 0), 0);
	ck_assert_int_eq(wr(P1, O1 + 1, 8192, a, 4096), -EDQUOT);
	ck_assert_int_eq(wr(P1, O1, 8192, a, 4096), 0);
	ck_assert_int_eq(osd_store_capacity(st, NULL, &used), 0);
	ck_assert_uint_eq(used, 8192 + 4096 + 8192);
	ck_assert_int_eq(osd_store_set_capacity(st, 123456789, 0), 0);
	reopen();
	ck_assert_int_eq(osd_store_capacity(st, &total, &used), 0);
	ck_assert_uint_eq(total, 123456789);
	ck_assert_uint_eq(used, 8192 + 4096 + 8192);
	ck_assert_int_eq(osd_store_get_quota(st, P1, O1 + 1, &q), 0);
	ck_assert_uint_eq(q, 9000);
	ck_assert_int_eq(osd_store_get_quota(st, P1, 0, &q), 0);
	ck_assert_uint_eq(q, OSD_STORE_NO_QUOTA);
}
END_TEST


START_TEST(t_capacity_option)
{
	struct osd_store_options o = { .create = 0, .capacity = 1 << 20 };
	uint64_t total;
	osd_store_close(st);
	ck_assert_int_eq(osd_store_open(&st, dir, &o, NULL, 0), 0);
	ck_assert_int_eq(osd_store_capacity(st, &total, NULL), 0);
	ck_assert_uint_eq(total, 1 << 20);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, 2 << 20, 0), -ENOSPC);
	ck_assert_int_eq(osd_store_set_capacity(st, 4 << 20, 0), 0);
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, 2 << 20, 0), 0);
	osd_store_close(st);
	/* The persisted capacity wins over the option; the option is not persisted. */
	ck_assert_int_eq(osd_store_open(&st, dir, &o, NULL, 0), 0);
	ck_assert_int_eq(osd_store_capacity(st, &total, NULL), 0);
	ck_assert_uint_eq(total, 4 << 20);
	ck_assert_int_eq(osd_store_set_capacity(st, 0, 0), 0);
	ck_assert_int_eq(osd_store_capacity(st, &total, NULL), 0);
	ck_assert_uint_eq(total, 1 << 20);
	reopen();
	ck_assert_int_eq(osd_store_capacity(st, &total, NULL), 0);
	ck_assert_uint_gt(total, 4 << 20); /* the filesystem's size */
}
END_TEST

START_TEST(t_format)
{
	uint64_t n, total, used;
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(P1, O1, 0, "data", 4), 0);
	ck_assert_int_eq(osd_store_attr_set(st, 0, 0, 1, 1, "r", 1, 0), 0);
	ck_assert_int_eq(osd_store_format(st, 1 << 30), 0);
	ck_assert_int_eq(osd_store_partition_stats(st, &n, NULL), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(osd_store_attr_get(st, 0, 0, 1, 1, NULL, 0, NULL), -ENODATA);
	ck_assert_int_eq(osd_store_capacity(st, &total, &used), 0);
	ck_assert_uint_eq(total, 1 << 30);
	ck_assert_uint_eq(used, 0);
	ck_assert_int_eq(osd_store_partition_create(st, P2, 0), 0);
	reopen();
	ck_assert_int_eq(osd_store_partition_exists(st, P1), 0);
	ck_assert_int_eq(osd_store_partition_exists(st, P2), 1);
	ck_assert_int_eq(osd_store_capacity(st, &total, NULL), 0);
	ck_assert_uint_eq(total, 1 << 30);
}
END_TEST

/* ---- recovery ---- */

static void populate(int count)
{
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	for (int i = 0; i < count; i++) {
		uint32_t v = (uint32_t)i * 3;
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + (uint64_t)i, OSD_OBJ_USER, 0), 0);
		ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + (uint64_t)i, 0x10000, 1, &v, 4, 0), 0);
	}
	ck_assert_int_eq(osd_store_flush_all(st), 0);
}

static int count_valid(int count)
{
	int ok = 0;
	for (int i = 0; i < count; i++) {
		uint32_t v = 0;
		size_t len;
		if (osd_store_attr_get(st, P1, O1 + (uint64_t)i, 0x10000, 1, &v, 4, &len) == 0) {
			ck_assert_uint_eq(len, 4);
			ck_assert_uint_eq(v, (uint32_t)i * 3);
			ok++;
		}
	}
	return ok;
}

static off_t log_size(void)
{
	char p[4200];
	struct stat sb;
	th_path(p, sizeof(p), dir, "log");
	ck_assert_int_eq(stat(p, &sb), 0);
	return sb.st_size;
}

START_TEST(t_torn_log)
{
	char p[4200];
	populate(50);
	osd_store_close(st);
	st = NULL;
	th_path(p, sizeof(p), dir, "log");
	off_t sz = log_size();
	/* Tear the last record (an ATTR record of 24 + 4 bytes payload). */
	ck_assert_int_eq(truncate(p, sz - 5), 0);
	st = th_open(dir);
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), "cut"));
	ck_assert_int_eq(count_valid(50), 49);
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 49, NULL), 0); /* create survived */
	ck_assert_int_eq(log_size(), sz - 9 - 28);
	/* New records go after the last good one and survive. */
	uint32_t v = 49 * 3;
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + 49, 0x10000, 1, &v, 4, 0), 0);
	reopen();
	ck_assert_int_eq(count_valid(50), 50);
	ck_assert_str_eq(osd_store_error(st), "");
}
END_TEST

START_TEST(t_garbage_log)
{
	char p[4200];
	populate(40);
	osd_store_close(st);
	st = NULL;
	th_path(p, sizeof(p), dir, "log");
	off_t sz = log_size();
	uint8_t junk[3000];
	th_fill(junk, sizeof(junk), 9, 0);
	int fd = open(p, O_WRONLY | O_APPEND);
	ck_assert_int_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	/* A well-formed header with an impossible length, then a valid-looking CRC
	 * over an unknown type: both must end replay without harm. */
	uint8_t rec[OSD__REC_HDR + 4];
	osd__rec_encode(rec, 200, "abcd", 4, NULL, 0);
	ck_assert_int_eq(write(fd, rec, sizeof(rec)), (ssize_t)sizeof(rec));
	close(fd);
	st = th_open(dir);
	ck_assert_int_eq(count_valid(40), 40);
	ck_assert_int_eq(log_size(), sz);
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), "cut"));
	/* Unknown type right after valid records is cut as well. */
	osd_store_close(st);
	fd = open(p, O_WRONLY | O_APPEND);
	ck_assert_int_eq(write(fd, rec, sizeof(rec)), (ssize_t)sizeof(rec));
	close(fd);
	st = th_open(dir);
	ck_assert_int_eq(log_size(), sz);
	ck_assert_int_eq(count_valid(40), 40);
}
END_TEST

/* ---- ATTRS records (log version 2) ---- */

/* The log's bytes from @p from to its end (malloc'd), their count in @p len. */
static uint8_t *log_bytes(off_t from, size_t *len)
{
	char p[4200];
	th_path(p, sizeof(p), dir, "log");
	int fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	off_t end = lseek(fd, 0, SEEK_END);
	ck_assert_int_ge(end, from);
	*len = (size_t)(end - from);
	uint8_t *b = malloc(*len + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(pread(fd, b, *len, from), (ssize_t)*len);
	close(fd);
	return b;
}

static void log_put(off_t at, const void *b, size_t len)
{
	char p[4200];
	th_path(p, sizeof(p), dir, "log");
	int fd = open(p, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, b, len, at), (ssize_t)len);
	close(fd);
}

static void put_crc(uint8_t *rec, size_t len)
{
	uint32_t crc = osd__crc32c(0, rec + 4, len - 4);
	rec[0] = (uint8_t)(crc >> 24);
	rec[1] = (uint8_t)(crc >> 16);
	rec[2] = (uint8_t)(crc >> 8);
	rec[3] = (uint8_t)crc;
}

/* Hand-written ATTRS record of P1/O1: entries (3, 2, "a1") and (3, 5, "m1"). */
#define ATTRS_REC_LEN (OSD__REC_HDR + 16 + 2 * 12)
static void attrs_rec(uint8_t exp[ATTRS_REC_LEN])
{
	static const uint8_t b[ATTRS_REC_LEN] = {
		0, 0, 0, 0, 0, 0, 0, 40, 10,
		0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0,
		0, 0, 0, 3, 0, 0, 0, 2, 0, 2, 'a', '1',
		0, 0, 0, 3, 0, 0, 0, 5, 0, 2, 'm', '1' };
	memcpy(exp, b, sizeof(b));
	put_crc(exp, sizeof(b));
}

static void get2(uint64_t oid, uint32_t num, const char *want)
{
	uint8_t v[2];
	size_t len = 0;
	int r = osd_store_attr_get(st, P1, oid, 0x3, num, v, 2, &len);
	if (!want) {
		ck_assert_int_eq(r, -ENODATA);
		return;
	}
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(len, 2);
	ck_assert_mem_eq(v, want, 2);
}

/* O1's attributes (3, 2) and (3, 5): @p a and @p m, or NULL for none. */
static void get_am(const char *a, const char *m)
{
	get2(O1, 2, a);
	get2(O1, 5, m);
}

/* A lazy (3, 2) = @p a, then a logged (3, 5) = @p m of O1, made durable. */
static void set_am(const char *a, const char *m)
{
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 2, a, 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 5, m, 2, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
}

/* Close the store, put @p rec (@p len bytes, its CRC made good) at byte
 * @p at of the log (-1: at its end once closed) and open it again: what the
 * open says names @p said. Returns where the record went. */
static off_t reopen_with_rec(off_t at, uint8_t *rec, size_t len, const char *said)
{
	osd_store_close(st);
	st = NULL;
	if (at < 0)
		at = log_size();
	put_crc(rec, len);
	log_put(at, rec, len);
	st = th_open(dir);
	ck_assert_msg(strstr(osd_store_error(st), said), "%s", osd_store_error(st));
	return at;
}

/* A lazy access time, then a logged set: exactly these bytes, one record. */
static off_t write_attrs_rec(void)
{
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 2, "a1", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	off_t before = log_size();
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 5, "m1", 2, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(log_size(), before + ATTRS_REC_LEN);
	return before;
}

/* A record of @p type with a payload of @p len bytes: (pid, oid) then zeros. */
static size_t small_rec(uint8_t *rec, uint8_t type, uint32_t len, uint64_t pid, uint64_t oid)
{
	uint8_t p[24] = { 0 };
	osd__put_be64(p, pid);
	osd__put_be64(p + 8, oid);
	osd__rec_encode(rec, type, p, len, NULL, 0);
	return OSD__REC_HDR + len;
}

/* DATA and GENS records (log version 3) that do not apply, at the log's end:
 * cut as a torn tail, the store as before; in a version 1 log they are of
 * an unknown type. A well-formed DATA record of an object reads its file. */
START_TEST(t_file_records_replay)
{
	uint8_t rec[OSD__REC_HDR + 24], buf[8];
	size_t n, got = 0;
	static uint8_t data[6000];
	struct iovec iov = { data, sizeof(data) };
	th_fill(data, sizeof(data), 3, 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_write(st, P1, O1, 0, &iov, 1, 0), 0);
	reopen();
	n = small_rec(rec, OSD__REC_DATA, 16, P1, O1 + 7); /* no such object */
	off_t at = reopen_with_rec(-1, rec, n, "a record that does not apply");
	ck_assert_int_eq(log_size(), at);
	n = small_rec(rec, OSD__REC_DATA, 15, P1, O1); /* one byte short */
	reopen_with_rec(at, rec, n, "a record that does not apply");
	ck_assert_int_eq(log_size(), at);
	n = small_rec(rec, OSD__REC_GENS, 7, 0, 0);
	reopen_with_rec(at, rec, n, "a record that does not apply");
	ck_assert_int_eq(log_size(), at);
	n = small_rec(rec, OSD__REC_DATA, 16, P1, 0); /* a partition */
	reopen_with_rec(at, rec, n, "a record that does not apply");
	ck_assert_int_eq(log_size(), at);
	/* well-formed: applies, the object reads its bytes */
	n = small_rec(rec, OSD__REC_DATA, 16, P1, O1);
	reopen_with_rec(at, rec, n, "");
	ck_assert_int_eq(log_size(), at + (off_t)n);
	struct iovec rv = { buf, sizeof(buf) };
	ck_assert_int_eq(osd_store_read(st, P1, O1, 0, &rv, 1, &got), 0);
	ck_assert_uint_eq(got, sizeof(buf));
	ck_assert_mem_eq(buf, data, sizeof(buf));
	/* a version 1 log knows no DATA record */
	uint8_t hdr[OSD__FILE_HDR];
	osd_store_close(st);
	st = NULL;
	th_log_downgrade(dir, 1, hdr);
	st = th_open(dir);
	ck_assert_str_eq(osd_store_error(st), "");
	n = small_rec(rec, OSD__REC_DATA, 16, P1, O1);
	at = reopen_with_rec(-1, rec, n, "an unknown record type");
	ck_assert_int_eq(log_size(), at);
	ck_assert_int_eq(osd_store_read(st, P1, O1, 0, &rv, 1, &got), 0);
	ck_assert_mem_eq(buf, data, sizeof(buf));
}
END_TEST

/*
 * osd_store_attrs_set() logs a command's values as one record, after the
 * object's lazy values (an ATTRS record, byte for byte); values the
 * attributes hold are left out, and all of them unchanged log nothing.
 */
START_TEST(t_attrs_set_batch)
{
	static const uint8_t b[OSD__REC_HDR + 16 + 3 * 12] = {
		0, 0, 0, 0, 0, 0, 0, 52, 10,
		0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0,
		0, 0, 0, 3, 0, 0, 0, 2, 0, 2, 'a', '1',
		0, 0, 0, 3, 0, 0, 0, 5, 0, 2, 'm', '1',
		0, 0, 0, 3, 0, 0, 0, 6, 0, 2, 'x', '1' };
	uint8_t exp[sizeof(b)];
	const struct osd_store_attr v[2] = { { 0x3, 5, "m1", 2 }, { 0x3, 6, "x1", 2 } };
	const struct osd_store_attr w[2] = { { 0x3, 5, "m1", 2 }, { 0x3, 6, "x2", 2 } };
	const struct osd_store_attr bad = { 0x3, 7, "z", OSD_STORE_ATTR_MAX + 1 };
	size_t len;
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 2, "a1", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	off_t before = log_size();
	ck_assert_int_eq(osd_store_attrs_set(st, P1, O1, v, 2, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	memcpy(exp, b, sizeof(b));
	put_crc(exp, sizeof(exp));
	uint8_t *got = log_bytes(before, &len);
	ck_assert_uint_eq(len, sizeof(exp));
	ck_assert_mem_eq(got, exp, sizeof(exp));
	free(got);
	/* the same values: nothing; one changed: that one alone (an ATTR record) */
	before = log_size();
	ck_assert_int_eq(osd_store_attrs_set(st, P1, O1, v, 2, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(log_size(), before);
	ck_assert_int_eq(osd_store_attrs_set(st, P1, O1, w, 2, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	got = log_bytes(before, &len);
	ck_assert_uint_eq(len, OSD__REC_HDR + 24 + 2);
	ck_assert_uint_eq(got[8], OSD__REC_ATTR);
	ck_assert_mem_eq(got + OSD__REC_HDR + 16, "\0\0\0\3\0\0\0\6x2", 10);
	free(got);
	/* refused whole: a value too long, no object */
	before = log_size();
	ck_assert_int_eq(osd_store_attrs_set(st, P1, O1, &bad, 1, 0), -EINVAL);
	ck_assert_int_eq(osd_store_attrs_set(st, P1, O1 + 1, w, 2, 0), -ENOENT);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(log_size(), before);
	reopen();
	get2(O1, 2, "a1");
	get2(O1, 5, "m1");
	get2(O1, 6, "x2");
	get2(O1, 7, NULL);
}
END_TEST

START_TEST(t_attrs_record_bytes)
{
	uint8_t exp[ATTRS_REC_LEN];
	size_t len;
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	/* A new store's log is of version 3. */
	uint8_t *got = log_bytes(0, &len);
	ck_assert_mem_eq(got, "OSDLOG01\0\0\0\3\0\0\0\0", 16);
	free(got);
	off_t before = write_attrs_rec();
	attrs_rec(exp);
	got = log_bytes(before, &len);
	ck_assert_uint_eq(len, sizeof(exp));
	ck_assert_mem_eq(got, exp, sizeof(exp));
	struct osd__rec rec;
	ck_assert_uint_eq(osd__rec_parse(got, len, &rec), len);
	ck_assert_uint_eq(rec.type, OSD__REC_ATTRS);
	free(got);
	/* One value and no lazy one: still a plain ATTR record. */
	before = log_size();
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 5, "m2", 2, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	got = log_bytes(before, &len);
	ck_assert_uint_eq(len, OSD__REC_HDR + 24 + 2);
	ck_assert_uint_eq(got[8], OSD__REC_ATTR);
	free(got);
	/* Lazy values of more than one record's worth: split, all replayed. */
	static uint8_t big[OSD_STORE_ATTR_MAX];
	memset(big, 0x5a, sizeof(big));
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 7, big, sizeof(big),
					    OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 2, "a3", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 5, "m3", 2, 0), 0);
	reopen();
	get_am("a3", "m3");
	size_t blen = 0;
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 7, NULL, 0, &blen), 0);
	ck_assert_uint_eq(blen, sizeof(big));
	/* A delete among them is an empty entry. */
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 2, "a4", 2, OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 7, NULL, 0, 0), 0);
	reopen();
	get2(O1, 2, "a4");
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 7, NULL, 0, NULL), -ENODATA);
}
END_TEST

/* Replay of ATTRS records: all of one or nothing; torn, damaged, malformed. */
START_TEST(t_attrs_record_replay)
{
	char err[512];
	uint8_t rec[ATTRS_REC_LEN];
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1, OSD_OBJ_USER, 0), 0);
	off_t at = write_attrs_rec();
	reopen();
	get_am("a1", "m1");
	/* Torn: the last record cut short is cut, none of its entries applies. */
	osd_store_close(st);
	st = NULL;
	char p[4200];
	th_path(p, sizeof(p), dir, "log");
	ck_assert_int_eq(truncate(p, at + ATTRS_REC_LEN - 3), 0);
	st = th_open(dir);
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), "cut"));
	ck_assert_int_eq(log_size(), at);
	get_am(NULL, NULL);
	/* Damaged, with an intact record after it: refused, naming the offset;
	 * salvage keeps the record after it and none of its entries. */
	at = write_attrs_rec();
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + 1, 0x3, 5, "n1", 2, 0), 0);
	osd_store_close(st);
	st = NULL;
	uint8_t flip = 'x';
	log_put(at + OSD__REC_HDR + 16 + 10, &flip, 1);
	struct osd_store_options so = { 0 };
	ck_assert_int_eq(osd_store_open(&st, dir, &so, err, sizeof(err)), -EUCLEAN);
	char want[128];
	snprintf(want, sizeof(want), "damaged at byte %lld (a CRC mismatch); 1 intact record",
		 (long long)at);
	ck_assert_msg(strstr(err, want), "%s", err);
	so.salvage = 1;
	ck_assert_int_eq(osd_store_open(&st, dir, &so, err, sizeof(err)), 0);
	get_am(NULL, NULL);
	get2(O1 + 1, 5, "n1");
	reopen();
	/* Malformed (its CRC good, an entry running past the record): does not
	 * apply, and its first, well-formed entry is not applied either. */
	at = write_attrs_rec();
	attrs_rec(rec);
	rec[OSD__REC_HDR + 16 + 12 + 9] = 3;
	reopen_with_rec(at, rec, sizeof(rec), "a record that does not apply");
	ck_assert_int_eq(log_size(), at);
	get_am(NULL, NULL);
	/* Of an object that does not exist: does not apply either. */
	attrs_rec(rec);
	rec[OSD__REC_HDR + 15] = 9;
	reopen_with_rec(at, rec, sizeof(rec), "a record that does not apply");
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 9, NULL), -ENOENT);
}
END_TEST

/*
 * A store whose log an older build wrote (version 1: ATTR records only)
 * opens unchanged and is appended to with ATTR records only, which that
 * build can read; an ATTRS record in it is damage. The next checkpoint
 * starts a version 2 log.
 */
START_TEST(t_attrs_old_log)
{
	uint8_t hdr[OSD__FILE_HDR], v1rec[OSD__REC_HDR + 24 + 2] = {
		0, 0, 0, 0, 0, 0, 0, 26, 5,
		0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0,
		0, 0, 0, 3, 0, 0, 0, 5, 'm', '0' };
	size_t len;
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	osd_store_close(st);
	st = NULL;
	/* The log as version 1 writes it, then a version 1 ATTR record. */
	th_log_downgrade(dir, 1, hdr);
	put_crc(v1rec, sizeof(v1rec));
	off_t at = log_size();
	log_put(at, v1rec, sizeof(v1rec));
	st = th_open(dir);
	ck_assert_str_eq(osd_store_error(st), "");
	get2(O1, 5, "m0");
	uint8_t *now = log_bytes(0, &len);
	ck_assert_uint_eq(len, (size_t)at + sizeof(v1rec));
	ck_assert_mem_eq(now, hdr, sizeof(hdr)); /* unchanged */
	free(now);
	/* A lazy value and a set: two ATTR records, the header still version 1. */
	at = log_size();
	set_am("a1", "m1");
	now = log_bytes(at, &len);
	ck_assert_uint_eq(len, 2 * sizeof(v1rec));
	ck_assert_uint_eq(now[8], OSD__REC_ATTR);
	ck_assert_uint_eq(now[sizeof(v1rec) + 8], OSD__REC_ATTR);
	free(now);
	reopen();
	get_am("a1", "m1");
	now = log_bytes(0, &len);
	ck_assert_mem_eq(now, hdr, sizeof(hdr));
	free(now);
	/* No build writes an ATTRS record into a version 1 log: an unknown type. */
	uint8_t rec[ATTRS_REC_LEN];
	attrs_rec(rec);
	at = reopen_with_rec(-1, rec, sizeof(rec), "an unknown record type");
	ck_assert_int_eq(log_size(), at);
	/* A checkpoint starts a version 2 log, which takes ATTRS records. */
	ck_assert_int_eq(osd__store_compact(st), 0);
	now = log_bytes(0, &len);
	ck_assert_uint_eq(osd__get_be32(now + 8), OSD__LOG_VERSION);
	free(now);
	at = log_size();
	set_am("a2", "m2");
	now = log_bytes(at, &len);
	ck_assert_uint_eq(len, ATTRS_REC_LEN);
	ck_assert_uint_eq(now[8], OSD__REC_ATTRS);
	free(now);
	reopen();
	get_am("a2", "m2");
	/* A log of a later version is refused. */
	osd_store_close(st);
	st = NULL;
	uint8_t *old = log_bytes(0, &len);
	osd__file_hdr_put_ver(hdr, OSD__LOG_MAGIC, OSD__LOG_VERSION + 1, 0,
			      osd__get_be64(old + 16));
	free(old);
	log_put(0, hdr, sizeof(hdr));
	char err[512];
	struct osd_store_options so = { 0 };
	ck_assert_int_eq(osd_store_open(&st, dir, &so, err, sizeof(err)), -EUCLEAN);
	ck_assert_msg(strstr(err, "log has a damaged header"), "%s", err);
}
END_TEST

START_TEST(t_compaction)
{
	populate(100);
	for (int i = 0; i < 100; i += 2)
		ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + (uint64_t)i, 0), 0);
	ck_assert_int_eq(wr(P1, O1 + 1, 0, "abc", 3), 0);
	ck_assert_int_eq(osd__store_compact(st), 0);
	ck_assert_int_eq(log_size(), OSD__FILE_HDR);
	uint32_t v = 3;
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + 1, 0x10000, 1, &v, 4, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1000, OSD_OBJ_COLLECTION, 0), 0);
	reopen();
	ck_assert_int_eq(count_valid(100), 50);
	enum osd_obj_type t;
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 1000, &t), 0);
	ck_assert_int_eq(t, OSD_OBJ_COLLECTION);
	uint8_t b[8];
	ck_assert_uint_eq(rd(P1, O1 + 1, 0, b, 8), 3);
	ck_assert_mem_eq(b, "abc", 3);
	/* A log older than the checkpoint (crash between the two renames) is ignored. */
	char p[4200], q[4200];
	th_path(p, sizeof(p), dir, "log");
	th_path(q, sizeof(q), dir, "log.old");
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	/* Save the current log, compact, put the old-epoch log back. */
	int in = open(p, O_RDONLY), out = open(q, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	ck_assert_int_eq(osd__store_compact(st), 0);
	osd_store_close(st);
	st = NULL;
	ck_assert_int_eq(rename(q, p), 0);
	st = th_open(dir);
	ck_assert_int_eq(count_valid(100), 50);
	ck_assert_int_eq(log_size(), OSD__FILE_HDR);
}
END_TEST


/* ---- damaged metadata never crashes and replays a prefix ---- */

static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char buf[65536];
	ssize_t n;
	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

/* A salvage open keeps at least @p least of the first @p count objects; closes. */
static void salvage_keeps(int least, int count)
{
	char err[1024];
	struct osd_store_options so = { .salvage = 1 };
	ck_assert_int_eq(osd_store_open(&st, dir, &so, err, sizeof(err)), 0);
	ck_assert_int_ge(count_valid(count), least);
	osd_store_close(st);
	st = NULL;
}

START_TEST(t_damage_fuzz)
{
	char logp[4200], saved[4200], ckp[4200], cksaved[4200];
	const int count = 30;
	populate(count);
	ck_assert_int_eq(osd__store_compact(st), 0); /* checkpoint holds the partition */
	for (int i = 0; i < count; i++)
		ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + (uint64_t)i, 0x10000, 2, "x", 1, 0), 0);
	for (int i = count; i < 2 * count; i++) {
		uint32_t v = (uint32_t)i * 3;
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + (uint64_t)i, OSD_OBJ_USER, 0), 0);
		ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + (uint64_t)i, 0x10000, 1, &v, 4, 0), 0);
	}
	osd_store_close(st);
	st = NULL;
	th_path(logp, sizeof(logp), dir, "log");
	th_path(saved, sizeof(saved), dir, "log.saved");
	th_path(ckp, sizeof(ckp), dir, "checkpoint");
	th_path(cksaved, sizeof(cksaved), dir, "checkpoint.saved");
	copy_file(logp, saved);
	copy_file(ckp, cksaved);
	struct stat sb, cb;
	ck_assert_int_eq(stat(saved, &sb), 0);
	ck_assert_int_eq(stat(cksaved, &cb), 0);
	unsigned seed = 99;
	for (int round = 0; round < 60; round++) {
		int damage_ckpt = round % 5 == 4;
		const char *victim = damage_ckpt ? ckp : logp;
		off_t size = damage_ckpt ? cb.st_size : sb.st_size;
		copy_file(saved, logp);
		copy_file(cksaved, ckp);
		int fd = open(victim, O_RDWR);
		off_t pos = (off_t)(rand_r(&seed) % (unsigned)size);
		if (round % 3 == 0 && !damage_ckpt) {
			ck_assert_int_eq(ftruncate(fd, pos), 0);
		} else {
			uint8_t b;
			ck_assert_int_eq(pread(fd, &b, 1, pos), 1);
			b ^= (uint8_t)(1 + rand_r(&seed) % 255);
			ck_assert_int_eq(pwrite(fd, &b, 1, pos), 1);
		}
		close(fd);
		char err[1024] = "";
		int r = osd_store_open(&st, dir, NULL, err, sizeof(err));
		if (damage_ckpt && r == 0) {
			/* The open reads the checkpoint's index alone: damage of
			 * other records fails their object whole (-EIO, never a
			 * wrong value) when used, or lies in records the head makes
			 * redundant. Salvage reads them all and loses at most it. */
			int eio = 0;
			for (int i = 0; i < 2 * count; i++) {
				uint32_t v;
				size_t len;
				eio += osd_store_attr_get(st, P1, O1 + (uint64_t)i, 0x10000, 1, &v,
							  4, &len) == -EIO;
			}
			ck_assert_int_le(eio, 1);
			ck_assert_int_eq(count_valid(2 * count), 2 * count - eio);
			osd_store_close(st);
			salvage_keeps(2 * count - 1, 2 * count);
			continue;
		}
		if (damage_ckpt || pos < OSD__FILE_HDR) {
			/* Header or checkpoint damage is reported, never replayed. */
			ck_assert_msg(r == -EUCLEAN || (r == 0 && round % 3 == 0),
				      "round %d: %d %s", round, r, err);
			if (r == 0)
				osd_store_close(st);
			else
				ck_assert_ptr_nonnull(strstr(err, damage_ckpt ? "checkpoint" : "/log"));
			st = NULL;
			continue;
		}
		if (r == -EUCLEAN) {
			/* Intact records after the damage: refused naming file and
			 * offset; salvage then loses at most the damaged record. */
			ck_assert_msg(strstr(err, "log is damaged at byte"), "round %d: %s", round, err);
			salvage_keeps(2 * count - 1, 2 * count);
			continue;
		}
		ck_assert_msg(r == 0, "round %d: %d %s", round, r, err);
		/* Replay is a prefix: the surviving objects are 0..m-1. */
		int m = count_valid(2 * count);
		for (int i = 0; i < 2 * count; i++) {
			int exists = osd_store_object_type(st, P1, O1 + (uint64_t)i, NULL) == 0;
			if (i != m) /* object m may exist without its attribute */
				ck_assert_int_eq(exists, i < m);
		}
		ck_assert_int_ge(m, count);
		osd_store_close(st);
		st = NULL;
	}
	copy_file(saved, logp);
	copy_file(cksaved, ckp);
	st = th_open(dir);
	ck_assert_int_eq(count_valid(2 * count), 2 * count);
}
END_TEST

/* ---- concurrency ---- */

#define NTHREADS 4
#define PER_THREAD 300
#define SHARED O1

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	uint8_t buf[3000];
	for (int i = 0; i < PER_THREAD; i++) {
		uint64_t oid = 0x100000 + (uint64_t)t * 100000 + (uint64_t)i;
		size_t len = 1 + (size_t)((i * 131 + t * 17) % 3000);
		th_fill(buf, len, oid, 0);
		if (osd_store_object_create(st, P1, oid, OSD_OBJ_USER, 0) ||
		    wr(P1, oid, 0, buf, len) ||
		    osd_store_attr_set(st, P1, oid, 0x10000, (uint32_t)i, &oid, 8, 0))
			return (void *)1;
		/* Shared object: each thread owns the 64-byte slots i*NTHREADS+t. */
		uint64_t slot = (uint64_t)i * NTHREADS + (uint64_t)t;
		th_fill(buf, 64, 777, slot * 64);
		if (wr(P1, SHARED, slot * 64, buf, 64) ||
		    osd_store_attr_set(st, P1, SHARED, 0x20000 + (uint32_t)t, (uint32_t)i, &slot, 8, 0))
			return (void *)1;
		if (i % 100 == 0 && osd_store_flush_all(st))
			return (void *)1;
		size_t n;
		uint8_t chk[8];
		if (osd_store_attr_get(st, P1, SHARED, 0x20000 + (uint32_t)t, (uint32_t)i, chk, 8, &n) ||
		    n != 8 || memcmp(chk, &slot, 8))
			return (void *)1;
	}
	return NULL;
}

static void verify_concurrent(void)
{
	uint8_t buf[3000];
	for (int t = 0; t < NTHREADS; t++)
		for (int i = 0; i < PER_THREAD; i++) {
			uint64_t oid = 0x100000 + (uint64_t)t * 100000 + (uint64_t)i, v = 0;
			size_t len = 1 + (size_t)((i * 131 + t * 17) % 3000), n;
			ck_assert_uint_eq(rd(P1, oid, 0, buf, sizeof(buf)), len);
			ck_assert(th_check(buf, len, oid, 0));
			ck_assert_int_eq(osd_store_attr_get(st, P1, oid, 0x10000, (uint32_t)i, &v, 8, &n), 0);
			ck_assert_uint_eq(v, oid);
			uint64_t slot = (uint64_t)i * NTHREADS + (uint64_t)t;
			ck_assert_int_eq(osd_store_attr_get(st, P1, SHARED, 0x20000 + (uint32_t)t,
							    (uint32_t)i, &v, 8, &n), 0);
			ck_assert_uint_eq(v, slot);
		}
	size_t total = (size_t)PER_THREAD * NTHREADS * 64;
	uint8_t *all = malloc(total);
	ck_assert_uint_eq(rd(P1, SHARED, 0, all, total), total);
	ck_assert(th_check(all, total, 777, 0));
	free(all);
	uint64_t cnt;
	ck_assert_int_eq(osd_store_object_stats(st, P1, &cnt, NULL), 0);
	ck_assert_uint_eq(cnt, 1 + NTHREADS * PER_THREAD);
}

START_TEST(t_concurrency)
{
	pthread_t th[NTHREADS];
	st->max_fds = 64; /* exercise descriptor eviction under load */
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, SHARED, OSD_OBJ_USER, 0), 0);
	for (int t = 0; t < NTHREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
	for (int t = 0; t < NTHREADS; t++) {
		void *ret;
		pthread_join(th[t], &ret);
		ck_assert_ptr_null(ret);
	}
	verify_concurrent();
	reopen();
	verify_concurrent();
}
END_TEST


/* ---- churn: racing create/write/remove/flush/compact on a shared id range ---- */

#define CHURN_IDS 64
#define CHURN_OPS 3000

static void *churner(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	uint8_t buf[4096];
	for (int i = 0; i < CHURN_OPS; i++) {
		uint64_t oid = O1 + (uint64_t)(rand_r(&seed) % CHURN_IDS);
		int op = rand_r(&seed) % 10;
		int r = 0;
		th_fill(buf, sizeof(buf), oid, 0);
		switch (op) {
		case 0: case 1:
			r = osd_store_object_create(st, P1, oid, OSD_OBJ_USER, 0);
			r = r == -EEXIST ? 0 : r;
			break;
		case 2:
			r = osd_store_object_remove(st, P1, oid, 0);
			r = r == -ENOENT ? 0 : r;
			break;
		case 3: case 4: case 5:
			r = wr(P1, oid, (uint64_t)(rand_r(&seed) % 8) * 4096, buf, sizeof(buf));
			r = r == -ENOENT ? 0 : r;
			break;
		case 6:
			r = osd_store_attr_set(st, P1, oid, 0x10000, 1, &oid, 8, 0);
			r = r == -ENOENT ? 0 : r;
			break;
		case 7:
			r = osd_store_punch(st, P1, oid, 0, 4096, 0);
			r = r == -ENOENT ? 0 : r;
			break;
		case 8:
			if (i % 3)
				break; /* flush on ~3% of operations */
			r = i % 2 ? osd_store_flush_all(st) : osd_store_flush_object(st, P1, oid);
			r = r == -ENOENT ? 0 : r;
			break;
		default:
			r = i % 500 == 9 ? osd__store_compact(st) : osd_store_truncate(st, P1, oid, 100, 0);
			r = r == -ENOENT ? 0 : r;
			break;
		}
		if (r)
			return (void *)(intptr_t)(1000 + op);
	}
	return NULL;
}

struct snap {
	int exists[CHURN_IDS];
	uint64_t len[CHURN_IDS];
	uint64_t attr[CHURN_IDS];
	uint64_t used_sum, part_used, total_used;
};

static void snapshot(struct snap *s)
{
	memset(s, 0, sizeof(*s));
	uint8_t buf[8 * 4096 + 4096];
	for (int i = 0; i < CHURN_IDS; i++) {
		uint64_t oid = O1 + (uint64_t)i, u = 0;
		size_t n;
		if (osd_store_object_type(st, P1, oid, NULL) != 0)
			continue;
		s->exists[i] = 1;
		ck_assert_int_eq(osd_store_length(st, P1, oid, &s->len[i]), 0);
		ck_assert_uint_eq(rd(P1, oid, 0, buf, sizeof(buf)), s->len[i]);
		/* Every byte is either zero (hole/punch/extension) or the pattern. */
		uint8_t pat[4096];
		th_fill(pat, sizeof(pat), oid, 0);
		size_t bad = SIZE_MAX;
		for (size_t k = 0; k < s->len[i] && bad == SIZE_MAX; k++)
			if (buf[k] && buf[k] != pat[k % 4096])
				bad = k;
		ck_assert_msg(bad == SIZE_MAX, "object %d byte %zu wrong", i, bad);
		if (osd_store_attr_get(st, P1, oid, 0x10000, 1, &s->attr[i], 8, &n) == 0)
			ck_assert_uint_eq(s->attr[i], oid);
		ck_assert_int_eq(osd_store_used(st, P1, oid, &u), 0);
		s->used_sum += u;
	}
	ck_assert_int_eq(osd_store_used(st, P1, 0, &s->part_used), 0);
	ck_assert_int_eq(osd_store_used(st, 0, 0, &s->total_used), 0);
}

START_TEST(t_churn)
{
	pthread_t th[3];
	st->max_fds = 8;
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	for (int t = 0; t < 3; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, churner, (void *)(uintptr_t)(t + 1)), 0);
	for (int t = 0; t < 3; t++) {
		void *ret;
		pthread_join(th[t], &ret);
		ck_assert_msg(ret == NULL, "churner failed at op %d", (int)(intptr_t)ret - 1000);
	}
	struct snap a, b;
	snapshot(&a);
	ck_assert_uint_eq(a.used_sum, a.part_used);
	ck_assert_uint_eq(a.used_sum, a.total_used);
	reopen();
	snapshot(&b);
	ck_assert_mem_eq(a.exists, b.exists, sizeof(a.exists));
	ck_assert_mem_eq(a.len, b.len, sizeof(a.len));
	ck_assert_mem_eq(a.attr, b.attr, sizeof(a.attr));
	/* Used bytes come from st_blocks, which the filesystem may settle
	 * differently after writeback; totals must still add up. */
	ck_assert_uint_eq(b.used_sum, b.part_used);
	ck_assert_uint_eq(b.used_sum, b.total_used);
}
END_TEST

/* Values of up to 8 bytes live in the attribute entry, longer ones apart:
 * a value moving between the two, in either direction, keeps its bytes. */
START_TEST(t_attr_inline)
{
	static const char *const vals[] = { "12345678", "123456789", "", "a", "0123456789abcdef",
					    "87654321", "x" };
	uint8_t buf[32];
	size_t len;
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		size_t n = strlen(vals[i]);
		/* a neighbour before and after: entries move around it */
		ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x30000, (uint32_t)(2 * i + 1),
						    "nb", 2, 0), 0);
		ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x30000, 100, vals[i], n, 0), 0);
		for (int pass = 0; pass < 2; pass++) {
			int r = osd_store_attr_get(st, P1, O1, 0x30000, 100, buf, sizeof(buf), &len);
			if (!n) {
				ck_assert_int_eq(r, -ENODATA);
			} else {
				ck_assert_int_eq(r, 0);
				ck_assert_uint_eq(len, n);
				ck_assert_mem_eq(buf, vals[i], n);
			}
			reopen();
		}
	}
	ck_assert_int_eq(osd__store_compact(st), 0);
	reopen();
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x30000, 100, buf, sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, 1);
	ck_assert_mem_eq(buf, "x", 1);
	struct osd__obj *o = osd__ns_get(st, P1, O1);
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(o->nattrs, 8); /* 7 neighbours and the value */
	osd__obj_put(st, o);
}
END_TEST

/* The state of data access is made at an object's first data access and
 * not before: an object only created, listed or asked for attributes after
 * an open has none. */
START_TEST(t_io_on_demand)
{
	uint8_t b[16];
	size_t got, len;
	use_files();
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x30000, 1, "abcdef", 6, 0), 0);
	ck_assert_int_eq(wr(P1, O1, 0, "data", 4), 0);
	reopen();
	struct osd__obj *o = osd__ns_get(st, P1, O1), *e = osd__ns_get(st, P1, O1 + 1);
	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_nonnull(e);
	uint64_t ids[4], next;
	size_t n;
	ck_assert_int_eq(osd_store_object_list(st, P1, 0, 0, ids, 4, &n, &next), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x30000, 1, b, sizeof(b), &len), 0);
	ck_assert_ptr_null(o->io);
	/* a READ of an empty object needs no descriptor */
	struct iovec iov = { b, sizeof(b) };
	ck_assert_int_eq(osd_store_read(st, P1, O1 + 1, 0, &iov, 1, &got), 0);
	ck_assert_uint_eq(got, 0);
	ck_assert_ptr_null(e->io);
	ck_assert_int_eq(osd_store_read(st, P1, O1, 0, &iov, 1, &got), 0);
	ck_assert_uint_eq(got, 4);
	ck_assert_mem_eq(b, "data", 4);
	ck_assert_ptr_nonnull(o->io);
	ck_assert_int_ge(o->io->fd, 0);
	/* the descriptor closes with the object's removal; the state stays
	 * until the last reference goes */
	ck_assert_int_eq(osd_store_object_remove(st, P1, O1, 0), 0);
	ck_assert_ptr_nonnull(o->io);
	ck_assert_int_eq(o->io->fd, -1);
	osd__obj_put(st, o);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_ptr_null(e->io);
	osd__obj_put(st, e);
}
END_TEST

/* The open finds each data file's object by generation: objects made in
 * descending id order (generations falling along the ids, two bytes of
 * them, so the sort takes two passes) and in ascending order in a second
 * partition all get their data back. */
START_TEST(t_scan_order)
{
	enum { N = 300 };
	uint8_t b[8], got[8];
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_partition_create(st, P2, 0), 0);
	for (int i = N - 1; i >= 0; i--) {
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + (uint64_t)i, OSD_OBJ_USER, 0), 0);
		th_fill(b, sizeof(b), (uint64_t)i, 0);
		ck_assert_int_eq(wr(P1, O1 + (uint64_t)i, 0, b, sizeof(b)), 0);
	}
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(osd_store_object_create(st, P2, O1 + (uint64_t)i, OSD_OBJ_USER, 0), 0);
		th_fill(b, sizeof(b), 1000 + (uint64_t)i, 0);
		ck_assert_int_eq(wr(P2, O1 + (uint64_t)i, 0, b, sizeof(b)), 0);
	}
	reopen();
	ck_assert_str_eq(osd_store_error(st), "");
	for (int i = 0; i < N; i++) {
		th_fill(b, sizeof(b), (uint64_t)i, 0);
		ck_assert_uint_eq(rd(P1, O1 + (uint64_t)i, 0, got, sizeof(got)), sizeof(got));
		ck_assert_mem_eq(got, b, sizeof(b));
	}
	for (int i = 0; i < 3; i++) {
		th_fill(b, sizeof(b), 1000 + (uint64_t)i, 0);
		ck_assert_uint_eq(rd(P2, O1 + (uint64_t)i, 0, got, sizeof(got)), sizeof(got));
		ck_assert_mem_eq(got, b, sizeof(b));
	}
}
END_TEST

/*
 * A log several times the replay's release step (8 MiB): the pages behind
 * the replay are given back as it goes, so everything that reads the log
 * after a damage (the count of intact records after it, the torn-tail
 * check) must only look ahead of it. Damage far into the log is found and
 * reported as in a short one, salvage keeps every record around it, and a
 * torn last record is cut.
 */
#define BIG_SETS 90000
#define BIG_OBJS 200
#define BIG_VAL 256
#define BIG_REC (OSD__REC_HDR + 24 + BIG_VAL)

static void big_check(int damaged_k)
{
	uint8_t want[BIG_VAL], got[BIG_VAL];
	for (int i = 0; i < BIG_OBJS; i++) {
		int k = BIG_SETS - BIG_OBJS + i;
		if (k == damaged_k)
			k -= BIG_OBJS; /* its last set lost: the one before */
		size_t len = 0;
		th_fill(want, sizeof(want), (uint64_t)k, 0);
		ck_assert_int_eq(osd_store_attr_get(st, P1, O1 + (uint64_t)i, 0x30000, 7, got,
						    sizeof(got), &len), 0);
		ck_assert_uint_eq(len, BIG_VAL);
		ck_assert_msg(memcmp(got, want, BIG_VAL) == 0, "object %d: not set %d", i, k);
	}
}

/* BIG_SETS attribute sets over the BIG_OBJS objects (a long log), then close. */
static void big_sets(void)
{
	uint8_t v[BIG_VAL];

	for (int k = 0; k < BIG_SETS; k++) {
		th_fill(v, sizeof(v), (uint64_t)k, 0);
		ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + (uint64_t)(k % BIG_OBJS), 0x30000, 7,
						    v, sizeof(v), 0), 0);
	}
	osd_store_close(st);
	st = NULL;
}

START_TEST(t_long_log)
{
	char err[512], want[160], p[4200];
	populate(BIG_OBJS);
	off_t base = log_size();
	big_sets();
	ck_assert_int_eq(log_size(), base + (off_t)BIG_SETS * BIG_REC);
	ck_assert_int_gt(log_size(), 3 * (8 << 20));
	st = th_open(dir);
	ck_assert_str_eq(osd_store_error(st), "");
	big_check(-1);
	ck_assert_int_eq(count_valid(BIG_OBJS), BIG_OBJS);
	osd_store_close(st);
	st = NULL;
	/* damage 100 records before the end, past the release steps */
	int bad_k = BIG_SETS - 100;
	off_t at = base + (off_t)bad_k * BIG_REC;
	uint8_t flip = 0xA5;
	log_put(at + OSD__REC_HDR + 24 + 10, &flip, 1);
	struct osd_store_options so = { 0 };
	ck_assert_int_eq(osd_store_open(&st, dir, &so, err, sizeof(err)), -EUCLEAN);
	snprintf(want, sizeof(want), "damaged at byte %lld (a CRC mismatch); 99 intact record",
		 (long long)at);
	ck_assert_msg(strstr(err, want), "%s", err);
	so.salvage = 1;
	ck_assert_int_eq(osd_store_open(&st, dir, &so, err, sizeof(err)), 0);
	big_check(bad_k);
	osd_store_close(st);
	st = NULL;
	/* salvage wrote a clean checkpoint; a new long log, torn at its end */
	st = th_open(dir);
	base = log_size();
	big_sets();
	th_path(p, sizeof(p), dir, "log");
	ck_assert_int_eq(truncate(p, base + (off_t)BIG_SETS * BIG_REC - 5), 0);
	st = th_open(dir);
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), "cut"));
	big_check(BIG_SETS - 1);
	ck_assert_int_eq(log_size(), base + (off_t)(BIG_SETS - 1) * BIG_REC);
}
END_TEST

static Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("unit");
	tcase_add_test(tc, t_crc32c);
	tcase_add_test(tc, t_record_bytes);
	tcase_add_test(tc, t_open_missing);
	suite_add_tcase(s, tc);
	tc = tcase_create("ops");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_busy);
	tcase_add_test(tc, t_damaged_superblock);
	tcase_add_test(tc, t_damaged_checkpoint);
	tcase_add_test(tc, t_partitions);
	tcase_add_test(tc, t_objects);
	tcase_add_test(tc, t_list_dense_runs);
	tcase_add_test(tc, t_data);
	tcase_add_test(tc, t_remove_recreate);
	tcase_add_test(tc, t_attrs);
	tcase_add_test(tc, t_fanout);
	tcase_add_test(tc, t_recycle);
	tcase_add_test(tc, t_attr_same_value);
	tcase_add_test(tc, t_attr_lazy);
	tcase_add_test(tc, t_capacity);
	tcase_add_test(tc, t_capacity_option);
	tcase_add_test(tc, t_format);
	tcase_add_test(tc, t_torn_log);
	tcase_add_test(tc, t_garbage_log);
	tcase_add_test(tc, t_attrs_record_bytes);
	tcase_add_test(tc, t_attrs_set_batch);
	tcase_add_test(tc, t_attrs_record_replay);
	tcase_add_test(tc, t_file_records_replay);
	tcase_add_test(tc, t_attrs_old_log);
	tcase_add_test(tc, t_compaction);
	tcase_add_test(tc, t_damage_fuzz);
	tcase_add_test(tc, t_concurrency);
	tcase_add_test(tc, t_churn);
	tcase_add_test(tc, t_attr_inline);
	tcase_add_test(tc, t_io_on_demand);
	tcase_add_test(tc, t_long_log);
	tcase_add_test(tc, t_scan_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(store_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
