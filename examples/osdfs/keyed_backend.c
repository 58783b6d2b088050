/*
 * mkfs with security: osdfs_mkfs() formats the partition (REMOVE and CREATE
 * PARTITION) and then creates objects in it, which needs the new
 * partition's keys. This backend wraps the osd backend and sets the
 * partition and working keys with SET KEY right after format.
 */
#include <errno.h>
#include <stdlib.h>
#include "osdfs_tool.h"

struct keyed {
	osdfs_backend *inner;
	const struct osdfs_backend_ops *ops;
	void *impl;
	struct tool *t;
	struct osdfs_backend_ops mine;
};

static int k_create(void *p, uint64_t oid, const struct osdfs_attr *a, int n)
{
	struct keyed *k = p;

	return k->ops->create(k->impl, oid, a, n);
}

static int k_remove(void *p, uint64_t oid)
{
	struct keyed *k = p;

	return k->ops->remove(k->impl, oid);
}

static ssize_t k_read(void *p, uint64_t oid, uint64_t off, const struct iovec *iov, int cnt)
{
	struct keyed *k = p;

	return k->ops->read(k->impl, oid, off, iov, cnt);
}

static ssize_t k_write(void *p, uint64_t oid, uint64_t off, const struct iovec *iov, int cnt,
		       const struct osdfs_attr *a, int n)
{
	struct keyed *k = p;

	return k->ops->write(k->impl, oid, off, iov, cnt, a, n);
}

static int k_truncate(void *p, uint64_t oid, uint64_t size)
{
	struct keyed *k = p;

	return k->ops->truncate(k->impl, oid, size);
}

static int k_punch(void *p, uint64_t oid, uint64_t off, uint64_t len)
{
	struct keyed *k = p;

	return k->ops->punch(k->impl, oid, off, len);
}

static int k_get_attrs(void *p, uint64_t oid, struct osdfs_attr *a, int n)
{
	struct keyed *k = p;

	return k->ops->get_attrs(k->impl, oid, a, n);
}

static int k_set_attrs(void *p, uint64_t oid, const struct osdfs_attr *a, int n)
{
	struct keyed *k = p;

	return k->ops->set_attrs(k->impl, oid, a, n);
}

static int k_size(void *p, uint64_t oid, uint64_t *size)
{
	struct keyed *k = p;

	return k->ops->size(k->impl, oid, size);
}

static int k_list(void *p, uint64_t start, uint64_t *ids, size_t max, size_t *n, uint64_t *next)
{
	struct keyed *k = p;

	return k->ops->list(k->impl, start, ids, max, n, next);
}

static int k_flush(void *p, uint64_t oid)
{
	struct keyed *k = p;

	return k->ops->flush(k->impl, oid);
}

static int is_partition(uint64_t id, void *payload)
{
	return id == *(const uint64_t *)payload;
}

/*
 * The osd backend's format removes the partition first; under a security
 * method that command needs the partition's keys, which a partition that
 * does not exist yet cannot have. So a missing partition is created and
 * keyed first; after format (which re-creates it) it is keyed again.
 */
static int k_format(void *p, uint64_t capacity)
{
	struct keyed *k = p;
	struct osd_obj_id root = { 0, 0 };
	osd_dev *dev = k->t->dev.dev;
	int rc = osd_list_foreach(dev, OSD_ACT_LIST, &root, is_partition, &k->t->partition);

	if (rc == 0) {
		osd_req *req;

		rc = osd_req_create_partition(&req, dev, k->t->partition);
		if (rc == 0)
			rc = osd_req_execute(req);
		osd_req_free(req);
		if (rc == 0)
			rc = tc_device_set_partition_keys(&k->t->dev, k->t->partition);
	} else if (rc > 0) {
		rc = 0; /* it exists */
	}
	if (rc == 0)
		rc = k->ops->format(k->impl, capacity);
	if (rc == 0)
		rc = tc_device_set_partition_keys(&k->t->dev, k->t->partition);
	return rc;
}

static int k_statfs(void *p, struct osdfs_backend_stat *st)
{
	struct keyed *k = p;

	return k->ops->statfs(k->impl, st);
}

static int k_submit(void *p, struct osdfs_op *op)
{
	struct keyed *k = p;

	return k->ops->submit(k->impl, op);
}

static int k_poll(void *p)
{
	struct keyed *k = p;

	return k->ops->poll(k->impl);
}

static void k_destroy(void *p)
{
	struct keyed *k = p;

	osdfs_backend_free(k->inner);
	free(k);
}

int keyed_backend_wrap(struct tool *t)
{
	struct keyed *k = calloc(1, sizeof(*k));
	osdfs_backend *out;
	int rc;

	if (!k)
		return -ENOMEM;
	k->inner = t->be;
	k->ops = osdfs_backend_ops_of(t->be);
	k->impl = osdfs_backend_impl(t->be);
	k->t = t;
	k->mine = (struct osdfs_backend_ops){
		.version = OSDFS_BACKEND_VERSION, .create = k_create, .remove = k_remove,
		.read = k_read, .write = k_write, .truncate = k_truncate, .punch = k_punch,
		.get_attrs = k_get_attrs, .set_attrs = k_set_attrs, .size = k_size,
		.list = k_list, .flush = k_flush, .format = k_format, .statfs = k_statfs,
		.submit = k->ops->submit ? k_submit : NULL, .poll = k->ops->poll ? k_poll : NULL,
		.destroy = k_destroy,
	};
	rc = osdfs_backend_new(&out, &k->mine, k, osdfs_backend_name(t->be));
	if (rc < 0) {
		free(k);
		return rc;
	}
	t->be = out;
	return 0;
}
