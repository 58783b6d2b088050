/* Layout test fixture: mem stores behind fault-injecting wrappers. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <osd/attributes.h>
#include <osdfs/osdfs.h>

#include "layout_fixture.h"

struct fault {
	osdfs_backend *inner;
	const struct osdfs_backend_ops *ops;
	void *impl;
	atomic_int dead;
	atomic_ulong resets; /* the device's reset count (fx_restart) */
	/* a medium error: reads of [boff, boff + blen) of object boid fail
	 * with -EIO until a write covers the range (fx_bad_range) */
	atomic_ulong *writes, *wbytes; /* the store's counters (struct fx) */
	atomic_ulong *oid_writes, *oid_bytes, *oid_reads, *flushes, *reset_reads;
	const uint64_t *count_oid;
	pthread_mutex_t mu;
	int bad, bad_writes;
	uint64_t boid, boff, blen;
};

#define IMPL(x) ((struct fault *)(x))
#define DEAD(x) (atomic_load(&IMPL(x)->dead))

static int f_create(void *x, uint64_t oid, const struct osdfs_attr *a, int n)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->create(IMPL(x)->impl, oid, a, n);
}

static int f_remove(void *x, uint64_t oid)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->remove(IMPL(x)->impl, oid);
}

static size_t iov_len(const struct iovec *iov, int cnt)
{
	size_t n = 0;

	for (int i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* Whether [off, off + len) of @p oid meets the bad range (mutex held). */
static int hits_bad(const struct fault *x, uint64_t oid, uint64_t off, size_t len)
{
	return x->bad && oid == x->boid && off < x->boff + x->blen && off + len > x->boff;
}

static ssize_t f_read(void *x, uint64_t oid, uint64_t off, const struct iovec *iov, int cnt)
{
	int bad;

	if (DEAD(x))
		return -EIO;
	pthread_mutex_lock(&IMPL(x)->mu);
	bad = hits_bad(IMPL(x), oid, off, iov_len(iov, cnt));
	pthread_mutex_unlock(&IMPL(x)->mu);
	if (oid == *IMPL(x)->count_oid)
		atomic_fetch_add(IMPL(x)->oid_reads, 1);
	return bad ? -EIO : IMPL(x)->ops->read(IMPL(x)->impl, oid, off, iov, cnt);
}

static ssize_t f_write(void *x, uint64_t oid, uint64_t off, const struct iovec *iov, int cnt,
		       const struct osdfs_attr *a, int n)
{
	struct fault *f = IMPL(x);
	size_t len = iov_len(iov, cnt);
	ssize_t w;

	if (DEAD(x))
		return -EIO;
	atomic_fetch_add(f->writes, 1);
	atomic_fetch_add(f->wbytes, len);
	if (oid == *f->count_oid) {
		atomic_fetch_add(f->oid_writes, 1);
		atomic_fetch_add(f->oid_bytes, len);
	}
	pthread_mutex_lock(&f->mu);
	if (hits_bad(f, oid, off, len) && f->bad_writes) {
		pthread_mutex_unlock(&f->mu);
		return -EIO;
	}
	pthread_mutex_unlock(&f->mu);
	w = f->ops->write(f->impl, oid, off, iov, cnt, a, n);
	pthread_mutex_lock(&f->mu);
	if (w >= 0 && f->bad && oid == f->boid && off <= f->boff && off + len >= f->boff + f->blen)
		f->bad = 0; /* rewritten whole: good again */
	pthread_mutex_unlock(&f->mu);
	return w;
}

static int f_truncate(void *x, uint64_t oid, uint64_t size)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->truncate(IMPL(x)->impl, oid, size);
}

static int f_punch(void *x, uint64_t oid, uint64_t off, uint64_t len)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->punch(IMPL(x)->impl, oid, off, len);
}

static int f_get_attrs(void *x, uint64_t oid, struct osdfs_attr *a, int n)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->get_attrs(IMPL(x)->impl, oid, a, n);
}

