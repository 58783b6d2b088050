/*
 * mount_fsx: an fsx-style data-integrity run. Random writes, reads,
 * truncates, hole punches, fsyncs and reopens on one file, every read
 * checked against an in-memory model of what the file must hold. At the
 * end the whole file is compared and the model is saved, so the test can
 * check after a remount that the data survived.
 *
 *   mount_fsx FILE MODEL_OUT SEED OPS
 *
 * Exit status: 0 all matched, 1 a mismatch or an unexpected error (the
 * last operations are printed), 2 bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SIZE (8u << 20)      /* the file never grows beyond this */
#define BIG_IO ((3u << 20) / 2)  /* 1.5 MiB: more than one FUSE request */
#define HISTORY 32

enum op { OP_WRITE, OP_READ, OP_TRUNCATE, OP_PUNCH, OP_FSYNC, OP_REOPEN };
static const char *const op_names[] = { "write", "read", "truncate", "punch", "fsync", "reopen" };

struct record {
	unsigned long n;
	enum op op;
	uint64_t off, len;
};

struct fsx {
	const char *path;
	int fd;
	uint64_t rng;
	unsigned char *model;  /* MAX_SIZE bytes; beyond size always zero */
	unsigned char *buf;
	uint64_t size;
	int punch_ok;
	struct record hist[HISTORY];
	unsigned long nops;
	unsigned long counts[6];
};

static uint64_t next_rand(struct fsx *f)
{
	/* xorshift64*: reproducible from the seed */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 0x2545F4914F6CDD1DULL;
}

static uint64_t below(struct fsx *f, uint64_t n)
{
	return n ? next_rand(f) % n : 0;
}

/* Mostly small requests, sometimes page-crossing odd ones, rarely huge. */
static uint64_t random_len(struct fsx *f)
{
	uint64_t r = below(f, 100);

	if (r < 60)
		return 1 + below(f, 8192);
	if (r < 95)
		return 1 + below(f, 128 * 1024);
	return 1 + below(f, BIG_IO);
}

static void remember(struct fsx *f, enum op op, uint64_t off, uint64_t len)
{
	struct record *r = &f->hist[f->nops % HISTORY];

	r->n = f->nops;
	r->op = op;
	r->off = off;
	r->len = len;
	f->counts[op]++;
}

static int fail(struct fsx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct fsx *f, const char *fmt, ...)
{
	unsigned long first = f->nops >= HISTORY ? f->nops - HISTORY + 1 : 0;
	int err = errno;
	va_list ap;

	fprintf(stderr, "mount_fsx: op %lu: ", f->nops);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (last errno: %s)\nlast operations:\n", strerror(err));
	for (unsigned long i = first; i <= f->nops; i++) {
		const struct record *r = &f->hist[i % HISTORY];

		fprintf(stderr, "  %lu %s off=%" PRIu64 " len=%" PRIu64 "\n", r->n,
			op_names[r->op], r->off, r->len);
	}
	return -1;
}

static int do_write(struct fsx *f)
{
	uint64_t len = random_len(f);
	uint64_t off = below(f, MAX_SIZE - len);

	/* favour writes near the end so the file keeps growing and shrinking */
	if (below(f, 3) == 0 && f->size + len <= MAX_SIZE)
		off = f->size > 4096 ? f->size - below(f, 4096) : f->size;
	remember(f, OP_WRITE, off, len);
	for (uint64_t i = 0; i < len; i++)
		f->buf[i] = (unsigned char)(next_rand(f) >> 56);
	if (pwrite(f->fd, f->buf, len, (off_t)off) != (ssize_t)len)
		return fail(f, "write of %" PRIu64 " bytes at %" PRIu64 " failed", len, off);
	memcpy(f->model + off, f->buf, len);
	if (off + len > f->size)
		f->size = off + len;
	return 0;
}

static int check_range(struct fsx *f, uint64_t off, uint64_t len)
{
	uint64_t expect = off >= f->size ? 0 : (off + len > f->size ? f->size - off : len);
	ssize_t n = pread(f->fd, f->buf, len, (off_t)off);

	if (n < 0 || (uint64_t)n != expect)
		return fail(f, "read of %" PRIu64 " at %" PRIu64 " returned %zd bytes, expected %"
			    PRIu64, len, off, n, expect);
	for (uint64_t i = 0; i < expect; i++)
		if (f->buf[i] != f->model[off + i])
			return fail(f, "byte at %" PRIu64 " differs (file 0x%02x, model 0x%02x)",
				    off + i, f->buf[i], f->model[off + i]);
	return 0;
}

