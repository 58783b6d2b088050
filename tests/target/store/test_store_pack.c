/*
 * Packed small objects (store format 3, docs/target-store.md, "Packed small
 * objects"): the bytes of data/pack and of the PACK record, every data
 * change against a reference copy across reopen and compaction, the move
 * into a data file, slot reuse only once nothing durable names a slot,
 * kill -9, damage, the upgrade of a version 2 store and no_pack.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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
#define SLOT 4096u
/* Data calls as the exec engine makes them: an attribute set (its "data
 * modified" stamp) logs a packed object's state; t_unstamped covers calls
 * without it. */
#define STAMP OSD_STORE_STAMPED
#define REC_PACK 11u     /* record type (osdtarget/store/log.h) */
#define PACK_HDR 36u     /* pid oid where length crc */

static char *dir;
static struct osd_store *st;
static char logged_text[16384]; /* every message told to the log callback */

static void log_cb(void *arg, int level, const char *msg)
{
	(void)arg;
	size_t n = strlen(logged_text);
	snprintf(logged_text + n, sizeof(logged_text) - n, "%d:%s\n", level, msg);
}

/* 1 if a message of @p level holding @p text was logged. */
static int logged(int level, const char *text)
{
	char tag[8];
	snprintf(tag, sizeof(tag), "%d:", level);
	for (const char *l = logged_text; *l;) {
		const char *end = strchr(l, '\n');
		size_t n = end ? (size_t)(end - l) : strlen(l);
		char line[2048];
		snprintf(line, sizeof(line), "%.*s", (int)n, l);
		if (!strncmp(line, tag, strlen(tag)) && strstr(line, text))
			return 1;
		l += n + (end != NULL);
	}
	return 0;
}

static int open_opts(struct osd_store **out, int create, int no_pack, char *err, size_t errlen)
{
	struct osd_store_options o = { .create = create, .no_pack = no_pack, .log = log_cb };
	return osd_store_open(out, dir, &o, err, errlen);
}

static struct osd_store *open_store(int create, int no_pack)
{
	struct osd_store *s = NULL;
	char err[512];
	int r = open_opts(&s, create, no_pack, err, sizeof(err));
	ck_assert_msg(r == 0, "open: %d %s", r, err);
	return s;
}

static void setup(void)
{
	dir = th_mkdtemp();
	logged_text[0] = 0;
	st = open_store(1, 0);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
}

static void teardown(void)
{
	osd_store_close(st);
	th_rmtree(dir);
}

static void reopen_opts(int no_pack)
{
	osd_store_close(st);
	st = open_store(0, no_pack);
}

static void reopen(void)
{
	reopen_opts(0);
}

static int wr(uint64_t oid, uint64_t off, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	return osd_store_write(st, P1, oid, off, &iov, 1, STAMP);
}

static int rd(uint64_t oid, uint64_t off, void *buf, size_t len, size_t *got)
{
	struct iovec iov = { buf, len };
	return osd_store_read(st, P1, oid, off, &iov, 1, got);
}

static void mkobj(uint64_t oid)
{
	ck_assert_int_eq(osd_store_object_create(st, P1, oid, OSD_OBJ_USER, 0), 0);
}

static uint64_t obj_length(uint64_t oid)
{
	uint64_t n = 0;
	ck_assert_int_eq(osd_store_length(st, P1, oid, &n), 0);
	return n;
}

static uint64_t obj_used(uint64_t oid)
{
	uint64_t n = 0;
	ck_assert_int_eq(osd_store_used(st, P1, oid, &n), 0);
	return n;
}

