/*
 * The in-memory backend: a reference-counted store of objects that any
 * number of backend handles may attach to, and its operations.
 *
 * Objects live in a hash table keyed by id; their sparse data is in
 * mem_data.c, their attributes in mem_attr.c. Used space is allocated data
 * bytes plus attribute value bytes; every operation checks the capacity and
 * allocates before it changes anything, so a failure loses nothing. One
 * read-write lock per store serialises writers; readers run in parallel.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <osd/attributes.h>
#include <osdfs/backends.h>

#include "backends/iov.h"
#include "backends/mem.h"
#include "backends/op_sync.h"

static struct mem_object *object_of(struct osdfs__hnode *n)
{
	return (struct mem_object *)n; /* node is the first member */
}

static bool would_exceed(const struct osdfs_mem_store *s, int64_t delta)
{
	if (!s->capacity || delta <= 0)
		return false;
	return s->used > s->capacity || (uint64_t)delta > s->capacity - s->used;
}

/* ---- objects ---- */

static int check_oid(uint64_t oid)
{
	return oid < OSD_FIRST_ID ? -EINVAL : 0;
}

static struct mem_object *object_find(const struct osdfs_mem_store *s, uint64_t oid)
{
	struct osdfs__hnode *n = osdfs__htab_find(&s->objects, oid);

	return n ? object_of(n) : NULL;
}

static void object_free(struct mem_object *obj)
{
	osdfs__mem_data_free(obj);
	osdfs__mem_attrs_free(obj);
	free(obj);
}

static void store_clear(struct osdfs_mem_store *s)
{
	for (size_t i = 0; i < s->objects.nslots; i++) {
		struct osdfs__hnode *n = s->objects.slots[i], *next;

		for (; n; n = next) {
			next = n->next;
			object_free(object_of(n));
		}
	}
	osdfs__htab_fini(&s->objects);
	s->used = 0;
}

static int mem_create(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int nattrs)
{
	struct osdfs_mem_store *s = impl;
	struct mem_object *obj;
	struct osdfs__mem_plan plan;
	int rc = check_oid(oid);

	if (!rc)
		rc = osdfs__mem_attrs_check(attrs, nattrs);
	if (rc)
		return rc;
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return -ENOMEM;
	obj->node.key = oid;
	pthread_rwlock_wrlock(&s->lock);
	if (object_find(s, oid))
		rc = -EEXIST;
	else if (would_exceed(s, osdfs__mem_attrs_growth(NULL, attrs, nattrs)))
		rc = -ENOSPC;
	else
		rc = osdfs__mem_plan_prepare(&plan, obj, attrs, nattrs);
	if (!rc) {
		rc = osdfs__htab_insert(&s->objects, &obj->node);
		if (rc)
			osdfs__mem_plan_free(&plan, nattrs);
		else
			osdfs__mem_plan_commit(&plan, s, obj, attrs, nattrs);
	}
	pthread_rwlock_unlock(&s->lock);
	if (rc)
		object_free(obj);
	return rc;
}

static int mem_remove(void *impl, uint64_t oid)
{
	struct osdfs_mem_store *s = impl;
	struct mem_object *obj;
	int rc = check_oid(oid);

	if (rc)
		return rc;
	pthread_rwlock_wrlock(&s->lock);
	obj = object_find(s, oid);
	if (obj) {
		osdfs__htab_remove(&s->objects, &obj->node);
		s->used -= obj->data_used;
		for (size_t i = 0; i < obj->nattrs; i++)
			s->used -= obj->attrs[i].len;
	}
	pthread_rwlock_unlock(&s->lock);
	if (!obj)
		return -ENOENT;
	object_free(obj);
	return 0;
}

static ssize_t mem_read_get(struct osdfs_mem_store *s, uint64_t oid, uint64_t off,
			    const struct iovec *iov, int iovcnt,
			    struct osdfs_attr *attrs, int nattrs)
{
	const struct mem_object *obj;
	size_t total;
	ssize_t rc = check_oid(oid);

