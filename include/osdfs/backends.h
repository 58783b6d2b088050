/**
 * @file osdfs/backends.h
 * @brief The backends shipped with osdfs: in-memory and OSD (libosd).
 *
 * @defgroup osdfs_backends Shipped backends
 * @{
 */
#ifndef OSDFS_BACKENDS_H
#define OSDFS_BACKENDS_H

#include <osdfs/sys/backend.h>

#ifdef __cplusplus
extern "C" {
#endif

struct osd_dev;

/**
 * An in-memory backend (for tests and speed baselines). Contents vanish on
 * free.
 * @param capacity bytes the partition may use, 0 = unlimited
 * @param[out] out the backend
 */
OSD_EXTERN int osdfs_backend_mem_new(osdfs_backend **out, uint64_t capacity);

/**
 * A backend on partition @p partition of an OSD reached through @p dev.
 * @param dev libosd device (osd/request.h), borrowed; must outlive the backend
 * @param[out] out the backend
 */
OSD_EXTERN int osdfs_backend_osd_new(osdfs_backend **out, struct osd_dev *dev,
				     uint64_t partition);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