static int f_get_all_attrs(void *x, uint64_t oid, struct osdfs_attr *a, int max, void *buf,
			   size_t len)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->get_all_attrs(IMPL(x)->impl, oid, a, max, buf, len);
}

static int f_set_attrs(void *x, uint64_t oid, const struct osdfs_attr *a, int n)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->set_attrs(IMPL(x)->impl, oid, a, n);
}

static int f_size(void *x, uint64_t oid, uint64_t *size)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->size(IMPL(x)->impl, oid, size);
}

static int f_list(void *x, uint64_t start, uint64_t *ids, size_t max, size_t *n, uint64_t *next)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->list(IMPL(x)->impl, start, ids, max, n, next);
}

static int f_flush(void *x, uint64_t oid)
{
	if (DEAD(x))
		return -EIO;
	if (!oid)
		atomic_fetch_add(IMPL(x)->flushes, 1);
	return IMPL(x)->ops->flush(IMPL(x)->impl, oid);
}

static int f_format(void *x, uint64_t cap)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->format(IMPL(x)->impl, cap);
}

static int f_statfs(void *x, struct osdfs_backend_stat *st)
{
	return DEAD(x) ? -EIO : IMPL(x)->ops->statfs(IMPL(x)->impl, st);
}

static int f_reset_count(void *x, uint64_t *count)
{
	atomic_fetch_add(IMPL(x)->reset_reads, 1);
	*count = atomic_load(&IMPL(x)->resets);
	return 0;
}

static void f_destroy(void *x)
{
	osdfs_backend_free(IMPL(x)->inner);
	pthread_mutex_destroy(&IMPL(x)->mu);
	free(x);
}

static const struct osdfs_backend_ops fault_ops = {
	.version = OSDFS_BACKEND_VERSION, .create = f_create, .remove = f_remove,
	.read = f_read, .write = f_write, .truncate = f_truncate, .punch = f_punch,
	.get_attrs = f_get_attrs, .set_attrs = f_set_attrs, .size = f_size, .list = f_list,
	.flush = f_flush, .format = f_format, .statfs = f_statfs, .destroy = f_destroy,
	.get_all_attrs = f_get_all_attrs, .reset_count = f_reset_count,
};

unsigned fx_scaled(unsigned n)
{
	const char *s = getenv("LAYOUT_TEST_SCALE");
	double k = s ? atof(s) : 1.0;
	unsigned r = (unsigned)(n * k);

	return r ? r : 1;
}

void fx_init(struct fx *f, unsigned n)
{
	memset(f, 0, sizeof(*f));
	f->n = n;
	for (unsigned i = 0; i < FX_MAX + 2; i++)
		ck_assert_int_eq(osdfs_mem_store_new(&f->store[i], 0), 0);
}

/* The same wrapper as a backend built against version 1 of the ops: no
 * get_all_attrs, no create_class. */
static const struct osdfs_backend_ops fault_ops_v1 = {
	.version = OSDFS_BACKEND_VERSION_1, .create = f_create, .remove = f_remove,
	.read = f_read, .write = f_write, .truncate = f_truncate, .punch = f_punch,
	.get_attrs = f_get_attrs, .set_attrs = f_set_attrs, .size = f_size, .list = f_list,
	.flush = f_flush, .format = f_format, .statfs = f_statfs, .destroy = f_destroy,
};

static osdfs_backend *device_with(struct fx *f, unsigned i, const struct osdfs_backend_ops *ops)
{
	struct fault *x = calloc(1, sizeof(*x));
	osdfs_backend *be;

	ck_assert_ptr_nonnull(x);
	pthread_mutex_init(&x->mu, NULL);
	ck_assert_int_eq(osdfs_backend_mem_attach(&x->inner, f->store[i]), 0);
	x->ops = osdfs_backend_ops_of(x->inner);
	x->impl = osdfs_backend_impl(x->inner);
	x->writes = &f->writes[i];
	x->wbytes = &f->wbytes[i];
	x->oid_writes = &f->oid_writes[i];
	x->oid_bytes = &f->oid_bytes[i];
	x->oid_reads = &f->oid_reads[i];
	x->flushes = &f->flushes[i];
	x->reset_reads = &f->reset_reads[i];
	x->count_oid = &f->count_oid;
	ck_assert_int_eq(osdfs_backend_new(&be, ops, x, "fault"), 0);
	f->fault[i] = x;
	return be;
}

