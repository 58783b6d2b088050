/*
 * Data checksums of the store (docs/target-store.md, "Data checksums"): the
 * sidecar's bytes, every data change against a reference copy, damage
 * named by object and offset, the dirty range recomputed after a crash,
 * scrub, the upgrade of a version 1 store and the refusal of a newer one.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checksum/crc32c.h"
#include "proto/byteorder.h"
#include "store_helpers.h"
#include "store/internal.h"

#define P1 0x10000ull
#define O1 0x10000ull
#define BLK 4096u

static char *dir;
static struct osd_store *st;
static char last_log[1024];
static int last_level;

static void log_cb(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= last_level || !last_log[0]) {
		last_level = level;
		snprintf(last_log, sizeof(last_log), "%s", msg);
	}
}

static struct osd_store *open_store(int create)
{
	/* checksum sidecars belong to data files: no packed objects here
	 * (test_store_pack checks the packed ones) */
	struct osd_store_options o = { .create = create, .log = log_cb, .no_pack = 1 };
	struct osd_store *s = NULL;
	char err[512];
	int r = osd_store_open(&s, dir, &o, err, sizeof(err));
	ck_assert_msg(r == 0, "open: %d %s", r, err);
	return s;
}

static void setup(void)
{
	dir = th_mkdtemp();
	last_log[0] = 0;
	last_level = 99;
	st = open_store(1);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
}

static void teardown(void)
{
	osd_store_close(st);
	th_rmtree(dir);
}

static void reopen(void)
{
	osd_store_close(st);
	st = open_store(0);
}

static int wr(uint64_t oid, uint64_t off, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	return osd_store_write(st, P1, oid, off, &iov, 1, 0);
}

static int rd(uint64_t oid, uint64_t off, void *buf, size_t len, size_t *got)
{
	struct iovec iov = { buf, len };
	return osd_store_read(st, P1, oid, off, &iov, 1, got);
}

/* Path of object index @p gen's data file (or sidecar). */
static void obj_path(char *out, size_t n, uint64_t gen, int sums)
{
	th_obj_path(out, n, dir, gen, sums);
}

/* The sidecar's bytes: header, one entry per block, 0 for a block of zeros. */
START_TEST(t_sidecar_bytes)
{
	static uint8_t data[3 * BLK];
	uint8_t file[64 + 12], want[64] = { 0 };
	char path[4200];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	memset(data + BLK, 0, BLK); /* the middle block reads as zeros */
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(O1, 0, data, sizeof(data) - 100), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	/* the flush leaves the dirty range open for more writes: for a new
	 * object the one its sidecar was made with, every block ... */
	obj_path(path, sizeof(path), 1, 1);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, file, sizeof(file), 0), sizeof(file));
	close(fd);
	ck_assert_uint_eq(osd__get_be64(file + 24), 0);
	ck_assert_uint_eq(osd__get_be64(file + 32), UINT64_MAX / BLK);
	/* ... and the next FLUSH OSD that finds no change closes it */
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, file, sizeof(file), 0), sizeof(file));
	close(fd);
	/* "OSDSUMS1", block size, 0, length, dirty 0..0, crc of bytes 0-59 */
	memcpy(want, "OSDSUMS1\0\0\x10\0\0\0\0\0\0\0\0\0\0\0\x2f\x9c", 24);
	want[60] = (uint8_t)(osd__crc32c_table(0, want, 60) >> 24);
	want[61] = (uint8_t)(osd__crc32c_table(0, want, 60) >> 16);
	want[62] = (uint8_t)(osd__crc32c_table(0, want, 60) >> 8);
	want[63] = (uint8_t)osd__crc32c_table(0, want, 60);
	ck_assert_mem_eq(file, want, 64);
	/* the tail block is checksummed padded with zeros */
	memset(data + sizeof(data) - 100, 0, 100);
	ck_assert_uint_eq(osd__get_be32(file + 64), osd__crc32c_table(0, data, BLK));
	ck_assert_uint_eq(osd__get_be32(file + 68), 0);
	ck_assert_uint_eq(osd__get_be32(file + 72), osd__crc32c_table(0, data + 2 * BLK, BLK));
}
END_TEST

