/*
 * Component operations: one child backend call each, run as fan-out jobs.
 * A device error (I/O or connection) marks the slot down, except a read's
 * -EIO from a device that still answers (a medium error); so does a reset
 * the device reports (lay_dev_reset_seen()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backends/create.h"
#include "layout/layout_int.h"

static void zero_tail(struct iovec *iov, int iovcnt, size_t from)
{
	for (int i = 0; i < iovcnt; i++) {
		if (from >= iov[i].iov_len) {
			from -= iov[i].iov_len;
			continue;
		}
		memset((uint8_t *)iov[i].iov_base + from, 0, iov[i].iov_len - from);
		from = 0;
	}
}

static long exec_one(struct lay_cop *c, const struct osdfs_backend_ops *ops, void *impl)
{
	ssize_t n;

	switch (c->kind) {
	case LAY_READ:
		n = ops->read(impl, c->oid, c->off, c->iov, c->iovcnt);
		if (n >= 0)
			zero_tail(c->iov, c->iovcnt, (size_t)n);
		return (long)n;
	case LAY_WRITE:
		n = ops->write(impl, c->oid, c->off, c->iov, c->iovcnt, c->attrs, c->nattrs);
		return n < 0 ? (long)n : (size_t)n == c->len ? 0 : -EIO;
	case LAY_SETATTR:
		return ops->set_attrs(impl, c->oid, c->attrs, c->nattrs);
	case LAY_GETATTR:
		return ops->get_attrs(impl, c->oid, c->gattrs, c->nattrs);
	case LAY_CREATE:
		return osdfs__create(ops, impl, c->oid, c->cls, c->attrs, c->nattrs);
	case LAY_REMOVE:
		return ops->remove(impl, c->oid);
	case LAY_TRUNC:
		return ops->truncate(impl, c->oid, c->off);
	case LAY_FLUSH:
		return ops->flush(impl, c->oid);
	}
	return -EINVAL;
}

static void exec_job(struct lay_job *j)
{
	struct lay_cop *c = (struct lay_cop *)j;
	struct lay *L = c->L;
	const struct osdfs_backend_ops *ops;
	uint64_t before = 0, after;
	int seen = 0, spanned = 0;
	void *impl;

	pthread_mutex_lock(&L->mu);
	ops = L->dev[c->slot].ops;
	impl = L->dev[c->slot].impl;
	pthread_mutex_unlock(&L->mu);
	if (ops && ops->reset_count && ops->reset_count(impl, &before) < 0)
		before = 0;
	c->rc = ops ? exec_one(c, ops, impl) : -ENODEV;
	/* a device reset since the last look may have lost what it
	 * acknowledged: the slot goes down, and what it answers now (a read,
	 * attributes) may be stale, so it counts as not answered; what it
	 * took (a write) stands, resynced with the rest. The same for a
	 * reset during this command (the count moved between the two reads):
	 * its answer may come from the device after the reset, even when
	 * another command met the unit attention (and took the slot down)
	 * first. */
	if (ops && ops->reset_count && ops->reset_count(impl, &after) == 0) {
		spanned = after != before;
		seen = lay_dev_reset_count_seen(L, c->slot, impl, after);
	}
	if (seen || spanned) {
		/* an error from it (no such object: it lost the create) is
		 * the reset's, not the command's */
		if (c->rc < 0 || c->kind == LAY_READ || c->kind == LAY_GETATTR)
			c->rc = -ECONNRESET;
		return;
	}
	/* a read that fails while the device still answers is a medium error
	 * (e.g. a data checksum mismatch, sense key MEDIUM ERROR, SPC-3 r23 §4.5.6): the
	 * device stays up and the caller repairs the unit */
	if (c->rc == -EIO && c->kind == LAY_READ && lay_dev_answers(ops, impl, c->oid)) {
		c->medium = 1;
		pthread_mutex_lock(&L->mu);
		L->dev[c->slot].medium += !c->recheck;
		pthread_mutex_unlock(&L->mu);
	} else if (c->rc < 0) {
		lay_dev_failed(L, c->slot, c->rc);
	}
}

void lay_cops_run(struct lay *L, struct lay_cop *ops, size_t n)
{
	struct lay_batch b;

	for (size_t i = 0; i < n; i++) {
		ops[i].L = L;
		ops[i].job.fn = exec_job;
	}
	if (n <= 1) {
		if (n)
			exec_job(&ops[0].job);
		return;
	}
	lay_batch_init(&b);
	for (size_t i = 1; i < n; i++)
		lay_pool_run(L->pool, ops[i].slot, &b, &ops[i].job);
	exec_job(&ops[0].job); /* the caller works too */
	lay_batch_wait(&b);
	lay_batch_destroy(&b);
}

void lay_copv_free(struct lay_copv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i].iov);
	free(v->v);
	v->v = NULL;
	v->n = v->cap = 0;
}

struct lay_cop *lay_copv_add(struct lay_copv *v, enum lay_op_kind kind, unsigned slot,
			     uint64_t oid)
{
	struct lay_cop *c;

	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		struct lay_cop *nv = realloc(v->v, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		v->v = nv;
		v->cap = cap;
	}
	c = &v->v[v->n++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->slot = slot;
	c->oid = oid;
	return c;
}

int lay_cop_iov(struct lay_cop *c, void *p, size_t len)
{
	if (c->iovcnt && (uint8_t *)c->iov[c->iovcnt - 1].iov_base +
				 c->iov[c->iovcnt - 1].iov_len == (uint8_t *)p) {
		c->iov[c->iovcnt - 1].iov_len += len;
	} else {
		if (c->iovcnt == c->iovcap) {
			int cap = c->iovcap ? c->iovcap * 2 : 4;
			struct iovec *n = realloc(c->iov, (size_t)cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			c->iov = n;
			c->iovcap = cap;
		}
		c->iov[c->iovcnt++] = (struct iovec){ p, len };
	}
	c->len += len;
	return 0;
}

int lay_copv_run(struct lay *L, struct lay_copv *v)
{
	lay_cops_run(L, v->v, v->n);
	return 0;
}
