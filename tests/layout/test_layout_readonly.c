/*
 * A read-only layout writes nothing (docs/layout.md, "Read-only"): RAID 5 over
 * four mem devices holding files; opened read-only and mounted
 * OSDFS_MOUNT_RDONLY with device 1 absent, then with device 2 absent, it
 * reads every file exactly, sends no modifying call to any device (counted
 * by a wrapper) and leaves every store byte for byte as it was (a dump of
 * the mem stores' objects, attributes and data); changes give -EROFS. Two
 * devices absent at once are still too many, and afterwards a read-write
 * open with all four devices finds every slot up: nothing was recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <osdfs/backends.h>
#include <osdfs/layout.h>
#include <osdfs/osdfs.h>

#include "backends/mem.h"
#include "core/format.h"

#define NDEV 4
#define NFILES 4

static const char *const names[NFILES] = { "empty", "small", "big", "e" };
static const size_t sizes[NFILES] = { 0, 1000, 300001, 70000 };

/* ---- a device that counts the calls that would change it ---- */

struct counted {
	osdfs_backend *inner;
	const struct osdfs_backend_ops *ops;
	void *impl;
	atomic_uint *changes; /* outlives the device: closing it may change it too */
};

#define C(x) ((struct counted *)(x))
#define CHANGE(x) atomic_fetch_add(C(x)->changes, 1u)

static int c_create(void *x, uint64_t oid, const struct osdfs_attr *a, int n)
{
	CHANGE(x);
	return C(x)->ops->create(C(x)->impl, oid, a, n);
}

static int c_remove(void *x, uint64_t oid)
{
	CHANGE(x);
	return C(x)->ops->remove(C(x)->impl, oid);
}

static ssize_t c_read(void *x, uint64_t oid, uint64_t off, const struct iovec *iov, int cnt)
{
	return C(x)->ops->read(C(x)->impl, oid, off, iov, cnt);
}

static ssize_t c_write(void *x, uint64_t oid, uint64_t off, const struct iovec *iov, int cnt,
		       const struct osdfs_attr *a, int n)
{
	CHANGE(x);
	return C(x)->ops->write(C(x)->impl, oid, off, iov, cnt, a, n);
}

static int c_truncate(void *x, uint64_t oid, uint64_t size)
{
	CHANGE(x);
	return C(x)->ops->truncate(C(x)->impl, oid, size);
}

static int c_punch(void *x, uint64_t oid, uint64_t off, uint64_t len)
{
	CHANGE(x);
	return C(x)->ops->punch(C(x)->impl, oid, off, len);
}

static int c_get_attrs(void *x, uint64_t oid, struct osdfs_attr *a, int n)
{
	return C(x)->ops->get_attrs(C(x)->impl, oid, a, n);
}

static int c_set_attrs(void *x, uint64_t oid, const struct osdfs_attr *a, int n)
{
	CHANGE(x);
	return C(x)->ops->set_attrs(C(x)->impl, oid, a, n);
}

static int c_size(void *x, uint64_t oid, uint64_t *size)
{
	return C(x)->ops->size(C(x)->impl, oid, size);
}

static int c_list(void *x, uint64_t start, uint64_t *ids, size_t max, size_t *n, uint64_t *next)
{
	return C(x)->ops->list(C(x)->impl, start, ids, max, n, next);
}

static int c_flush(void *x, uint64_t oid)
{
	CHANGE(x); /* on a real device a flush may write (a log) */
	return C(x)->ops->flush(C(x)->impl, oid);
}

static int c_format(void *x, uint64_t cap)
{
	CHANGE(x);
	return C(x)->ops->format(C(x)->impl, cap);
}

static int c_statfs(void *x, struct osdfs_backend_stat *st)
{
	return C(x)->ops->statfs(C(x)->impl, st);
}

static void c_destroy(void *x)
{
	osdfs_backend_free(C(x)->inner);
	free(x);
}

static const struct osdfs_backend_ops counted_ops = {
	.version = OSDFS_BACKEND_VERSION, .create = c_create, .remove = c_remove,
	.read = c_read, .write = c_write, .truncate = c_truncate, .punch = c_punch,
	.get_attrs = c_get_attrs, .set_attrs = c_set_attrs, .size = c_size, .list = c_list,
	.flush = c_flush, .format = c_format, .statfs = c_statfs, .destroy = c_destroy,
};

