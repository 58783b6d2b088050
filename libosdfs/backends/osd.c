/*
 * The OSD backend: every backend operation becomes one (rarely a few) OSD
 * commands on one partition through libosd's request API.
 *
 * The seven operation kinds that can run asynchronously (struct osdfs_op)
 * share one builder and one finisher, used by the synchronous entry points
 * (osd_req_execute) and by submit (osd_req_submit) alike. Attributes a caller
 * asks for are fetched with room for max(buffer, 256) bytes each; when the
 * target reports the list cut short, one more GET ATTRIBUTES with room for
 * maximum-length values follows, so reported lengths are always complete.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <osd/attributes.h>
#include <osd/request.h>
#include <osdfs/backends.h>

#include "backends/htab.h"
#include "backends/iov.h"
#include "backends/osd.h"
#include "proto/byteorder.h"

#define ATTR_MAX_LEN 0xFFFEu          /* largest OSD attribute value */
#define ATTR_ENTRY_OVERHEAD 24u       /* v2 entry header + padding, bounds v1 too */
#define ATTR_LIST_HEADER 8u
#define ATTR_MIN_ROOM 256u            /* per attribute on the first try */
#define LIST_MAX_ALLOC (1u << 20)     /* data-in bytes per LIST command */
#define PUNCH_ZERO_CHUNK (64u << 10)  /* OSD-1 punch: zero buffer size */
#define PUNCH_ZERO_IOVS 16            /* ... times this many per WRITE */
#define POLL_SLICE_MS 100             /* poll() slice between timeout checks */
#define DIRTY_MAX 65536u              /* changed objects remembered between whole flushes */

/* How a whole-partition flush is done: the first that the target implements
 * (docs/backends.md, "Targets without optional commands"). */
enum flush_way { FLUSH_BY_PARTITION, FLUSH_BY_OSD, FLUSH_BY_OBJECT };

struct osdbe {
	osd_dev *dev;
	uint64_t partition;
	atomic_int flush_way;     /* enum flush_way, downgraded on -EOPNOTSUPP */
	atomic_bool no_count;     /* the partition's NUMBER OF OBJECTS is not provided */
	/* The objects changed since the last whole flush, so that where it
	 * goes object by object it FLUSHes those only; all_dirty: too many or
	 * not known, LIST them all. */
	pthread_mutex_t dirty_lock;
	struct osdfs__htab dirty;
	bool all_dirty;
	atomic_uint completions; /* async completions so far, for poll() */
	atomic_uint inflight;    /* submitted and not yet completed */
	void (*release)(void *arg); /* osdfs__backend_osd_owning(): closes the device */
	void *release_arg;
};

/* An async operation in flight. */
struct osdbe_call {
	struct osdbe *b;
	struct osdfs_op *op;
	ssize_t data_result; /* READ bytes kept while attributes are fetched again */
};

static const unsigned char zero_chunk[PUNCH_ZERO_CHUNK];

struct id_vec {
	uint64_t *ids;
	size_t n, cap;
};

static int collect_id(uint64_t id, void *payload);
static int list_ids(struct osdbe *b, enum osd_action action, struct id_vec *v);
static int flush_all(struct osdbe *b);

/* ---- objects changed since the last whole flush (for FLUSH_BY_OBJECT) ---- */

static bool changes_object(enum osdfs_op_kind kind)
{
	return kind == OSDFS_OP_WRITE || kind == OSDFS_OP_SET_ATTRS || kind == OSDFS_OP_CREATE;
}

/* Empty the set into @p v (the ids; NULL: dropped); returns whether it was
 * complete. Called with dirty_lock held. */
static bool take_dirty(struct osdbe *b, struct id_vec *v)
{
	bool complete = !b->all_dirty;

	for (size_t i = 0; i < b->dirty.nslots; i++) {
		struct osdfs__hnode *n = b->dirty.slots[i], *next;

		for (; n; n = next) {
			next = n->next;
			if (v && complete && collect_id(n->key, v) < 0)
				complete = false;
			free(n);
		}
	}
	osdfs__htab_fini(&b->dirty);
	b->all_dirty = false;
	return complete;
}

/*
 * Called once the change is done, so that a whole flush after it covers it.
 * Kept whatever the flush way (it is found out by the first whole flush);
 * past DIRTY_MAX objects the set gives way to one LIST.
 */
static void mark_dirty(struct osdbe *b, uint64_t oid)
{
	struct osdfs__hnode *n;

	pthread_mutex_lock(&b->dirty_lock);
	if (!b->all_dirty && !osdfs__htab_find(&b->dirty, oid)) {
		n = b->dirty.count < DIRTY_MAX ? malloc(sizeof(*n)) : NULL;
		if (n)
			n->key = oid;
		if (!n || osdfs__htab_insert(&b->dirty, n) < 0) {
			free(n);
			take_dirty(b, NULL);
			b->all_dirty = true; /* the next whole flush LISTs them all */
		}
	}
	pthread_mutex_unlock(&b->dirty_lock);
}

