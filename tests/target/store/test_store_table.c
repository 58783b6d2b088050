/*
 * The indexed checkpoint (store format 4, docs/target-store.md, "Checkpoint
 * index"): its bytes for a known namespace, objects left on disk at the
 * open and loaded when used, the cache bound, changed objects kept until a
 * checkpoint holds them, compaction copying objects that stayed on disk, a
 * data file of an object on disk found through the records, an open of
 * objects that hold data (all loaded, the hash grown for them), the
 * upgrade of a version 1 checkpoint, a record damaged after the open's index check,
 * and threads loading, changing and dropping
 * objects while checkpoints are written.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
#define O1 0x20000ull
#define NOBJ 1000u
#define CACHE 64u
#define PAGE 0x10001u

static char *dir;
static struct osd_store *st;
static char logged_text[8192];

static void log_cb(void *arg, int level, const char *msg)
{
	(void)arg;
	size_t n = strlen(logged_text);
	snprintf(logged_text + n, sizeof(logged_text) - n, "%d:%s\n", level, msg);
}

static struct osd_store *open_cache(int create, size_t cache, int no_checksums)
{
	struct osd_store *s = NULL;
	char err[512];
	struct osd_store_options o = { .create = create, .meta_cache = cache, .log = log_cb,
				       .no_checksums = no_checksums };
	int r = osd_store_open(&s, dir, &o, err, sizeof(err));
	ck_assert_msg(r == 0, "open: %d %s", r, err);
	return s;
}

/* Compact (the objects the log created are then on disk), close, open. */
static void reopen(size_t cache)
{
	ck_assert_int_eq(osd__store_compact(st), 0);
	osd_store_close(st);
	logged_text[0] = 0;
	st = open_cache(0, cache, 0);
}

/* The attribute every object gets: 12 bytes that name it and a version. */
static void val_of(uint64_t oid, uint32_t ver, uint8_t v[12])
{
	osd__put_be64(v, oid);
	osd__put_be32(v + 8, ver);
}

static void set_val(uint64_t oid, uint32_t ver)
{
	uint8_t v[12];
	val_of(oid, ver, v);
	ck_assert_int_eq(osd_store_attr_set(st, P1, oid, PAGE, 1, v, sizeof(v), 0), 0);
}

static void expect_val(uint64_t oid, uint32_t ver)
{
	uint8_t v[12], got[32];
	size_t len = 0;
	val_of(oid, ver, v);
	ck_assert_int_eq(osd_store_attr_get(st, P1, oid, PAGE, 1, got, sizeof(got), &len), 0);
	ck_assert_uint_eq(len, sizeof(v));
	ck_assert_mem_eq(got, v, sizeof(v));
}

/* Objects in memory (the hash), read as the trim sees them. */
static size_t in_memory(void)
{
	pthread_rwlock_rdlock(&st->ns);
	size_t n = st->nobjs;
	pthread_rwlock_unlock(&st->ns);
	return n;
}

static int loaded(uint64_t oid)
{
	return osd__ns_lookup(st, P1, oid) != NULL;
}

static void setup(void)
{
	dir = th_mkdtemp();
	logged_text[0] = 0;
	st = open_cache(1, CACHE, 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
}

static void teardown(void)
{
	osd_store_close(st);
	th_rmtree(dir);
}

static void make_objects(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + i, OSD_OBJ_USER, 0), 0);
		set_val(O1 + i, 1);
	}
}

static void read_file(const char *name, uint8_t **buf, size_t *len)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(osd__read_file(dfd, name, buf, len), 0);
	close(dfd);
}

/* Write @p b (read_file()'s, freed) over file @p name of the store. */
static void write_back(const char *name, uint8_t *b, size_t len)
{
	char path[4200];
	th_path(path, sizeof(path), dir, name);
	int fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, b, len, 0), (ssize_t)len);
	close(fd);
	free(b);
}

/* The superblock of a closed store says format @p version (an older build's). */
static void sb_set_version(uint32_t version)
{
	uint8_t *b, hdr[OSD__FILE_HDR];
	size_t len;
	uint32_t ver, flags;
	uint64_t created;
	char path[4200];
	read_file("superblock", &b, &len);
	ck_assert_int_eq(osd__file_hdr_get_ver(b, "OSDSTORE", &ver, &flags, &created), 0);
	free(b);
	osd__file_hdr_put_ver(hdr, "OSDSTORE", version, flags, created);
	th_path(path, sizeof(path), dir, "superblock");
	int fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, hdr, sizeof(hdr)), sizeof(hdr));
	close(fd);
}

/* A record the byte tests expect: its offset, type and payload length. */
struct rec_at {
	size_t off;
	uint8_t type;
	uint32_t len;
};

/* Each of @p n records of checkpoint @p b where @p recs says, its CRC right. */
static void expect_recs(const uint8_t *b, const struct rec_at *recs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t *r = b + recs[i].off;
		ck_assert_uint_eq(osd__get_be32(r + 4), recs[i].len);
		ck_assert_uint_eq(r[8], recs[i].type);
		ck_assert_uint_eq(osd__get_be32(r), osd__crc32c(0, r + 4, 5 + recs[i].len));
	}
}

/* The head of a checkpoint of partition P1 and one object: records at 200
 * (@p records bytes), root at 234, @p nrecs records before END, @p pack_off. */
static void expect_head(const uint8_t *b, uint64_t records, uint64_t nrecs, uint64_t pack_off)
{
	const uint64_t head[] = { 1, 1, 152, 48, 200, records, 0, st->next_gen, 234, nrecs,
				  pack_off };
	for (size_t i = 0; i < 11; i++)
		ck_assert_msg(osd__get_be64(b + 40 + 8 * i) == head[i], "head field %zu", i);
}

/* The checkpoint (malloc'd, *@p len bytes) after object O1 is made and
 * written with @p iov (and flushed). */
