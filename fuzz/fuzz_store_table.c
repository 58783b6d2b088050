/*
 * The indexed checkpoint of the target store (osdtarget/store/table.c)
 * against an arbitrary checkpoint whose checksums are right.
 *
 * A store with two partitions, user objects and collections, attributes of
 * 1 to 300 bytes and quotas is made once per process in a temporary
 * directory (removed at exit) and compacted; its log is kept as a template.
 * The input is a whole checkpoint file. Before it is written, the CRC32C of
 * the file header and, when the head names them within the file, of the
 * index, the records and the head are set right: so the fuzzer reaches the
 * decoding of head, index and records, not just the checksums. Opening
 * must give 0 or -EUCLEAN (-ENOMEM). When it opens, every listed object is
 * loaded: an object whose records do not match its entry may fail (told as
 * damage), and then an open with salvage must succeed. Otherwise the digest
 * of the state must survive a checkpoint of itself: compact, close, reopen
 * and compare.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checksum/crc32c.h"
#include "proto/byteorder.h"
#include "store/internal.h"
#include "store/store.h"
#include "fuzz_scratch.h"

#define FZ_CAPACITY (1ULL << 20)
#define FZ_MAX_INPUT (1u << 20)
#define FZ_HEAD 32u       /* the head, after the file header */
#define FZ_HEAD_LEN 104u  /* version 2; 120 in versions 3 and 4, with pack_off */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_dir[256];
static uint8_t *fz_tmpl_log;
static size_t fz_tmpl_log_len;

static void fz_cleanup(void)
{
	free(fz_tmpl_log);
	if (fz_dir[0])
		fz_rm_tree(fz_dir);
}

static void fz_fail(const char *what, int rc)
{
	fprintf(stderr, "fuzz_store_table: %s: %d (%s)\n", what, rc, strerror(rc < 0 ? -rc : rc));
	abort();
}

#include "fuzz_store_digest.h"

static void fz_write_file(const char *name, const uint8_t *data, size_t len)
{
	char path[300];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", fz_dir, name);
	if ((rc = fz_put_file(path, data, len)) != 0)
		fz_fail(path, rc);
}

static int fz_open(struct osd_store **st, int salvage)
{
	struct osd_store_options o = { 0 };
	char err[512];

	o.capacity = FZ_CAPACITY;
	o.salvage = salvage;
	o.meta_cache = 4; /* objects leave memory and load again */
	return osd_store_open(st, fz_dir, &o, err, sizeof(err));
}

/* Nothing of an earlier input stays: no previous generation, no quarantine. */
static void fz_forget(void)
{
	static const char *const names[] = { "checkpoint.prev", "log.prev", "quarantine" };
	char path[300];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", fz_dir, names[i]);
		fz_rm_tree(path);
	}
}

/* The CRC32C of [off, off + len) of @p b into @p at, when it is in the file. */
static void fz_fix_crc(uint8_t *b, size_t size, size_t at, uint64_t off, uint64_t len)
{
	if (off <= size && len <= size - off)
		osd__put_be32(b + at, osd__crc32c(0, b + off, (size_t)len));
}

/* Set the checksums of the file header and the head right. */
static void fz_fix(uint8_t *b, size_t size)
{
	if (size < OSD__FILE_HDR)
		return;
	osd__put_be32(b + 28, osd__crc32c(0, b, 28));
	if (size < FZ_HEAD + FZ_HEAD_LEN)
		return;
	uint8_t *h = b + FZ_HEAD;
	/* the CRCs follow the head's fields: 10 of them, 11 in versions 3 and 4 */
	size_t at = memcmp(h, "OSDINDX2", 8) ? 96 : 88;
	if (size < FZ_HEAD + at + 12)
		return;
	fz_fix_crc(b, size, FZ_HEAD + at, osd__get_be64(h + 24), osd__get_be64(h + 32));
	fz_fix_crc(b, size, FZ_HEAD + at + 4, osd__get_be64(h + 40), osd__get_be64(h + 48));
	osd__put_be32(h + at + 8, osd__crc32c(0, h, at + 8));
}

static int fz_count_attr(uint32_t page, uint32_t num, const void *val, size_t len,
			 void *payload)
{
	(void)page;
	(void)num;
	(void)val;
	(void)len;
	(void)payload;
	return 0;
}