static struct osd_obj_id user_obj(const struct osdbe *b, uint64_t oid)
{
	struct osd_obj_id o = { b->partition, oid };

	return o;
}

/* ---- attribute lists ---- */

static int check_attrs(const struct osdfs_attr *attrs, int n, bool set)
{
	if (n < 0 || (n > 0 && !attrs))
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		const struct osdfs_attr *a = &attrs[i];

		if (a->page == OSD_ATTR_ALL || a->number == OSD_ATTR_ALL || (a->len && !a->value))
			return -EINVAL;
		if (set && a->len > ATTR_MAX_LEN)
			return -EINVAL;
	}
	return 0;
}

static int add_sets(osd_req *req, const struct osdfs_attr *attrs, int n)
{
	for (int i = 0; i < n; i++) {
		int rc = osd_req_add_set_attr(req, attrs[i].page, attrs[i].number,
					      attrs[i].value, (uint16_t)attrs[i].len);

		if (rc)
			return rc;
	}
	return 0;
}

/* Ask for @attrs with room for @room value bytes each (0: their buffer
 * sizes, at least ATTR_MIN_ROOM). */
static int add_gets(osd_req *req, const struct osdfs_attr *attrs, int n, uint32_t room)
{
	uint64_t alloc = ATTR_LIST_HEADER;

	if (!n)
		return 0;
	for (int i = 0; i < n; i++) {
		uint32_t want = room ? room : (attrs[i].len > ATTR_MIN_ROOM ? attrs[i].len : ATTR_MIN_ROOM);
		int rc = osd_req_add_get_attr(req, attrs[i].page, attrs[i].number);

		if (rc)
			return rc;
		if (want > ATTR_MAX_LEN)
			want = ATTR_MAX_LEN;
		alloc += ATTR_ENTRY_OVERHEAD + ((uint64_t)want + 7) / 8 * 8;
	}
	return osd_req_set_get_alloc(req, alloc > UINT32_MAX ? UINT32_MAX : (uint32_t)alloc);
}

/* Copy retrieved attributes into the caller's buffers. */
static int fetch_attrs(osd_req *req, struct osdfs_attr *attrs, int n)
{
	for (int i = 0; i < n; i++) {
		struct osdfs_attr *a = &attrs[i];
		struct osd_attr got;
		int rc = osd_req_find_attr(req, a->page, a->number, &got);

		if (rc == -ENOENT) {
			a->len = 0;
			continue;
		}
		if (rc)
			return rc;
		if (a->value && got.value)
			memcpy(a->value, got.value, got.length < a->len ? got.length : a->len);
		a->len = got.length;
	}
	return 0;
}

/* ---- building and finishing the asynchronous kinds ---- */

static int check_op(const struct osdfs_op *op)
{
	size_t total;
	int rc;

	if (!OSDFS_OP_SIZE_OK(op))
		return -EINVAL;
	if (op->kind == OSDFS_OP_FLUSH && op->oid == 0)
		return 0;
	if (op->oid < OSD_FIRST_ID)
		return -EINVAL;
	switch (op->kind) {
	case OSDFS_OP_READ:
		rc = osdfs__iov_total(op->iov, op->iovcnt, &total);
		return rc ? rc : check_attrs(op->attrs, op->nattrs, false);
	case OSDFS_OP_GET_ATTRS:
		return check_attrs(op->attrs, op->nattrs, false);
	case OSDFS_OP_WRITE:
		rc = osdfs__iov_total(op->iov, op->iovcnt, &total);
		return rc ? rc : check_attrs(op->attrs, op->nattrs, true);
	case OSDFS_OP_SET_ATTRS:
	case OSDFS_OP_CREATE:
		return check_attrs(op->attrs, op->nattrs, true);
	case OSDFS_OP_REMOVE:
	case OSDFS_OP_FLUSH:
		return 0;
	}
	return -EINVAL;
}