static uint8_t *one_object_ckpt(struct iovec *iov, size_t *len)
{
	uint8_t *b;
	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_write(st, P1, O1, 0, iov, 1, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(osd__store_compact(st), 0);
	read_file("checkpoint", &b, len);
	return b;
}

/* The checkpoint of one partition and one object without attributes, byte
 * by byte: file header, head, index, records. */
START_TEST(t_bytes)
{
	uint8_t *b;
	size_t len;
	uint32_t ver, flags;
	uint64_t epoch;

	ck_assert_int_eq(osd_store_object_create(st, P1, O1, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd__store_compact(st), 0);
	read_file("checkpoint", &b, &len);
	ck_assert_uint_eq(len, 302);
	ck_assert_int_eq(osd__file_hdr_get_ver(b, "OSDCKPT1", &ver, &flags, &epoch), 0);
	ck_assert_uint_eq(ver, 4);
	ck_assert_uint_eq(flags, 0);
	/* head: magic, nparts, nids, index at 152 (48 bytes), records at 200
	 * (102 bytes), capacity 0, next generation, root at 234, 4 records
	 * before END, no slot map or partition bytes (pack_off at END, 285) */
	ck_assert_mem_eq(b + 32, "OSDINDX4", 8);
	expect_head(b, 102, 4, 285);
	ck_assert_uint_eq(osd__get_be32(b + 128), osd__crc32c(0, b + 152, 48));
	ck_assert_uint_eq(osd__get_be32(b + 132), osd__crc32c(0, b + 200, 102));
	ck_assert_uint_eq(osd__get_be32(b + 136), osd__crc32c(0, b + 32, 104));
	for (size_t i = 140; i < 152; i++)
		ck_assert_uint_eq(b[i], 0);
	/* index: the partition (its records at 234), then the object's entry:
	 * its records at 251, no data, a user object */
	ck_assert_uint_eq(osd__get_be64(b + 152), P1);
	ck_assert_uint_eq(osd__get_be64(b + 160), 234);
	ck_assert_uint_eq(osd__get_be64(b + 168), 1);
	ck_assert_uint_eq(osd__get_be64(b + 176), 0);
	ck_assert_uint_eq(osd__get_be64(b + 184), O1);
	ck_assert_uint_eq(osd__get_be64(b + 192), 251ull << 16 | OSD_OBJ_USER);
	/* records: CAPACITY, NEXT_GEN, PART_CREATE, OBJ_CREATE, END(4) */
	const struct rec_at recs[] = {
		{ 200, 6, 8 }, { 217, 8, 8 }, { 234, 1, 8 }, { 251, 3, 25 }, { 285, 9, 8 } };
	expect_recs(b, recs, 5);
	ck_assert_uint_eq(osd__get_be64(b + 234 + 9), P1);
	ck_assert_uint_eq(osd__get_be64(b + 251 + 9 + 8), O1);
	ck_assert_uint_eq(b[251 + 9 + 24], OSD_OBJ_USER);
	ck_assert_uint_eq(osd__get_be64(b + 285 + 9), 4);
	free(b);
}
END_TEST

static void used_of(uint64_t pid, uint64_t oid, uint64_t *used)
{
	ck_assert_int_eq(osd_store_used(st, pid, oid, used), 0);
}

/* An object with a data file (checkpoint version 4), byte by byte where it
 * differs from t_bytes: its FILE record (length, used bytes, data file and
 * sidecar), the index flag, and the partition's bytes in PART_USED. */
START_TEST(t_bytes_file)
{
	static uint8_t data[10000];
	uint8_t *b;
	size_t len;
	uint64_t used = 0;
	struct iovec iov = { data, sizeof(data) };
	th_fill(data, sizeof(data), 6, 0);
	b = one_object_ckpt(&iov, &len);
	used_of(P1, O1, &used);
	ck_assert_uint_ge(used, sizeof(data));
	ck_assert_uint_eq(len, 369);
	/* head: records at 200 (169 bytes), root at 234, 6 records, pack_off 327 */
	expect_head(b, 169, 6, 327);
	/* the entry: records at 251, a FILE record (0x1), a user object */
	ck_assert_uint_eq(osd__get_be64(b + 192), 251ull << 16 | 0x1u << 8 | OSD_OBJ_USER);
	/* OBJ_CREATE, FILE, PART_USED, END(6) */
	const struct rec_at recs[] = {
		{ 251, 3, 25 }, { 285, 14, 33 }, { 327, 13, 16 }, { 352, 9, 8 } };
	expect_recs(b, recs, 4);
	/* FILE: P1, O1, length, used, data file and sidecar */
	ck_assert_uint_eq(osd__get_be64(b + 285 + 9), P1);
	ck_assert_uint_eq(osd__get_be64(b + 285 + 9 + 8), O1);
	ck_assert_uint_eq(osd__get_be64(b + 285 + 9 + 16), sizeof(data));
	ck_assert_uint_eq(osd__get_be64(b + 285 + 9 + 24), used);
	ck_assert_uint_eq(b[285 + 9 + 32], 0x3);
	/* PART_USED: P1, the file's bytes */
	ck_assert_uint_eq(osd__get_be64(b + 327 + 9), P1);
	ck_assert_uint_eq(osd__get_be64(b + 327 + 9 + 8), used);
	ck_assert_uint_eq(osd__get_be64(b + 352 + 9), 6);
	free(b);
	/* it stays on disk at the open, and its files are read as it loads */
	osd_store_close(st);
	st = open_cache(0, CACHE, 0);
	ck_assert(!loaded(O1));
	uint64_t pu = 0;
	used_of(P1, 0, &pu);
	ck_assert_uint_eq(pu, used);
	ck_assert(!loaded(O1));
	uint8_t got[sizeof(data)];
	size_t n = 0;
	struct iovec rv = { got, sizeof(got) };
	ck_assert_int_eq(osd_store_read(st, P1, O1, 0, &rv, 1, &n), 0);
	ck_assert_uint_eq(n, sizeof(data));
	ck_assert_mem_eq(got, data, sizeof(data));
}
END_TEST

/* A packed object's checkpoint (version 3), byte by byte where it differs
 * from the one above: the PACK record, the index flag, the slot map and
 * the partition's bytes in slots after the objects' records. */
START_TEST(t_bytes_packed)
{
	uint8_t *b, data[100];
	size_t len;
	struct iovec iov = { data, sizeof(data) };
	th_fill(data, sizeof(data), 5, 0);
	b = one_object_ckpt(&iov, &len);
	ck_assert_uint_eq(len, 397);
	/* head: records at 200 (197 bytes), root at 234, 7 records, pack_off 330 */
	expect_head(b, 197, 7, 330);
	/* the entry: records at 251, packed (0x2), a user object */
	ck_assert_uint_eq(osd__get_be64(b + 192), 251ull << 16 | 0x2u << 8 | OSD_OBJ_USER);
	/* OBJ_CREATE, PACK, PACK_MAP, PART_USED, END(7) */
	const struct rec_at recs[] = {
		{ 251, 3, 25 }, { 285, 11, 36 }, { 330, 12, 16 }, { 355, 13, 16 }, { 380, 9, 8 } };
	expect_recs(b, recs, 5);
	/* PACK: slot 1, 100 bytes, the CRC32C of the whole slot */
	ck_assert_uint_eq(osd__get_be64(b + 285 + 9 + 16), 1);
	ck_assert_uint_eq(osd__get_be64(b + 285 + 9 + 24), 100);
	/* PACK_MAP: from word 0, one word with slot 1 (the header's slot 0 is implied) */
	ck_assert_uint_eq(osd__get_be64(b + 330 + 9), 0);
	ck_assert_uint_eq(osd__get_be64(b + 330 + 9 + 8), 0x2);
	/* PART_USED: P1, one slot */
	ck_assert_uint_eq(osd__get_be64(b + 355 + 9), P1);
	ck_assert_uint_eq(osd__get_be64(b + 355 + 9 + 8), 4096);
	ck_assert_uint_eq(osd__get_be64(b + 380 + 9), 7);
	free(b);
}
END_TEST

/* The open loads no object without data; use loads them, the cache bounds them. */
START_TEST(t_cold_open)
{
	static uint8_t big[10000];
	struct iovec iov = { big, sizeof(big) };
	make_objects(NOBJ);
	ck_assert_int_eq(osd_store_object_create(st, P1, 7, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, 8, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_write(st, P1, 7, 0, &iov, 1, 0), 0);
	iov.iov_len = 100;
	ck_assert_int_eq(osd_store_write(st, P1, 8, 0, &iov, 1, 0), 0);
	reopen(CACHE);
	/* root and the partition: the object holding a file (its FILE record)
	 * and the packed one (the checkpoint's slot map) stay on disk */
	ck_assert_uint_eq(in_memory(), 2);
	ck_assert(!loaded(7) && !loaded(8) && !loaded(O1));
	uint64_t count = 0;
	ck_assert_int_eq(osd_store_object_count(st, P1, 0, 0, &count), 0);
	ck_assert_uint_eq(count, NOBJ + 2);
	size_t most = 0;
	for (unsigned round = 0; round < 2; round++)
		for (unsigned i = 0; i < NOBJ; i++) {
			expect_val(O1 + i, 1);
			if (in_memory() > most)
				most = in_memory();
		}
	/* cache, a quarter more before a trim, the three that stay */
	ck_assert_uint_le(most, CACHE + CACHE / 4 + 3);
	ck_assert_uint_ge(most, CACHE);
	ck_assert(!loaded(7));
	uint64_t len = 0;
	ck_assert_int_eq(osd_store_length(st, P1, 7, &len), 0);
	ck_assert_uint_eq(len, sizeof(big));
	ck_assert(loaded(7));
	ck_assert_int_eq(osd_store_length(st, P1, 8, &len), 0);
	ck_assert_uint_eq(len, 100);
}
END_TEST

/* Ids of every spacing: a dense run, runs of growing gaps, a cluster at the
 * top of the id space. Each is found (loaded from its index entry), each
 * gap is not, and a LIST from any id starts at the next one: the
 * interpolation of the index search never skips or invents an entry. */
#define NSKEW 700u
static uint64_t skew_id(unsigned i)
{
	if (i < 300)
		return O1 + i;                                  /* dense */
	if (i < 500)
		return (1ull << 40) + (uint64_t)(i - 300) * (i - 300) * 1000003ull;
	if (i < 690)
		return (1ull << 50) + ((uint64_t)1 << ((i - 500) / 16)) * (i - 499);
	return UINT64_MAX - 2 * (NSKEW - i);                    /* top */
}

START_TEST(t_skewed_ids)
{
	uint64_t ids[NSKEW], got[4], next;
	size_t count;
	uint8_t out[32];
	size_t len;
	for (unsigned i = 0; i < NSKEW; i++) {
		ids[i] = skew_id(i);
		ck_assert(i == 0 || ids[i] > ids[i - 1]);
		ck_assert_int_eq(osd_store_object_create(st, P1, ids[i], OSD_OBJ_USER, 0), 0);
		set_val(ids[i], 3);
	}
	reopen(CACHE);
	for (unsigned i = 0; i < NSKEW; i++) {
		expect_val(ids[i], 3);
		/* the id just above: absent, and a LIST from it starts at the next */
		uint64_t gap = ids[i] + 1;
		if (i + 1 < NSKEW && gap == ids[i + 1])
			continue;
		ck_assert_int_eq(osd_store_attr_get(st, P1, gap, PAGE, 1, out, sizeof(out), &len),
				 -ENOENT);
		ck_assert_int_eq(osd_store_object_list(st, P1, gap, 0, got, 1, &count, &next), 0);
		if (i + 1 < NSKEW) {
			ck_assert_uint_eq(count, 1);
			ck_assert_uint_eq(got[0], ids[i + 1]);
		} else {
			ck_assert_uint_eq(count, 0);
		}
	}
	ck_assert_int_eq(osd_store_object_list(st, P1, 2, 0, got, 1, &count, &next), 0);
	ck_assert_uint_eq(got[0], ids[0]);
}
END_TEST

/* Close nothing, flush the log and die, after @p fn ran in a child that
 * opened the store: a crash. Then the open. */
static void crash_after(void (*fn)(void))
{
	osd_store_close(st);
	st = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		st = open_cache(0, CACHE, 0);
		fn();
		_exit(osd_store_flush_all(st) == 0 ? 0 : 1);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	logged_text[0] = 0;
	st = open_cache(0, CACHE, 0);
}

#define NDEF 3000u
#define QUOTA_OF_7 123456789ull

static void change_all(void)
{
	for (unsigned i = 0; i < NDEF; i++)
		set_val(O1 + i, 2);
	ck_assert_int_eq(osd_store_set_quota(st, P1, O1 + 7, QUOTA_OF_7, 0), 0);
	ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + 5, 0), 0);
}

static void change_some(void)
{
	for (unsigned i = 0; i < NDEF; i += 10)
		set_val(O1 + i, 3);
}

static void expect_changed(void)
{
	uint8_t got[32];
	size_t len;
	uint64_t q = 0;
	for (unsigned i = 0; i < NDEF; i++)
		if (i != 5)
			expect_val(O1 + i, i % 10 ? 2 : 3);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1 + 5, PAGE, 1, got, sizeof(got), &len),
			 -ENOENT);
	ck_assert_int_eq(osd_store_get_quota(st, P1, O1 + 7, &q), 0);
	ck_assert_uint_eq(q, QUOTA_OF_7);
}

