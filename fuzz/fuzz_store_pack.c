/*
 * Packed small objects of the target store (osdtarget/store/pack.c) against
 * an arbitrary data/pack file.
 *
 * A store with three packed objects of known data (1, 1,000 and 4,096
 * bytes) is made once per process in a temporary directory (removed at
 * exit); its pack file, checkpoint and log are kept as templates. For every
 * input the checkpoint and log are put back and data/pack is the input.
 * Opening (plain, then with salvage) must give 0; every read and scrub of
 * each object must either fail with -EIO or return exactly its bytes, never
 * crash, leak or return other bytes as success; and a whole rewrite of each
 * object must then succeed and read back (it heals a damaged slot).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "store/internal.h"
#include "store/store.h"
#include "fuzz_scratch.h"

#define FZ_P 0x10000ULL
#define FZ_O 0x10000ULL
#define FZ_N 3

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const size_t fz_len[FZ_N] = { 1, 1000, OSD__PACK_SLOT };
static char fz_dir[256];
static uint8_t fz_data[FZ_N][OSD__PACK_SLOT];
static struct fz_file {
	const char *name;
	uint8_t *bytes;
	size_t len;
} fz_tmpl[] = { { "checkpoint", NULL, 0 }, { "log", NULL, 0 }, { "data/pack", NULL, 0 } };

static void fz_cleanup(void)
{
	for (size_t i = 0; i < sizeof(fz_tmpl) / sizeof(fz_tmpl[0]); i++)
		free(fz_tmpl[i].bytes);
	if (fz_dir[0])
		fz_rm_tree(fz_dir);
}

static void fz_fail(const char *what, int rc)
{
	fprintf(stderr, "fuzz_store_pack: %s: %d (%s)\n", what, rc, strerror(rc < 0 ? -rc : rc));
	abort();
}

static void fz_write_file(const char *name, const uint8_t *data, size_t len)
{
	char path[300];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", fz_dir, name);
	if ((rc = fz_put_file(path, data, len)) != 0)
		fz_fail(path, rc);
}

static void fz_keep(struct fz_file *f)
{
	char path[300];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", fz_dir, f->name);
	if ((rc = fz_get_file(path, &f->bytes, &f->len)) != 0)
		fz_fail(path, rc);
}

static int fz_open(struct osd_store **st, int create, int salvage)
{
	struct osd_store_options o = { 0 };
	char err[256];

	o.create = create;
	o.capacity = 1ULL << 30;
	o.salvage = salvage;
	return osd_store_open(st, fz_dir, &o, err, sizeof(err));
}

static int fz_write(struct osd_store *st, int i)
{
	struct iovec iov = { fz_data[i], fz_len[i] };

	return osd_store_write(st, FZ_P, FZ_O + (uint64_t)i, 0, &iov, 1, 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct osd_store *st = NULL;
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	for (int i = 0; i < FZ_N; i++)
		for (size_t k = 0; k < OSD__PACK_SLOT; k++)
			fz_data[i][k] = (uint8_t)(k * 13 + 7 + (size_t)i * 101);
	snprintf(fz_dir, sizeof(fz_dir), "%s/fuzz_store_pack.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fz_dir))
		fz_fail("mkdtemp", -errno);
	atexit(fz_cleanup);
	if (fz_open(&st, 1, 0) != 0 || osd_store_partition_create(st, FZ_P, 0))
		fz_fail("make the store", -EIO);
	for (int i = 0; i < FZ_N; i++)
		if (osd_store_object_create(st, FZ_P, FZ_O + (uint64_t)i, OSD_OBJ_USER, 0) ||
		    fz_write(st, i))
			fz_fail("make the objects", -EIO);
	osd_store_close(st); /* flushes: the PACK records are in the log */
	for (size_t i = 0; i < sizeof(fz_tmpl) / sizeof(fz_tmpl[0]); i++)
		fz_keep(&fz_tmpl[i]);
	return 0;
}

/* Reads at a few offsets and a scrub: -EIO, or exactly the object's bytes. */
static void fz_check(struct osd_store *st, int i)
{
	static const uint64_t offs[] = { 0, 1, 999, 4095 };
	uint8_t buf[OSD__PACK_SLOT + 64];
	uint64_t bytes, bad;

	for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
		struct iovec iov = { buf, sizeof(buf) };
		size_t got = 0;
		int rc = osd_store_read(st, FZ_P, FZ_O + (uint64_t)i, offs[k], &iov, 1, &got);
		size_t want = offs[k] < fz_len[i] ? fz_len[i] - offs[k] : 0;

		if (rc != 0 && rc != -EIO)
			fz_fail("read", rc);
		if (rc == 0 && got != want)
			fz_fail("short or long read", -EOVERFLOW);
		if (got > want || memcmp(buf, fz_data[i] + offs[k], got) != 0)
			fz_fail("wrong bytes returned as good", -EBADMSG);
	}
	int rc = osd_store_verify(st, FZ_P, FZ_O + (uint64_t)i, &bytes, &bad);
	if (rc != 0 && rc != -EIO)
		fz_fail("verify", rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_store *st = NULL;
	int rc;

	char q[300];

	/* what an earlier input's salvage kept */
	snprintf(q, sizeof(q), "%s/quarantine", fz_dir);
	fz_rm_tree(q);
	fz_write_file(fz_tmpl[0].name, fz_tmpl[0].bytes, fz_tmpl[0].len);
	fz_write_file(fz_tmpl[1].name, fz_tmpl[1].bytes, fz_tmpl[1].len);
	fz_write_file("data/pack", data, size);
	for (int salvage = 0; salvage <= 1; salvage++) {
		rc = fz_open(&st, 0, salvage);
		if (rc != 0)
			fz_fail("open", rc);
		for (int i = 0; i < FZ_N; i++)
			fz_check(st, i);
		osd_store_close(st);
	}
	/* written whole, every object reads back, whatever the pack held */
	if (fz_open(&st, 0, 0) != 0)
		fz_fail("reopen", -EIO);
	for (int i = 0; i < FZ_N; i++) {
		uint8_t buf[OSD__PACK_SLOT];
		struct iovec iov = { buf, sizeof(buf) };
		size_t got = 0;

		rc = fz_write(st, i);
		if (rc != 0)
			fz_fail("rewrite", rc);
		rc = osd_store_read(st, FZ_P, FZ_O + (uint64_t)i, 0, &iov, 1, &got);
		if (rc != 0 || got != fz_len[i] || memcmp(buf, fz_data[i], got) != 0)
			fz_fail("rewritten object reads back wrong", rc ? rc : -EBADMSG);
	}
	osd_store_close(st);
	return 0;
}