static int op_build(struct osdbe *b, const struct osdfs_op *op, osd_req **out)
{
	struct osd_obj_id obj = user_obj(b, op->oid);
	osd_req *req = NULL;
	int rc = check_op(op);

	if (rc)
		return rc;
	switch (op->kind) {
	case OSDFS_OP_READ:
		rc = osd_req_read(&req, b->dev, &obj, op->offset, op->iov, op->iovcnt);
		if (!rc)
			rc = add_gets(req, op->attrs, op->nattrs, 0);
		break;
	case OSDFS_OP_WRITE:
		rc = osd_req_write(&req, b->dev, &obj, op->offset, op->iov, op->iovcnt);
		if (!rc)
			rc = add_sets(req, op->attrs, op->nattrs);
		break;
	case OSDFS_OP_GET_ATTRS:
		rc = osd_req_get_attributes(&req, b->dev, &obj);
		if (!rc)
			rc = add_gets(req, op->attrs, op->nattrs, 0);
		break;
	case OSDFS_OP_SET_ATTRS:
		rc = osd_req_set_attributes(&req, b->dev, &obj);
		if (!rc)
			rc = add_sets(req, op->attrs, op->nattrs);
		break;
	case OSDFS_OP_CREATE:
		rc = osd_req_create(&req, b->dev, &obj, 1);
		if (!rc)
			rc = add_sets(req, op->attrs, op->nattrs);
		break;
	case OSDFS_OP_REMOVE:
		rc = osd_req_remove(&req, b->dev, &obj);
		break;
	case OSDFS_OP_FLUSH:
		if (op->oid)
			rc = osd_req_flush(&req, b->dev, &obj, OSD_FLUSH_DATA_AND_ATTRS, 0, 0);
		else
			rc = osd_req_flush_partition(&req, b->dev, b->partition, OSD_FLUSH_RANGE);
		break;
	default:
		return -EINVAL;
	}
	if (rc) {
		osd_req_free(req);
		return rc;
	}
	*out = req;
	return 0;
}

static bool op_gets_attrs(const struct osdfs_op *op)
{
	return op->nattrs > 0 &&
	       (op->kind == OSDFS_OP_READ || op->kind == OSDFS_OP_GET_ATTRS);
}

/* The operation's result from its completed request. Sets *@reget when
 * the retrieved attributes were cut short and must be fetched again. */
static ssize_t op_finish(const struct osdfs_op *op, osd_req *req, bool *reget)
{
	ssize_t res = osd_req_result(req);
	size_t total;

	*reget = false;
	if (res)
		return res;
	if (op->kind == OSDFS_OP_READ)
		res = (ssize_t)osd_req_bytes_read(req);
	else if (op->kind == OSDFS_OP_WRITE && !osdfs__iov_total(op->iov, op->iovcnt, &total))
		res = (ssize_t)total;
	if (op_gets_attrs(op)) {
		int rc;

		if (osd_req_attrs_truncated(req)) {
			*reget = true;
			return res;
		}
		rc = fetch_attrs(req, op->attrs, op->nattrs);
		if (rc)
			return rc;
	}
	return res;
}

/* A GET ATTRIBUTES with room for maximum-length values. */
static int build_full_get(struct osdbe *b, const struct osdfs_op *op, osd_req **out)
{
	struct osd_obj_id obj = user_obj(b, op->oid);
	int rc = osd_req_get_attributes(out, b->dev, &obj);

	if (rc)
		return rc;
	rc = add_gets(*out, op->attrs, op->nattrs, ATTR_MAX_LEN);
	if (rc) {
		osd_req_free(*out);
		*out = NULL;
	}
	return rc;
}

/* Run an operation synchronously. */
static ssize_t op_run(struct osdbe *b, struct osdfs_op *op)
{
	osd_req *req;
	ssize_t res;
	bool reget;
	int rc = op_build(b, op, &req);

	if (rc)
		return rc;
	rc = osd_req_execute(req);
	if (osd_req_result(req) == -EINPROGRESS) {
		/* Timed out on a transport that cannot cancel: freeing detaches
		 * it until the transport completes it. Over iSCSI a timed-out
		 * request is complete with -ETIMEDOUT (op_finish() returns it)
		 * and its buffers are the caller's again. */
		osd_req_free(req);
		return rc ? rc : -EIO;
	}
	res = op_finish(op, req, &reget);
	osd_req_free(req);
	if (changes_object(op->kind))
		mark_dirty(b, op->oid);
	if (!reget)
		return res;
	rc = build_full_get(b, op, &req);
	if (rc)
		return rc;
	rc = osd_req_execute(req);
	if (!rc)
		rc = fetch_attrs(req, op->attrs, op->nattrs);
	osd_req_free(req);
	return rc ? rc : res;
}

/* ---- asynchronous execution ---- */

static void call_complete(struct osdbe_call *c, ssize_t res)
{
	struct osdfs_op *op = c->op;

	atomic_fetch_add(&c->b->completions, 1);
	atomic_fetch_sub(&c->b->inflight, 1);
	free(c);
	op->result = res;
	op->done(op);
}

static void call_reget_done(osd_req *req, int result, void *priv)
{
	struct osdbe_call *c = priv;
	ssize_t res = result;

	if (!res)
		res = fetch_attrs(req, c->op->attrs, c->op->nattrs);
	osd_req_free(req);
	call_complete(c, res ? res : c->data_result);
}