/* Reads the values of the first half of the objects, from a quarter @p arg
 * on: NULL, or 1 + the first object with a wrong value. */
static void *read_half(void *arg)
{
	unsigned from = (unsigned)(uintptr_t)arg * (NDEF / 8);
	for (unsigned k = 0; k < NDEF / 2; k++) {
		unsigned i = (from + k) % (NDEF / 2);
		uint8_t v[12], got[16];
		size_t len = 0;
		if (i == 5)
			continue;
		val_of(O1 + i, i % 10 ? 2 : 3, v);
		if (osd_store_attr_get(st, P1, O1 + i, PAGE, 1, got, sizeof(got), &len) != 0 ||
		    len != sizeof(v) || memcmp(got, v, sizeof(v)))
			return (void *)(uintptr_t)(i + 1);
	}
	return NULL;
}

/* A crash after changes to 3,000 objects on disk: the replay loads none of
 * them for their attributes or quota (pending.c), each gets its changes
 * when it loads, a checkpoint writes those of objects never loaded, and a
 * second crash replays the old records and the new ones in order. */
START_TEST(t_replay_defers)
{
	make_objects(NDEF);
	reopen(CACHE);
	crash_after(change_all);
	/* root, the partition; the REMOVE loaded its object and dropped it */
	ck_assert_uint_le(in_memory(), 4);
	ck_assert(osd__pend_has(st, P1, O1 + 1) && !osd__pend_has(st, P1, O1 + 5));
	crash_after(change_some); /* loads every tenth object, changes it again */
	ck_assert_uint_le(in_memory(), 4);
	/* four threads load the first half at once, each from elsewhere: two
	 * may apply one object's records, one publishes (CI's TSan job) */
	pthread_t th[4];
	for (uintptr_t t = 0; t < 4; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, read_half, (void *)t), 0);
	for (int t = 0; t < 4; t++) {
		void *res;
		pthread_join(th[t], &res);
		ck_assert_msg(res == NULL, "thread %d: object %u", t, (unsigned)(uintptr_t)res);
	}
	/* (the loads took the first half's notes; those that left memory again
	 * noted their records anew: Dirty objects leave memory) */
	ck_assert(osd__pend_has(st, P1, O1 + NDEF - 1));
	ck_assert_int_eq(osd__store_compact(st), 0); /* writes the other half's */
	ck_assert(!osd__pend_has(st, P1, O1 + NDEF - 1));
	expect_changed();
	reopen(CACHE);
	expect_changed();
	ck_assert_ptr_null(strstr(logged_text, "cannot be read back"));
}
END_TEST

/* A checkpoint made while the store serves (osd__store_compact in store.c):
 * reads go on while it is written, changes wait for it and land in its new
 * log. The object and its bytes t_online_ckpt writes beside a checkpoint. */
#define ON_FILE (O1 + NDEF + 1)
#define ON_SET (O1 + 1)

struct online {
	pthread_t reader, setter, writer;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int read_done;
	void *read_res;
};
static struct online on;

/* Reads the first half of the objects (version 2 after change_all), each
 * then given a lazy access time as a READ does (no record: no wait). */
static void *online_read(void *arg)
{
	void *res = NULL;
	(void)arg;
	for (unsigned i = 0; i < NDEF / 2 && !res; i++) {
		uint8_t v[12], got[16], at[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
		size_t len = 0;
		val_of(O1 + i, 2, v);
		if (i != 5 && (osd_store_attr_get(st, P1, O1 + i, PAGE, 1, got, sizeof(got),
						  &len) != 0 ||
			       len != sizeof(v) || memcmp(got, v, sizeof(v)) ||
			       osd_store_attr_set(st, P1, O1 + i, PAGE, 2, at, sizeof(at),
						  OSD_STORE_LAZY) != 0))
			res = (void *)(uintptr_t)(i + 1);
	}
	pthread_mutex_lock(&on.mu);
	on.read_res = res;
	on.read_done = 1;
	pthread_cond_signal(&on.cv);
	pthread_mutex_unlock(&on.mu);
	return NULL;
}

static void *online_set(void *arg)
{
	uint8_t v[12];
	(void)arg;
	val_of(ON_SET, 9, v);
	return (void *)(intptr_t)osd_store_attr_set(st, P1, ON_SET, PAGE, 1, v, sizeof(v), 0);
}

static void *online_write(void *arg)
{
	static uint8_t b[7000];
	(void)arg;
	th_fill(b, sizeof(b), 2, 0);
	struct iovec iov = { b, sizeof(b) };
	return (void *)(intptr_t)osd_store_write(st, P1, ON_FILE, 0, &iov, 1, 0);
}

/* Once the checkpoint took the objects in memory: a thread reads half the
 * objects, all on disk with records the replay left (each loads, applies
 * them and is published while the checkpoint has not written it), and must
 * finish before the checkpoint goes on; two more change an attribute and
 * an object's data, and must wait for it. */
static void online_hook(void *arg)
{
	struct timespec t;
	int r = 0;
	(void)arg;
	ck_assert_int_eq(pthread_create(&on.reader, NULL, online_read, NULL), 0);
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 60;
	pthread_mutex_lock(&on.mu);
	while (!on.read_done && r == 0)
		r = pthread_cond_timedwait(&on.cv, &on.mu, &t);
	pthread_mutex_unlock(&on.mu);
	ck_assert_msg(on.read_done, "a read or a lazy access time waited for the checkpoint");
	ck_assert_msg(on.read_res == NULL, "read object %u wrong",
		      (unsigned)(uintptr_t)on.read_res - 1);
	ck_assert_int_eq(pthread_create(&on.setter, NULL, online_set, NULL), 0);
	ck_assert_int_eq(pthread_create(&on.writer, NULL, online_write, NULL), 0);
}

static void online_compact(void)
{
	void *rs, *rw;
	pthread_mutex_init(&on.mu, NULL);
	pthread_cond_init(&on.cv, NULL);
	st->ckpt_hook = online_hook;
	ck_assert_int_eq(osd__store_compact(st), 0);
	pthread_join(on.reader, NULL);
	pthread_join(on.setter, &rs);
	pthread_join(on.writer, &rw);
	ck_assert_int_eq((int)(intptr_t)rs, 0);
	ck_assert_int_eq((int)(intptr_t)rw, 0);
}

/* The checkpoint in a process that then dies: what the replay left for the
 * objects the reader loaded is in it (it loads them apart), and the change
 * and the write that waited are in its log. */
START_TEST(t_online_ckpt)
{
	static uint8_t b[7000];
	size_t got = 0;
	make_objects(NDEF);
	ck_assert_int_eq(osd_store_object_create(st, P1, ON_FILE, OSD_OBJ_USER, 0), 0);
	th_fill(b, 6000, 1, 0);
	struct iovec iov = { b, 6000 };
	ck_assert_int_eq(osd_store_write(st, P1, ON_FILE, 0, &iov, 1, 0), 0);
	reopen(CACHE);
	crash_after(change_all);
	crash_after(online_compact);
	for (unsigned i = 0; i < NDEF; i++)
		if (i != 5)
			expect_val(O1 + i, O1 + i == ON_SET ? 9 : 2);
	uint64_t q = 0;
	ck_assert_int_eq(osd_store_get_quota(st, P1, O1 + 7, &q), 0);
	ck_assert_uint_eq(q, QUOTA_OF_7);
	iov = (struct iovec){ b, sizeof(b) };
	ck_assert_int_eq(osd_store_read(st, P1, ON_FILE, 0, &iov, 1, &got), 0);
	ck_assert_uint_eq(got, sizeof(b));
	ck_assert(th_check(b, sizeof(b), 2, 0));
	ck_assert_ptr_null(strstr(logged_text, "cannot be read back"));
}
END_TEST

/* Descriptors of this process to files of the store that are deleted. */
static unsigned deleted_held(void)
{
	char link[64], to[4096];
	unsigned n = 0;
	for (int fd = 0; fd < 1024; fd++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t len = readlink(link, to, sizeof(to) - 1);
		if (len <= 0)
			continue;
		to[len] = 0;
		n += strncmp(to, dir, strlen(dir)) == 0 && strstr(to, "(deleted)") != NULL;
	}
	return n;
}

/* A checkpoint holds the checkpoint.prev and log.prev it replaces open until
 * it lets the locks go, then closes them: none stays held. */
START_TEST(t_compact_frees_replaced)
{
	make_objects(50);
	for (int k = 0; k < 3; k++) {
		set_val(O1 + k, 2);
		ck_assert_int_eq(osd__store_compact(st), 0);
		ck_assert_uint_eq(deleted_held(), 0);
	}
	ck_assert_int_eq(st->gone_fd[0], -1);
	ck_assert_int_eq(st->gone_fd[1], -1);
	reopen(CACHE);
	expect_val(O1 + 2, 2);
}
END_TEST

/* Copy data/@p from (a generation's file or sidecar name) to data/@p to. */
static void data_copy(const char *from, const char *to)
{
	char name[64], path[4200];
	uint8_t *b;
	size_t len;
	snprintf(name, sizeof(name), "data/%s", from);
	read_file(name, &b, &len);
	snprintf(name, sizeof(name), "data/%s", to);
	th_path(path, sizeof(path), dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, b, len), (ssize_t)len);
	close(fd);
	free(b);
}

