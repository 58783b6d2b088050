/*
 * custom_backend.c - plugging your own object store under osdfs.
 *
 * osdfs keeps its filesystem in numbered objects with attributes and reaches
 * them only through a table of operations, struct osdfs_backend_ops
 * (<osdfs/sys/backend.h>). Any store that can implement that table can hold
 * an osdfs filesystem: an OSD (osdfs_backend_osd_new), memory
 * (osdfs_backend_mem_new), or something of your own.
 *
 * The backend here is a "tracing" backend: it forwards every operation to an
 * inner mem backend and counts the calls per operation, which is also the
 * pattern for adding caching, fault injection or statistics to another
 * backend. A backend written from scratch fills in the same table with its
 * own functions; submit and poll may stay NULL, in which case osdfs runs
 * every operation synchronously.
 *
 * The program then runs osdfs_mkfs + osdfs_mount on it, creates a directory
 * and a file, writes and reads the file, lists the directory with
 * osdfs_readdir and prints the per-operation counts.
 *
 * Usage: custom_backend      (everything lives in memory)
 * Exit status: 0 on success, 1 on any failure.
 */
/* POSIX and BSD names (poll, DT_*) also under a strict -std=c11. */
#define _DEFAULT_SOURCE

#include <osdfs/osdfs.h>
#include <osdfs/backends.h>
#include <osdfs/sys/backend.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The operations we count, in the order they are printed. */
enum trace_op { T_CREATE, T_REMOVE, T_READ, T_WRITE, T_TRUNCATE, T_PUNCH, T_GET_ATTRS,
		T_SET_ATTRS, T_SIZE, T_LIST, T_FLUSH, T_FORMAT, T_STATFS, T_NOPS };

static const char *const trace_names[T_NOPS] = {
	"create", "remove", "read", "write", "truncate", "punch", "get_attrs",
	"set_attrs", "size", "list", "flush", "format", "statfs"
};

/* The backend's private state: the "impl" pointer osdfs hands back to us. */
struct trace {
	osdfs_backend *inner;                    /* owned: freed in destroy */
	const struct osdfs_backend_ops *ops;     /* the inner backend's table */
	void *impl;                              /* the inner backend's state */
	unsigned long calls[T_NOPS];
};

/* Count a call; the counter is shared with main() through the pointer. */
#define COUNT(t, op) ((t)->calls[op]++)

static int trace_create(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int n)
{
	struct trace *t = impl;

	COUNT(t, T_CREATE);
	return t->ops->create(t->impl, oid, attrs, n);
}

/* A wrapper passes the creator's class hint on (a layout underneath
 * stripes OSDFS_OBJ_DATA objects and mirrors the rest); an inner backend
 * without create_class is told nothing. */
static int trace_create_class(void *impl, uint64_t oid, enum osdfs_obj_class cls,
			      const struct osdfs_attr *attrs, int n)
{
	struct trace *t = impl;

	COUNT(t, T_CREATE);
	if (t->ops->create_class)
		return t->ops->create_class(t->impl, oid, cls, attrs, n);
	return t->ops->create(t->impl, oid, attrs, n);
}

static int trace_remove(void *impl, uint64_t oid)
{
	struct trace *t = impl;

	COUNT(t, T_REMOVE);
	return t->ops->remove(t->impl, oid);
}

static ssize_t trace_read(void *impl, uint64_t oid, uint64_t off, const struct iovec *iov,
			  int iovcnt)
{
	struct trace *t = impl;

	COUNT(t, T_READ);
	return t->ops->read(t->impl, oid, off, iov, iovcnt);
}

static ssize_t trace_write(void *impl, uint64_t oid, uint64_t off, const struct iovec *iov,
			   int iovcnt, const struct osdfs_attr *attrs, int nattrs)
{
	struct trace *t = impl;

	COUNT(t, T_WRITE);
	return t->ops->write(t->impl, oid, off, iov, iovcnt, attrs, nattrs);
}