/* Every kind of data change keeps the checksums right: reads match a copy. */
/* Entries below the object's sum_alloc are overwritten without a
 * fallocate, so that part of the sidecar must never hold a hole (a punch
 * or truncate has to lower it): otherwise a full filesystem could fail an
 * entry write after its data was written. */
static void check_sum_alloc(void)
{
	char path[512];
	struct osd__obj *o = osd__ns_get(st, P1, O1);
	ck_assert_ptr_nonnull(o);
	obj_path(path, sizeof(path), o->gen, 1);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	off_t hole = lseek(fd, 0, SEEK_HOLE);
	ck_assert_int_ge(hole, 0);
	ck_assert_msg((uint64_t)hole >= o->io->sum_alloc, "hole at %lld below sum_alloc %llu",
		      (long long)hole, (unsigned long long)o->io->sum_alloc);
	close(fd);
	osd__obj_put(st, o);
}

START_TEST(t_ops_match_copy)
{
	enum { MAXLEN = 40000 };
	static uint8_t ref[MAXLEN], buf[MAXLEN], tmp[MAXLEN];
	uint64_t len = 0;
	unsigned rs = 12345;
	size_t got;

	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	for (int step = 0; step < 400; step++) {
		uint64_t off = (uint64_t)(rand_r(&rs) % 30000), n = (uint64_t)(rand_r(&rs) % 9000);
		switch (rand_r(&rs) % 5) {
		case 0: /* write, often partial blocks, sometimes past the end */
		case 1:
			if (off + n > MAXLEN)
				n = MAXLEN - off;
			th_fill(tmp, n, (uint64_t)step, 0);
			ck_assert_int_eq(wr(O1, off, tmp, n), 0);
			if (off > len)
				memset(ref + len, 0, off - len);
			memcpy(ref + off, tmp, n);
			if (off + n > len)
				len = off + n;
			break;
		case 2: /* punch */
			ck_assert_int_eq(osd_store_punch(st, P1, O1, off, n, 0), 0);
			if (off < len)
				memset(ref + off, 0, (off + n > len ? len : off + n) - off);
			break;
		case 3: /* truncate down or up */
			ck_assert_int_eq(osd_store_truncate(st, P1, O1, off, 0), 0);
			if (off > len)
				memset(ref + len, 0, off - len);
			len = off;
			break;
		case 4: {
			uint64_t where;
			struct iovec iov = { tmp, n };
			if (len + n > MAXLEN)
				break;
			th_fill(tmp, n, (uint64_t)step + 7, 0);
			ck_assert_int_eq(osd_store_append(st, P1, O1, &iov, 1, 0, &where), 0);
			ck_assert_uint_eq(where, len);
			memcpy(ref + len, tmp, n);
			len += n;
			break;
		}
		}
		if (step % 50 == 49)
			reopen();
		if (step % 100 == 99)
			ck_assert_int_eq(osd_store_flush_all(st), 0);
		ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), 0);
		ck_assert_uint_eq(got, len);
		ck_assert_mem_eq(buf, ref, len);
		if (len)
			check_sum_alloc();
	}
	uint64_t bytes, bad;
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), 0);
	ck_assert_uint_le(bytes, len);
}
END_TEST

/* Punch and truncate leave holes in the sidecar (a sidecar page holds the
 * entries of 1024 blocks); what is written after them, and what is read,
 * stays right and sum_alloc never covers a hole. */
