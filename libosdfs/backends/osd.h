/* The "osd" backend, internal part. */
#ifndef OSDFS_BACKENDS_OSD_H
#define OSDFS_BACKENDS_OSD_H

#include <osdfs/backends.h>

/*
 * osdfs_backend_osd_new() whose destroy then calls @p release(@p arg): a
 * backend that owns its device (osdfs_open_path()), so the mount that owns
 * the backend closes the device at unmount.
 */
int osdfs__backend_osd_owning(osdfs_backend **out, struct osd_dev *dev, uint64_t partition,
			      void (*release)(void *arg), void *arg);

#endif