static int trace_truncate(void *impl, uint64_t oid, uint64_t size)
{
	struct trace *t = impl;

	COUNT(t, T_TRUNCATE);
	return t->ops->truncate(t->impl, oid, size);
}

static int trace_punch(void *impl, uint64_t oid, uint64_t off, uint64_t len)
{
	struct trace *t = impl;

	COUNT(t, T_PUNCH);
	return t->ops->punch(t->impl, oid, off, len);
}

static int trace_get_attrs(void *impl, uint64_t oid, struct osdfs_attr *attrs, int n)
{
	struct trace *t = impl;

	COUNT(t, T_GET_ATTRS);
	return t->ops->get_attrs(t->impl, oid, attrs, n);
}

static int trace_set_attrs(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int n)
{
	struct trace *t = impl;

	COUNT(t, T_SET_ATTRS);
	return t->ops->set_attrs(t->impl, oid, attrs, n);
}

static int trace_size(void *impl, uint64_t oid, uint64_t *size)
{
	struct trace *t = impl;

	COUNT(t, T_SIZE);
	return t->ops->size(t->impl, oid, size);
}

static int trace_list(void *impl, uint64_t start, uint64_t *ids, size_t max, size_t *n,
		      uint64_t *next)
{
	struct trace *t = impl;

	COUNT(t, T_LIST);
	return t->ops->list(t->impl, start, ids, max, n, next);
}

static int trace_flush(void *impl, uint64_t oid)
{
	struct trace *t = impl;

	COUNT(t, T_FLUSH);
	return t->ops->flush(t->impl, oid);
}

static int trace_format(void *impl, uint64_t capacity)
{
	struct trace *t = impl;

	COUNT(t, T_FORMAT);
	return t->ops->format(t->impl, capacity);
}

static int trace_statfs(void *impl, struct osdfs_backend_stat *st)
{
	struct trace *t = impl;

	COUNT(t, T_STATFS);
	return t->ops->statfs(t->impl, st);
}

/* Called once, by osdfs_backend_free() or by the unmount that owns us. */
static void trace_destroy(void *impl)
{
	struct trace *t = impl;

	osdfs_backend_free(t->inner);
	free(t);
}

/* submit and poll are NULL: osdfs then calls the synchronous operations. */
static const struct osdfs_backend_ops trace_ops = {
	.version = OSDFS_BACKEND_VERSION,
	.create = trace_create,
	.remove = trace_remove,
	.read = trace_read,
	.write = trace_write,
	.truncate = trace_truncate,
	.punch = trace_punch,
	.get_attrs = trace_get_attrs,
	.set_attrs = trace_set_attrs,
	.size = trace_size,
	.list = trace_list,
	.flush = trace_flush,
	.format = trace_format,
	.statfs = trace_statfs,
	.destroy = trace_destroy,
	.create_class = trace_create_class,
};

/*
 * Build the tracing backend around a fresh mem backend. *state receives the
 * tracer, whose counters stay valid until the backend is destroyed.
 */
static int trace_backend_new(osdfs_backend **out, struct trace **state)
{
	struct trace *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	if ((rc = osdfs_backend_mem_new(&t->inner, 0)) < 0) {
		free(t);
		return rc;
	}
	t->ops = osdfs_backend_ops_of(t->inner);
	t->impl = osdfs_backend_impl(t->inner);
	/* osdfs_backend_new copies the table; on failure we still own t. */
	if ((rc = osdfs_backend_new(out, &trace_ops, t, "trace")) < 0) {
		trace_destroy(t);
		return rc;
	}
	*state = t;
	return 0;
}

/* osdfs_readdir callback: print each entry and count the regular files. */
static int print_entry(const struct osdfs_dirent *ent, void *payload)
{
	unsigned *files = payload;

	printf("  %-12s %s\n", ent->name, ent->type == DT_DIR ? "dir" : "file");
	if (ent->type == DT_REG)
		(*files)++;
	return 0;
}

