/* See op_sync.h. */
#include <errno.h>

#include "backends/create.h"
#include "backends/op_sync.h"

static ssize_t run(const struct osdfs_backend_ops *ops, void *impl, struct osdfs_op *op)
{
	ssize_t r;

	switch (op->kind) {
	case OSDFS_OP_READ:
		r = ops->read(impl, op->oid, op->offset, op->iov, op->iovcnt);
		if (r >= 0 && op->nattrs) {
			int rc = ops->get_attrs(impl, op->oid, op->attrs, op->nattrs);

			r = rc < 0 ? rc : r;
		}
		return r;
	case OSDFS_OP_WRITE:
		return ops->write(impl, op->oid, op->offset, op->iov, op->iovcnt, op->attrs,
				  op->nattrs);
	case OSDFS_OP_GET_ATTRS:
		return ops->get_attrs(impl, op->oid, op->attrs, op->nattrs);
	case OSDFS_OP_SET_ATTRS:
		return ops->set_attrs(impl, op->oid, op->attrs, op->nattrs);
	case OSDFS_OP_CREATE:
		return osdfs__create(ops, impl, op->oid,
				     OSDFS_OP_HAS(op, obj_class) ? op->obj_class : OSDFS_OBJ_UNKNOWN,
				     op->attrs, op->nattrs);
	case OSDFS_OP_REMOVE:
		return ops->remove(impl, op->oid);
	case OSDFS_OP_FLUSH:
		return ops->flush(impl, op->oid);
	}
	return -EINVAL;
}

int osdfs__op_run_sync(const struct osdfs_backend_ops *ops, void *impl, struct osdfs_op *op)
{
	if (!op || !op->done || !OSDFS_OP_SIZE_OK(op) || (unsigned)op->kind > OSDFS_OP_FLUSH)
		return -EINVAL;
	op->result = run(ops, impl, op);
	op->done(op);
	return 0;
}