osdfs_backend *fx_device(struct fx *f, unsigned i)
{
	return device_with(f, i, &fault_ops);
}

osdfs_backend *fx_device_v1(struct fx *f, unsigned i)
{
	return device_with(f, i, &fault_ops_v1);
}

int fx_open(struct fx *f, const int *order, unsigned cnt, const char *map)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	osdfs_backend *dev[FX_MAX + 2];
	const char *addr[FX_MAX + 2];
	char names[FX_MAX + 2][16], err[256] = "";
	int rc;

	for (unsigned i = 0; i < cnt; i++) {
		dev[i] = order[i] == -1 ? NULL
			 : fx_device(f, (unsigned)(order[i] < 0 ? -order[i] - 2 : order[i]));
		if (order[i] < -1)
			fx_kill(f, (unsigned)(-order[i] - 2));
		snprintf(names[i], sizeof(names[i]), "mem:%d", order[i]);
		addr[i] = names[i];
	}
	cfg.ndevices = cnt;
	cfg.devices = dev;
	cfg.addresses = addr;
	cfg.no_write_gathering = f->no_gather;
	if (map)
		ck_assert_int_eq(osdfs_data_map_parse(&cfg.map, map, err, sizeof(err)), 0);
	rc = osdfs_backend_layout_new(&f->be, &cfg, err, sizeof(err));
	if (rc < 0)
		f->be = NULL;
	return rc;
}

int fx_open_all(struct fx *f, const char *map)
{
	int order[FX_MAX];

	for (unsigned i = 0; i < f->n; i++)
		order[i] = (int)i;
	return fx_open(f, order, f->n, map);
}

void fx_kill(struct fx *f, unsigned i)
{
	atomic_store(&f->fault[i]->dead, 1);
}

/* Object @p oid of @p src (attributes, bytes, length) made in @p dst. */
static void copy_object(osdfs_backend *src, osdfs_backend *dst, uint64_t oid)
{
	const struct osdfs_backend_ops *so = osdfs_backend_ops_of(src);
	const struct osdfs_backend_ops *dop = osdfs_backend_ops_of(dst);
	void *si = osdfs_backend_impl(src), *di = osdfs_backend_impl(dst);
	size_t blen = 1u << 20;
	uint8_t *abuf = malloc(blen), *dbuf = malloc(blen);
	struct osdfs_attr a[64];
	uint64_t size;
	int n, k = 0;

	ck_assert(abuf && dbuf);
	n = so->get_all_attrs(si, oid, a, 64, abuf, blen);
	ck_assert_int_ge(n, 0);
	for (int i = 0; i < n; i++)
		if (a[i].page != OSD_APAGE_INFORMATION)
			a[k++] = a[i];
	ck_assert_int_eq(dop->create(di, oid, a, k), 0);
	ck_assert_int_eq(so->size(si, oid, &size), 0);
	for (uint64_t off = 0; off < size; off += blen) {
		struct iovec iov = { dbuf, size - off < blen ? (size_t)(size - off) : blen };

		ck_assert_int_eq(so->read(si, oid, off, &iov, 1), (ssize_t)iov.iov_len);
		ck_assert_int_eq(dop->write(di, oid, off, &iov, 1, NULL, 0), (ssize_t)iov.iov_len);
	}
	ck_assert_int_eq(dop->truncate(di, oid, size), 0);
	free(abuf);
	free(dbuf);
}