static int data_exists(const char *name)
{
	char d[64], path[4200];
	struct stat sb;
	snprintf(d, sizeof(d), "data/%s", name);
	th_path(path, sizeof(path), dir, d);
	return stat(path, &sb) == 0;
}

static unsigned quarantined(void)
{
	char path[4096];
	th_path(path, sizeof(path), dir, "quarantine");
	return th_dir_entries(path, NULL);
}

/* Both leftovers a crash can leave in store format 6 (docs/target-store.md,
 * Limits), made by hand: the files of a removed object whose REMOVE a
 * checkpoint holds, and a file of a packed object. An open reads neither;
 * an open with scan_data moves both to quarantine/, keeps every object's
 * bytes and counts the space used as before they were made. */
START_TEST(t_scan_data)
{
	static uint8_t big[6000], small[100], got[8000];
	char fa[40], fc[40], sa[40], sc[40], fb[40];
	unsigned d;
	uint64_t used0 = 0, used = 0;
	size_t n = 0;
	make_objects(3);
	th_fill(big, sizeof(big), 7, 0);
	th_fill(small, sizeof(small), 8, 0);
	struct iovec iov = { big, sizeof(big) };
	ck_assert_int_eq(osd_store_write(st, P1, O1, 0, &iov, 1, 0), 0);
	ck_assert_int_eq(osd_store_write(st, P1, O1 + 2, 0, &iov, 1, 0), 0);
	iov = (struct iovec){ small, sizeof(small) };
	ck_assert_int_eq(osd_store_write(st, P1, O1 + 1, 0, &iov, 1, 0), 0);
	struct osd__obj *a = osd__ns_lookup(st, P1, O1), *b = osd__ns_lookup(st, P1, O1 + 1),
			*c = osd__ns_lookup(st, P1, O1 + 2);
	ck_assert(a && b && c && a->has_file && b->packed && c->has_file);
	osd__data_path(a->gen, fa, &d);
	osd__sum_path(a->gen, sa);
	osd__data_path(b->gen, fb, &d);
	osd__data_path(c->gen, fc, &d);
	osd__sum_path(c->gen, sc);
	ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + 2, 0), 0);
	reopen(CACHE);
	used_of(P1, 0, &used0);
	osd_store_close(st);
	st = NULL;
	ck_assert(!data_exists(fc) && !data_exists(fb));
	data_copy(fa, fc);
	data_copy(sa, sc);
	data_copy(fa, fb);
	st = open_cache(0, CACHE, 0);
	ck_assert_uint_eq(quarantined(), 0); /* no open reads them */
	osd_store_close(st);
	struct osd_store_options o = { .meta_cache = CACHE, .log = log_cb, .scan_data = 1 };
	char err[256];
	logged_text[0] = 0;
	ck_assert_int_eq(osd_store_open(&st, dir, &o, err, sizeof(err)), 0);
	ck_assert_msg(strstr(logged_text, "quarantine"), "%s", logged_text);
	ck_assert_uint_eq(quarantined(), 3);
	ck_assert(!data_exists(fc) && !data_exists(sc) && !data_exists(fb));
	ck_assert(data_exists(fa) && data_exists(sa));
	used_of(P1, 0, &used);
	ck_assert_uint_eq(used, used0);
	for (int k = 0; k < 2; k++) {
		iov = (struct iovec){ got, sizeof(got) };
		ck_assert_int_eq(osd_store_read(st, P1, O1, 0, &iov, 1, &n), 0);
		ck_assert_uint_eq(n, sizeof(big));
		ck_assert(th_check(got, n, 7, 0));
		iov = (struct iovec){ got, sizeof(got) };
		ck_assert_int_eq(osd_store_read(st, P1, O1 + 1, 0, &iov, 1, &n), 0);
		ck_assert_uint_eq(n, sizeof(small));
		ck_assert(th_check(got, n, 8, 0));
		reopen(CACHE); /* the open wrote a checkpoint: no file is lost on the next */
		used_of(P1, 0, &used);
		ck_assert_uint_eq(used, used0);
	}
}
END_TEST

/* A record a replay left for its object that no longer reads back (the
 * log rotted under the open store): the object fails whole with -EIO and
 * an ERROR, its neighbours load, and a checkpoint refuses to hold it. */
START_TEST(t_replay_deferred_rot)
{
	make_objects(NDEF);
	reopen(CACHE);
	crash_after(change_some);
	ck_assert(osd__pend_has(st, P1, O1 + 10));
	/* the log's bytes under the store: flip one in the record for O1 + 10 */
	int fd = openat(st->dirfd, "log", O_RDWR);
	ck_assert_int_ge(fd, 0);
	struct stat sb;
	ck_assert_int_eq(fstat(fd, &sb), 0);
	uint8_t *b = malloc((size_t)sb.st_size);
	ck_assert_int_eq(pread(fd, b, (size_t)sb.st_size, 0), sb.st_size);
	uint8_t id[8];
	osd__put_be64(id, O1 + 10);
	uint8_t *at = memmem(b, (size_t)sb.st_size, id, 8);
	ck_assert_ptr_nonnull(at);
	uint8_t x = at[20] ^ 0x40;
	ck_assert_int_eq(pwrite(fd, &x, 1, at + 20 - b), 1);
	close(fd);
	free(b);
	uint8_t got[32];
	size_t len;
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1 + 10, PAGE, 1, got, sizeof(got), &len),
			 -EIO);
	ck_assert_ptr_nonnull(strstr(logged_text, "cannot be read back or applied"));
	expect_val(O1 + 11, 1);
	expect_val(O1 + 0, 3);
	ck_assert_int_eq(osd__store_compact(st), -EUCLEAN);
}
END_TEST

/* A changed object stays in memory until a checkpoint holds its change. */
START_TEST(t_changed_kept)
{
	make_objects(NOBJ);
	reopen(16);
	set_val(O1 + 5, 2);
	for (unsigned i = 100; i < 400; i++)
		expect_val(O1 + i, 1);
	/* it left memory with its record noted (Dirty objects leave memory) */
	ck_assert(!loaded(O1 + 5) && osd__pend_has(st, P1, O1 + 5));
	expect_val(O1 + 5, 2);
	ck_assert(loaded(O1 + 5) && !osd__pend_has(st, P1, O1 + 5));
	ck_assert_int_eq(osd__store_compact(st), 0);
	for (unsigned i = 400; i < 700; i++)
		expect_val(O1 + i, 1);
	ck_assert(!loaded(O1 + 5));
	expect_val(O1 + 5, 2); /* from the new checkpoint */
	reopen(16);
	expect_val(O1 + 5, 2);
}
END_TEST