START_TEST(t_sum_alloc)
{
	enum { NB = 2100 };
	static uint8_t data[NB * BLK], buf[NB * BLK];
	size_t got;

	th_fill(data, sizeof(data), 5, 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(O1, 0, data, sizeof(data)), 0);
	check_sum_alloc();
	/* blocks 1000-2049: sidecar bytes 4064-8264, the page at 4096 a hole */
	ck_assert_int_eq(osd_store_punch(st, P1, O1, 1000ull * BLK, 1050ull * BLK, 0), 0);
	memset(data + 1000 * BLK, 0, 1050 * BLK);
	check_sum_alloc();
	ck_assert_int_eq(wr(O1, 1500ull * BLK, data + 7, BLK), 0);
	memcpy(data + 1500 * BLK, data + 7, BLK);
	check_sum_alloc();
	ck_assert_int_eq(wr(O1, 0, data, 1000 * BLK), 0); /* below the hole */
	check_sum_alloc();
	ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, sizeof(buf));
	ck_assert_mem_eq(buf, data, sizeof(buf));
	/* cut to 100 blocks, then a block far on: entries between are a hole */
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, 100ull * BLK, 0), 0);
	check_sum_alloc();
	ck_assert_int_eq(wr(O1, 2090ull * BLK, data, BLK), 0);
	check_sum_alloc();
	ck_assert_int_eq(wr(O1, 100ull * BLK, data + 100 * BLK, 10 * BLK), 0);
	check_sum_alloc();
	ck_assert_int_eq(rd(O1, 2090ull * BLK, buf, BLK, &got), 0);
	ck_assert_mem_eq(buf, data, BLK);
	ck_assert_int_eq(rd(O1, 0, buf, 110 * BLK, &got), 0);
	ck_assert_mem_eq(buf, data, 110 * BLK);
}
END_TEST

/* A flipped byte: reads stop before its block, the log names object and
 * offset; bytes before it and other blocks still read; scrub finds it. */
START_TEST(t_flip_named)
{
	static uint8_t data[5 * BLK], buf[5 * BLK];
	char path[4200];
	size_t got;
	uint64_t bytes, bad;

	th_fill(data, sizeof(data), 3, 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(O1, 0, data, sizeof(data)), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	osd_store_close(st);
	obj_path(path, sizeof(path), 1, 0);
	th_flip(path, 3 * BLK + 17);
	st = open_store(0);
	last_log[0] = 0;
	ck_assert_int_eq(rd(O1, 100, buf, sizeof(buf), &got), -EIO);
	ck_assert_uint_eq(got, 3 * BLK - 100); /* the first bad byte is 3 * BLK */
	ck_assert_mem_eq(buf, data + 100, got);
	ck_assert_ptr_nonnull(strstr(last_log, "object 0x10000 in partition 0x10000"));
	ck_assert_ptr_nonnull(strstr(last_log, "at byte 12288"));
	ck_assert_int_eq(last_level, OSD_STORE_LOG_ERR);
	/* a read that starts inside the bad block names its own first byte */
	ck_assert_int_eq(rd(O1, 3 * BLK + 5, buf, 10, &got), -EIO);
	ck_assert_uint_eq(got, 0);
	ck_assert_int_eq(rd(O1, 4 * BLK, buf, BLK, &got), 0);
	ck_assert_mem_eq(buf, data + 4 * BLK, BLK);
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), -EIO);
	ck_assert_uint_eq(bad, 3 * BLK);
	/* a partial write into the bad block cannot launder it */
	ck_assert_int_eq(wr(O1, 3 * BLK + 100, "x", 1), -EIO);
	/* rewriting the whole block heals it */
	ck_assert_int_eq(wr(O1, 3 * BLK, data + 3 * BLK, BLK), 0);
	ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), 0);
	ck_assert_mem_eq(buf, data, sizeof(data));
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), 0);
	ck_assert_uint_eq(bytes, sizeof(data));
}
END_TEST