/* The object reads back exactly @p want (its whole length). */
static void expect_obj(uint64_t oid, const uint8_t *want, size_t len)
{
	static uint8_t buf[3 * SLOT];
	size_t got = 0;
	ck_assert_uint_le(len, sizeof(buf) - 1);
	ck_assert_uint_eq(obj_length(oid), len);
	ck_assert_int_eq(rd(oid, 0, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, len);
	ck_assert_mem_eq(buf, want, len);
}

static const struct osd__obj *obj_of(uint64_t oid)
{
	const struct osd__obj *o = osd__ns_find(st, P1, oid);
	ck_assert_ptr_nonnull(o);
	return o;
}

static off_t pack_size(void)
{
	char path[4200];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/data/pack", dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	return sb.st_size;
}

/* The @p len bytes of data/pack at @p off. */
static void pack_read(uint64_t off, void *out, size_t len)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/data/pack", dir);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, out, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static int is_data_file(const char *name)
{
	return strlen(name) == 16;
}

/* Data files (not sidecars) in the fan-out directories. */
static int data_files(void)
{
	return (int)th_data_entries(dir, is_data_file);
}

static void data_file_path(char *out, size_t n, uint64_t gen)
{
	th_obj_path(out, n, dir, gen, 0);
}

/* The last record of the log file: its bytes into @p out, its size. */
static size_t last_log_record(uint8_t *out, size_t cap)
{
	char path[4200];
	static uint8_t buf[1 << 20];
	ck_assert_int_eq(osd__log_write_out(&st->log), 0);
	snprintf(path, sizeof(path), "%s/log", dir);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ssize_t len = read(fd, buf, sizeof(buf));
	close(fd);
	ck_assert_int_gt(len, OSD__FILE_HDR);
	size_t off = OSD__FILE_HDR, last = 0, size = 0, k;
	struct osd__rec rec;
	while ((k = osd__rec_parse(buf + off, (size_t)len - off, &rec)) != 0) {
		last = off;
		size = k;
		off += k;
	}
	ck_assert_uint_eq(off, (size_t)len); /* every byte is an intact record */
	ck_assert_uint_gt(size, 0);
	ck_assert_uint_le(size, cap);
	memcpy(out, buf + last, size);
	return size;
}

/* A record's framing by hand: CRC32C(4) | payload length(4) | type(1) | payload. */
static size_t frame(uint8_t *out, uint8_t type, const uint8_t *payload, size_t n)
{
	osd__put_be32(out + 4, (uint32_t)n);
	out[8] = type;
	memcpy(out + 9, payload, n);
	osd__put_be32(out, osd__crc32c(0, out + 4, 5 + n));
	return 9 + n;
}

/* A PACK record's 36-byte head, laid out by hand. */
static void pack_head(uint8_t *p, uint64_t pid, uint64_t oid, uint64_t where, uint64_t length,
		      uint32_t crc)
{
	osd__put_be64(p, pid);
	osd__put_be64(p + 8, oid);
	osd__put_be64(p + 16, where);
	osd__put_be64(p + 24, length);
	osd__put_be32(p + 32, crc);
}

static uint32_t slot_crc(const uint8_t *data, size_t len)
{
	static uint8_t img[SLOT];
	memset(img, 0, sizeof(img));
	memcpy(img, data, len);
	return osd__crc32c(0, img, SLOT);
}

/* ---- 1: known bytes ---------------------------------------------------------------- */

START_TEST(t_known_bytes)
{
	static uint8_t data[SLOT], got[SLOT], zero[SLOT], rec[256], want[256];
	uint8_t hdr[OSD__FILE_HDR];
	uint32_t version = 0, flags = 9;
	uint64_t epoch;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	mkobj(O1);
	ck_assert_int_eq(wr(O1, 0, data, sizeof(data)), 0);
	ck_assert_int_eq(data_files(), 0);
	ck_assert_int_eq(pack_size(), 2 * SLOT);
	pack_read(0, hdr, sizeof(hdr));
	ck_assert_int_eq(osd__file_hdr_get_ver(hdr, "OSDPACK1", &version, &flags, &epoch), 0);
	ck_assert_uint_eq(version, 1);
	ck_assert_uint_eq(flags, 0);
	pack_read(SLOT, got, SLOT);
	ck_assert_mem_eq(got, data, SLOT);
	ck_assert_uint_eq(obj_length(O1), SLOT);
	ck_assert_uint_eq(obj_used(O1), SLOT);

	/* the exec's "data modified" timestamp: one PACK record with one entry */
	const uint8_t ts[6] = { 0x00, 0x00, 0x01, 0x8c, 0x12, 0x34 };
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 0x5, ts, sizeof(ts), 0), 0);
	uint8_t payload[PACK_HDR + 10 + sizeof(ts)];
	pack_head(payload, P1, O1, 1, SLOT, osd__crc32c(0, data, SLOT));
	osd__put_be32(payload + PACK_HDR, 0x3);
	osd__put_be32(payload + PACK_HDR + 4, 0x5);
	osd__put_be16(payload + PACK_HDR + 8, sizeof(ts));
	memcpy(payload + PACK_HDR + 10, ts, sizeof(ts));
	size_t wn = frame(want, REC_PACK, payload, sizeof(payload));
	ck_assert_uint_eq(wn, 61);
	size_t n = last_log_record(rec, sizeof(rec));
	ck_assert_uint_eq(n, wn);
	ck_assert_mem_eq(rec, want, wn);
	/* logged: a flush adds no record */
	ck_assert_int_eq(osd_store_flush_object(st, P1, O1), 0);
	ck_assert_uint_eq(last_log_record(rec, sizeof(rec)), wn);
	ck_assert_mem_eq(rec, want, wn);

	/* a rewrite: a fresh slot; the old one keeps its bytes until the
	 * flush logs the state (a PACK record alone, 36 bytes) */
	ck_assert_int_eq(wr(O1, 100, "pack", 4), 0);
	memcpy(data + 100, "pack", 4);
	ck_assert_int_eq(pack_size(), 3 * SLOT);
	ck_assert_uint_eq(obj_of(O1)->slot, 2);
	pack_read(2 * SLOT, got, SLOT);
	ck_assert_mem_eq(got, data, SLOT);
	pack_read(SLOT, got, SLOT);
	ck_assert_uint_eq(got[100], (uint8_t)(100 * 7 + 1));
	ck_assert_int_eq(osd_store_flush_object(st, P1, O1), 0);
	pack_head(payload, P1, O1, 2, SLOT, osd__crc32c(0, data, SLOT));
	wn = frame(want, REC_PACK, payload, PACK_HDR);
	ck_assert_uint_eq(wn, 9 + 36);
	n = last_log_record(rec, sizeof(rec));
	ck_assert_uint_eq(n, wn);
	ck_assert_mem_eq(rec, want, wn);
	/* the flush made the record durable: slot 1 is free, its bytes zeroed */
	pack_read(SLOT, got, SLOT);
	ck_assert_mem_eq(got, zero, SLOT);

	/* a small object: its length, the slot zero-padded, the CRC over all of it */
	mkobj(O1 + 1);
	ck_assert_int_eq(wr(O1 + 1, 0, "hello", 5), 0);
	ck_assert_uint_eq(obj_of(O1 + 1)->slot, 1); /* the freed slot, reused */
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	pack_head(payload, P1, O1 + 1, 1, 5, slot_crc((const uint8_t *)"hello", 5));
	wn = frame(want, REC_PACK, payload, PACK_HDR);
	n = last_log_record(rec, sizeof(rec));
	ck_assert_uint_eq(n, wn);
	ck_assert_mem_eq(rec, want, wn);
	/* the same record as a known-good vector (CRC32C computed apart) */
	static const uint8_t hello_rec[45] = {
		0xab, 0x05, 0x4f, 0x69, 0x00, 0x00, 0x00, 0x24, 0x0b,             /* crc len type */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,                   /* pid */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01,                   /* oid */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,                   /* slot */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,                   /* length */
		0xba, 0x29, 0x64, 0xd8,                                           /* slot CRC */
	};
	ck_assert_mem_eq(rec, hello_rec, sizeof(hello_rec));
	pack_read(SLOT, got, SLOT);
	ck_assert_mem_eq(got, "hello", 5);
	ck_assert_mem_eq(got + 5, zero, SLOT - 5);
	ck_assert_int_eq(data_files(), 0);

	reopen();
	expect_obj(O1, data, SLOT);
	expect_obj(O1 + 1, (const uint8_t *)"hello", 5);

	/* several iovecs in, several out, a read past the length is short */
	struct iovec in[3] = { { data, 7 }, { data + 7, 1000 }, { data + 1007, 93 } };
	ck_assert_int_eq(osd_store_write(st, P1, O1 + 1, 3, in, 3, STAMP), 0);
	uint8_t *part = got + 2000;
	struct iovec out[2] = { { got, 555 }, { part, 1000 } };
	ck_assert_int_eq(osd_store_read(st, P1, O1 + 1, 1, out, 2, &n), 0);
	ck_assert_uint_eq(n, 3 + 1100 - 1);
	ck_assert_mem_eq(got, "el", 2);
	ck_assert_mem_eq(got + 2, data, 553);
	ck_assert_mem_eq(part, data + 553, 1100 - 553);
	ck_assert_int_eq(osd_store_read(st, P1, O1 + 1, 1103, out, 2, &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* ---- 2: every operation against a reference copy ---------------------------------- */

#define NOBJ 5
#define STEPS 400

static uint8_t ref[NOBJ][SLOT];
static size_t ref_len[NOBJ];

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

static void check_ref(int k)
{
	static const uint8_t zero[SLOT];
	uint64_t oid = O1 + (uint64_t)k;
	expect_obj(oid, ref[k], ref_len[k]);
	/* a slot holds the bytes, no slot stands for zeros */
	int zeros = !memcmp(ref[k], zero, SLOT);
	ck_assert_uint_eq(obj_used(oid), zeros ? 0 : SLOT);
	const struct osd__obj *o = obj_of(oid);
	ck_assert_int_eq(o->has_file, 0);
	ck_assert_uint_eq(o->slot == 0, zeros);
	/* never given data (a punch or truncate to 0 only): not packed yet */
	ck_assert(o->packed || (zeros && !ref_len[k]));
}

static void check_all_ref(void)
{
	for (int k = 0; k < NOBJ; k++)
		check_ref(k);
	ck_assert_int_eq(data_files(), 0);
	/* at most two slots an object (the logged one and a newer), one more
	 * while a change writes its fresh slot: the lowest free ones */
	ck_assert_int_le(pack_size(), (2 + 2 * NOBJ) * SLOT);
}

static void ref_step(uint64_t *s)
{
	static uint8_t buf[SLOT];
	int k = (int)(rnd(s) % NOBJ);
	uint64_t oid = O1 + (uint64_t)k;
	uint32_t op = rnd(s) % 4;
	size_t len = ref_len[k];
	if (op == 1 && len == SLOT)
		op = 2;
	if (op == 0 || op == 1) { /* WRITE, APPEND */
		size_t off = op == 0 ? rnd(s) % SLOT : len;
		size_t n = 1 + rnd(s) % (SLOT - off);
		if (rnd(s) % 8 == 0)
			memset(buf, 0, n); /* all zeros may need no slot */
		else
			th_fill(buf, n, rnd(s), off);
		struct iovec iov = { buf, n };
		uint64_t where = 0;
		if (op == 0) {
			ck_assert_int_eq(osd_store_write(st, P1, oid, off, &iov, 1, STAMP), 0);
		} else {
			ck_assert_int_eq(osd_store_append(st, P1, oid, &iov, 1, STAMP, &where), 0);
			ck_assert_uint_eq(where, off);
		}
		memcpy(ref[k] + off, buf, n);
		if (off + n > len)
			ref_len[k] = off + n;
	} else if (op == 2) { /* TRUNCATE */
		size_t nl = rnd(s) % (SLOT + 1);
		if (rnd(s) % 8 == 0)
			nl = 0;
		ck_assert_int_eq(osd_store_truncate(st, P1, oid, nl, STAMP), 0);
		if (nl < len)
			memset(ref[k] + nl, 0, len - nl);
		ref_len[k] = nl;
	} else { /* PUNCH, clipped to the length */
		size_t off = rnd(s) % (len + 200), n = 1 + rnd(s) % SLOT;
		ck_assert_int_eq(osd_store_punch(st, P1, oid, off, n, STAMP), 0);
		if (off < len)
			memset(ref[k] + off, 0, (off + n > len ? len : off + n) - off);
	}
	check_ref(k);
}

START_TEST(t_ops_reference)
{
	uint64_t s = 20261205;
	memset(ref, 0, sizeof(ref));
	memset(ref_len, 0, sizeof(ref_len));
	for (int k = 0; k < NOBJ; k++) {
		mkobj(O1 + (uint64_t)k);
		/* never written: neither packed nor with a file */
		ck_assert_uint_eq(obj_length(O1 + (uint64_t)k), 0);
		ck_assert_uint_eq(obj_used(O1 + (uint64_t)k), 0);
	}
	for (int i = 0; i < STEPS; i++) {
		ref_step(&s);
		if (i == 99) { /* flushed, then closed */
			ck_assert_int_eq(osd_store_flush_all(st), 0);
			reopen();
			check_all_ref();
		} else if (i == 199) { /* a clean close flushes */
			reopen();
			check_all_ref();
		} else if (i == 249) { /* the checkpoint alone carries the states */
			ck_assert_int_eq(osd_store_flush_all(st), 0);
			ck_assert_int_eq(osd__store_compact(st), 0);
			check_all_ref();
			reopen();
			check_all_ref();
		} else if (i == 299) { /* states still pending at the checkpoint */
			ck_assert_int_eq(osd__store_compact(st), 0);
			check_all_ref();
		} else if (i == 319) { /* pending at the checkpoint, changed after it */
			reopen();
			check_all_ref();
		}
	}
	check_all_ref();
	uint64_t part = 0, sum = 0;
	for (int k = 0; k < NOBJ; k++)
		sum += obj_used(O1 + (uint64_t)k);
	ck_assert_int_eq(osd_store_used(st, P1, 0, &part), 0);
	ck_assert_uint_eq(part, sum);
	reopen();
	check_all_ref();
	uint64_t total = 0;
	ck_assert_int_eq(osd_store_used(st, P1, 0, &part), 0);
	ck_assert_uint_eq(part, sum);
	ck_assert_int_eq(osd_store_capacity(st, NULL, &total), 0);
	ck_assert_uint_eq(total, sum);
}
END_TEST

/* ---- 3: moving into a data file ---------------------------------------------------- */

/*
 * Run @p fn on the store in a child process that then dies without a
 * close (as kill -9 would leave it), and reopen the store here.
 */
static int child_sync_writes; /* the child opens with sync_writes */

static void in_child(int (*fn)(struct osd_store *s, void *arg), void *arg)
{
	osd_store_close(st);
	st = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct osd_store *s = NULL;
		struct osd_store_options o = { .sync_writes = child_sync_writes };
		if (osd_store_open(&s, dir, &o, NULL, 0))
			_exit(100);
		_exit(fn(s, arg) ? 101 : 0);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	logged_text[0] = 0;
	st = open_store(0, 0);
}

/* Grow packed object O1 + 3 past its slot: a data file, never logged. */
static int grow_and_die(struct osd_store *s, void *arg)
{
	struct iovec v = { arg, 6000 };
	char path[4200];
	int r = osd_store_write(s, P1, O1 + 3, 0, &v, 1, STAMP);
	data_file_path(path, sizeof(path), osd__ns_find(s, P1, O1 + 3)->gen);
	return r || access(path, F_OK) != 0; /* the file is there */
}

START_TEST(t_migration)
{
	static uint8_t a[10000], b[10000], c[10000], zero[SLOT];
	static uint8_t got[SLOT];
	th_fill(a, sizeof(a), 1, 0);
	th_fill(b, sizeof(b), 2, 0);
	memset(c, 0, sizeof(c));
	th_fill(c, 100, 3, 0);
	for (uint64_t k = 0; k < 3; k++)
		mkobj(O1 + k);
	ck_assert_int_eq(wr(O1, 0, a, 4000), 0);
	ck_assert_int_eq(wr(O1 + 1, 0, b, 3000), 0);
	ck_assert_int_eq(wr(O1 + 2, 0, c, 100), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(data_files(), 0);
	uint32_t slot0 = obj_of(O1)->slot;
	ck_assert_uint_ne(slot0, 0);

	/* a write past the slot */
	ck_assert_int_eq(wr(O1, 4000, a + 4000, 200), 0);
	ck_assert_int_eq(data_files(), 1);
	ck_assert_int_eq(obj_of(O1)->packed, 0);
	expect_obj(O1, a, 4200);
	ck_assert_uint_ge(obj_used(O1), 4200);
	/* an append past it */
	struct iovec iov = { b + 3000, 2000 };
	uint64_t where = 0;
	ck_assert_int_eq(osd_store_append(st, P1, O1 + 1, &iov, 1, STAMP, &where), 0);
	ck_assert_uint_eq(where, 3000);
	ck_assert_int_eq(data_files(), 2);
	expect_obj(O1 + 1, b, 5000);
	/* a truncate past it */
	ck_assert_int_eq(osd_store_truncate(st, P1, O1 + 2, 10000, STAMP), 0);
	ck_assert_int_eq(data_files(), 3);
	expect_obj(O1 + 2, c, 10000);
	uint64_t sum = 0, part = 0;
	for (uint64_t k = 0; k < 3; k++)
		sum += obj_used(O1 + k);
	ck_assert_int_eq(osd_store_used(st, P1, 0, &part), 0);
	ck_assert_uint_eq(part, sum); /* the slots they left count no more */

	/* once the move is durable, the slot it left is free, its bytes zeroed */
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	pack_read((uint64_t)slot0 * SLOT, got, SLOT);
	ck_assert_mem_eq(got, zero, SLOT);
	reopen();
	ck_assert_int_eq(data_files(), 3);
	expect_obj(O1, a, 4200);
	expect_obj(O1 + 1, b, 5000);
	expect_obj(O1 + 2, c, 10000);
	sum = 0;
	for (uint64_t k = 0; k < 3; k++) {
		ck_assert_int_eq(obj_of(O1 + k)->packed, 0);
		sum += obj_used(O1 + k);
	}
	ck_assert_int_eq(osd_store_used(st, P1, 0, &part), 0);
	ck_assert_uint_eq(part, sum);

	/* never back into the pack */
	off_t psize = pack_size();
	ck_assert_int_eq(osd_store_truncate(st, P1, O1, 100, STAMP), 0);
	ck_assert_int_eq(wr(O1 + 1, 0, "x", 1), 0);
	ck_assert_int_eq(osd_store_truncate(st, P1, O1 + 2, 0, STAMP), 0);
	ck_assert_int_eq(wr(O1 + 2, 0, c, 50), 0);
	b[0] = 'x';
	ck_assert_int_eq(data_files(), 3);
	expect_obj(O1, a, 100);
	expect_obj(O1 + 1, b, 5000);
	expect_obj(O1 + 2, c, 50);
	reopen();
	ck_assert_int_eq(data_files(), 3);
	expect_obj(O1, a, 100);
	expect_obj(O1 + 1, b, 5000);
	expect_obj(O1 + 2, c, 50);
	ck_assert_int_eq(obj_of(O1)->packed, 0);
	ck_assert_int_eq(pack_size(), psize);

	/* a change refused after the move (the quota): the move is still logged */
	mkobj(O1 + 4);
	ck_assert_int_eq(osd_store_set_quota(st, P1, O1 + 4, 5000, 0), 0);
	ck_assert_int_eq(wr(O1 + 4, 0, a, 100), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(osd_store_truncate(st, P1, O1 + 4, 10000, STAMP), -EDQUOT);
	ck_assert_int_eq(wr(O1 + 4, 4000, a, 2000), -EDQUOT);
	expect_obj(O1 + 4, a, 100);
	logged_text[0] = 0;
	reopen();
	ck_assert_msg(!logged(OSD_STORE_LOG_WARNING, "quarantine"), "%s", logged_text);
	expect_obj(O1 + 4, a, 100);
	ck_assert_int_eq(osd_store_truncate(st, P1, O1 + 4, 10, STAMP), 0);
	expect_obj(O1 + 4, a, 10);

	/* a move not yet logged when the process dies: the records still name
	 * the slot, the new file goes to quarantine/ */
	mkobj(O1 + 3);
	ck_assert_int_eq(wr(O1 + 3, 0, a, 3000), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	int files = data_files();
	in_child(grow_and_die, a);
	ck_assert_int_eq(data_files(), files);
	expect_obj(O1 + 3, a, 3000);
	ck_assert_int_eq(obj_of(O1 + 3)->packed, 1);
	ck_assert(logged(OSD_STORE_LOG_WARNING, "moved to quarantine/"));
}
END_TEST

/* ---- 4: slot reuse ---------------------------------------------------------------- */

static void write_pattern(uint64_t oid, uint64_t seed, size_t len)
{
	static uint8_t buf[SLOT];
	th_fill(buf, len, seed, 0);
	ck_assert_int_eq(wr(oid, 0, buf, len), 0);
}

static void check_pattern(uint64_t oid, uint64_t seed, size_t len)
{
	static uint8_t buf[SLOT];
	th_fill(buf, len, seed, 0);
	expect_obj(oid, buf, len);
}

START_TEST(t_slot_reuse)
{
	static const uint8_t zero[SLOT];
	static uint8_t got[SLOT];
	for (uint64_t k = 0; k < 3; k++) {
		mkobj(O1 + k);
		write_pattern(O1 + k, k, SLOT);
	}
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(pack_size(), 4 * SLOT);
	for (uint64_t k = 0; k < 3; k++)
		ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + k, 0), 0);
	/* the REMOVEs are not durable: their slots stay taken */
	for (uint64_t k = 3; k < 6; k++) {
		mkobj(O1 + k);
		write_pattern(O1 + k, k, SLOT);
		ck_assert_uint_eq(obj_of(O1 + k)->slot, k + 1);
	}
	ck_assert_int_eq(pack_size(), 7 * SLOT);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	for (uint64_t k = 6; k < 9; k++) {
		mkobj(O1 + k);
		write_pattern(O1 + k, k, 1000 + k);
		ck_assert_uint_eq(obj_of(O1 + k)->slot, k - 5);
	}
	ck_assert_int_eq(pack_size(), 7 * SLOT);
	for (uint64_t k = 3; k < 9; k++)
		check_pattern(O1 + k, k, k < 6 ? SLOT : 1000 + k);
	uint64_t used = 0;
	ck_assert_int_eq(osd_store_used(st, P1, 0, &used), 0);
	ck_assert_uint_eq(used, 6 * SLOT);
	ck_assert_int_eq(osd_store_capacity(st, NULL, &used), 0);
	ck_assert_uint_eq(used, 6 * SLOT);
	reopen();
	for (uint64_t k = 0; k < 3; k++)
		ck_assert_int_eq(osd_store_object_type(st, P1, O1 + k, NULL), -ENOENT);
	ck_assert_int_eq(osd_store_used(st, P1, 0, &used), 0);
	ck_assert_uint_eq(used, 6 * SLOT);
	ck_assert_int_eq(osd_store_capacity(st, NULL, &used), 0);
	ck_assert_uint_eq(used, 6 * SLOT);
	for (uint64_t k = 3; k < 9; k++)
		check_pattern(O1 + k, k, k < 6 ? SLOT : 1000 + k);

	/* a rewrite N times, flushed each time: two slots at most */
	off_t before = pack_size();
	for (uint64_t i = 0; i < 100; i++) {
		write_pattern(O1 + 3, 100 + i, SLOT);
		ck_assert_int_eq(osd_store_flush_object(st, P1, O1 + 3), 0);
	}
	ck_assert_int_le(pack_size(), before + SLOT);
	/* and unflushed: an unlogged slot is freed at once */
	for (uint64_t i = 0; i < 100; i++)
		write_pattern(O1 + 4, 300 + i, SLOT);
	ck_assert_int_le(pack_size(), before + 2 * SLOT);
	check_pattern(O1 + 3, 199, SLOT);
	check_pattern(O1 + 4, 399, SLOT);
	reopen();
	check_pattern(O1 + 3, 199, SLOT);
	check_pattern(O1 + 4, 399, SLOT);
	for (uint64_t k = 5; k < 9; k++)
		check_pattern(O1 + k, k, k < 6 ? SLOT : 1000 + k);

	/* a record naming a newer slot, not yet durable: the slot the durable
	 * record names keeps its bytes and is not reused */
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	uint32_t durable = obj_of(O1 + 6)->slot;
	write_pattern(O1 + 6, 500, 2000);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + 6, 0x3, 0x5, "abcdef", 6, 0), 0);
	ck_assert_int_eq(obj_of(O1 + 6)->pack_pending, 0); /* logged with the attribute */
	ck_assert(st->pack_map[durable / 64] >> (durable % 64) & 1);
	mkobj(O1 + 21);
	write_pattern(O1 + 21, 21, 10);
	ck_assert_uint_ne(obj_of(O1 + 21)->slot, durable);
	static uint8_t old[SLOT];
	th_fill(old, 1000 + 6, 6, 0);
	pack_read((uint64_t)durable * SLOT, got, 1000 + 6);
	ck_assert_mem_eq(got, old, 1000 + 6);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert(!(st->pack_map[durable / 64] >> (durable % 64) & 1));
	check_pattern(O1 + 6, 500, 2000);

	/* REMOVE, durable at the close: its slot is free, its bytes zeroed */
	uint32_t freed = obj_of(O1 + 5)->slot;
	ck_assert(st->pack_map[freed / 64] >> (freed % 64) & 1);
	ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + 5, 0), 0);
	reopen();
	ck_assert(!(st->pack_map[freed / 64] >> (freed % 64) & 1));
	pack_read((uint64_t)freed * SLOT, got, SLOT);
	ck_assert_mem_eq(got, zero, SLOT);

	/* FORMAT empties the pack */
	ck_assert_int_eq(osd_store_format(st, 0), 0);
	ck_assert_int_eq(pack_size(), SLOT);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	mkobj(O1);
	write_pattern(O1, 7, 50);
	ck_assert_uint_eq(obj_of(O1)->slot, 1);
	reopen();
	check_pattern(O1, 7, 50);
}
END_TEST