#define DIRTY_ROUNDS 3u

static void set_round(uint32_t ver)
{
	for (unsigned i = 0; i < NDEF; i++)
		set_val(O1 + i, ver);
}

static void expect_round(uint32_t ver)
{
	for (unsigned i = 0; i < NDEF; i++)
		expect_val(O1 + i, ver);
}

static void dirty_rounds(void)
{
	for (uint32_t r = 2; r < 2 + DIRTY_ROUNDS; r++)
		set_round(r);
}

/*
 * Objects changed by attribute sets leave memory before the next
 * checkpoint, their records noted as a replay's (Dirty objects leave
 * memory): rounds of sets on twenty times the cache keep memory near the
 * cache, each set loads its object with its notes and lets it go with one
 * more, the notes of the loads are reused, and every value reads back:
 * after the rounds, after a compaction (which writes them from their notes),
 * and after a crash. An object with a change that no note holds (a quota)
 * stays until a checkpoint.
 */
START_TEST(t_dirty_leave)
{
	make_objects(NDEF);
	reopen(CACHE);
	ck_assert_int_eq(osd_store_set_quota(st, P1, O1 + 7, QUOTA_OF_7, 0), 0);
	dirty_rounds();
	ck_assert_uint_le(in_memory(), 2 * CACHE);
	ck_assert(loaded(O1 + 7));
	ck_assert(osd__pend_has(st, P1, O1 + NDEF / 2));
	/* a round noted every object once more: without reuse the notes of
	 * the loads would be NDEF * (1 + 2 + 3) */
	ck_assert_uint_le(st->pend_noffs, NDEF * DIRTY_ROUNDS + NDEF / 2);
	expect_round(1 + DIRTY_ROUNDS);
	ck_assert_int_eq(osd__store_compact(st), 0);
	ck_assert(!osd__pend_has(st, P1, O1 + NDEF / 2));
	for (unsigned i = 0; i < NDEF; i += 2) /* loads push the others out */
		expect_val(O1 + i, 1 + DIRTY_ROUNDS);
	ck_assert(!loaded(O1 + 7));
	expect_round(1 + DIRTY_ROUNDS);
	uint64_t q = 0;
	ck_assert_int_eq(osd_store_get_quota(st, P1, O1 + 7, &q), 0);
	ck_assert_uint_eq(q, QUOTA_OF_7);
	/* the same rounds in a process that dies: the replay notes them anew */
	crash_after(dirty_rounds);
	expect_round(1 + DIRTY_ROUNDS);
	reopen(CACHE);
	expect_round(1 + DIRTY_ROUNDS);
}
END_TEST

/* The notes of objects that left memory are bounded: at the bound (500
 * notes here) the next change compacts, and memory stays near the cache. */
START_TEST(t_dirty_bound)
{
	make_objects(NDEF);
	reopen(CACHE);
	uint64_t epoch = st->epoch;
	st->pend_max_notes = 500;
	set_round(2);
	ck_assert_uint_ge(st->epoch, epoch + NDEF / 500 - 1);
	ck_assert_uint_le(st->pend_noffs, 500);
	ck_assert_uint_le(in_memory(), 2 * CACHE);
	expect_round(2);
	reopen(CACHE);
	expect_round(2);
}
END_TEST

/* A checkpoint copies the records of objects left on disk; removes and
 * creates since are applied around them. */
START_TEST(t_compact_copies)
{
	make_objects(NOBJ);
	reopen(CACHE);
	for (unsigned i = 0; i < NOBJ; i += 10)
		ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + i, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + NOBJ, OSD_OBJ_USER, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 5 * NOBJ, OSD_OBJ_COLLECTION, 0), 0);
	set_val(O1 + 3, 7);
	ck_assert_int_eq(osd__store_compact(st), 0);
	ck_assert_int_eq(osd__store_compact(st), 0); /* all on disk now: a copy of a copy */
	reopen(CACHE);
	uint64_t ids[2 * NOBJ], next = 0;
	size_t n = 0;
	ck_assert_int_eq(osd_store_object_list(st, P1, 0, 0, ids, 2 * NOBJ, &n, &next), 0);
	ck_assert_uint_eq(n, NOBJ - NOBJ / 10 + 2);
	for (unsigned i = 0; i < NOBJ; i++) {
		uint8_t got[16];
		size_t len;
		if (i % 10 == 0) {
			ck_assert_int_eq(osd_store_attr_get(st, P1, O1 + i, PAGE, 1, got, sizeof(got),
							    &len), -ENOENT);
			continue;
		}
		expect_val(O1 + i, i == 3 ? 7 : 1);
	}
	enum osd_obj_type t;
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 5 * NOBJ, &t), 0);
	ck_assert_int_eq(t, OSD_OBJ_COLLECTION);
	uint64_t coll = 0;
	ck_assert_int_eq(osd_store_object_count(st, P1, 0, OSD_OBJ_COLLECTION, &coll), 0);
	ck_assert_uint_eq(coll, 1);
}
END_TEST

static void set_in(uint64_t pid, uint64_t oid, uint32_t ver)
{
	uint8_t v[12];
	val_of(oid ^ pid, ver, v);
	ck_assert_int_eq(osd_store_attr_set(st, pid, oid, PAGE, 1, v, sizeof(v), 0), 0);
}

static void expect_in(uint64_t pid, uint64_t oid, uint32_t ver)
{
	uint8_t v[12], got[32];
	size_t len = 0;
	val_of(oid ^ pid, ver, v);
	ck_assert_int_eq(osd_store_attr_get(st, pid, oid, PAGE, 1, got, sizeof(got), &len), 0);
	ck_assert_uint_eq(len, sizeof(v));
	ck_assert_msg(memcmp(got, v, sizeof(v)) == 0, "partition %llx object %llx: version %u",
		      (unsigned long long)pid, (unsigned long long)oid, osd__get_be32(got + 8));
}

/* Partitions holding the same object ids, each with other objects changed
 * in memory: the checkpoint pairs each index entry with the object of its
 * own partition (it walks the objects in memory sorted by partition and id
 * beside the index). */
START_TEST(t_compact_partitions)
{
	static const uint64_t pids[3] = { P1, P1 + 0x100, P1 + 0x200 };
	static const unsigned changed[3][2] = { { 7, 40 }, { 3, 7 }, { 1, 39 } };
	for (unsigned k = 1; k < 3; k++)
		ck_assert_int_eq(osd_store_partition_create(st, pids[k], 0), 0);
	for (unsigned k = 0; k < 3; k++) {
		for (unsigned i = 0; i < 40; i++) {
			ck_assert_int_eq(osd_store_object_create(st, pids[k], O1 + i, OSD_OBJ_USER,
								 0), 0);
			set_in(pids[k], O1 + i, 1);
		}
	}
	reopen(CACHE);
	for (unsigned k = 0; k < 3; k++) {
		for (unsigned j = 0; j < 2; j++) {
			if (changed[k][j] == 40)
				ck_assert_int_eq(osd_store_object_create(st, pids[k], O1 + 40,
									 OSD_OBJ_USER, 0), 0);
			set_in(pids[k], O1 + changed[k][j], 2 + k);
		}
	}
	ck_assert_int_eq(osd__store_compact(st), 0);
	for (int round = 0; round < 2; round++) {
		for (unsigned k = 0; k < 3; k++) {
			for (unsigned i = 0; i <= 40; i++) {
				int is = changed[k][0] == i || changed[k][1] == i;
				if (i == 40 && !is)
					continue;
				expect_in(pids[k], O1 + i, is ? 2 + k : 1);
			}
		}
		reopen(CACHE);
	}
}
END_TEST

static void write_hello(void)
{
	struct iovec iov = { "hello", 5 };
	ck_assert_int_eq(osd_store_write(st, P1, O1 + 20, 0, &iov, 1, 0), 0);
}

/* The first write of an object on disk (its index entry says it holds no
 * data) and a crash: the log's DATA record names it, so the open reads its
 * new file; nothing goes to quarantine. */
