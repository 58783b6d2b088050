/*
 * Recovery of the target store (osdtarget/store/) from an arbitrary metadata
 * log or checkpoint file.
 *
 * A store is created once per process in a temporary directory (removed at
 * exit); its fresh checkpoint and log are kept as templates. For every input
 * both files are rewritten, one of them with the input:
 *   byte 0 bit 0   0: the input is the log, 1: the input is the checkpoint
 *   rest           the file's bytes
 * Opening must then give 0 or -EUCLEAN (-ENOMEM), never crash or leak. When
 * it opens, the recovered state (partitions, objects, types, attributes,
 * quotas, capacity, packed objects' slots) must survive a checkpoint of itself: compact, close,
 * reopen and compare.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/internal.h"
#include "store/store.h"
#include "fuzz_scratch.h"

/* The capacity option keeps the store's reported size independent of the host. */
#define FZ_CAPACITY (1ULL << 20)
#define FZ_LIST_MAX 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_dir[256];
static uint8_t *fz_tmpl_ckpt, *fz_tmpl_log;
static size_t fz_tmpl_ckpt_len, fz_tmpl_log_len;

static void fz_cleanup(void)
{
	free(fz_tmpl_ckpt);
	free(fz_tmpl_log);
	if (fz_dir[0])
		fz_rm_tree(fz_dir);
}

static void fz_fail(const char *what, int rc)
{
	fprintf(stderr, "fuzz_store_log: %s: %d (%s)\n", what, rc, strerror(rc < 0 ? -rc : rc));
	abort();
}

static void fz_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", fz_dir, name);
}

static void fz_write_file(const char *name, const uint8_t *data, size_t len)
{
	char path[300];
	int rc;

	fz_path(path, sizeof(path), name);
	if ((rc = fz_put_file(path, data, len)) != 0)
		fz_fail(path, rc);
}

static void fz_read_file(const char *name, uint8_t **out, size_t *len)
{
	char path[300];
	int rc;

	fz_path(path, sizeof(path), name);
	if ((rc = fz_get_file(path, out, len)) != 0)
		fz_fail(path, rc);
}

/* FNV-1a over the recovered state. */
static void fz_mix(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 0x100000001B3ULL;
}

static void fz_mix_u64(uint64_t *h, uint64_t v)
{
	fz_mix(h, &v, sizeof(v));
}

static int fz_attr_cb(uint32_t page, uint32_t num, const void *val, size_t len, void *payload)
{
	uint64_t *h = payload;

	fz_mix_u64(h, ((uint64_t)page << 32) | num);
	fz_mix_u64(h, len);
	fz_mix(h, val, len);
	return 0;
}

/* A packed object's slot, CRC and damage mark must survive a checkpoint too. */
static void fz_digest_pack(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *h)
{
	struct osd__obj *o = osd__ns_get(st, pid, oid);
	uint64_t used = 0;

	if (!o)
		fz_fail("object listed but not found", -ENOENT);
	fz_mix_u64(h, o->packed);
	fz_mix_u64(h, o->packed ? o->slot : 0);
	fz_mix_u64(h, o->packed ? o->pcrc : 0);
	fz_mix_u64(h, o->sums_bad);
	osd__obj_put(st, o);
	fz_mix_u64(h, (uint64_t)osd_store_used(st, pid, oid, &used));
	fz_mix_u64(h, used);
}

/* One object's type, attributes, quota, length and pack state. */
static void fz_digest_obj(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *h)
{
	enum osd_obj_type type = 0;
	uint64_t v = 0;
	int rc;

	fz_mix_u64(h, pid);
	fz_mix_u64(h, oid);
	rc = osd_store_object_type(st, pid, oid, &type);
	fz_mix_u64(h, (uint64_t)rc);
	fz_mix_u64(h, type);
	fz_mix_u64(h, (uint64_t)osd_store_attr_iterate(st, pid, oid, OSD_STORE_ALL_PAGES,
							  fz_attr_cb, h));
	rc = osd_store_get_quota(st, pid, oid, &v);
	fz_mix_u64(h, (uint64_t)rc);
	fz_mix_u64(h, rc ? 0 : v);
	if (type == OSD_OBJ_USER) {
		v = 0;
		rc = osd_store_length(st, pid, oid, &v);
		fz_mix_u64(h, (uint64_t)rc);
		fz_mix_u64(h, v);
		fz_digest_pack(st, pid, oid, h);
	}
}