static void call_done(osd_req *req, int result, void *priv)
{
	struct osdbe_call *c = priv;
	osd_req *again;
	bool reget;
	ssize_t res;
	int rc;

	(void)result; /* op_finish reads it from the request */
	res = op_finish(c->op, req, &reget);
	osd_req_free(req);
	if (changes_object(c->op->kind))
		mark_dirty(c->b, c->op->oid);
	if (!reget) {
		call_complete(c, res);
		return;
	}
	c->data_result = res;
	rc = build_full_get(c->b, c->op, &again);
	if (!rc) {
		rc = osd_req_submit(again, call_reget_done, c);
		if (rc)
			osd_req_free(again);
	}
	if (rc)
		call_complete(c, rc);
}

static int osdbe_submit(void *impl, struct osdfs_op *op)
{
	struct osdbe *b = impl;
	struct osdbe_call *c;
	osd_req *req;
	int rc;

	if (!op || !op->done || !OSDFS_OP_SIZE_OK(op))
		return -EINVAL;
	if (op->kind == OSDFS_OP_FLUSH && !op->oid) {
		/* may take several commands (flush_all): done before returning */
		op->result = flush_all(b);
		atomic_fetch_add(&b->completions, 1);
		op->done(op);
		return 0;
	}
	rc = op_build(b, op, &req);
	if (rc)
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c) {
		osd_req_free(req);
		return -ENOMEM;
	}
	c->b = b;
	c->op = op;
	atomic_fetch_add(&b->inflight, 1); /* before: done() may run inside submit */
	rc = osd_req_submit(req, call_done, c);
	if (rc) {
		atomic_fetch_sub(&b->inflight, 1);
		osd_req_free(req);
		free(c);
	}
	return rc;
}

