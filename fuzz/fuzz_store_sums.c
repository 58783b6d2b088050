/*
 * The target store's data checksums (osdtarget/store/sums.c) against an
 * arbitrary checksum sidecar or data file.
 *
 * A store with one object of known data (three whole blocks and a partial
 * one) is made once per process in a temporary directory (removed at exit);
 * its sidecar and data file are kept as templates. For every input both
 * files are rewritten, one of them with the input:
 *   byte 0 bit 0   0: the input is the sidecar, 1: the input is the data file
 *   rest           the file's bytes
 * Opening (plain, then with salvage) must give 0, and then every read and a
 * scrub must either fail with -EIO or return exactly the bytes written
 * (with the template sidecar), never crash, leak or return other bytes as
 * success: with the input as data file, successful bytes must match the
 * input where it covers the object and zeros past it.
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
#define FZ_LEN (3 * 4096 + 1000)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_dir[256];
static uint8_t fz_data[FZ_LEN];
static uint8_t *fz_tmpl_sums;
static size_t fz_tmpl_sums_len;

static void fz_cleanup(void)
{
	free(fz_tmpl_sums);
	if (fz_dir[0])
		fz_rm_tree(fz_dir);
}

static void fz_fail(const char *what, int rc)
{
	fprintf(stderr, "fuzz_store_sums: %s: %d (%s)\n", what, rc, strerror(rc < 0 ? -rc : rc));
	abort();
}

/* The object's file: generation 1, the first object made. */
static void fz_path(char *buf, size_t len, int sums)
{
	snprintf(buf, len, "%s/data/01/0000000000000001%s", fz_dir, sums ? ".sum" : "");
}

static void fz_write_file(int sums, const uint8_t *data, size_t len)
{
	char path[300];
	int rc;

	fz_path(path, sizeof(path), sums);
	if ((rc = fz_put_file(path, data, len)) != 0)
		fz_fail(path, rc);
}

static int fz_open(struct osd_store **st, int salvage)
{
	struct osd_store_options o = { 0 };
	char err[256];

	o.capacity = 1ULL << 30;
	o.salvage = salvage;
	return osd_store_open(st, fz_dir, &o, err, sizeof(err));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct osd_store_options o = { 0 };
	struct osd_store *st = NULL;
	struct iovec iov = { fz_data, FZ_LEN };
	const char *tmp = getenv("TMPDIR");
	char err[256], path[300];

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < FZ_LEN; i++)
		fz_data[i] = (uint8_t)(i * 13 + 7);
	snprintf(fz_dir, sizeof(fz_dir), "%s/fuzz_store_sums.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fz_dir))
		fz_fail("mkdtemp", -errno);
	atexit(fz_cleanup);
	o.create = 1;
	o.capacity = 1ULL << 30;
	if (osd_store_open(&st, fz_dir, &o, err, sizeof(err)) != 0)
		fz_fail(err, -EIO);
	if (osd_store_partition_create(st, FZ_P, 0) || osd_store_object_create(st, FZ_P, FZ_O,
									       OSD_OBJ_USER, 0) ||
	    osd_store_write(st, FZ_P, FZ_O, 0, &iov, 1, 0))
		fz_fail("make the object", -EIO);
	osd_store_close(st);
	fz_path(path, sizeof(path), 1);
	int rc = fz_get_file(path, &fz_tmpl_sums, &fz_tmpl_sums_len);
	if (rc)
		fz_fail(path, rc);
	return 0;
}

/* What a successful read at @p off must hold. */
static void fz_expect(const uint8_t *in, size_t inlen, int data_input, uint64_t off,
		      uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t at = off + i;

		if (!data_input)
			out[i] = at < FZ_LEN ? fz_data[at] : 0;
		else
			out[i] = at < inlen ? in[at] : 0;
	}
}

static void fz_check(struct osd_store *st, const uint8_t *in, size_t inlen, int data_input)
{
	static uint8_t buf[FZ_LEN + 8192], want[FZ_LEN + 8192];
	static const uint64_t offs[] = { 0, 1, 4095, 4096, 5000, 12288, 13000 };
	uint64_t bytes, bad;

	for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
		struct iovec iov = { buf, sizeof(buf) - offs[k] };
		size_t got = 0;
		int rc = osd_store_read(st, FZ_P, FZ_O, offs[k], &iov, 1, &got);

		if (rc != 0 && rc != -EIO)
			fz_fail("read", rc);
		if (got > iov.iov_len)
			fz_fail("read past the buffer", -EOVERFLOW);
		/* with -EIO, got counts the good bytes before the damage */
		fz_expect(in, inlen, data_input, offs[k], want, got);
		if (memcmp(buf, want, got) != 0)
			fz_fail("wrong bytes returned as good", -EBADMSG);
	}
	int rc = osd_store_verify(st, FZ_P, FZ_O, &bytes, &bad);
	if (rc != 0 && rc != -EIO)
		fz_fail("verify", rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_store *st = NULL;
	int data_input, rc;

	if (size < 1)
		return 0;
	data_input = data[0] & 1;
	data++;
	size--;
	fz_write_file(1, data_input ? fz_tmpl_sums : data, data_input ? fz_tmpl_sums_len : size);
	fz_write_file(0, data_input ? data : fz_data, data_input ? size : FZ_LEN);
	for (int salvage = 0; salvage <= 1; salvage++) {
		rc = fz_open(&st, salvage);
		if (rc != 0)
			fz_fail("open", rc);
		/* Salvage may recompute a damaged sidecar from the data: then the
		 * data as it is counts, which for a sidecar input is the original. */
		fz_check(st, data, size, data_input);
		osd_store_close(st);
	}
	return 0;
}
