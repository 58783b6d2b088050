/*
 * The backend handle: a validated copy of an implementation's vtable, its
 * state pointer and a name for messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <osdfs/sys/backend.h>

struct osdfs_backend {
	struct osdfs_backend_ops ops; /* copied: the caller's table may be transient */
	void *impl;
	char *name;
};

/* Every member except the optional submit and poll must be present. */
static int ops_complete(const struct osdfs_backend_ops *ops)
{
	return ops->create && ops->remove && ops->read && ops->write &&
	       ops->truncate && ops->punch && ops->get_attrs &&
	       ops->set_attrs && ops->size && ops->list && ops->flush &&
	       ops->format && ops->statfs && ops->destroy;
}

OSD_EXTERN int osdfs_backend_new(osdfs_backend **out, const struct osdfs_backend_ops *ops,
				 void *impl, const char *name)
{
	struct osdfs_backend *be;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ops || !name || !ops_complete(ops) ||
	    ops->version < OSDFS_BACKEND_VERSION_1 || ops->version > OSDFS_BACKEND_VERSION)
		return -EINVAL;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->name = strdup(name);
	if (!be->name) {
		free(be);
		return -ENOMEM;
	}
	/* an older, shorter table: only the members it has; the rest stay NULL */
	if (ops->version == OSDFS_BACKEND_VERSION_1)
		memcpy(&be->ops, ops, offsetof(struct osdfs_backend_ops, get_all_attrs));
	else if (ops->version == OSDFS_BACKEND_VERSION_2)
		memcpy(&be->ops, ops, offsetof(struct osdfs_backend_ops, create_class));
	else if (ops->version == OSDFS_BACKEND_VERSION_3)
		memcpy(&be->ops, ops, offsetof(struct osdfs_backend_ops, reset_count));
	else
		be->ops = *ops;
	be->impl = impl;
	*out = be;
	return 0;
}

OSD_EXTERN void osdfs_backend_free(osdfs_backend *be)
{
	if (!be)
		return;
	be->ops.destroy(be->impl);
	free(be->name);
	free(be);
}

OSD_EXTERN const struct osdfs_backend_ops *osdfs_backend_ops_of(const osdfs_backend *be)
{
	return &be->ops;
}

OSD_EXTERN void *osdfs_backend_impl(const osdfs_backend *be)
{
	return be->impl;
}

OSD_EXTERN const char *osdfs_backend_name(const osdfs_backend *be)
{
	return be->name;
}