static void fz_digest_part(struct osd_store *st, uint64_t pid, uint64_t *h)
{
	uint64_t ids[FZ_LIST_MAX], start = 0, next;
	size_t n;

	fz_digest_obj(st, pid, 0, h);
	do {
		if (osd_store_object_list(st, pid, start, 0, ids, FZ_LIST_MAX, &n, &next) != 0)
			fz_fail("object list", -EIO);
		for (size_t i = 0; i < n; i++)
			fz_digest_obj(st, pid, ids[i], h);
		if (next && next <= start)
			fz_fail("object list does not advance", -ELOOP);
		start = next;
	} while (next);
}

static uint64_t fz_digest(struct osd_store *st)
{
	uint64_t h = 0xCBF29CE484222325ULL, ids[FZ_LIST_MAX], start = 0, next, total = 0;
	size_t n;

	fz_digest_obj(st, 0, 0, &h);
	fz_mix_u64(&h, (uint64_t)osd_store_capacity(st, &total, NULL));
	fz_mix_u64(&h, total);
	do {
		if (osd_store_partition_list(st, start, ids, FZ_LIST_MAX, &n, &next) != 0)
			fz_fail("partition list", -EIO);
		for (size_t i = 0; i < n; i++)
			fz_digest_part(st, ids[i], &h);
		if (next && next <= start)
			fz_fail("partition list does not advance", -ELOOP);
		start = next;
	} while (next);
	return h;
}

static int fz_open(struct osd_store **st)
{
	struct osd_store_options o = { 0 };
	char err[256];

	o.capacity = FZ_CAPACITY;
	return osd_store_open(st, fz_dir, &o, err, sizeof(err));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct osd_store_options o = { 0 };
	struct osd_store *st;
	const char *tmp = getenv("TMPDIR");
	char err[256];
	int rc;

	(void)argc;
	(void)argv;
	/* Every input fsyncs several files: prefer tmpfs unless TMPDIR says otherwise. */
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fz_dir, sizeof(fz_dir), "%s/osdfz-store-XXXXXX", tmp);
	if (!mkdtemp(fz_dir))
		fz_fail("mkdtemp", -errno);
	atexit(fz_cleanup);
	o.create = 1;
	rc = osd_store_open(&st, fz_dir, &o, err, sizeof(err));
	if (rc)
		fz_fail(err, rc);
	osd_store_close(st);
	fz_read_file("checkpoint", &fz_tmpl_ckpt, &fz_tmpl_ckpt_len);
	fz_read_file("log", &fz_tmpl_log, &fz_tmpl_log_len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_store *st;
	uint64_t before, after;
	int rc;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		fz_write_file("checkpoint", data + 1, size - 1);
		fz_write_file("log", fz_tmpl_log, fz_tmpl_log_len);
	} else {
		fz_write_file("checkpoint", fz_tmpl_ckpt, fz_tmpl_ckpt_len);
		fz_write_file("log", data + 1, size - 1);
	}
	rc = fz_open(&st);
	if (rc == -EUCLEAN || rc == -ENOMEM)
		return 0;
	if (rc)
		fz_fail("open: unexpected error", rc);
	before = fz_digest(st);
	rc = osd__store_compact(st);
	if (rc)
		fz_fail("checkpoint of the recovered state", rc);
	osd_store_close(st);
	rc = fz_open(&st);
	if (rc)
		fz_fail("reopen after checkpoint", rc);
	after = fz_digest(st);
	osd_store_close(st);
	if (before != after)
		fz_fail("recovered state differs after checkpoint and reopen", -EBADMSG);
	return 0;
}