/* Holes read as zeros without errors; a sparse object far out stays cheap. */
START_TEST(t_sparse)
{
	uint8_t buf[3 * BLK];
	size_t got;
	uint64_t bytes, bad;

	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(O1, (1ull << 40) + 10, "end", 3), 0);
	ck_assert_int_eq(rd(O1, 1ull << 39, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0);
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, (1ull << 40) + (1u << 20), 0), 0);
	reopen();
	ck_assert_int_eq(rd(O1, (1ull << 40) + 8, buf, 8, &got), 0);
	ck_assert_mem_eq(buf, "\0\0end\0\0\0", 8);
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), 0);
	/* scrub skips the hole: what it reads is near the data (a sidecar page
	 * covers 1008-1024 blocks), not the terabyte before it */
	ck_assert_uint_le(bytes, 8u << 20);
}
END_TEST

/* Empty WRITEs and APPENDs (at 0 and at a block boundary) change no
 * block: no checksum is computed for them (an empty range once wrapped to
 * 2^52 blocks), and the object reads as before. */
START_TEST(t_empty_writes)
{
	uint8_t buf[BLK];
	struct iovec none = { buf, 0 };
	uint64_t where;
	size_t got;

	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(O1, 0, buf, 0), 0);
	ck_assert_int_eq(osd_store_append(st, P1, O1, &none, 1, 0, &where), 0);
	ck_assert_uint_eq(where, 0);
	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(wr(O1, 0, buf, sizeof(buf)), 0);
	ck_assert_int_eq(wr(O1, BLK, buf, 0), 0);
	ck_assert_int_eq(osd_store_append(st, P1, O1, &none, 1, 0, &where), 0);
	ck_assert_uint_eq(where, BLK);
	reopen();
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0x5a);
}
END_TEST

/* A crash after data reached the file but before its checksums: the
 * block was in the dirty range, so the next open recomputes it. A clean
 * object changed the same way is damage. */
START_TEST(t_dirty_recomputed)
{
	static uint8_t data[4 * BLK], buf[4 * BLK];
	char path[4200];
	size_t got;

	th_fill(data, sizeof(data), 9, 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(O1, 0, data, sizeof(data)), 0);
	ck_assert_int_eq(wr(O1 + 1, 0, data, sizeof(data)), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	osd_store_close(st);
	st = NULL;
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct osd_store *s = open_store(0);
		struct iovec iov = { data, BLK };
		/* O1 changes (unflushed); then "the data lands without its checksum" */
		if (osd_store_write(s, P1, O1, BLK, &iov, 1, 0) != 0)
			_exit(1);
		obj_path(path, sizeof(path), 1, 0);
		th_flip(path, BLK + 5);
		_exit(0); /* a crash: no flush, no close */
	}
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	obj_path(path, sizeof(path), 2, 0);
	th_flip(path, 2 * BLK + 5); /* O1 + 1 was clean: this is damage */
	last_log[0] = 0;
	last_level = 99;
	st = open_store(0);
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), "recomputed the checksums"));
	ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, sizeof(buf));
	/* block 1: the unflushed write, as the file holds it */
	memcpy(data + BLK, data, BLK);
	data[BLK + 5] ^= 0x40;
	ck_assert_mem_eq(buf, data, sizeof(data));
	ck_assert_int_eq(rd(O1 + 1, 0, buf, sizeof(buf), &got), -EIO);
	ck_assert_uint_eq(got, 2 * BLK);
}
END_TEST

/* The first write of a new object syncs no mark: its sidecar's unsynced
 * header says dirty over everything. A crash leaves that header, or none
 * (zeros): either way open recomputes from the data as it is. A later write
 * after a clean flush marks (and syncs) a bounded range as before. */