/* ---- 5: kill -9 --------------------------------------------------------------------- */

#define CRASH_ITER 6
#define TRACKED 8
#define SCRATCH 0x80000ull /* scratch objects: made, written, removed */

/* What a flush made durable: each tracked object's version; the scratch
 * objects below removed_below are removed, those below created_below
 * written. */
struct crash_ack {
	uint32_t ver[TRACKED];
	uint32_t removed_below, created_below;
};

static uint64_t crash_part(int it)
{
	return 0x20000ull + (uint64_t)it;
}

/* Version @p v of object @p id: its version and id, then a pattern. */
static size_t crash_content(uint64_t id, uint32_t v, uint8_t *buf)
{
	size_t len = 8 + (size_t)((id * 2654435761u + v * 40503u) % (SLOT - 7));
	th_fill(buf, len, id << 20 | v, 0);
	osd__put_be32(buf, v);
	osd__put_be32(buf + 4, (uint32_t)id);
	return len;
}

static int crash_write(struct osd_store *s, uint64_t p, uint64_t oid, uint32_t v, size_t *len)
{
	uint8_t buf[SLOT];
	size_t n = crash_content(oid, v, buf);
	struct iovec iov = { buf, n };
	int r = osd_store_write(s, p, oid, 0, &iov, 1, STAMP);
	if (!r && *len > n)
		r = osd_store_truncate(s, p, oid, n, STAMP);
	*len = n;
	return r;
}