	if (!rc)
		rc = osdfs__iov_total(iov, iovcnt, &total);
	if (rc)
		return rc;
	pthread_rwlock_rdlock(&s->lock);
	obj = object_find(s, oid);
	if (!obj) {
		rc = -ENOENT;
	} else {
		rc = nattrs ? osdfs__mem_attrs_get(obj, attrs, nattrs) : 0;
		if (!rc)
			rc = osdfs__mem_read(obj, off, iov, iovcnt, total);
	}
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

static ssize_t mem_read(void *impl, uint64_t oid, uint64_t off,
			const struct iovec *iov, int iovcnt)
{
	return mem_read_get(impl, oid, off, iov, iovcnt, NULL, 0);
}

static ssize_t mem_write(void *impl, uint64_t oid, uint64_t off,
			 const struct iovec *iov, int iovcnt,
			 const struct osdfs_attr *attrs, int nattrs)
{
	struct osdfs_mem_store *s = impl;
	struct mem_object *obj;
	struct osdfs__mem_plan plan;
	size_t total;
	ssize_t rc = check_oid(oid);

	if (!rc)
		rc = osdfs__iov_total(iov, iovcnt, &total);
	if (!rc)
		rc = osdfs__mem_attrs_check(attrs, nattrs);
	if (rc)
		return rc;
	if (off > MEM_MAX_LENGTH || total > MEM_MAX_LENGTH - off)
		return -EFBIG;
	pthread_rwlock_wrlock(&s->lock);
	obj = object_find(s, oid);
	if (!obj) {
		rc = -ENOENT;
		goto out;
	}
	if (would_exceed(s, (int64_t)osdfs__mem_write_growth(obj, off, total) +
			    osdfs__mem_attrs_growth(obj, attrs, nattrs))) {
		rc = -ENOSPC;
		goto out;
	}
	rc = osdfs__mem_plan_prepare(&plan, obj, attrs, nattrs);
	if (rc)
		goto out;
	rc = osdfs__mem_write_alloc(s, obj, off, off + total);
	if (rc) {
		osdfs__mem_plan_free(&plan, nattrs);
		goto out;
	}
	osdfs__mem_write_copy(obj, off, off + total, iov, iovcnt);
	if (total && off + total > obj->size)
		obj->size = off + total;
	osdfs__mem_plan_commit(&plan, s, obj, attrs, nattrs);
	rc = (ssize_t)total;
out:
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

static int mem_truncate(void *impl, uint64_t oid, uint64_t size)
{
	struct osdfs_mem_store *s = impl;
	struct mem_object *obj;
	int rc = check_oid(oid);

	if (rc)
		return rc;
	if (size > MEM_MAX_LENGTH)
		return -EFBIG;
	pthread_rwlock_wrlock(&s->lock);
	obj = object_find(s, oid);
	if (obj)
		osdfs__mem_truncate(s, obj, size);
	pthread_rwlock_unlock(&s->lock);
	return obj ? 0 : -ENOENT;
}

static int mem_punch(void *impl, uint64_t oid, uint64_t off, uint64_t len)
{
	struct osdfs_mem_store *s = impl;
	struct mem_object *obj;
	int rc = check_oid(oid);

	if (rc)
		return rc;
	pthread_rwlock_wrlock(&s->lock);
	obj = object_find(s, oid);
	if (obj) {
		uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;

		osdfs__mem_release(s, obj, off, end < obj->size ? end : obj->size);
	}
	pthread_rwlock_unlock(&s->lock);
	return obj ? 0 : -ENOENT;
}

static int mem_get_attrs(void *impl, uint64_t oid, struct osdfs_attr *attrs, int nattrs)
{
	struct osdfs_mem_store *s = impl;
	const struct mem_object *obj;
	int rc = check_oid(oid);

	if (rc)
		return rc;
	pthread_rwlock_rdlock(&s->lock);
	obj = object_find(s, oid);
	rc = obj ? osdfs__mem_attrs_get(obj, attrs, nattrs) : -ENOENT;
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

static int mem_get_all_attrs(void *impl, uint64_t oid, struct osdfs_attr *attrs, int max,
			     void *buf, size_t buflen)
{
	struct osdfs_mem_store *s = impl;
	const struct mem_object *obj;
	int rc = check_oid(oid);

	if (rc)
		return rc;
	if (max < 0 || (max > 0 && !attrs) || (buflen && !buf))
		return -EINVAL;
	pthread_rwlock_rdlock(&s->lock);
	obj = object_find(s, oid);
	rc = obj ? osdfs__mem_attrs_get_all(obj, attrs, max, buf, buflen) : -ENOENT;
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

static int mem_set_attrs(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int nattrs)
{
	struct osdfs_mem_store *s = impl;
	struct mem_object *obj;
	struct osdfs__mem_plan plan;
	int rc = check_oid(oid);

	if (!rc)
		rc = osdfs__mem_attrs_check(attrs, nattrs);
	if (rc)
		return rc;
	pthread_rwlock_wrlock(&s->lock);
	obj = object_find(s, oid);
	if (!obj)
		rc = -ENOENT;
	else if (would_exceed(s, osdfs__mem_attrs_growth(obj, attrs, nattrs)))
		rc = -ENOSPC;
	else
		rc = osdfs__mem_plan_prepare(&plan, obj, attrs, nattrs);
	if (!rc)
		osdfs__mem_plan_commit(&plan, s, obj, attrs, nattrs);
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

static int mem_size(void *impl, uint64_t oid, uint64_t *size)
{
	struct osdfs_mem_store *s = impl;
	const struct mem_object *obj;
	int rc = check_oid(oid);

	if (rc)
		return rc;
	if (!size)
		return -EINVAL;
	pthread_rwlock_rdlock(&s->lock);
	obj = object_find(s, oid);
	if (obj)
		*size = obj->size;
	pthread_rwlock_unlock(&s->lock);
	return obj ? 0 : -ENOENT;
}

/* ---- list: the @max smallest ids >= start, via a bounded max-heap ---- */

static void heap_sift_down(uint64_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, big = i;
		uint64_t t;

		if (l < n && h[l] > h[big])
			big = l;
		if (r < n && h[r] > h[big])
			big = r;
		if (big == i)
			return;
		t = h[i];
		h[i] = h[big];
		h[big] = t;
		i = big;
	}
}

static void heap_push(uint64_t *h, size_t n, uint64_t v)
{
	size_t i = n;

	h[i] = v;
	while (i && h[(i - 1) / 2] < h[i]) {
		uint64_t t = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/* Heap sort in place: ascending order. */
static void heap_sort(uint64_t *h, size_t n)
{
	while (n > 1) {
		uint64_t t = h[0];

		h[0] = h[--n];
		h[n] = t;
		heap_sift_down(h, n, 0);
	}
}

static int mem_list(void *impl, uint64_t start, uint64_t *ids, size_t max,
		    size_t *n, uint64_t *next)
{
	struct osdfs_mem_store *s = impl;
	size_t k = 0;
	bool more = false;

	if (!ids || !max || !n || !next)
		return -EINVAL;
	pthread_rwlock_rdlock(&s->lock);
	for (size_t i = 0; i < s->objects.nslots; i++) {
		for (const struct osdfs__hnode *h = s->objects.slots[i]; h; h = h->next) {
			if (h->key < start)
				continue;
			if (k < max) {
				heap_push(ids, k++, h->key);
			} else {
				more = true;
				if (h->key < ids[0]) {
					ids[0] = h->key;
					heap_sift_down(ids, k, 0);
				}
			}
		}
	}
	pthread_rwlock_unlock(&s->lock);
	heap_sort(ids, k);
	*n = k;
	*next = more ? ids[k - 1] + 1 : 0;
	return 0;
}

static int mem_flush(void *impl, uint64_t oid)
{
	struct osdfs_mem_store *s = impl;
	bool found;

	if (!oid)
		return 0;
	if (check_oid(oid))
		return -EINVAL;
	pthread_rwlock_rdlock(&s->lock);
	found = object_find(s, oid) != NULL;
	pthread_rwlock_unlock(&s->lock);
	return found ? 0 : -ENOENT;
}

static int mem_format(void *impl, uint64_t capacity)
{
	struct osdfs_mem_store *s = impl;

	pthread_rwlock_wrlock(&s->lock);
	store_clear(s);
	s->capacity = capacity;
	pthread_rwlock_unlock(&s->lock);
	return 0;
}

static uint64_t memory_available(void)
{
	long pages = sysconf(_SC_AVPHYS_PAGES);
	long psize = sysconf(_SC_PAGESIZE);

	return pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
}

static int mem_statfs(void *impl, struct osdfs_backend_stat *st)
{
	struct osdfs_mem_store *s = impl;

	if (!st)
		return -EINVAL;
	pthread_rwlock_rdlock(&s->lock);
	st->capacity = s->capacity;
	st->used = s->used;
	st->objects = s->objects.count;
	pthread_rwlock_unlock(&s->lock);
	st->device_free = memory_available();
	return 0;
}

static const struct osdfs_backend_ops mem_ops;

/* Inline; a READ gets its attributes under the same lock as the data. */
static int mem_submit(void *impl, struct osdfs_op *op)
{
	if (!op || !op->done || !OSDFS_OP_SIZE_OK(op) || op->kind != OSDFS_OP_READ)
		return osdfs__op_run_sync(&mem_ops, impl, op);
	op->result = mem_read_get(impl, op->oid, op->offset, op->iov, op->iovcnt,
				  op->attrs, op->nattrs);
	op->done(op);
	return 0;
}

static void store_unref(struct osdfs_mem_store *s)
{
	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	store_clear(s);
	pthread_rwlock_destroy(&s->lock);
	free(s);
}

static void mem_destroy(void *impl)
{
	store_unref(impl);
}

static const struct osdfs_backend_ops mem_ops = {
	.version = OSDFS_BACKEND_VERSION,
	.create = mem_create,
	.remove = mem_remove,
	.read = mem_read,
	.write = mem_write,
	.truncate = mem_truncate,
	.punch = mem_punch,
	.get_attrs = mem_get_attrs,
	.set_attrs = mem_set_attrs,
	.size = mem_size,
	.list = mem_list,
	.flush = mem_flush,
	.format = mem_format,
	.statfs = mem_statfs,
	.submit = mem_submit,
	.poll = NULL,
	.destroy = mem_destroy,
	.get_all_attrs = mem_get_all_attrs,
};

OSD_EXTERN int osdfs_mem_store_new(osdfs_mem_store **out, uint64_t capacity)
{
	struct osdfs_mem_store *s;

	if (!out)
		return -EINVAL;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (pthread_rwlock_init(&s->lock, NULL)) {
		free(s);
		return -ENOMEM;
	}
	atomic_init(&s->refs, 1);
	s->capacity = capacity;
	*out = s;
	return 0;
}

OSD_EXTERN void osdfs_mem_store_free(osdfs_mem_store *store)
{
	if (store)
		store_unref(store);
}

OSD_EXTERN int osdfs_backend_mem_attach(osdfs_backend **out, osdfs_mem_store *store)
{
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!store)
		return -EINVAL;
	atomic_fetch_add(&store->refs, 1);
	rc = osdfs_backend_new(out, &mem_ops, store, "mem");
	if (rc)
		store_unref(store);
	return rc;
}

OSD_EXTERN int osdfs_backend_mem_new(osdfs_backend **out, uint64_t capacity)
{
	osdfs_mem_store *s;
	int rc;

	if (!out)
		return -EINVAL;
	rc = osdfs_mem_store_new(&s, capacity);
	if (rc)
		return rc;
	rc = osdfs_backend_mem_attach(out, s);
	osdfs_mem_store_free(s);
	return rc;
}