START_TEST(t_fresh_header)
{
	static uint8_t data[3 * BLK], buf[3 * BLK];
	char path[4200];
	uint8_t h[64];
	size_t got;

	th_fill(data, sizeof(data), 11, 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	osd_store_close(st);
	st = NULL;
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct osd_store *s = open_store(0);
		struct iovec iov = { data, sizeof(data) };
		if (osd_store_write(s, P1, O1, 0, &iov, 1, 0) != 0 ||
		    osd_store_write(s, P1, O1 + 1, 0, &iov, 1, 0) != 0)
			_exit(1);
		_exit(0); /* a crash: no flush, no close */
	}
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* O1's header as made, dirty over everything */
	obj_path(path, sizeof(path), 1, 1);
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, h, sizeof(h), 0), sizeof(h));
	ck_assert_uint_eq(osd__get_be64(h + 24), 0);
	ck_assert_uint_eq(osd__get_be64(h + 32), UINT64_MAX / BLK);
	close(fd);
	/* O1 + 1: the header never reached the disk, nor its entries */
	obj_path(path, sizeof(path), 2, 1);
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(pwrite(fd, buf, 64 + 12, 0), 64 + 12);
	close(fd);
	st = open_store(0);
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), "recomputed the checksums of 6 block(s) "
						  "of 2 object(s)"));
	for (uint64_t o = O1; o <= O1 + 1; o++) {
		ck_assert_int_eq(rd(o, 0, buf, sizeof(buf), &got), 0);
		ck_assert_uint_eq(got, sizeof(buf));
		ck_assert_mem_eq(buf, data, sizeof(data));
	}
	/* clean after the open; a write marks 64 MiB of blocks, synced */
	ck_assert_int_eq(wr(O1, BLK, data, 10), 0);
	obj_path(path, sizeof(path), 1, 1);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, h, sizeof(h), 0), sizeof(h));
	close(fd);
	ck_assert_uint_eq(osd__get_be64(h + 24), 0);
	ck_assert_uint_eq(osd__get_be64(h + 32), 16384);
	/* a damaged (not all-zero) header is still an error */
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	osd_store_close(st);
	st = NULL;
	obj_path(path, sizeof(path), 2, 1);
	th_flip(path, 3);
	last_log[0] = 0;
	st = open_store(0);
	ck_assert_int_eq(rd(O1 + 1, 0, buf, sizeof(buf), &got), -EIO);
}
END_TEST

/* Rewrite the store as format version 1 had it: no sidecars, superblock
 * version 1 (byte for byte what a version 1 build wrote). */
static void make_version1(void)
{
	char path[4200];
	uint8_t sb[OSD__FILE_HDR];
	uint64_t created = 1700000000;

	for (uint64_t gen = 1; gen < 8; gen++) {
		obj_path(path, sizeof(path), gen, 1);
		(void)unlink(path);
	}
	osd__file_hdr_put_ver(sb, "OSDSTORE", 1, 0, created);
	th_path(path, sizeof(path), dir, "superblock");
	int fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, sb, sizeof(sb)), sizeof(sb));
	close(fd);
}

START_TEST(t_upgrade_v1)
{
	static uint8_t data[3 * BLK + 50], buf[3 * BLK + 50];
	char path[4200];
	size_t got;
	struct stat sb;

	th_fill(data, sizeof(data), 21, 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(O1, 0, data, sizeof(data)), 0);
	ck_assert_int_eq(wr(O1 + 1, 1 << 20, "far", 3), 0);
	osd_store_close(st);
	make_version1();
	last_log[0] = 0;
	last_level = 99;
	st = open_store(0);
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), "upgraded from version 1 to 6"));
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), "computed checksums"));
	ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, sizeof(data));
	ck_assert_mem_eq(buf, data, sizeof(data));
	ck_assert_int_eq(rd(O1 + 1, (1 << 20) - 1, buf, 5, &got), 0);
	ck_assert_mem_eq(buf, "\0far", 4);
	obj_path(path, sizeof(path), 1, 1);
	ck_assert_int_eq(stat(path, &sb), 0);
	/* the superblock says version 4 now (checksums, data/pack and the
	 * indexed checkpoint); a flipped byte is caught */
	uint8_t *sbuf;
	size_t sblen;
	uint32_t version, flags;
	uint64_t created;
	ck_assert_int_eq(osd__read_file(st->dirfd, "superblock", &sbuf, &sblen), 0);
	ck_assert_int_eq(osd__file_hdr_get_ver(sbuf, "OSDSTORE", &version, &flags, &created), 0);
	free(sbuf);
	ck_assert_uint_eq(version, 6);
	ck_assert_uint_eq(flags, 0);
	ck_assert_uint_eq(created, 1700000000);
	osd_store_close(st);
	obj_path(path, sizeof(path), 1, 0);
	th_flip(path, 2 * BLK);
	st = open_store(0);
	ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), -EIO);
	ck_assert_uint_eq(got, 2 * BLK);
}
END_TEST

