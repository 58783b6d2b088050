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

#include "fuzz_store_digest.h"

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