static int do_read(struct fsx *f)
{
	uint64_t len = random_len(f);
	uint64_t off = below(f, f->size + 4096);

	remember(f, OP_READ, off, len);
	return check_range(f, off, len);
}

static int do_truncate(struct fsx *f)
{
	uint64_t size = below(f, MAX_SIZE + 1);

	if (below(f, 2))
		size = below(f, f->size + 1); /* shrinking is the interesting case */
	remember(f, OP_TRUNCATE, size, 0);
	if (ftruncate(f->fd, (off_t)size) < 0)
		return fail(f, "truncate to %" PRIu64 " failed", size);
	if (size < f->size)
		memset(f->model + size, 0, f->size - size);
	f->size = size;
	return 0;
}

static int do_punch(struct fsx *f)
{
	uint64_t len = random_len(f);
	uint64_t off = below(f, f->size + 1);

	remember(f, OP_PUNCH, off, len);
	if (!f->punch_ok)
		return 0;
	if (fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
		      (off_t)len) < 0) {
		if (errno == EOPNOTSUPP) {
			f->punch_ok = 0;
			return 0;
		}
		return fail(f, "punch of %" PRIu64 " bytes at %" PRIu64 " failed", len, off);
	}
	if (off < f->size)
		memset(f->model + off, 0, (off + len > f->size ? f->size : off + len) - off);
	return 0;
}

static int do_reopen(struct fsx *f, enum op op)
{
	remember(f, op, 0, 0);
	if (op == OP_FSYNC)
		return fsync(f->fd) < 0 ? fail(f, "fsync failed") : 0;
	close(f->fd);
	f->fd = open(f->path, O_RDWR);
	if (f->fd < 0)
		return fail(f, "reopen failed");
	return 0;
}

static int one_op(struct fsx *f)
{
	uint64_t r = below(f, 100);

	if (r < 40)
		return do_write(f);
	if (r < 75)
		return do_read(f);
	if (r < 87)
		return do_truncate(f);
	if (r < 95)
		return do_punch(f);
	return do_reopen(f, r < 98 ? OP_FSYNC : OP_REOPEN);
}

/* The file as a whole, and its size as stat sees it. */
static int final_check(struct fsx *f)
{
	struct stat st;

	if (fstat(f->fd, &st) < 0 || (uint64_t)st.st_size != f->size)
		return fail(f, "final size %" PRIu64 ", expected %" PRIu64,
			    (uint64_t)st.st_size, f->size);
	for (uint64_t off = 0; off < f->size; off += BIG_IO)
		if (check_range(f, off, BIG_IO) < 0)
			return -1;
	return 0;
}

static int save_model(const struct fsx *f, const char *out)
{
	FILE *m = fopen(out, "wb");

	if (!m || fwrite(f->model, 1, f->size, m) != f->size || fclose(m) != 0) {
		fprintf(stderr, "mount_fsx: cannot write %s: %s\n", out, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fsx f = { .punch_ok = 1 };
	unsigned long ops;
	int rc = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: mount_fsx FILE MODEL_OUT SEED OPS\n");
		return 2;
	}
	f.path = argv[1];
	f.rng = strtoull(argv[3], NULL, 0) | 1;
	ops = strtoul(argv[4], NULL, 0);
	f.model = calloc(1, MAX_SIZE);
	f.buf = malloc(MAX_SIZE);
	f.fd = open(f.path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (!f.model || !f.buf || f.fd < 0) {
		fprintf(stderr, "mount_fsx: %s: %s\n", f.path, strerror(errno));
		return 1;
	}
	for (f.nops = 0; f.nops < ops && rc == 0; f.nops++)
		rc = one_op(&f);
	if (rc == 0)
		rc = final_check(&f);
	if (close(f.fd) < 0 && rc == 0)
		rc = fail(&f, "close failed");
	if (rc == 0)
		rc = save_model(&f, argv[2]);
	if (rc == 0)
		printf("mount_fsx: %lu ops (%lu writes, %lu reads, %lu truncates, %lu punches%s, "
		       "%lu fsyncs, %lu reopens), final size %" PRIu64 ": all data matched\n",
		       ops, f.counts[OP_WRITE], f.counts[OP_READ], f.counts[OP_TRUNCATE],
		       f.counts[OP_PUNCH], f.punch_ok ? "" : " (unsupported)",
		       f.counts[OP_FSYNC], f.counts[OP_REOPEN], f.size);
	free(f.model);
	free(f.buf);
	return rc == 0 ? 0 : 1;
}