START_TEST(t_file_of_cold_object)
{
	uint8_t buf[16];
	size_t got = 0;

	osd_store_close(st);
	th_rmtree(dir);
	dir = th_mkdtemp();
	st = open_cache(1, CACHE, 1);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	make_objects(50);
	ck_assert_int_eq(osd__store_compact(st), 0);
	crash_after(write_hello);
	ck_assert_msg(!strstr(logged_text, "quarantine"), "%s", logged_text);
	ck_assert(loaded(O1 + 20));
	struct iovec iov = { buf, sizeof(buf) };
	ck_assert_int_eq(osd_store_read(st, P1, O1 + 20, 0, &iov, 1, &got), 0);
	ck_assert_uint_eq(got, 5);
	ck_assert_mem_eq(buf, "hello", 5);
	expect_val(O1 + 20, 1);
}
END_TEST


/* Each of @p n packed objects from O1 reads its own 16 bytes (one in 97). */
static void expect_own_bytes(unsigned n)
{
	uint8_t want[16], got[16];
	size_t len = 0;
	struct iovec iov = { got, sizeof(got) };
	for (unsigned i = 0; i < n; i += 97) {
		osd__put_be64(want, O1 + i);
		osd__put_be64(want + 8, ~(O1 + i));
		ck_assert_int_eq(osd_store_read(st, P1, O1 + i, 0, &iov, 1, &len), 0);
		ck_assert_uint_eq(len, sizeof(got));
		ck_assert_mem_eq(got, want, sizeof(got));
	}
}

/*
 * Packed objects. From a checkpoint of version 2 (store format 4) the open
 * loads them all, to count their slots: the hash of objects grows for them
 * as they come (a lookup walks no chain longer than the load allows). From
 * one of version 3 it loads none (the slot map and the partition's bytes
 * are in it) and the used totals are the same; each reads its own bytes
 * back either way.
 */
#define NDATA 3000u
START_TEST(t_open_data_objects)
{
	uint8_t buf[16];
	uint64_t part = 0, all = 0, v = 0;
	struct iovec iov = { buf, sizeof(buf) };
	for (unsigned i = 0; i < NDATA; i++) {
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + i, OSD_OBJ_USER, 0), 0);
		osd__put_be64(buf, O1 + i);
		osd__put_be64(buf + 8, ~(O1 + i));
		ck_assert_int_eq(osd_store_write(st, P1, O1 + i, 0, &iov, 1, 0), 0);
	}
	used_of(P1, 0, &part);
	used_of(0, 0, &all);
	ck_assert_uint_eq(part, NDATA * 4096ull);
	/* a store of format 4 as its build left it: the close writes version 2 */
	st->ckpt_version = OSD__CKPT_VERSION_INDEX;
	osd_store_close(st);
	sb_set_version(4);
	logged_text[0] = 0;
	st = open_cache(0, CACHE, 0);
	ck_assert_msg(strstr(logged_text, "upgraded from version 4 to 6"), "%s", logged_text);
	ck_assert_uint_eq(in_memory(), NDATA + 2); /* with the root and the partition */
	ck_assert_uint_ge(st->hash_size, st->nobjs);
	used_of(P1, 0, &v);
	ck_assert_uint_eq(v, part);
	expect_own_bytes(NDATA);
	reopen(CACHE);
	ck_assert_uint_eq(in_memory(), 2);
	used_of(P1, 0, &v);
	ck_assert_uint_eq(v, part);
	used_of(0, 0, &v);
	ck_assert_uint_eq(v, all);
	expect_own_bytes(NDATA);
	used_of(P1, O1 + 97, &v);
	ck_assert_uint_eq(v, 4096);
	used_of(P1, 0, &v);
	ck_assert_uint_eq(v, part); /* a load counts nothing again */
}
END_TEST

/* ---- packed objects leave memory ----------------------------------------------- */

#define NPK 600u
#define SLOT 4096u

/* Object i's bytes in version @p ver: 50 to 249 of them. */
static size_t pk_content(unsigned i, uint32_t ver, uint8_t *buf)
{
	size_t len = 50 + i % 200;
	th_fill(buf, len, (uint64_t)i * 7 + ver, 0);
	return len;
}

static void pk_write(unsigned i, uint32_t ver)
{
	uint8_t buf[256];
	struct iovec iov = { buf, pk_content(i, ver, buf) };
	ck_assert_int_eq(osd_store_write(st, P1, O1 + i, 0, &iov, 1, 0), 0);
}

static void pk_expect(unsigned i, uint32_t ver)
{
	uint8_t want[256], got[512];
	size_t len = pk_content(i, ver, want), n = 0;
	struct iovec iov = { got, sizeof(got) };
	int rr = osd_store_read(st, P1, O1 + i, 0, &iov, 1, &n);
	ck_assert_msg(rr == 0, "read %u: %d (%s)", i, rr, logged_text);
	ck_assert_msg(n == len && !memcmp(got, want, len), "object %u version %u", i, ver);
}

static int pk_removed(unsigned i)
{
	return i % 50 == 1 && i % 3 != 0; /* 8 of them, none rewritten */
}

/* Every third object rewritten, eight removed, in the child that crashes. */
static void pk_change(void)
{
	for (unsigned i = 0; i < NPK; i += 3)
		pk_write(i, 2);
	for (unsigned i = 0; i < NPK; i++)
		if (pk_removed(i))
			ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + i, 0), 0);
}

static void pk_expect_all(void)
{
	uint8_t b[16];
	size_t n;
	for (unsigned i = 0; i < NPK; i++) {
		if (!pk_removed(i))
			pk_expect(i, i % 3 ? 1 : 2);
		else
			ck_assert_int_eq(osd_store_attr_get(st, P1, O1 + i, PAGE, 1, b, sizeof(b), &n),
					 -ENOENT);
	}
}

static uint64_t pack_slots(void)
{
	char path[4200];
	struct stat sb;
	th_path(path, sizeof(path), dir, "data/pack");
	ck_assert_int_eq(stat(path, &sb), 0);
	return ((uint64_t)sb.st_size + SLOT - 1) / SLOT;
}

/*
 * Packed objects leave memory like any other and come back with their slot
 * (osd__pack_adopt): reads across a cache of 64 objects, a crash after
 * rewrites and removals of objects loaded again (the replay moves and frees
 * slots the checkpoint's map counted), the used totals exact throughout,
 * and no slot named twice: the freed slots are taken again by new objects,
 * and every old object still reads its own bytes.
 */
START_TEST(t_packed_leave_memory)
{
	uint64_t used = 0, total = 0;
	for (unsigned i = 0; i < NPK; i++) {
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + i, OSD_OBJ_USER, 0), 0);
		pk_write(i, 1);
	}
	reopen(CACHE);
	ck_assert_uint_eq(in_memory(), 2);
	size_t most = 0;
	for (unsigned i = 0; i < NPK; i++) {
		pk_expect(i, 1);
		most = in_memory() > most ? in_memory() : most;
	}
	ck_assert_uint_le(most, CACHE + CACHE / 4 + 2);
	used_of(P1, 0, &used);
	ck_assert_uint_eq(used, NPK * SLOT);
	uint64_t slots = pack_slots();
	ck_assert_uint_eq(slots, 1 + NPK);

	crash_after(pk_change);
	pk_expect_all();
	used_of(P1, 0, &used);
	used_of(0, 0, &total);
	ck_assert_uint_eq(used, (NPK - 8) * SLOT);
	ck_assert_uint_eq(total, used);
	/* 200 slots the rewrites left and 8 of removed objects are free again */
	slots = pack_slots();
	ck_assert_uint_eq(slots, 1 + NPK + NPK / 3);
	for (unsigned i = NPK; i < 2 * NPK; i++) {
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + i, OSD_OBJ_USER, 0), 0);
		pk_write(i, 3);
	}
	ck_assert_uint_le(pack_slots(), slots + NPK - (NPK / 3 + 8));
	/* a rewrite after the checkpoint, logged by the flush: the object
	 * stays until a checkpoint holds its new slot (passes of reads over
	 * the cache drop every other one) */
	ck_assert_int_eq(osd__store_compact(st), 0);
	for (unsigned i = NPK; i < 2 * NPK; i += 5)
		pk_write(i, 4);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	for (int pass = 0; pass < 2; pass++) {
		pk_expect_all();
		for (unsigned i = NPK; i < 2 * NPK; i++)
			pk_expect(i, (i - NPK) % 5 ? 3 : 4);
	}
	reopen(CACHE);
	ck_assert_uint_eq(in_memory(), 2);
	used_of(P1, 0, &used);
	ck_assert_uint_eq(used, (2 * NPK - 8) * SLOT);
	pk_expect_all();
	for (unsigned i = NPK; i < 2 * NPK; i++)
		pk_expect(i, (i - NPK) % 5 ? 3 : 4);
}
END_TEST

/* ---- objects with a data file leave memory ------------------------------------- */

#define NFL 300u
#define FLMAX 13000u

/* Object i's bytes in version @p ver: 5,000 to 12,999 of them (a data file),
 * as many as another version's seldom. */