static osdfs_mem_store *store[NDEV];
static atomic_uint dev_changes[NDEV]; /* of the last open, counted per device */

static osdfs_backend *counted_device(unsigned i)
{
	struct counted *x = calloc(1, sizeof(*x));
	osdfs_backend *be;

	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(osdfs_backend_mem_attach(&x->inner, store[i]), 0);
	x->ops = osdfs_backend_ops_of(x->inner);
	x->impl = osdfs_backend_impl(x->inner);
	x->changes = &dev_changes[i];
	ck_assert_int_eq(osdfs_backend_new(&be, &counted_ops, x, "counted"), 0);
	return be;
}

/* A layout on every device but those in @p absent (a bit per device). */
static int open_layout(osdfs_backend **out, unsigned absent, int readonly)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	osdfs_backend *d[NDEV];
	char err[256] = "";

	for (unsigned i = 0; i < NDEV; i++)
		atomic_store(&dev_changes[i], 0u);
	for (unsigned i = 0; i < NDEV; i++)
		d[i] = absent & (1u << i) ? NULL : counted_device(i);
	cfg.ndevices = NDEV;
	cfg.devices = d;
	cfg.readonly = readonly;
	ck_assert_int_eq(osdfs_data_map_parse(&cfg.map, "raid5,su=16K", err, sizeof(err)), 0);
	return osdfs_backend_layout_new(out, &cfg, err, sizeof(err));
}

static unsigned changes(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NDEV; i++)
		n += atomic_load(&dev_changes[i]);
	return n;
}

/* ---- every byte of a mem store ---- */

struct dump {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct dump *d, const void *src, size_t len)
{
	if (d->n + len > d->cap) {
		d->cap = (d->n + len) * 2;
		d->p = realloc(d->p, d->cap);
		ck_assert_ptr_nonnull(d->p);
	}
	memcpy(d->p + d->n, src, len);
	d->n += len;
}

static void dump_object(struct dump *d, const struct mem_object *o)
{
	put(d, &o->node.key, sizeof(o->node.key));
	put(d, &o->size, sizeof(o->size));
	put(d, &o->nattrs, sizeof(o->nattrs));
	for (size_t a = 0; a < o->nattrs; a++) {
		put(d, &o->attrs[a].page, 4);
		put(d, &o->attrs[a].number, 4);
		put(d, &o->attrs[a].len, 4);
		put(d, o->attrs[a].value, o->attrs[a].len);
	}
	for (size_t s = 0; s < o->chunks.nslots; s++)
		for (const struct osdfs__hnode *h = o->chunks.slots[s]; h; h = h->next) {
			const struct mem_chunk *c = (const struct mem_chunk *)h;

			put(d, &h->key, sizeof(h->key));
			put(d, &c->len, sizeof(c->len));
			put(d, c->data, c->len);
		}
}

/* Objects in table order: the same table, untouched, dumps the same. */
static struct dump dump_store(const osdfs_mem_store *s)
{
	struct dump d = { NULL, 0, 0 };

	put(&d, &s->used, sizeof(s->used));
	put(&d, &s->objects.count, sizeof(s->objects.count));
	for (size_t i = 0; i < s->objects.nslots; i++)
		for (const struct osdfs__hnode *h = s->objects.slots[i]; h; h = h->next)
			dump_object(&d, (const struct mem_object *)h);
	return d;
}

static void snapshot(struct dump out[NDEV])
{
	for (unsigned i = 0; i < NDEV; i++)
		out[i] = dump_store(store[i]);
}

static void check_same(const struct dump a[NDEV])
{
	struct dump b[NDEV];

	snapshot(b);
	for (unsigned i = 0; i < NDEV; i++) {
		ck_assert_uint_eq(b[i].n, a[i].n);
		ck_assert(memcmp(b[i].p, a[i].p, a[i].n) == 0);
		free(b[i].p);
	}
}

/* ---- the filesystem ---- */

static void pattern(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 31 + seed * 7 + i / 4093);
}

