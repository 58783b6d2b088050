/*
 * Creating an object with its class hint (struct osdfs_backend_ops,
 * create_class, version 3), or with plain create() on a backend that does
 * not take one: what every caller in libosdfs that creates objects uses.
 */
#ifndef OSDFS_BACKENDS_CREATE_H
#define OSDFS_BACKENDS_CREATE_H

#include <osdfs/sys/backend.h>

static inline int osdfs__create(const struct osdfs_backend_ops *ops, void *impl, uint64_t oid,
				enum osdfs_obj_class cls, const struct osdfs_attr *attrs,
				int nattrs)
{
	if (ops->create_class)
		return ops->create_class(impl, oid, cls, attrs, nattrs);
	return ops->create(impl, oid, attrs, nattrs);
}

#endif