void fx_snapshot(struct fx *f, unsigned i)
{
	osdfs_backend *src, *dst;
	uint64_t ids[64], start = 0, next;
	size_t n;

	osdfs_mem_store_free(f->snap[i]);
	ck_assert_int_eq(osdfs_mem_store_new(&f->snap[i], 0), 0);
	ck_assert_int_eq(osdfs_backend_mem_attach(&src, f->store[i]), 0);
	ck_assert_int_eq(osdfs_backend_mem_attach(&dst, f->snap[i]), 0);
	do {
		ck_assert_int_eq(osdfs_backend_ops_of(src)->list(osdfs_backend_impl(src), start, ids,
								 64, &n, &next), 0);
		for (size_t k = 0; k < n; k++)
			copy_object(src, dst, ids[k]);
		start = next;
	} while (next);
	osdfs_backend_free(src);
	osdfs_backend_free(dst);
}

void fx_crash(struct fx *f, unsigned i)
{
	ck_assert_ptr_nonnull(f->snap[i]);
	fx_kill(f, i);
	osdfs_mem_store_free(f->store[i]); /* the killed device keeps its reference */
	f->store[i] = f->snap[i];
	f->snap[i] = NULL;
}

void fx_restart(struct fx *f, unsigned i)
{
	struct fault *x = f->fault[i];
	osdfs_backend *old = x->inner;

	ck_assert_ptr_nonnull(f->snap[i]);
	ck_assert_int_eq(osdfs_backend_mem_attach(&x->inner, f->snap[i]), 0);
	x->ops = osdfs_backend_ops_of(x->inner);
	x->impl = osdfs_backend_impl(x->inner);
	osdfs_backend_free(old);
	osdfs_mem_store_free(f->store[i]);
	f->store[i] = f->snap[i];
	f->snap[i] = NULL;
	atomic_fetch_add(&x->resets, 1);
}

void fx_bad_range(struct fx *f, unsigned i, uint64_t oid, uint64_t off, uint64_t len,
		  int fail_writes)
{
	struct fault *x = f->fault[i];
	uint8_t *b = calloc(1, len);
	struct iovec iov = { b, len };

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(x->ops->read(x->impl, oid, off, &iov, 1), (ssize_t)len);
	for (uint64_t k = 0; k < len; k++)
		b[k] ^= 0x5A; /* what a read that ignored the error would return */
	ck_assert_int_eq(x->ops->write(x->impl, oid, off, &iov, 1, NULL, 0), (ssize_t)len);
	free(b);
	pthread_mutex_lock(&x->mu);
	x->bad = 1;
	x->bad_writes = fail_writes;
	x->boid = oid;
	x->boff = off;
	x->blen = len;
	pthread_mutex_unlock(&x->mu);
}

int fx_bad_left(struct fx *f, unsigned i)
{
	int bad;

	pthread_mutex_lock(&f->fault[i]->mu);
	bad = f->fault[i]->bad;
	pthread_mutex_unlock(&f->fault[i]->mu);
	return bad;
}

ssize_t fx_raw_read(struct fx *f, unsigned i, uint64_t oid, uint64_t off, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	return f_read(f->fault[i], oid, off, &iov, 1);
}

void fx_raw_write(struct fx *f, unsigned i, uint64_t oid, uint64_t off, const void *buf,
		  size_t len)
{
	struct iovec iov = { (void *)buf, len };

	ck_assert_int_eq(f->fault[i]->ops->write(f->fault[i]->impl, oid, off, &iov, 1, NULL, 0),
			 (ssize_t)len);
}

void fx_close(struct fx *f)
{
	osdfs_backend_free(f->be);
	f->be = NULL;
	memset(f->fault, 0, sizeof(f->fault));
}

void fx_fini(struct fx *f)
{
	fx_close(f);
	for (unsigned i = 0; i < FX_MAX + 2; i++) {
		osdfs_mem_store_free(f->store[i]);
		osdfs_mem_store_free(f->snap[i]);
	}
}

osdfs *fx_mount(osdfs_backend *be)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	osdfs *fs;

	mo.flags = OSDFS_MOUNT_KEEP_BACKEND;
	ck_assert_int_eq(osdfs_mount(&fs, be, &mo), 0);
	return fs;
}