static void crash_child(int it, int wfd)
{
	struct osd_store *s = NULL;
	struct osd_store_options o = { .create = 1 };
	struct crash_ack a = { .removed_below = 0 };
	uint64_t p = crash_part(it), seed = 77 + (uint64_t)it;
	size_t len[TRACKED] = { 0 };
	uint32_t scratch = 0, removed = 0;
	if (osd_store_open(&s, dir, &o, NULL, 0) || osd_store_partition_create(s, p, 0))
		_exit(2);
	for (int t = 0; t < TRACKED; t++) {
		a.ver[t] = 1;
		if (osd_store_object_create(s, p, O1 + (uint64_t)t, OSD_OBJ_USER, 0) ||
		    crash_write(s, p, O1 + (uint64_t)t, 1, &len[t]))
			_exit(3);
	}
	struct crash_ack cur = a;
	for (int step = 0; step < 1000000; step++) {
		uint32_t pick = rnd(&seed);
		int t = (int)(pick % TRACKED);
		if (crash_write(s, p, O1 + (uint64_t)t, ++cur.ver[t], &len[t]))
			_exit(3);
		/* as the exec's "data modified" would: the state logged with it */
		if (pick % 2 && osd_store_attr_set(s, p, O1 + (uint64_t)t, 0x3, 0x5, &step,
						   sizeof(step), 0))
			_exit(3);
		if (pick % 3 == 0) { /* a scratch object made, an older one removed */
			size_t sl = 0;
			uint64_t so = SCRATCH + scratch++;
			if (osd_store_object_create(s, p, so, OSD_OBJ_USER, 0) ||
			    crash_write(s, p, so, 1, &sl))
				_exit(4);
			if (scratch - removed > 4 &&
			    osd_store_object_remove(s, p, SCRATCH + removed++, 0))
				_exit(4);
			cur.removed_below = removed;
			cur.created_below = scratch;
		}
		if (pick % 4 == 0) {
			if (osd_store_flush_all(s))
				_exit(5);
			if (write(wfd, &cur, sizeof(cur)) != (ssize_t)sizeof(cur))
				_exit(6);
		}
	}
	_exit(7);
}

/* Partition @p p after a kill: every tracked object holds a whole version
 * at least the acknowledged one; with @p seen set, exactly that version. */
static void crash_verify(uint64_t p, const struct crash_ack *a, uint32_t seen[TRACKED])
{
	static uint8_t buf[SLOT + 1], want[SLOT];
	size_t got;
	for (int t = 0; t < TRACKED; t++) {
		uint64_t oid = O1 + (uint64_t)t;
		struct iovec iov = { buf, sizeof(buf) };
		int r = osd_store_read(st, p, oid, 0, &iov, 1, &got);
		ck_assert_msg(r == 0, "p %#llx obj %d: read %d", (unsigned long long)p, t, r);
		ck_assert_uint_ge(got, 8);
		uint32_t v = osd__get_be32(buf);
		ck_assert_msg(v >= a->ver[t], "p %#llx obj %d: version %u, acknowledged %u",
			      (unsigned long long)p, t, v, a->ver[t]);
		if (seen[t])
			ck_assert_uint_eq(v, seen[t]);
		seen[t] = v;
		size_t n = crash_content(oid, v, want);
		ck_assert_uint_eq(got, n);
		ck_assert_msg(!memcmp(buf, want, n), "p %#llx obj %d: version %u mixed",
			      (unsigned long long)p, t, v);
		uint64_t bytes = 0, bad = 0;
		ck_assert_int_eq(osd_store_verify(st, p, oid, &bytes, &bad), 0);
	}
	/* scratch objects: removed when acknowledged so, else whole or empty */
	for (uint64_t s = 0; s < a->removed_below; s++)
		ck_assert_int_eq(osd_store_object_type(st, p, SCRATCH + s, NULL), -ENOENT);
	uint64_t ids[4096];
	size_t count = 0;
	ck_assert_int_eq(osd_store_object_list(st, p, SCRATCH, OSD_OBJ_USER, ids, 4096, &count,
					       NULL), 0);
	ck_assert_uint_lt(count, 4096);
	for (size_t i = 0; i < count; i++) {
		struct iovec iov = { buf, sizeof(buf) };
		ck_assert_int_eq(osd_store_read(st, p, ids[i], 0, &iov, 1, &got), 0);
		/* made and written before the flush: its data was logged */
		if (ids[i] - SCRATCH < a->created_below)
			ck_assert_uint_gt(got, 0);
		if (!got)
			continue; /* made, its data never logged */
		size_t n = crash_content(ids[i], 1, want);
		ck_assert_uint_eq(got, n);
		ck_assert_mem_eq(buf, want, n);
	}
}