static void write_file(osdfs *fs, uint64_t dir, unsigned k)
{
	uint8_t *buf = malloc(sizes[k] + 1);
	osdfs_file *fh;

	ck_assert_ptr_nonnull(buf);
	pattern(buf, sizes[k], k);
	ck_assert_int_eq(osdfs_create(fs, dir, names[k], 0644, O_RDWR, NULL, NULL, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, buf, sizes[k], 0), (ssize_t)sizes[k]);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	free(buf);
}

static void make_fs(void)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	struct osdfs_stat st;
	osdfs_backend *be;
	osdfs *fs;

	ck_assert_int_eq(open_layout(&be, 0, 0), 0);
	ck_assert_int_eq(osdfs_mkfs(be, NULL), 0);
	ck_assert_int_eq(osdfs_mount(&fs, be, &mo), 0); /* owns be */
	ck_assert_int_eq(osdfs_mkdir(fs, OSDFS_ROOT_INO, "d", 0755, NULL, &st), 0);
	for (unsigned k = 0; k < NFILES; k++)
		write_file(fs, k == NFILES - 1 ? st.ino : OSDFS_ROOT_INO, k);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
}

static void read_file(osdfs *fs, uint64_t dir, unsigned k)
{
	uint8_t *want = malloc(sizes[k] + 1), *got = malloc(sizes[k] + 100);
	struct osdfs_stat st;
	osdfs_file *fh;

	ck_assert(want && got);
	pattern(want, sizes[k], k);
	ck_assert_int_eq(osdfs_lookup(fs, dir, names[k], &st), 0);
	ck_assert_uint_eq(st.size, sizes[k]);
	ck_assert_int_eq(osdfs_open(fs, st.ino, O_RDONLY, &fh), 0);
	ck_assert_int_eq(osdfs_read(fs, fh, got, sizes[k] + 100, 0), (ssize_t)sizes[k]);
	ck_assert(memcmp(got, want, sizes[k]) == 0);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	free(want);
	free(got);
}

static void read_all(osdfs *fs)
{
	struct osdfs_stat st;

	ck_assert_int_eq(osdfs_lookup(fs, OSDFS_ROOT_INO, "d", &st), 0);
	for (unsigned k = 0; k < NFILES; k++)
		read_file(fs, k == NFILES - 1 ? st.ino : OSDFS_ROOT_INO, k);
}

static void check_states(osdfs_backend *be, unsigned down)
{
	struct osdfs_layout_device d;

	ck_assert_uint_eq(osdfs_layout_ndevices(be), NDEV);
	for (unsigned s = 0; s < NDEV; s++) {
		ck_assert_int_eq(osdfs_layout_device(be, s, &d), 0);
		ck_assert_int_eq(d.state, down & (1u << s) ? OSDFS_LAYOUT_DEV_DOWN
							   : OSDFS_LAYOUT_DEV_UP);
	}
}

/* Every change the backend offers is refused; the stores see none of them. */
static void check_refused(osdfs_backend *be)
{
	const struct osdfs_backend_ops *ops = osdfs_backend_ops_of(be);
	void *impl = osdfs_backend_impl(be);
	uint8_t byte = 1;
	struct iovec iov = { &byte, 1 };
	struct osdfs_attr a = { 0x20000u, 1, &byte, 1 };
	struct osdfs_data_map m;
	osdfs_backend *fresh;
	osdfs_mem_store *spare;
	uint64_t root = OSDFS__OID_BASE + OSDFS_ROOT_INO;

	ck_assert_int_eq(ops->create(impl, 0x7777777, NULL, 0), -EROFS);
	ck_assert_int_eq(ops->remove(impl, root), -EROFS);
	ck_assert_int_eq(ops->write(impl, root, 0, &iov, 1, NULL, 0), -EROFS);
	ck_assert_int_eq(ops->truncate(impl, root, 0), -EROFS);
	ck_assert_int_eq(ops->punch(impl, root, 0, 1), -EROFS);
	ck_assert_int_eq(ops->set_attrs(impl, root, &a, 1), -EROFS);
	ck_assert_int_eq(ops->format(impl, 0), -EROFS);
	ck_assert_int_eq(ops->flush(impl, 0), 0);
	ck_assert_int_eq(osdfs_mkfs(be, NULL), -EROFS);
	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid1", NULL, 0), 0);
	ck_assert_int_eq(osdfs_layout_set_file_map(be, root, &m, NULL, 0), -EROFS);
	ck_assert_int_eq(osdfs_mem_store_new(&spare, 0), 0);
	ck_assert_int_eq(osdfs_backend_mem_attach(&fresh, spare), 0);
	for (unsigned s = 0; s < NDEV; s++) {
		struct osdfs_layout_device d;

		ck_assert_int_eq(osdfs_layout_device(be, s, &d), 0);
		if (d.state != OSDFS_LAYOUT_DEV_DOWN)
			continue;
		ck_assert_int_eq(osdfs_layout_replace(be, s, fresh, "spare"), -EROFS);
		ck_assert_int_eq(osdfs_layout_rebuild(be, s, NULL, NULL, NULL), -EROFS);
	}
	osdfs_backend_free(fresh);
	osdfs_mem_store_free(spare);
}