/* The filesystem work, on a mounted osdfs. */
static int use_fs(osdfs *fs)
{
	static const char text[] = "stored through a custom backend\n";
	char back[sizeof(text)];
	struct osdfs_stat st;
	osdfs_file *fh;
	unsigned files = 0;
	ssize_t n;
	int rc;

	if ((rc = osdfs_mkdir(fs, OSDFS_ROOT_INO, "docs", 0755, NULL, &st)) < 0) {
		fprintf(stderr, "mkdir docs: %s\n", osdfs_error(fs));
		return rc;
	}
	printf("created directory /docs (inode %llu)\n", (unsigned long long)st.ino);
	uint64_t dir = st.ino;

	if ((rc = osdfs_create(fs, dir, "readme.txt", 0644, O_RDWR | O_EXCL, NULL, &st,
			       &fh)) < 0) {
		fprintf(stderr, "create readme.txt: %s\n", osdfs_error(fs));
		return rc;
	}
	n = osdfs_write(fs, fh, text, sizeof(text) - 1, 0);
	if (n == (ssize_t)sizeof(text) - 1)
		n = osdfs_read(fs, fh, back, sizeof(back), 0);
	osdfs_release(fs, fh);
	if (n != (ssize_t)sizeof(text) - 1 || memcmp(back, text, (size_t)n) != 0) {
		fprintf(stderr, "write/read of readme.txt failed: %s\n",
			n < 0 ? osdfs_error(fs) : "wrong data");
		return n < 0 ? (int)n : -EIO;
	}
	printf("wrote and read back /docs/readme.txt (%zd bytes)\n", n);

	printf("listing /docs:\n");
	if ((rc = osdfs_readdir(fs, dir, 0, print_entry, &files)) < 0) {
		fprintf(stderr, "readdir: %s\n", osdfs_error(fs));
		return rc;
	}
	return files == 1 ? 0 : -EIO;
}

int main(void)
{
	struct osdfs_mount_options mopts = OSDFS_MOUNT_OPTIONS_INIT;
	char why[256] = "";
	osdfs_backend *be;
	struct trace *t;
	osdfs *fs;
	int rc;

	if ((rc = trace_backend_new(&be, &t)) < 0) {
		fprintf(stderr, "backend: %s\n", strerror(-rc));
		return 1;
	}
	/* mkfs borrows the backend; NULL options = defaults (4 KiB blocks). */
	if ((rc = osdfs_mkfs(be, NULL)) < 0) {
		fprintf(stderr, "mkfs: %s\n", strerror(-rc));
		osdfs_backend_free(be);
		return 1;
	}
	printf("mkfs done\n");
	/* We keep the backend after unmount so the counters can be printed. */
	mopts.flags = OSDFS_MOUNT_KEEP_BACKEND;
	mopts.error = why;
	mopts.error_size = sizeof(why);
	if ((rc = osdfs_mount(&fs, be, &mopts)) < 0) {
		fprintf(stderr, "mount: %s (%s)\n", strerror(-rc), why);
		osdfs_backend_free(be);
		return 1;
	}
	rc = use_fs(fs);
	int urc = osdfs_unmount(fs);
	if (urc < 0) {
		fprintf(stderr, "unmount: %s\n", strerror(-urc));
		if (rc == 0)
			rc = urc;
	}
	printf("backend calls:");
	for (int i = 0; i < T_NOPS; i++)
		if (t->calls[i])
			printf(" %s=%lu", trace_names[i], t->calls[i]);
	printf("\n");
	/* Every step above must have gone through our table. */
	if (rc == 0 && (!t->calls[T_FORMAT] || !t->calls[T_CREATE] || !t->calls[T_WRITE]))
		rc = -EIO;
	osdfs_backend_free(be);
	printf("%s\n", rc == 0 ? "custom_backend: OK" : "custom_backend: FAILED");
	return rc == 0 ? 0 : 1;
}