/* Load every listed object: @return 0, or -1 if one failed (damage). */
static int fz_load_all(struct osd_store *st)
{
	uint64_t parts[FZ_LIST_MAX], ids[FZ_LIST_MAX], pstart = 0, pnext, start, next;
	size_t np, n;

	do {
		if (osd_store_partition_list(st, pstart, parts, FZ_LIST_MAX, &np, &pnext) != 0)
			fz_fail("partition list", -EIO);
		for (size_t i = 0; i < np; i++) {
			start = 0;
			do {
				if (osd_store_object_list(st, parts[i], start, 0, ids, FZ_LIST_MAX,
							  &n, &next) != 0)
					fz_fail("object list", -EIO);
				for (size_t k = 0; k < n; k++)
					if (osd_store_attr_iterate(st, parts[i], ids[k],
								   OSD_STORE_ALL_PAGES,
								   fz_count_attr, NULL) != 0)
						return -1;
				if (next && next <= start)
					fz_fail("object list does not advance", -ELOOP);
				start = next;
			} while (next);
		}
		if (pnext && pnext <= pstart)
			fz_fail("partition list does not advance", -ELOOP);
		pstart = pnext;
	} while (pnext);
	return 0;
}

static void fz_build(struct osd_store *st)
{
	static const uint64_t pids[] = { 0x10000, 0x10001 };
	uint8_t v[300];

	memset(v, 0x5A, sizeof(v));
	for (size_t p = 0; p < 2; p++) {
		if (osd_store_partition_create(st, pids[p], 0))
			fz_fail("partition", -EIO);
		(void)osd_store_attr_set(st, pids[p], 0, 0x10000, 1, v, 16, 0);
		for (uint64_t o = 1; o <= 12; o++) {
			enum osd_obj_type t = o % 5 ? OSD_OBJ_USER : OSD_OBJ_COLLECTION;
			if (osd_store_object_create(st, pids[p], 0x10000 + o, t, 0))
				fz_fail("object", -EIO);
			(void)osd_store_attr_set(st, pids[p], 0x10000 + o, 0x30000, 1, v,
						 1 + (size_t)(o * 25 % sizeof(v)), 0);
			if (o % 3 == 0)
				(void)osd_store_set_quota(st, pids[p], 0x10000 + o, 1 << 16, 0);
			if (t == OSD_OBJ_USER && o % 4 == 1) {
				/* packed: a slot in the map, bytes in the partition's total */
				struct iovec iov = { v, 100 + (size_t)o };
				(void)osd_store_write(st, pids[p], 0x10000 + o, 0, &iov, 1, 0);
			}
			if (t == OSD_OBJ_USER && o % 4 == 2) {
				/* a data file: a FILE record, its bytes in the total */
				struct iovec iov = { v, sizeof(v) };
				(void)osd_store_write(st, pids[p], 0x10000 + o, 20000, &iov, 1, 0);
			}
		}
	}
	(void)osd_store_attr_set(st, 0, 0, 0x20000, 2, v, 8, 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct osd_store_options o = { 0 };
	struct osd_store *st;
	const char *tmp = getenv("TMPDIR");
	char err[256], path[300];
	int rc;

	(void)argc;
	(void)argv;
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fz_dir, sizeof(fz_dir), "%s/osdfz-table-XXXXXX", tmp);
	if (!mkdtemp(fz_dir))
		fz_fail("mkdtemp", -errno);
	atexit(fz_cleanup);
	o.create = 1;
	o.capacity = FZ_CAPACITY;
	if ((rc = osd_store_open(&st, fz_dir, &o, err, sizeof(err))) != 0)
		fz_fail(err, rc);
	fz_build(st);
	if ((rc = osd__store_compact(st)) != 0)
		fz_fail("compact", rc);
	osd_store_close(st);
	snprintf(path, sizeof(path), "%s/log", fz_dir);
	if ((rc = fz_get_file(path, &fz_tmpl_log, &fz_tmpl_log_len)) != 0)
		fz_fail(path, rc);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_store *st;
	uint64_t before, after;
	int rc;

	if (size > FZ_MAX_INPUT)
		return 0;
	uint8_t *b = malloc(size ? size : 1);
	if (!b)
		return 0;
	memcpy(b, data, size);
	fz_fix(b, size);
	fz_write_file("checkpoint", b, size);
	free(b);
	fz_write_file("log", fz_tmpl_log, fz_tmpl_log_len);
	fz_forget();
	rc = fz_open(&st, 0);
	if (rc == -EUCLEAN || rc == -ENOMEM)
		return 0;
	if (rc)
		fz_fail("open: unexpected error", rc);
	if (fz_load_all(st) != 0) {
		/* records that do not match their (checksummed) entry: salvage
		 * reads the records whole */
		osd_store_close(st);
		rc = fz_open(&st, 1);
		if (rc && rc != -ENOMEM)
			fz_fail("salvage after an object failed to load", rc);
		osd_store_close(st);
		return 0;
	}
	before = fz_digest(st);
	rc = osd__store_compact(st);
	if (rc)
		fz_fail("checkpoint of the loaded state", rc);
	osd_store_close(st);
	rc = fz_open(&st, 0);
	if (rc)
		fz_fail("reopen after checkpoint", rc);
	after = fz_digest(st);
	osd_store_close(st);
	if (before != after)
		fz_fail("loaded state differs after checkpoint and reopen", -EBADMSG);
	return 0;
}