START_TEST(t_crash)
{
	static struct crash_ack acked[CRASH_ITER];
	static uint32_t seen[CRASH_ITER][TRACKED];
	uint64_t s = 4242;
	osd_store_close(st);
	st = NULL;
	memset(seen, 0, sizeof(seen));
	for (int it = 0; it < CRASH_ITER; it++) {
		int pfd[2];
		ck_assert_int_eq(pipe(pfd), 0);
		int wait_for = 1 + (int)(rnd(&s) % 40);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(pfd[0]);
			crash_child(it, pfd[1]);
		}
		close(pfd[1]);
		int got = 0;
		memset(&acked[it], 0, sizeof(acked[it]));
		while (got < wait_for && read(pfd[0], &acked[it], sizeof(acked[it])) ==
		       (ssize_t)sizeof(acked[it]))
			got++;
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		ck_assert_msg(WIFSIGNALED(status), "child exited early (status %d)", status);
		while (read(pfd[0], &acked[it], sizeof(acked[it])) == (ssize_t)sizeof(acked[it]))
			got++;
		close(pfd[0]);
		ck_assert_int_ge(got, 1);
		st = open_store(0, 0);
		for (int j = 0; j <= it; j++)
			crash_verify(crash_part(j), &acked[j], seen[j]);
		osd_store_close(st);
		st = NULL;
	}
	st = open_store(0, 0);
	ck_assert_int_eq(data_files(), 0);
	uint64_t acks = 0, beyond = 0;
	for (int it = 0; it < CRASH_ITER; it++)
		for (int t = 0; t < TRACKED; t++) {
			acks += acked[it].ver[t];
			beyond += seen[it][t] - acked[it].ver[t];
		}
	printf("pack crash test: %d kills, %llu acknowledged versions, %llu durable beyond "
	       "the acknowledgement\n", CRASH_ITER, (unsigned long long)acks,
	       (unsigned long long)beyond);
}
END_TEST

/* Three versions of three objects: v1 logged, v2 pending when a checkpoint
 * is written, v3 made after it and never logged (O1 + 1: v2 also logged in
 * the new log; O1 + 2: v3 grows it into a file). */
static uint8_t ckv[3][SLOT], ckgrow[2 * SLOT];

static int ckpt_and_die(struct osd_store *s, void *arg)
{
	(void)arg;
	int r = 0;
	for (uint64_t k = 0; k < 3 && !r; k++) {
		struct iovec iov = { ckv[0], SLOT - 100 * k };
		r = osd_store_object_create(s, P1, O1 + k, OSD_OBJ_USER, 0);
		if (!r)
			r = osd_store_write(s, P1, O1 + k, 0, &iov, 1, STAMP);
	}
	if (!r)
		r = osd_store_flush_all(s);
	for (uint64_t k = 0; k < 3 && !r; k++) {
		struct iovec iov = { ckv[1], SLOT - 100 * k };
		r = osd_store_write(s, P1, O1 + k, 0, &iov, 1, STAMP);
	}
	if (!r)
		r = osd__store_compact(s);
	if (!r)
		r = osd_store_flush_object(s, P1, O1 + 1);
	for (uint64_t k = 0; k < 3 && !r; k++) {
		struct iovec iov = { k == 2 ? ckgrow : ckv[2], k == 2 ? 2 * SLOT : SLOT - 100 * k };
		r = osd_store_write(s, P1, O1 + k, 0, &iov, 1, STAMP);
	}
	return r;
}

/* O1 + 3: FUA changes are durable on return, the last plain one is lost. */
static int fua_and_die(struct osd_store *s, void *arg)
{
	(void)arg;
	struct iovec iov = { ckv[0], 3000 };
	int r = osd_store_object_create(s, P1, O1 + 3, OSD_OBJ_USER, OSD_STORE_FUA);
	if (!r)
		r = osd_store_write(s, P1, O1 + 3, 0, &iov, 1, OSD_STORE_FUA | STAMP);
	if (!r)
		r = osd_store_punch(s, P1, O1 + 3, 100, 100, OSD_STORE_FUA | STAMP);
	if (!r)
		r = osd_store_truncate(s, P1, O1 + 3, 2000, OSD_STORE_FUA | STAMP);
	iov = (struct iovec){ ckv[1], 10 };
	if (!r)
		r = osd_store_write(s, P1, O1 + 3, 0, &iov, 1, STAMP);
	return r;
}

/* P1's objects flushed by partition, written again; another partition's
 * never flushed (O1 + 5 there); O1 + 6 written with sync_writes. */
#define P2 0x10001ull
static int partition_and_die(struct osd_store *s, void *arg)
{
	(void)arg;
	struct iovec v0 = { ckv[0], 1500 }, v1 = { ckv[1], 1500 };
	int r = osd_store_partition_create(s, P2, 0);
	for (uint64_t p = P1; p <= P2 && !r; p++) {
		r = osd_store_object_create(s, p, O1 + 4, OSD_OBJ_USER, 0);
		if (!r)
			r = osd_store_write(s, p, O1 + 4, 0, &v0, 1, STAMP);
	}
	if (!r)
		r = osd_store_flush_partition(s, P1);
	for (uint64_t p = P1; p <= P2 && !r; p++)
		r = osd_store_write(s, p, O1 + 4, 0, &v1, 1, STAMP);
	return r;
}

static int sync_writes_and_die(struct osd_store *s, void *arg)
{
	(void)arg;
	struct iovec v = { ckv[2], 700 };
	int r = osd_store_object_create(s, P1, O1 + 6, OSD_OBJ_USER, 0);
	if (!r)
		r = osd_store_write(s, P1, O1 + 6, 0, &v, 1, STAMP);
	return r;
}

START_TEST(t_crash_checkpoint)
{
	static uint8_t want[2000];
	for (int v = 0; v < 3; v++)
		th_fill(ckv[v], SLOT, 10 + (uint64_t)v, 0);
	th_fill(ckgrow, sizeof(ckgrow), 13, 0);
	in_child(fua_and_die, NULL);
	memcpy(want, ckv[0], sizeof(want));
	memset(want + 100, 0, 100);
	expect_obj(O1 + 3, want, sizeof(want));
	in_child(ckpt_and_die, NULL);
	for (uint64_t k = 0; k < 3; k++) {
		expect_obj(O1 + k, ckv[1], SLOT - 100 * k);
		ck_assert_int_eq(obj_of(O1 + k)->packed, 1);
		uint64_t bytes = 0, bad = 0;
		ck_assert_int_eq(osd_store_verify(st, P1, O1 + k, &bytes, &bad), 0);
	}
	ck_assert_int_eq(data_files(), 0);
	expect_obj(O1 + 3, want, sizeof(want));
	in_child(partition_and_die, NULL);
	expect_obj(O1 + 4, ckv[0], 1500);
	ck_assert_int_eq(osd_store_partition_exists(st, P2), 1); /* logged before P1's sync */
	uint64_t n = 99;
	ck_assert_int_eq(osd_store_length(st, P2, O1 + 4, &n), 0);
	ck_assert_uint_eq(n, 0); /* its data never logged */
	child_sync_writes = 1;
	in_child(sync_writes_and_die, NULL);
	child_sync_writes = 0;
	expect_obj(O1 + 6, ckv[2], 700);
	/* and from here on as any store */
	ck_assert_int_eq(wr(O1, 0, ckv[2], 10), 0);
	memcpy(ckv[1], ckv[2], 10);
	reopen();
	expect_obj(O1, ckv[1], SLOT);
}
END_TEST

/* ---- data calls without a stamp -------------------------------------------------------- */

static uint8_t unst[3][SLOT];

/* An unstamped packed write, then a file object's write; dies unflushed. */
static int unstamped_then_file_and_die(struct osd_store *s, void *arg)
{
	struct iovec v = { unst[2], SLOT }, f = { unst[0], 6000 };
	(void)arg;
	int r = osd_store_write(s, P1, O1, 0, &v, 1, 0);
	if (!r)
		r = osd_store_write(s, P1, O1 + 1, 0, &f, 1, 0);
	return r;
}

/*
 * Without OSD_STORE_STAMPED a data call logs the packed state itself: one
 * PACK record without entries, in the log before the call returns. So a
 * later command's data change, which first writes the log out, never
 * survives a process crash without it. And rewrites without a flush keep
 * data/pack bounded: the log is synced once OSD__PACK_FREES_MAX slots wait.
 */
