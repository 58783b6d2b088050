/*
 * Running an asynchronous operation (struct osdfs_op) with a backend's
 * synchronous operations: the submit() of backends whose operations complete
 * inline (mem, layout).
 */
#ifndef OSDFS_BACKENDS_OP_SYNC_H
#define OSDFS_BACKENDS_OP_SYNC_H

#include <osdfs/sys/backend.h>

/*
 * Runs @p op with @p ops on @p impl and calls op->done() before returning 0.
 * A READ with attributes reads, then gets them (a backend that can do both
 * at once handles READ itself). -EINVAL, and done() is not called, for a
 * NULL op or done(), a size below the first layout (OSDFS_OP_SIZE_OK) or an
 * unknown kind.
 */
int osdfs__op_run_sync(const struct osdfs_backend_ops *ops, void *impl, struct osdfs_op *op);

#endif