static size_t fl_content(unsigned i, uint32_t ver, uint8_t *buf)
{
	size_t len = 5000 + ((size_t)i * 37 + ver * 1500) % 8000;
	th_fill(buf, len, (uint64_t)i * 11 + ver, 0);
	return len;
}

/* Object i made anew as version @p ver: truncated, then written. */
static void fl_write(unsigned i, uint32_t ver)
{
	static uint8_t buf[FLMAX];
	struct iovec iov = { buf, fl_content(i, ver, buf) };
	ck_assert_int_eq(osd_store_truncate(st, P1, O1 + i, 0, 0), 0);
	ck_assert_int_eq(osd_store_write(st, P1, O1 + i, 0, &iov, 1, 0), 0);
}

static void fl_expect(unsigned i, uint32_t ver)
{
	static uint8_t want[FLMAX], got[FLMAX + 16];
	size_t len = fl_content(i, ver, want), n = 0;
	uint64_t l = 0;
	struct iovec iov = { got, sizeof(got) };
	int rr = osd_store_read(st, P1, O1 + i, 0, &iov, 1, &n);
	ck_assert_msg(rr == 0, "read %u: %d (%s)", i, rr, logged_text);
	ck_assert_msg(n == len && !memcmp(got, want, len), "object %u version %u", i, ver);
	ck_assert_int_eq(osd_store_length(st, P1, O1 + i, &l), 0);
	ck_assert_uint_eq(l, len);
}

static int fl_removed(unsigned i)
{
	return i % 40 == 7; /* 8 of them */
}

/* In the child that crashes: every third object made anew, eight removed,
 * one created after the checkpoint with a file of its own. */
static void fl_change(void)
{
	for (unsigned i = 0; i < NFL; i += 3)
		if (!fl_removed(i))
			fl_write(i, 2);
	for (unsigned i = 0; i < NFL; i++)
		if (fl_removed(i))
			ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + i, 0), 0);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + NFL, OSD_OBJ_USER, 0), 0);
	fl_write(NFL, 2);
}

static uint32_t fl_ver(unsigned i)
{
	return i % 3 && i != NFL ? 1 : 2;
}

/* Every object's bytes, and the totals (as they were before any object
 * loaded: @p before) the sum of the objects' used bytes. */
static void fl_expect_all(uint64_t before)
{
	uint64_t sum = 0, u = 0;
	for (unsigned i = 0; i <= NFL; i++) {
		if (fl_removed(i)) {
			ck_assert_int_eq(osd_store_object_type(st, P1, O1 + i, NULL), -ENOENT);
			continue;
		}
		fl_expect(i, fl_ver(i));
		used_of(P1, O1 + i, &u);
		ck_assert_uint_ge(u, 4096);
		sum += u;
	}
	used_of(P1, 0, &u);
	ck_assert_uint_eq(u, sum);
	ck_assert_uint_eq(before, sum);
	used_of(0, 0, &u);
	ck_assert_uint_eq(u, sum);
}

/*
 * Objects with a data file leave memory like any other (store format 6):
 * the open loads none, reads through a cache of 64 (and 16 descriptors)
 * bound what stays, and their FILE records and the partition totals hold
 * their lengths and used bytes. A crash after some are made anew, some
 * removed and one created: the log's DATA records name exactly those the
 * open reads again, every object has its bytes and the totals are exact.
 * A file of a generation reserved by a GENS record that no record names
 * (a creation whose records a crash lost) goes to quarantine/, and the
 * generations given after it are above it.
 */
START_TEST(t_files_leave_memory)
{
	char path[4200];
	osd_store_close(st);
	th_rmtree(dir);
	dir = th_mkdtemp();
	st = open_cache(1, CACHE, 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	for (unsigned i = 0; i < NFL; i++) {
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + i, OSD_OBJ_USER, 0), 0);
		fl_write(i, 1);
	}
	reopen(CACHE);
	st->max_fds = 16; /* each cached descriptor holds its object */
	ck_assert_uint_eq(in_memory(), 2);
	size_t most = 0;
	for (unsigned i = 0; i < NFL; i++) {
		fl_expect(i, 1);
		most = in_memory() > most ? in_memory() : most;
	}
	ck_assert_uint_le(most, CACHE + CACHE / 4 + 2 + 16);
	ck_assert_int_eq(osd__store_compact(st), 0);
	crash_after(fl_change);
	/* the replay read the files of the objects its DATA records name */
	ck_assert_msg(!strstr(logged_text, "quarantine"), "%s", logged_text);
	ck_assert_uint_le(in_memory(), 2 + NFL / 3 + 8 + 1);
	st->max_fds = 16;
	uint64_t before = 0;
	used_of(P1, 0, &before);
	fl_expect_all(before);
	reopen(CACHE);
	st->max_fds = 16;
	ck_assert_uint_eq(in_memory(), 2);
	used_of(P1, 0, &before);
	fl_expect_all(before);

	/* a file of a reserved generation no record names */
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + NFL + 1, OSD_OBJ_USER, 0), 0);
	uint64_t gen = osd__ns_find(st, P1, O1 + NFL + 1)->gen;
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	osd_store_close(st);
	th_obj_path(path, sizeof(path), dir, gen + 10, 0);
	char sub[4200];
	snprintf(sub, sizeof(sub), "%.*s", (int)(strrchr(path, '/') - path), path);
	(void)mkdir(sub, 0700);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "lost", 4), 4);
	close(fd);
	logged_text[0] = 0;
	st = open_cache(0, CACHE, 0);
	ck_assert_msg(strstr(logged_text, "data file(s) no record names moved to quarantine/"),
		      "%s", logged_text);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_uint_ge(st->next_gen, gen + OSD__GENS_AHEAD);
	used_of(P1, 0, &before);
	fl_expect_all(before);
}
END_TEST

/* A slot map that rots in the checkpoint (a bit flipped in a PACK_MAP
 * record): the open counts the slots again from every packed object's
 * records, with a WARNING, instead of refusing; the totals are exact, each
 * object reads its own bytes, new objects take no slot in use, and the
 * next checkpoint holds a good map again. */
START_TEST(t_bad_slot_map)
{
	uint8_t *b;
	size_t len;
	uint64_t used = 0;
	for (unsigned i = 0; i < 200; i++) {
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + i, OSD_OBJ_USER, 0), 0);
		pk_write(i, 1);
	}
	ck_assert_int_eq(osd__store_compact(st), 0);
	osd_store_close(st);
	read_file("checkpoint", &b, &len);
	uint64_t pack_off = osd__get_be64(b + 32 + 8 + 80);
	ck_assert_uint_eq(b[pack_off + 8], 12); /* PACK_MAP */
	b[pack_off + 9 + 8] ^= 0x04;             /* a bit of its first word */
	write_back("checkpoint", b, len);
	logged_text[0] = 0;
	st = open_cache(0, CACHE, 0);
	ck_assert_msg(strstr(logged_text, "/checkpoint: its slot map of data/pack is damaged at "
			     "byte"), "%s", logged_text);
	/* every packed object was loaded to count its slot, then a checkpoint
	 * with a whole map let them go */
	ck_assert_uint_eq(in_memory(), 2);
	used_of(P1, 0, &used);
	ck_assert_uint_eq(used, 200 * SLOT);
	for (unsigned i = 200; i < 300; i++) {
		ck_assert_int_eq(osd_store_object_create(st, P1, O1 + i, OSD_OBJ_USER, 0), 0);
		pk_write(i, 2);
	}
	for (unsigned i = 0; i < 300; i++)
		pk_expect(i, i < 200 ? 1 : 2);
	reopen(CACHE);
	ck_assert_uint_eq(in_memory(), 2);
	for (unsigned i = 0; i < 300; i++)
		pk_expect(i, i < 200 ? 1 : 2);
}
END_TEST

/* A store of format 3 with a version 1 checkpoint (the records alone) is
 * read whole and upgraded: an indexed checkpoint replaces it. */