/* A store of a newer format is refused with a clear message, unchanged. */
START_TEST(t_newer_refused)
{
	char path[4200], err[512];
	uint8_t sb[OSD__FILE_HDR];
	struct osd_store *s = NULL;

	osd_store_close(st);
	st = NULL;
	osd__file_hdr_put_ver(sb, "OSDSTORE", 7, 0, 1);
	th_path(path, sizeof(path), dir, "superblock");
	int fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, sb, sizeof(sb)), sizeof(sb));
	close(fd);
	ck_assert_int_eq(osd_store_open(&s, dir, NULL, err, sizeof(err)), -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(err, "store format version 7"));
	/* not made anew over it either */
	struct osd_store_options o = { .create = 1 };
	ck_assert_int_eq(osd_store_open(&s, dir, &o, err, sizeof(err)), -EUCLEAN);
	uint8_t after[OSD__FILE_HDR + 1];
	fd = open(path, O_RDONLY);
	ck_assert_int_eq(read(fd, after, sizeof(after)), sizeof(sb));
	close(fd);
	ck_assert_mem_eq(after, sb, sizeof(sb));
}
END_TEST

/* A missing sidecar: every read of the object fails until salvage
 * recomputes it from the data; a store made without checksums has none. */
START_TEST(t_missing_sidecar_and_off)
{
	static uint8_t data[2 * BLK], buf[2 * BLK];
	char path[4200];
	size_t got;
	uint64_t bytes, bad;

	th_fill(data, sizeof(data), 5, 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(O1, 0, data, sizeof(data)), 0);
	osd_store_close(st);
	obj_path(path, sizeof(path), 1, 1);
	ck_assert_int_eq(unlink(path), 0);
	st = open_store(0);
	ck_assert_int_eq(rd(O1, BLK, buf, 10, &got), -EIO);
	ck_assert_uint_eq(got, 0);
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), -EIO);
	osd_store_close(st);
	struct osd_store_options so = { .salvage = 1 };
	char err[512];
	ck_assert_int_eq(osd_store_open(&st, dir, &so, err, sizeof(err)), 0);
	ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), 0);
	ck_assert_mem_eq(buf, data, sizeof(data));
	osd_store_close(st);
	th_rmtree(dir);

	dir = th_mkdtemp();
	struct osd_store_options off = { .create = 1, .no_checksums = 1 };
	ck_assert_int_eq(osd_store_open(&st, dir, &off, err, sizeof(err)), 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(wr(O1, 0, data, sizeof(data)), 0);
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), -ENOTSUP);
	reopen(); /* the superblock keeps the mode */
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), -ENOTSUP);
	obj_path(path, sizeof(path), 1, 1);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store_sums");
	TCase *tc = tcase_create("sums");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_sidecar_bytes);
	tcase_add_test(tc, t_ops_match_copy);
	tcase_add_test(tc, t_sum_alloc);
	tcase_add_test(tc, t_flip_named);
	tcase_add_test(tc, t_sparse);
	tcase_add_test(tc, t_empty_writes);
	tcase_add_test(tc, t_dirty_recomputed);
	tcase_add_test(tc, t_fresh_header);
	tcase_add_test(tc, t_upgrade_v1);
	tcase_add_test(tc, t_newer_refused);
	tcase_add_test(tc, t_missing_sidecar_and_off);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