START_TEST(t_unstamped)
{
	for (int v = 0; v < 3; v++)
		th_fill(unst[v], SLOT, 40 + (uint64_t)v, 0);
	mkobj(O1);
	mkobj(O1 + 1);
	ck_assert_int_eq(wr(O1, 0, unst[0], SLOT), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	uint64_t end = osd__log_end(&st->log);
	struct iovec v = { unst[1], SLOT };
	ck_assert_int_eq(osd_store_write(st, P1, O1, 0, &v, 1, 0), 0);
	ck_assert_uint_eq(osd__log_end(&st->log) - end, OSD__REC_HDR + OSD__PACK_HDR);
	ck_assert_int_eq(obj_of(O1)->pack_pending, 0);
	/* the process dies after a file write that followed the packed one */
	in_child(unstamped_then_file_and_die, NULL);
	expect_obj(O1 + 1, unst[0], 6000);
	expect_obj(O1, unst[2], SLOT);
	/* 10,000 rewrites, no flush: the pack stays near the bound */
	off_t before = pack_size();
	for (int i = 0; i < 10000; i++) {
		unst[1][0] = (uint8_t)i;
		unst[1][1] = (uint8_t)(i >> 8);
		ck_assert_int_eq(osd_store_write(st, P1, O1, 0, &v, 1, 0), 0);
	}
	ck_assert_int_le(pack_size(), before + (off_t)(OSD__PACK_FREES_MAX + 64) * SLOT);
	reopen();
	expect_obj(O1, unst[1], SLOT);
}
END_TEST

/* Bytes data/pack has allocated on disk. */
static off_t pack_allocated(void)
{
	char path[4200];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/data/pack", dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	return (off_t)sb.st_blocks * 512;
}

/* Freed slots are zeroed at once and punched out 16,384 at a time: after
 * 20,000 small objects are removed, most of their space is back. */
START_TEST(t_punch)
{
	enum { N = 20000 };
	uint8_t b[SLOT];
	th_fill(b, sizeof(b), 77, 0);
	for (uint64_t i = 0; i < N; i++) {
		mkobj(O1 + i);
		ck_assert_int_eq(wr(O1 + i, 0, b, SLOT), 0);
	}
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_ge(pack_allocated(), (off_t)N * SLOT);
	for (uint64_t i = 0; i < N; i++)
		ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + i, 0), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	/* what is left: the header and the slots freed since the sweep */
	ck_assert_int_le(pack_allocated(), (off_t)(N - 16384 + 2) * SLOT);
	ck_assert_int_eq(pack_size(), (off_t)(N + 1) * SLOT); /* punched, not cut */
}
END_TEST

/* ---- concurrency --------------------------------------------------------------------- */

#define THREADS 4
#define PER_THREAD 2
#define THREAD_OPS 300
#define FILE_OBJ (O1 + 0x100)

struct thr {
	int id;
	uint32_t ver[PER_THREAD];
	char err[256];
};

static atomic_int writers_left;

/* Rewrite, read back and sometimes remove and remake this thread's objects. */
static void *thr_writer(void *arg)
{
	struct thr *t = arg;
	uint8_t buf[SLOT], back[2 * SLOT] = { 0 };
	uint64_t seed = 99 + (uint64_t)t->id;
	for (int i = 0; i < THREAD_OPS && !t->err[0]; i++) {
		int k = (int)(rnd(&seed) % PER_THREAD);
		uint64_t oid = O1 + (uint64_t)(t->id * PER_THREAD + k);
		size_t got, n = crash_content(oid, ++t->ver[k], buf);
		struct iovec iov = { buf, n }, in = { back, sizeof(back) };
		int r = 0;
		if (rnd(&seed) % 16 == 0) {
			r = osd_store_object_remove(st, P1, oid, 0);
			if (!r)
				r = osd_store_object_create(st, P1, oid, OSD_OBJ_USER, 0);
		}
		if (!r)
			r = osd_store_truncate(st, P1, oid, 0, STAMP);
		if (!r)
			r = osd_store_write(st, P1, oid, 0, &iov, 1, STAMP);
		if (!r && rnd(&seed) % 4 == 0)
			r = osd_store_attr_set(st, P1, oid, 0x3, 0x5, &i, sizeof(i), 0);
		/* a file object too: the flush's fdatasync of it widens the
		 * window in which a packed change races the flush */
		struct iovec fv = { back, 2 * SLOT };
		if (!r)
			r = osd_store_write(st, P1, FILE_OBJ + (uint64_t)t->id, 0, &fv, 1, STAMP);
		if (!r)
			r = osd_store_read(st, P1, oid, 0, &in, 1, &got);
		if (r || got != n || memcmp(back, buf, n))
			snprintf(t->err, sizeof(t->err), "object %#llx version %u: %d, %zu of %zu "
				 "bytes", (unsigned long long)oid, t->ver[k], r, got, n);
	}
	atomic_fetch_sub(&writers_left, 1);
	return NULL;
}

/* Flushes and checkpoints while the writers run. */
static void *thr_flusher(void *arg)
{
	int *err = arg;
	for (unsigned i = 0; atomic_load(&writers_left) && !*err; i++)
		*err = i % 4 == 3 ? osd__store_compact(st) : osd_store_flush_all(st);
	return NULL;
}

/* One round: the writers and the flusher, then a flush of everything. */
static void threads_round(struct thr *t)
{
	pthread_t th[THREADS + 1];
	int ferr = 0;
	atomic_store(&writers_left, THREADS);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, thr_writer, &t[i]), 0);
	ck_assert_int_eq(pthread_create(&th[THREADS], NULL, thr_flusher, &ferr), 0);
	for (int i = 0; i <= THREADS; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(ferr, 0);
	for (int i = 0; i < THREADS; i++)
		ck_assert_msg(!t[i].err[0], "thread %d: %s", i, t[i].err);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
}

START_TEST(t_threads)
{
	static struct thr t[THREADS];
	static uint8_t buf[SLOT];
	for (int i = 0; i < THREADS * PER_THREAD; i++)
		mkobj(O1 + (uint64_t)i);
	for (int i = 0; i < THREADS; i++)
		mkobj(FILE_OBJ + (uint64_t)i);
	memset(t, 0, sizeof(t));
	for (int i = 0; i < THREADS; i++)
		t[i].id = i;
	for (int round = 0; round < 3; round++) {
		threads_round(t);
		size_t slots = 1; /* the header */
		for (int i = 0; i < THREADS * PER_THREAD; i++) {
			uint64_t oid = O1 + (uint64_t)i;
			uint32_t v = t[i / PER_THREAD].ver[i % PER_THREAD];
			if (v)
				expect_obj(oid, buf, crash_content(oid, v, buf));
			/* the flush logged every change, whichever way it raced */
			const struct osd__obj *o = obj_of(oid);
			ck_assert_msg(o->slot == o->slot_logged, "round %d object %d: slot %u, "
				      "logged %u", round, i, o->slot, o->slot_logged);
			slots += o->slot != 0;
		}
		ck_assert_int_eq(data_files(), THREADS);
		/* once all is durable, no slot is taken but the objects' own */
		size_t taken = 0;
		for (size_t w = 0; w < st->pack_words; w++)
			taken += (size_t)__builtin_popcountll(st->pack_map[w]);
		ck_assert_uint_eq(taken, slots);
		if (round)
			reopen();
	}
	for (int i = 0; i < THREADS * PER_THREAD; i++) {
		uint64_t oid = O1 + (uint64_t)i;
		expect_obj(oid, buf, crash_content(oid, t[i / PER_THREAD].ver[i % PER_THREAD], buf));
	}
}
END_TEST

/* ---- 6: damage ---------------------------------------------------------------------- */

static void flip_pack(uint64_t off)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/data/pack", dir);
	th_flip(path, (off_t)off);
}