START_TEST(t_upgrade_v1_checkpoint)
{
	uint8_t *b, hdr[OSD__FILE_HDR];
	size_t len, roff;
	uint32_t ver, flags;
	uint64_t epoch;

	make_objects(200);
	osd_store_close(st);
	st = NULL;
	read_file("checkpoint", &b, &len);
	ck_assert_int_eq(osd__file_hdr_get_ver(b, "OSDCKPT1", &ver, &flags, &epoch), 0);
	ck_assert_int_eq(osd__table_records(b, len, &roff), 0);
	char path[4200];
	th_path(path, sizeof(path), dir, "checkpoint");
	int fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	osd__file_hdr_put_ver(hdr, "OSDCKPT1", 1, 0, epoch);
	ck_assert_int_eq(write(fd, hdr, sizeof(hdr)), sizeof(hdr));
	ck_assert_int_eq(write(fd, b + roff, len - roff), (ssize_t)(len - roff));
	close(fd);
	free(b);
	sb_set_version(3);
	logged_text[0] = 0;
	st = open_cache(0, CACHE, 0);
	ck_assert_msg(strstr(logged_text, "upgraded from version 3 to 6: the checkpoint is "
			     "indexed (objects load when used) and holds the slot map"), "%s", logged_text);
	ck_assert_int_ge(st->ckfd, 0);
	for (unsigned i = 0; i < 200; i++)
		expect_val(O1 + i, 1);
	read_file("checkpoint", &b, &len);
	ck_assert_int_eq(osd__file_hdr_get_ver(b, "OSDCKPT1", &ver, &flags, &epoch), 0);
	ck_assert_uint_eq(ver, 4);
	free(b);
	reopen(CACHE);
	ck_assert_uint_eq(in_memory(), 2);
	expect_val(O1 + 199, 1);
}
END_TEST

/*
 * A record that rots after its checkpoint was written: the open (which
 * reads the index alone) succeeds, the object fails whole with -EIO and
 * is told once, the others are intact, a checkpoint refuses to drop it,
 * and salvage brings it back from checkpoint.prev and the logs.
 */
START_TEST(t_rotten_record)
{
	uint8_t *b;
	size_t len;
	uint8_t got[16];
	size_t vl;

	make_objects(100);
	reopen(CACHE);
	osd_store_close(st);
	st = NULL;
	read_file("checkpoint", &b, &len);
	/* the 51st entry of the only partition: its OBJ_CREATE (34 bytes), then
	 * its ATTR record, whose value gets a flipped bit */
	uint64_t off = osd__get_be64(b + 152 + 32 + 50 * 16 + 8) >> 16;
	ck_assert_uint_eq(osd__get_be64(b + 152 + 32 + 50 * 16), O1 + 50);
	ck_assert_uint_eq(b[off + 8], 3);
	ck_assert_uint_eq(b[off + 34 + 8], 5);
	b[off + 34 + 9 + 24 + 3] ^= 0x10;
	write_back("checkpoint", b, len);
	logged_text[0] = 0;
	st = open_cache(0, CACHE, 0);
	expect_val(O1 + 49, 1);
	expect_val(O1 + 51, 1);
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1 + 50, PAGE, 1, got, sizeof(got), &vl), -EIO);
	ck_assert_msg(strstr(logged_text, "3:") && strstr(logged_text, "the records of object "
			     "0x20032 in partition 0x10000 are damaged"), "%s", logged_text);
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 50, NULL), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + 50, PAGE, 2, "x", 1, 0), -EIO);
	ck_assert_int_eq(osd__store_compact(st), -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), "object 0x20032 in partition 0x10000 "
				     "are damaged"));
	expect_val(O1 + 50 + 1, 1);
	osd_store_close(st);
	struct osd_store_options so = { .salvage = 1, .log = log_cb };
	char err[512];
	ck_assert_int_eq(osd_store_open(&st, dir, &so, err, sizeof(err)), 0);
	for (unsigned i = 0; i < 100; i++)
		expect_val(O1 + i, 1);
}
END_TEST

/* Threads load, change and drop packed objects and objects with a data file
 * while another writes checkpoints; each thread owns every fourth object and
 * checks its last value and bytes (slots taken and freed, files changed
 * while a checkpoint writes their FILE records, while others load theirs
 * from the checkpoint). The used totals after a reopen are the objects'. */
#define THREADS 4
#define TOBJ 400u

struct worker {
	unsigned idx;
	uint32_t ver[TOBJ], dver[TOBJ];
};

/* Object i's bytes in version @p ver for t_threads: odd objects hold a data
 * file (always as long), even ones a pack slot. */
#define TLEN (SLOT + 3000)
static size_t tw_content(unsigned i, uint32_t ver, uint8_t *buf)
{
	if (!(i % 2))
		return pk_content(i, ver, buf);
	size_t len = SLOT + 1 + i % 2999;
	th_fill(buf, len, (uint64_t)i * 13 + ver, 0);
	return len;
}

/* 0 if object i holds its bytes of version @p ver (no check(): a thread). */
static int pk_holds(unsigned i, uint32_t ver)
{
	uint8_t want[TLEN], got[TLEN + 16];
	size_t len = tw_content(i, ver, want), n = 0;
	struct iovec iov = { got, sizeof(got) };
	return osd_store_read(st, P1, O1 + i, 0, &iov, 1, &n) != 0 || n != len ||
	       memcmp(got, want, len) != 0;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	unsigned seed = w->idx + 1;
	for (unsigned k = 0; k < 3000; k++) {
		unsigned i = (unsigned)rand_r(&seed) % (TOBJ / THREADS) * THREADS + w->idx;
		unsigned op = (unsigned)rand_r(&seed) % 8;
		uint8_t v[12], got[16], data[TLEN];
		size_t len = 0;
		if (op < 2) {
			val_of(O1 + i, ++w->ver[i], v);
			if (osd_store_attr_set(st, P1, O1 + i, PAGE, 1, v, sizeof(v), 0) != 0)
				return "set";
			continue;
		}
		if (op == 2) {
			struct iovec iov = { data, tw_content(i, ++w->dver[i], data) };
			if (osd_store_write(st, P1, O1 + i, 0, &iov, 1, 0) != 0)
				return "write";
			continue;
		}
		val_of(O1 + i, w->ver[i], v);
		if (osd_store_attr_get(st, P1, O1 + i, PAGE, 1, got, sizeof(got), &len) != 0 ||
		    len != sizeof(v) || memcmp(got, v, sizeof(v)))
			return "get";
		if (pk_holds(i, w->dver[i]))
			return "read";
	}
	return NULL;
}

START_TEST(t_threads)
{
	static struct worker ws[THREADS];
	pthread_t th[THREADS];
	static uint8_t data[TLEN];
	make_objects(TOBJ);
	for (unsigned i = 0; i < TOBJ; i++) {
		struct iovec iov = { data, tw_content(i, 1, data) };
		ck_assert_int_eq(osd_store_write(st, P1, O1 + i, 0, &iov, 1, 0), 0);
	}
	reopen(8);
	for (unsigned t = 0; t < THREADS; t++) {
		ws[t].idx = t;
		for (unsigned i = 0; i < TOBJ; i++)
			ws[t].ver[i] = ws[t].dver[i] = 1;
		ck_assert_int_eq(pthread_create(&th[t], NULL, worker_run, &ws[t]), 0);
	}
	for (int k = 0; k < 5; k++)
		ck_assert_int_eq(osd__store_compact(st), 0);
	for (unsigned t = 0; t < THREADS; t++) {
		void *res;
		pthread_join(th[t], &res);
		ck_assert_msg(res == NULL, "thread %u: %s", t, (const char *)res);
	}
	reopen(8);
	uint64_t used = 0, sum = 0, u;
	for (unsigned i = 0; i < TOBJ; i++) {
		expect_val(O1 + i, ws[i % THREADS].ver[i]);
		ck_assert_msg(!pk_holds(i, ws[i % THREADS].dver[i]), "object %u", i);
		used_of(P1, O1 + i, &u);
		sum += u;
	}
	used_of(P1, 0, &used);
	ck_assert_uint_eq(used, sum);
	ck_assert_uint_ge(used, TOBJ / 2 * SLOT + TOBJ / 2 * (SLOT + 1));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store_table");
	TCase *tc = tcase_create("table");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_bytes);
	tcase_add_test(tc, t_bytes_packed);
	tcase_add_test(tc, t_cold_open);
	tcase_add_test(tc, t_skewed_ids);
	tcase_add_test(tc, t_replay_defers);
	tcase_add_test(tc, t_online_ckpt);
	tcase_add_test(tc, t_compact_frees_replaced);
	tcase_add_test(tc, t_scan_data);
	tcase_add_test(tc, t_replay_deferred_rot);
	tcase_add_test(tc, t_changed_kept);
	tcase_add_test(tc, t_dirty_leave);
	tcase_add_test(tc, t_dirty_bound);
	tcase_add_test(tc, t_compact_copies);
	tcase_add_test(tc, t_compact_partitions);
	tcase_add_test(tc, t_file_of_cold_object);
	tcase_add_test(tc, t_bytes_file);
	tcase_add_test(tc, t_open_data_objects);
	tcase_add_test(tc, t_upgrade_v1_checkpoint);
	tcase_add_test(tc, t_rotten_record);
	tcase_add_test(tc, t_threads);
	tcase_add_test(tc, t_packed_leave_memory);
	tcase_add_test(tc, t_files_leave_memory);
	tcase_add_test(tc, t_bad_slot_map);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