/* Device @p gone absent: read-only open and mount, every file read exactly. */
static void readonly_pass(unsigned gone, const struct dump before[NDEV])
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	char err[256] = "";
	osdfs_backend *be;
	osdfs *fs;

	ck_assert_int_eq(open_layout(&be, 1u << gone, 1), 0);
	check_states(be, 1u << gone);
	mo.flags = OSDFS_MOUNT_RDONLY | OSDFS_MOUNT_KEEP_BACKEND;
	mo.error = err;
	mo.error_size = sizeof(err);
	ck_assert_msg(osdfs_mount(&fs, be, &mo) == 0, "read-only mount: %s", err);
	read_all(fs);
	ck_assert_int_eq(osdfs_sync(fs), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	ck_assert_uint_eq(changes(), 0);
	check_same(before);
	check_refused(be);
	check_states(be, 1u << gone);
	ck_assert_uint_eq(changes(), 0);
	osdfs_backend_free(be);
	ck_assert_uint_eq(changes(), 0);
	check_same(before);
}

START_TEST(test_readonly_writes_nothing)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	struct dump before[NDEV];
	osdfs_backend *be;
	osdfs *fs;

	for (unsigned i = 0; i < NDEV; i++)
		ck_assert_int_eq(osdfs_mem_store_new(&store[i], 0), 0);
	make_fs();
	snapshot(before);

	readonly_pass(1, before);
	readonly_pass(2, before);
	/* both at once are more than RAID 5 tolerates, read-only or not */
	ck_assert_int_eq(open_layout(&be, 1u << 1 | 1u << 2, 1), -ENODEV);
	check_same(before);

	/* read-write with every device: nothing was recorded down */
	ck_assert_int_eq(open_layout(&be, 0, 0), 0);
	check_states(be, 0);
	mo.flags = OSDFS_MOUNT_KEEP_BACKEND;
	ck_assert_int_eq(osdfs_mount(&fs, be, &mo), 0);
	read_all(fs);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	check_states(be, 0);
	osdfs_backend_free(be);

	for (unsigned i = 0; i < NDEV; i++) {
		free(before[i].p);
		osdfs_mem_store_free(store[i]);
	}
}
END_TEST

/* Version 1 configurations (no readonly field) still open, read-write. */
START_TEST(test_config_versions)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	osdfs_backend *d[1], *be;

	ck_assert_int_eq(OSDFS_LAYOUT_CONFIG_VERSION, 3);
	ck_assert_int_eq(osdfs_mem_store_new(&store[0], 0), 0);
	cfg.version = 1;
	cfg.readonly = 1; /* not part of version 1: ignored */
	cfg.ndevices = 1;
	cfg.devices = d;
	d[0] = counted_device(0);
	ck_assert_int_eq(osdfs_backend_layout_new(&be, &cfg, NULL, 0), 0);
	ck_assert_int_eq(osdfs_mkfs(be, NULL), 0);
	osdfs_backend_free(be);
	cfg.version = 4;
	d[0] = counted_device(0);
	ck_assert_int_eq(osdfs_backend_layout_new(&be, &cfg, NULL, 0), -EINVAL);
	osdfs_mem_store_free(store[0]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("layout_readonly");
	TCase *tc = tcase_create("readonly");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_readonly_writes_nothing);
	tcase_add_test(tc, test_config_versions);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