START_TEST(t_damage)
{
	static uint8_t a[SLOT], b[1000], c[SLOT], buf[SLOT];
	char text[128], path[4200];
	size_t got = 99;
	uint64_t bytes = 1, bad;

	th_fill(a, sizeof(a), 1, 0);
	th_fill(b, sizeof(b), 2, 0);
	th_fill(c, sizeof(c), 3, 0);
	mkobj(O1);
	mkobj(O1 + 1);
	ck_assert_int_eq(wr(O1, 0, a, sizeof(a)), 0);
	ck_assert_int_eq(wr(O1 + 1, 0, b, sizeof(b)), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	uint32_t slot = obj_of(O1)->slot;
	ck_assert_uint_ne(slot, 0);
	flip_pack((uint64_t)slot * SLOT + 123);

	ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), -EIO);
	ck_assert_uint_eq(got, 0);
	ck_assert_int_eq(rd(O1, 2000, buf, 100, &got), -EIO);
	ck_assert_uint_eq(got, 0);
	snprintf(text, sizeof(text), "object 0x%llx in partition 0x%llx (data/pack slot %u)",
		 (unsigned long long)O1, (unsigned long long)P1, slot);
	ck_assert_msg(logged(OSD_STORE_LOG_ERR, text), "no error naming %s in:\n%s", text,
		      logged_text);
	logged_text[0] = 0;
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), -EIO);
	ck_assert_uint_eq(bytes, 0);
	ck_assert(logged(OSD_STORE_LOG_ERR, text));
	ck_assert(logged(OSD_STORE_LOG_ERR, "scrub of"));
	/* the others read fine */
	expect_obj(O1 + 1, b, sizeof(b));
	ck_assert_int_eq(osd_store_verify(st, P1, O1 + 1, &bytes, &bad), 0);
	ck_assert_uint_eq(bytes, sizeof(b));
	/* a change that keeps old bytes cannot be made; the damage stays */
	ck_assert_int_eq(wr(O1, 10, "xy", 2), -EIO);
	reopen();
	ck_assert_int_eq(rd(O1, 0, buf, sizeof(buf), &got), -EIO);
	/* a whole rewrite heals it */
	ck_assert_int_eq(wr(O1, 0, c, sizeof(c)), 0);
	expect_obj(O1, c, sizeof(c));
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), 0);
	ck_assert_uint_eq(bytes, SLOT);
	reopen();
	expect_obj(O1, c, sizeof(c));

	/* data/pack lost: made anew, an error told; its objects read as damaged,
	 * but not one of zeros, which has no slot to lose */
	static const uint8_t zeros[100];
	mkobj(O1 + 2);
	ck_assert_int_eq(osd_store_truncate(st, P1, O1 + 2, sizeof(zeros), STAMP), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	osd_store_close(st);
	st = NULL;
	snprintf(path, sizeof(path), "%s/data/pack", dir);
	ck_assert_int_eq(unlink(path), 0);
	logged_text[0] = 0;
	st = open_store(0, 0);
	ck_assert_msg(logged(OSD_STORE_LOG_ERR, "data/pack was missing"), "%s", logged_text);
	ck_assert_int_eq(pack_size(), OSD__FILE_HDR);
	ck_assert_int_eq(rd(O1 + 1, 0, buf, sizeof(buf), &got), -EIO);
	ck_assert_int_eq(osd_store_verify(st, P1, O1 + 1, &bytes, &bad), -EIO);
	expect_obj(O1 + 2, zeros, sizeof(zeros));
	ck_assert_int_eq(wr(O1, 0, c, sizeof(c)), 0); /* healed by a whole rewrite */
	ck_assert_int_eq(wr(O1 + 1, 0, b, sizeof(b)), 0);
	reopen();
	expect_obj(O1, c, sizeof(c));
	expect_obj(O1 + 1, b, sizeof(b));

	/* A stray data file of a packed object that no record names (no DATA
	 * record: never a move out of the pack) is not read: the object reads
	 * its slot, and its next move out of the pack truncates the file. */
	uint64_t gen = obj_of(O1 + 1)->gen;
	osd_store_close(st);
	st = NULL;
	data_file_path(path, sizeof(path), gen);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0) { /* its fan-out directory may not exist yet */
		char d[4200];
		snprintf(d, sizeof(d), "%s/data/%02x", dir, (unsigned)(gen & 0xff));
		ck_assert_int_eq(mkdir(d, 0700), 0);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	}
	ck_assert_int_ge(fd, 0);
	static uint8_t stray[3 * SLOT];
	memset(stray, 0xEE, sizeof(stray));
	ck_assert_int_eq(write(fd, stray, sizeof(stray)), (ssize_t)sizeof(stray));
	close(fd);
	logged_text[0] = 0;
	st = open_store(0, 0);
	expect_obj(O1 + 1, b, sizeof(b));
	ck_assert_int_eq(obj_of(O1 + 1)->packed, 1);
	static uint8_t big[SLOT + 100];
	th_fill(big, sizeof(big), 8, 0);
	ck_assert_int_eq(wr(O1 + 1, 0, big, sizeof(big)), 0);
	reopen();
	expect_obj(O1 + 1, big, sizeof(big)); /* no stray byte past it */
}
END_TEST

/* Append record @p type with @p payload to the log file (the store closed). */
static void log_append_raw(uint8_t type, const uint8_t *payload, size_t n)
{
	char path[4200];
	uint8_t rec[256];
	ck_assert_uint_le(n + 9, sizeof(rec));
	size_t k = frame(rec, type, payload, n);
	snprintf(path, sizeof(path), "%s/log", dir);
	int fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, rec, k), (ssize_t)k);
	close(fd);
}

/* PACK records that cannot apply are damage: refused with the offset when
 * intact records follow, kept out by salvage; a slot named twice is told. */
START_TEST(t_bad_records)
{
	static uint8_t a[SLOT], b[SLOT], buf[SLOT];
	uint8_t good[PACK_HDR], bad[PACK_HDR];
	char err[1024];
	size_t got;
	th_fill(a, sizeof(a), 1, 0);
	th_fill(b, sizeof(b), 2, 0);
	mkobj(O1);
	mkobj(O1 + 1);
	ck_assert_int_eq(osd_store_object_create(st, P1, O1 + 2, OSD_OBJ_COLLECTION, 0), 0);
	ck_assert_int_eq(wr(O1, 0, a, 3000), 0);
	ck_assert_int_eq(wr(O1 + 1, 0, b, 2000), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	uint32_t sa = obj_of(O1)->slot;
	pack_head(good, P1, O1, sa, 3000, slot_crc(a, 3000));
	const struct { uint64_t oid, where, length; } cases[] = {
		{ O1, sa, SLOT + 1 },              /* longer than a slot */
		{ O1, 1ull << 32, 3000 },          /* no such slot number */
		{ O1 + 2, sa, 3000 },              /* a collection has no data */
		{ O1 + 7, sa, 3000 },              /* no such object */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		osd_store_close(st);
		st = NULL;
		pack_head(bad, P1, cases[i].oid, cases[i].where, cases[i].length, 0);
		log_append_raw(REC_PACK, bad, sizeof(bad));
		log_append_raw(REC_PACK, good, sizeof(good)); /* an intact record after it */
		ck_assert_int_eq(open_opts(&st, 0, 0, err, sizeof(err)), -EUCLEAN);
		ck_assert_msg(strstr(err, "log is damaged at byte") &&
			      strstr(err, "a record that does not apply"), "case %zu: %s", i, err);
		struct osd_store_options so = { .salvage = 1, .log = log_cb };
		ck_assert_int_eq(osd_store_open(&st, dir, &so, err, sizeof(err)), 0);
		expect_obj(O1, a, 3000);
		expect_obj(O1 + 1, b, 2000);
	}
	/* a slot named by two objects: told; the CRC decides which reads */
	sa = obj_of(O1)->slot; /* salvage wrote the state anew */
	osd_store_close(st);
	st = NULL;
	pack_head(bad, P1, O1 + 1, sa, 2000, slot_crc(b, 2000));
	log_append_raw(REC_PACK, bad, sizeof(bad));
	logged_text[0] = 0;
	st = open_store(0, 0);
	char text[128];
	snprintf(text, sizeof(text), "object 0x%llx in partition 0x%llx names pack slot %u, "
		 "which another object holds", (unsigned long long)(O1 + 1),
		 (unsigned long long)P1, sa);
	ck_assert_msg(logged(OSD_STORE_LOG_ERR, text), "%s", logged_text);
	expect_obj(O1, a, 3000);
	ck_assert_int_eq(rd(O1 + 1, 0, buf, sizeof(buf), &got), -EIO);
	/* the damaged one rewritten: the slot the other still holds stays */
	ck_assert_int_eq(wr(O1 + 1, 0, b, 2000), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	mkobj(O1 + 3);
	ck_assert_int_eq(wr(O1 + 3, 0, b, 100), 0);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	expect_obj(O1, a, 3000);
	expect_obj(O1 + 1, b, 2000);
	reopen();
	expect_obj(O1, a, 3000);
}
END_TEST

/* A version 1 log (an older build's, before ATTRS records): a PACK record
 * goes alone, the attribute in its own ATTR record after it. */
START_TEST(t_old_log)
{
	static uint8_t data[SLOT], rec[256], want[256];
	uint8_t hdr[OSD__FILE_HDR], payload[PACK_HDR];
	char path[4200];
	uint32_t version, flags;
	uint64_t epoch;
	th_fill(data, sizeof(data), 4, 0);
	mkobj(O1);
	osd_store_close(st);
	st = NULL;
	snprintf(path, sizeof(path), "%s/log", dir);
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, hdr, sizeof(hdr), 0), sizeof(hdr));
	ck_assert_int_eq(osd__file_hdr_get_ver(hdr, OSD__LOG_MAGIC, &version, &flags, &epoch), 0);
	ck_assert_uint_eq(version, 3);
	close(fd);
	th_log_downgrade(dir, 1, hdr);
	st = open_store(0, 0);
	ck_assert_int_eq(wr(O1, 0, data, 1000), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, O1, 0x3, 0x5, "abcdef", 6, 0), 0);
	/* the last record: ATTR pid oid page num value */
	uint8_t attr[24 + 6];
	osd__put_be64(attr, P1);
	osd__put_be64(attr + 8, O1);
	osd__put_be32(attr + 16, 0x3);
	osd__put_be32(attr + 20, 0x5);
	memcpy(attr + 24, "abcdef", 6);
	size_t wn = frame(want, 5, attr, sizeof(attr));
	size_t n = last_log_record(rec, sizeof(rec));
	ck_assert_uint_eq(n, wn);
	ck_assert_mem_eq(rec, want, wn);
	/* and the PACK record alone before it */
	static uint8_t logbuf[1 << 16];
	fd = open(path, O_RDONLY);
	ssize_t len = read(fd, logbuf, sizeof(logbuf));
	close(fd);
	ck_assert_int_gt(len, (ssize_t)(wn + 9 + PACK_HDR));
	pack_head(payload, P1, O1, 1, 1000, slot_crc(data, 1000));
	wn = frame(want, REC_PACK, payload, PACK_HDR);
	ck_assert_mem_eq(logbuf + len - n - wn, want, wn);
	reopen();
	expect_obj(O1, data, 1000);
	char v[6];
	size_t vl = 0;
	ck_assert_int_eq(osd_store_attr_get(st, P1, O1, 0x3, 0x5, v, sizeof(v), &vl), 0);
	ck_assert_mem_eq(v, "abcdef", 6);
}
END_TEST