static int osdbe_poll(void *impl)
{
	struct osdbe *b = impl;
	unsigned start = atomic_load(&b->completions);
	int fd = osd_dev_get_fd(b->dev);

	while (atomic_load(&b->completions) == start && atomic_load(&b->inflight)) {
		struct pollfd pfd = { fd, 0, 0 };
		int n, rc;

		if (fd < 0) {
			/* Inline transport: another thread completes it. */
			sched_yield();
			continue;
		}
		pfd.events = (short)osd_dev_which_events(b->dev);
		n = poll(&pfd, 1, POLL_SLICE_MS);
		if (n < 0 && errno != EINTR)
			return -errno;
		rc = osd_dev_service(b->dev, n > 0 ? pfd.revents : 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- synchronous operations ---- */

static int osdbe_create(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int nattrs)
{
	struct osdfs_op op = { .size = sizeof(op), .kind = OSDFS_OP_CREATE, .oid = oid,
			       .attrs = (struct osdfs_attr *)attrs, .nattrs = nattrs };

	return (int)op_run(impl, &op);
}

static int osdbe_remove(void *impl, uint64_t oid)
{
	struct osdfs_op op = { .size = sizeof(op), .kind = OSDFS_OP_REMOVE, .oid = oid };

	return (int)op_run(impl, &op);
}

static ssize_t osdbe_read(void *impl, uint64_t oid, uint64_t off,
			  const struct iovec *iov, int iovcnt)
{
	struct osdfs_op op = { .size = sizeof(op), .kind = OSDFS_OP_READ, .oid = oid, .offset = off,
			       .iov = iov, .iovcnt = iovcnt };

	return op_run(impl, &op);
}

static ssize_t osdbe_write(void *impl, uint64_t oid, uint64_t off,
			   const struct iovec *iov, int iovcnt,
			   const struct osdfs_attr *attrs, int nattrs)
{
	struct osdfs_op op = { .size = sizeof(op), .kind = OSDFS_OP_WRITE, .oid = oid, .offset = off,
			       .iov = iov, .iovcnt = iovcnt,
			       .attrs = (struct osdfs_attr *)attrs, .nattrs = nattrs };

	return op_run(impl, &op);
}

static int osdbe_get_attrs(void *impl, uint64_t oid, struct osdfs_attr *attrs, int nattrs)
{
	struct osdfs_op op = { .size = sizeof(op), .kind = OSDFS_OP_GET_ATTRS, .oid = oid,
			       .attrs = attrs, .nattrs = nattrs };

	return (int)op_run(impl, &op);
}

/* Application-client pages of a user object (osd2r01 §4.7.3), number 0
 * (page identification, §4.7.4) aside:
 * what a client set; the target's own pages are left out. */
static bool client_page(uint32_t page)
{
	return page >= OSD_APAGE_APP_FIRST && page <= 0x1FFFFFFFu;
}

/* Copy the client's attributes of a completed all-pages retrieval. */
static int collect_all(osd_req *req, struct osdfs_attr *attrs, int max, uint8_t *buf,
		       size_t buflen)
{
	struct osd_attr a;
	size_t used = 0;
	int n = 0, rc;

	if (osd_req_attrs_truncated(req))
		return -ENOSPC;
	while ((rc = osd_req_next_attr(req, &a)) == 1) {
		if (!client_page(a.page) || a.number == 0 || (a.length == 0 && !a.value))
			continue;
		if (n == max || a.length > buflen - used)
			return -ENOSPC;
		attrs[n] = (struct osdfs_attr){ a.page, a.number, buf + used, a.length };
		memcpy(buf + used, a.value, a.length);
		used += a.length;
		n++;
	}
	return rc == -ENODATA ? n : rc < 0 ? rc : n;
}

/* GET ATTRIBUTES with "all pages, all attributes" in list mode
 * (osd2r01 §4.7.3, §4.7.4: FFFFFFFFh for both), room for @p buflen value bytes. */
static int osdbe_get_all_attrs(void *impl, uint64_t oid, struct osdfs_attr *attrs, int max,
			       void *buf, size_t buflen)
{
	struct osdbe *b = impl;
	struct osd_obj_id obj = user_obj(b, oid);
	size_t room = buflen + 65536u + (size_t)(max > 0 ? max : 0) * 24u;
	osd_req *req;
	int rc;

	if (oid < OSD_FIRST_ID)
		return -EINVAL;
	if (max < 0 || (max > 0 && !attrs) || (buflen && !buf))
		return -EINVAL;
	rc = osd_req_get_attributes(&req, b->dev, &obj);
	if (rc)
		return rc;
	rc = osd_req_add_get_attr(req, OSD_APAGE_ALL, OSD_ATTR_ALL);
	if (rc == 0)
		rc = osd_req_set_get_alloc(req, room > UINT32_MAX ? UINT32_MAX : (uint32_t)room);
	if (rc == 0)
		rc = osd_req_execute(req);
	if (rc == 0)
		rc = collect_all(req, attrs, max, buf, buflen);
	osd_req_free(req);
	return rc;
}

static int osdbe_set_attrs(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int nattrs)
{
	struct osdfs_op op = { .size = sizeof(op), .kind = OSDFS_OP_SET_ATTRS, .oid = oid,
			       .attrs = (struct osdfs_attr *)attrs, .nattrs = nattrs };

	return (int)op_run(impl, &op);
}

static int flush_partition_cmd(struct osdbe *b, enum flush_way way)
{
	osd_req *req;
	int rc = way == FLUSH_BY_PARTITION
			 ? osd_req_flush_partition(&req, b->dev, b->partition, OSD_FLUSH_RANGE)
			 : osd_req_flush_osd(&req, b->dev, OSD_FLUSH_RANGE);

	if (rc)
		return rc;
	rc = osd_req_execute(req);
	osd_req_free(req);
	return rc;
}

/* FLUSH of each user object in @p v (the objects changed since the last
 * whole flush), or when @p v is not @p complete of every object LIST finds:
 * the durable way left when neither FLUSH PARTITION nor FLUSH OSD is
 * implemented. An object removed meanwhile is not an error. */
static int flush_each_object(struct osdbe *b, struct id_vec *v, bool complete)
{
	int rc = 0;

	if (!complete) {
		v->n = 0;
		rc = list_ids(b, OSD_ACT_LIST, v);
	}
	for (size_t i = 0; !rc && i < v->n; i++) {
		struct osdfs_op op = { .size = sizeof(op), .kind = OSDFS_OP_FLUSH, .oid = v->ids[i] };

		rc = (int)op_run(b, &op);
		if (rc == -ENOENT)
			rc = 0;
	}
	return rc;
}

/* Flush the whole partition with the widest FLUSH the target implements,
 * remembering which that is. The changed objects are taken first: what
 * changes during the flush is the next one's. */
static int flush_all(struct osdbe *b)
{
	struct id_vec v = { NULL, 0, 0 };
	int way = atomic_load(&b->flush_way), rc = -EOPNOTSUPP;
	bool complete;

	pthread_mutex_lock(&b->dirty_lock);
	complete = take_dirty(b, &v);
	pthread_mutex_unlock(&b->dirty_lock);
	for (; way < FLUSH_BY_OBJECT; way++) {
		rc = flush_partition_cmd(b, (enum flush_way)way);
		if (rc != -EOPNOTSUPP)
			break;
		atomic_store(&b->flush_way, way + 1);
	}
	if (way == FLUSH_BY_OBJECT)
		rc = flush_each_object(b, &v, complete);
	free(v.ids);
	if (rc) {
		/* what was taken is not known to be durable: LIST next time */
		pthread_mutex_lock(&b->dirty_lock);
		take_dirty(b, NULL);
		b->all_dirty = true;
		pthread_mutex_unlock(&b->dirty_lock);
	}
	return rc;
}

static int osdbe_flush(void *impl, uint64_t oid)
{
	struct osdfs_op op = { .size = sizeof(op), .kind = OSDFS_OP_FLUSH, .oid = oid };
	int rc;

	if (!oid)
		return flush_all(impl);
	rc = (int)op_run(impl, &op);
	/* FLUSH of an object is not optional, but where it is missing a wider
	 * flush covers the object as durably */
	return rc == -EOPNOTSUPP ? flush_all(impl) : rc;
}

static int osdbe_size(void *impl, uint64_t oid, uint64_t *size)
{
	uint8_t v[8];
	struct osdfs_attr a = { OSD_APAGE_INFORMATION, OSD_ATTR_UI_LOGICAL_LENGTH, v, sizeof(v) };
	int rc;

	if (!size)
		return -EINVAL;
	rc = osdbe_get_attrs(impl, oid, &a, 1);
	if (rc)
		return rc;
	if (a.len != sizeof(v))
		return -EIO; /* every user object has an 8-byte logical length */
	*size = osd__get_be64(v);
	return 0;
}

/* Truncate: SET ATTRIBUTES of the user object logical length. */
static int osdbe_truncate(void *impl, uint64_t oid, uint64_t size)
{
	uint8_t v[8];
	struct osdfs_attr a = { OSD_APAGE_INFORMATION, OSD_ATTR_UI_LOGICAL_LENGTH, v, sizeof(v) };

	osd__put_be64(v, size);
	return osdbe_set_attrs(impl, oid, &a, 1);
}

/* OSD-1 has no PUNCH: write zeros over the part inside the logical length. */
static int punch_by_zeros(struct osdbe *b, uint64_t oid, uint64_t off, uint64_t end)
{
	struct iovec iov[PUNCH_ZERO_IOVS];
	uint64_t size;
	int rc = osdbe_size(b, oid, &size);

	if (rc)
		return rc;
	if (end > size)
		end = size;
	for (int i = 0; i < PUNCH_ZERO_IOVS; i++) {
		iov[i].iov_base = (void *)zero_chunk; /* only read by WRITE */
		iov[i].iov_len = sizeof(zero_chunk);
	}
	while (off < end) {
		uint64_t n = end - off;
		int cnt;
		ssize_t w;

		if (n > (uint64_t)PUNCH_ZERO_IOVS * sizeof(zero_chunk))
			n = (uint64_t)PUNCH_ZERO_IOVS * sizeof(zero_chunk);
		cnt = (int)((n + sizeof(zero_chunk) - 1) / sizeof(zero_chunk));
		iov[cnt - 1].iov_len = (size_t)(n - (uint64_t)(cnt - 1) * sizeof(zero_chunk));
		w = osdbe_write(b, oid, off, iov, cnt, NULL, 0);
		iov[cnt - 1].iov_len = sizeof(zero_chunk);
		if (w < 0)
			return (int)w;
		off += n;
	}
	return 0;
}

static int osdbe_punch(void *impl, uint64_t oid, uint64_t off, uint64_t len)
{
	struct osdbe *b = impl;
	struct osd_obj_id obj = user_obj(b, oid);
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	osd_req *req;
	int rc;

	if (oid < OSD_FIRST_ID)
		return -EINVAL;
	if (osd_dev_version(b->dev) == OSD_V1 || end == off)
		return punch_by_zeros(b, oid, off, end); /* empty range: existence check */
	rc = osd_req_punch(&req, b->dev, &obj, off, end - off);
	if (rc)
		return rc;
	rc = osd_req_execute(req);
	osd_req_free(req);
	mark_dirty(b, oid);
	return rc;
}

static int osdbe_list(void *impl, uint64_t start, uint64_t *ids, size_t max,
		      size_t *n, uint64_t *next)
{
	struct osdbe *b = impl;
	struct osd_list_cursor from = { start, 0 }, to;
	struct osd_list_result res;
	uint64_t alloc;
	osd_req *req;
	size_t k = 0;
	int rc;

	if (!ids || !max || !n || !next)
		return -EINVAL;
	alloc = OSD_LIST_HEADER_LEN + (uint64_t)max * 8;
	if (alloc > LIST_MAX_ALLOC)
		alloc = LIST_MAX_ALLOC;
	rc = osd_req_list(&req, b->dev, b->partition, &from, (uint32_t)alloc);
	if (rc)
		return rc;
	rc = osd_req_execute(req);
	if (!rc)
		rc = osd_req_list_result(req, &res, &to);
	if (!rc) {
		for (size_t i = 0; i < res.num_ids && k < max; i++) {
			uint64_t id = osd_list_id(&res, i);

			if (id >= start && id >= OSD_FIRST_ID)
				ids[k++] = id;
		}
		*n = k;
		/* Cut by @max (cannot happen with this allocation, but be exact). */
		if (k == max && k < res.num_ids)
			*next = ids[k - 1] + 1;
		else
			*next = to.next_id;
		if (*next && *next <= start)
			rc = -EBADMSG; /* a continuation that does not move forward */
	}
	osd_req_free(req);
	return rc;
}

/* ---- partition: format and statfs ---- */

static int collect_id(uint64_t id, void *payload)
{
	struct id_vec *v = payload;

	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		uint64_t *p = realloc(v->ids, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		v->ids = p;
		v->cap = cap;
	}
	v->ids[v->n++] = id;
	return 0;
}

/* Every id that LIST (@p action OSD_ACT_LIST) or LIST COLLECTION lists in
 * the partition, continuations followed. */
static int list_ids(struct osdbe *b, enum osd_action action, struct id_vec *v)
{
	struct osd_obj_id part = { b->partition, 0 };

	return osd_list_foreach(b->dev, action, &part, collect_id, v);
}

static int remove_one(struct osdbe *b, uint64_t id, bool collection)
{
	struct osd_obj_id obj = user_obj(b, id);
	osd_req *req;
	int rc = collection ? osd_req_remove_collection(&req, b->dev, &obj,
							OSD_REMOVE_COLLECTION_FORCE)
			    : osd_req_remove(&req, b->dev, &obj);

	if (rc)
		return rc;
	rc = osd_req_execute(req);
	osd_req_free(req);
	return rc;
}

/* Remove every collection (OSD-2 has them; dropped with their memberships)
 * and then every user object of the partition. */
static int empty_partition(struct osdbe *b)
{
	struct id_vec v = { NULL, 0, 0 };
	bool colls = osd_dev_version(b->dev) == OSD_V2;
	int rc = colls ? list_ids(b, OSD_ACT_LIST_COLLECTION, &v) : 0;

	for (size_t i = 0; !rc && i < v.n; i++)
		rc = remove_one(b, v.ids[i], true);
	v.n = 0;
	if (!rc)
		rc = list_ids(b, OSD_ACT_LIST, &v);
	for (size_t i = 0; !rc && i < v.n; i++)
		rc = remove_one(b, v.ids[i], false);
	free(v.ids);
	return rc;
}

static int is_partition(uint64_t id, void *payload)
{
	return id == *(const uint64_t *)payload;
}

/* 1 if the partition exists, 0 if not, or -errno. Asked of the root (a
 * partition's own LIST needs its keys, which a missing one cannot have). */
static int partition_exists(struct osdbe *b)
{
	struct osd_obj_id root = { 0, 0 };
	int rc = osd_list_foreach(b->dev, OSD_ACT_LIST, &root, is_partition, &b->partition);

	return rc > 0 ? 1 : rc;
}

static int create_partition(struct osdbe *b, uint64_t capacity)
{
	osd_req *req;
	int rc = osd_req_create_partition(&req, b->dev, b->partition);

	if (rc)
		return rc;
	rc = osd_req_add_set_attr_u64(req, OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS,
				      OSD_ATTR_Q_PARTITION_CAPACITY, capacity);
	if (!rc)
		rc = osd_req_execute(req);
	osd_req_free(req);
	return rc;
}

/*
 * An existing partition is emptied in place rather than removed and
 * created again: its keys and policy/security attributes (the default
 * security method) belong to whoever keyed it, not to the filesystem.
 */
static int osdbe_format(void *impl, uint64_t capacity)
{
	struct osdbe *b = impl;
	struct osd_obj_id part = { b->partition, 0 };
	int rc = partition_exists(b);

	if (rc == 0)
		return create_partition(b, capacity);
	if (rc < 0)
		return rc;
	rc = empty_partition(b);
	if (!rc)
		rc = osd_set_attr_u64(b->dev, &part, OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS,
				      OSD_ATTR_Q_PARTITION_CAPACITY, capacity);
	return rc;
}

/* Read 8-byte numbers (page, number pairs in @attrs) of object @obj; an
 * undefined one reads as 0. */
static int get_numbers(struct osdbe *b, const struct osd_obj_id *obj,
		       const uint32_t (*attrs)[2], uint64_t *values, int n)
{
	osd_req *req;
	int rc = osd_req_get_attributes(&req, b->dev, obj);

	for (int i = 0; !rc && i < n; i++)
		rc = osd_req_add_get_attr(req, attrs[i][0], attrs[i][1]);
	if (!rc)
		rc = osd_req_execute(req);
	for (int i = 0; !rc && i < n; i++) {
		struct osd_attr a;
		int f = osd_req_find_attr(req, attrs[i][0], attrs[i][1], &a);

		values[i] = 0;
		if (f == -ENOENT)
			continue;
		if (f)
			rc = f;
		else if (a.length > 8)
			rc = -EBADMSG;
		else
			for (uint16_t j = 0; j < a.length; j++)
				values[i] = values[i] << 8 | ((const uint8_t *)a.value)[j];
	}
	osd_req_free(req);
	return rc;
}

static int count_id(uint64_t id, void *payload)
{
	(void)id;
	(*(uint64_t *)payload)++;
	return 0;
}

static int count_objects(struct osdbe *b, uint64_t *n)
{
	struct osd_obj_id part = { b->partition, 0 };

	*n = 0;
	return osd_list_foreach(b->dev, OSD_ACT_LIST, &part, count_id, n);
}

static int osdbe_statfs(void *impl, struct osdfs_backend_stat *st)
{
	static const uint32_t part_attrs[3][2] = {
		{ OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS, OSD_ATTR_Q_PARTITION_CAPACITY },
		{ OSD_APAGE_PARTITION_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_PI_USED_CAPACITY },
		{ OSD_APAGE_PARTITION_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_PI_NUM_OBJECTS },
	};
	static const uint32_t root_attrs[2][2] = {
		{ OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_RI_TOTAL_CAPACITY },
		{ OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_RI_USED_CAPACITY },
	};
	struct osdbe *b = impl;
	struct osd_obj_id part = { b->partition, 0 }, root = { 0, 0 };
	uint64_t pv[3], rv[2];
	int rc = -EOPNOTSUPP;

	if (!st)
		return -EINVAL;
	if (!atomic_load(&b->no_count))
		rc = get_numbers(b, &part, part_attrs, pv, 3);
	if (rc == -EOPNOTSUPP) {
		/* NUMBER OF OBJECTS is optional to some targets: count by LIST. */
		atomic_store(&b->no_count, true);
		rc = get_numbers(b, &part, part_attrs, pv, 2);
		if (!rc)
			rc = count_objects(b, &pv[2]);
	}
	if (!rc)
		rc = get_numbers(b, &root, root_attrs, rv, 2);
	if (rc)
		return rc;
	st->capacity = pv[0];
	st->used = pv[1];
	st->objects = pv[2];
	st->device_free = rv[0] > rv[1] ? rv[0] - rv[1] : 0;
	return 0;
}

static void osdbe_destroy(void *impl)
{
	struct osdbe *b = impl;

	take_dirty(b, NULL);
	pthread_mutex_destroy(&b->dirty_lock);
	if (b->release)
		b->release(b->release_arg);
	free(b);
}

/* The device's resets that may have emptied its volatile cache (unit
 * attentions 29h/00h-04h once it has answered a command, spc4r37 Annex D): the
 * layout backend resyncs a device whose count changed. */
static int osdbe_reset_count(void *impl, uint64_t *count)
{
	*count = osd_dev_reset_count(((struct osdbe *)impl)->dev);
	return 0;
}

static const struct osdfs_backend_ops osd_ops = {
	.version = OSDFS_BACKEND_VERSION,
	.create = osdbe_create,
	.remove = osdbe_remove,
	.read = osdbe_read,
	.write = osdbe_write,
	.truncate = osdbe_truncate,
	.punch = osdbe_punch,
	.get_attrs = osdbe_get_attrs,
	.set_attrs = osdbe_set_attrs,
	.size = osdbe_size,
	.list = osdbe_list,
	.flush = osdbe_flush,
	.format = osdbe_format,
	.statfs = osdbe_statfs,
	.submit = osdbe_submit,
	.poll = osdbe_poll,
	.destroy = osdbe_destroy,
	.get_all_attrs = osdbe_get_all_attrs,
	.reset_count = osdbe_reset_count,
};

OSD_EXTERN int osdfs_backend_osd_new(osdfs_backend **out, struct osd_dev *dev,
				     uint64_t partition)
{
	return osdfs__backend_osd_owning(out, dev, partition, NULL, NULL);
}

int osdfs__backend_osd_owning(osdfs_backend **out, struct osd_dev *dev, uint64_t partition,
			      void (*release)(void *arg), void *arg)
{
	struct osdbe *b;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev || partition < OSD_FIRST_ID)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->dev = dev;
	b->partition = partition;
	b->release = release;
	b->release_arg = arg;
	atomic_init(&b->completions, 0);
	atomic_init(&b->inflight, 0);
	atomic_init(&b->flush_way, FLUSH_BY_PARTITION);
	atomic_init(&b->no_count, false);
	pthread_mutex_init(&b->dirty_lock, NULL);
	rc = osdfs_backend_new(out, &osd_ops, b, "osd");
	if (rc) {
		pthread_mutex_destroy(&b->dirty_lock);
		free(b);
	}
	return rc;
}