/* ---- 7: upgrade ---------------------------------------------------------------------- */

static void sb_read(uint32_t *version, uint32_t *flags, uint64_t *created)
{
	char path[4200];
	uint8_t sb[OSD__FILE_HDR];
	snprintf(path, sizeof(path), "%s/superblock", dir);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, sb, sizeof(sb)), sizeof(sb));
	close(fd);
	ck_assert_int_eq(osd__file_hdr_get_ver(sb, "OSDSTORE", version, flags, created), 0);
}

static void sb_write(uint32_t version, uint32_t flags, uint64_t created)
{
	char path[4200];
	uint8_t sb[OSD__FILE_HDR];
	osd__file_hdr_put_ver(sb, "OSDSTORE", version, flags, created);
	snprintf(path, sizeof(path), "%s/superblock", dir);
	int fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, sb, sizeof(sb)), sizeof(sb));
	close(fd);
}

/*
 * A store of format @p old (1: no checksum sidecars, 2: with them), made
 * here with no_pack so every object has its file, and without data/pack:
 * the open upgrades it to 6. Leaves it open, returns the creation time.
 */
static uint64_t upgrade_from(uint32_t old)
{
	static uint8_t big[10000], small[100], c[200];
	char path[4200], text[256];
	uint32_t version, flags;
	uint64_t created, created2, gens[2];

	osd_store_close(st);
	th_rmtree(dir);
	dir = th_mkdtemp();
	st = open_store(1, 1);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	th_fill(big, sizeof(big), 1, 0);
	th_fill(small, sizeof(small), 2, 0);
	th_fill(c, sizeof(c), 3, 0);
	mkobj(O1);
	mkobj(O1 + 1);
	ck_assert_int_eq(wr(O1, 0, big, sizeof(big)), 0);
	ck_assert_int_eq(wr(O1 + 1, 0, small, sizeof(small)), 0);
	for (int k = 0; k < 2; k++)
		gens[k] = obj_of(O1 + (uint64_t)k)->gen;
	osd_store_close(st);
	st = NULL;
	ck_assert_int_eq(data_files(), 2);
	sb_read(&version, &flags, &created);
	ck_assert_uint_eq(version, 6);
	sb_write(old, flags, created);
	snprintf(path, sizeof(path), "%s/data/pack", dir);
	ck_assert_int_eq(unlink(path), 0);
	for (int k = 0; old == 1 && k < 2; k++) {
		char sum[4300];
		data_file_path(path, sizeof(path), gens[k]);
		snprintf(sum, sizeof(sum), "%s.sum", path);
		ck_assert_int_eq(unlink(sum), 0);
	}

	logged_text[0] = 0;
	st = open_store(0, 0);
	snprintf(text, sizeof(text), "store format upgraded from version %u to 6: %s"
		 "small objects are packed into data/pack; the checkpoint is indexed (objects "
		 "load when used) and holds the slot map", old, old == 1 ?
		 "every data block now carries a CRC32C checksum; " : "");
	ck_assert_msg(logged(OSD_STORE_LOG_NOTICE, text), "%s", logged_text);
	ck_assert_ptr_nonnull(strstr(osd_store_error(st), text));
	ck_assert_msg(!logged(OSD_STORE_LOG_ERR, "") && !logged(OSD_STORE_LOG_WARNING, ""),
		      "%s", logged_text); /* data/pack made by the upgrade, not as damage */
	snprintf(path, sizeof(path), "%s/data/pack", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(pack_size(), OSD__FILE_HDR);
	sb_read(&version, &flags, &created2);
	ck_assert_uint_eq(version, 6);
	ck_assert_uint_eq(created2, created);
	expect_obj(O1, big, sizeof(big));
	expect_obj(O1 + 1, small, sizeof(small));
	uint64_t bytes = 0, bad = 0;
	ck_assert_int_eq(osd_store_verify(st, P1, O1, &bytes, &bad), 0);
	ck_assert_uint_eq(bytes, sizeof(big));
	/* an old small object keeps its file; a new one packs */
	ck_assert_int_eq(wr(O1 + 1, 0, c, 50), 0);
	memcpy(small, c, 50);
	mkobj(O1 + 2);
	ck_assert_int_eq(wr(O1 + 2, 0, c, sizeof(c)), 0);
	ck_assert_int_eq(data_files(), 2);
	ck_assert_int_eq(pack_size(), 2 * SLOT);
	ck_assert_int_eq(obj_of(O1 + 2)->packed, 1);
	logged_text[0] = 0;
	reopen();
	ck_assert(!logged(OSD_STORE_LOG_NOTICE, "upgraded"));
	expect_obj(O1, big, sizeof(big));
	expect_obj(O1 + 1, small, sizeof(small));
	expect_obj(O1 + 2, c, sizeof(c));
	return created;
}

START_TEST(t_upgrade)
{
	char err[512];
	uint32_t version, flags;
	uint64_t created = upgrade_from(2), created2;

	/* a newer format is refused, and left as it is */
	osd_store_close(st);
	st = NULL;
	sb_read(&version, &flags, &created2);
	sb_write(7, flags, created);
	struct osd_store *s = NULL;
	ck_assert_int_eq(open_opts(&s, 1, 0, err, sizeof(err)), -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(err, "store format version 7"));
	sb_read(&version, &flags, &created2);
	ck_assert_uint_eq(version, 7);
	sb_write(5, flags, created);
	st = open_store(0, 0);
	ck_assert_int_eq(osd_store_object_type(st, P1, O1 + 2, NULL), 0);
}
END_TEST

START_TEST(t_upgrade_v1)
{
	(void)upgrade_from(1);
}
END_TEST

/* ---- 8: no_pack ---------------------------------------------------------------------- */

START_TEST(t_no_pack)
{
	static uint8_t a[300], b[100];
	th_fill(a, sizeof(a), 1, 0);
	th_fill(b, sizeof(b), 2, 0);
	mkobj(O1);
	ck_assert_int_eq(wr(O1, 0, a, 100), 0);
	reopen_opts(1);
	mkobj(O1 + 1);
	ck_assert_int_eq(wr(O1 + 1, 0, b, sizeof(b)), 0);
	ck_assert_int_eq(data_files(), 1);
	ck_assert_int_eq(obj_of(O1 + 1)->packed, 0);
	/* packed before: stays packed while it fits */
	off_t psize = pack_size();
	expect_obj(O1, a, 100);
	ck_assert_int_eq(wr(O1, 100, a + 100, 200), 0);
	expect_obj(O1, a, 300);
	ck_assert_int_eq(obj_of(O1)->packed, 1);
	ck_assert_int_eq(data_files(), 1);
	ck_assert_int_eq(pack_size(), psize + SLOT);
	reopen_opts(1);
	expect_obj(O1, a, 300);
	expect_obj(O1 + 1, b, sizeof(b));
	ck_assert_int_eq(obj_of(O1)->packed, 1);
	ck_assert_int_eq(data_files(), 1);
	/* packing on again: the file object keeps its file */
	reopen();
	ck_assert_int_eq(wr(O1 + 1, 0, a, 10), 0);
	ck_assert_int_eq(obj_of(O1 + 1)->packed, 0);
	ck_assert_int_eq(data_files(), 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store_pack");
	TCase *tc = tcase_create("pack");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_known_bytes);
	tcase_add_test(tc, t_ops_reference);
	tcase_add_test(tc, t_migration);
	tcase_add_test(tc, t_slot_reuse);
	tcase_add_test(tc, t_crash);
	tcase_add_test(tc, t_crash_checkpoint);
	tcase_add_test(tc, t_unstamped);
	tcase_add_test(tc, t_punch);
	tcase_add_test(tc, t_threads);
	tcase_add_test(tc, t_damage);
	tcase_add_test(tc, t_bad_records);
	tcase_add_test(tc, t_old_log);
	tcase_add_test(tc, t_upgrade);
	tcase_add_test(tc, t_upgrade_v1);
	tcase_add_test(tc, t_no_pack);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
