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
 * An in-memory backend (for tests and speed baselines) on a private store.
 * Contents vanish when the backend is freed (or the mount that owns it is
 * unmounted); use osdfs_mem_store_new() and osdfs_backend_mem_attach() to keep
 * them across unmount and remount.
 *
 * Behaviour shared by every mem backend:
 * - user object ids below OSD_FIRST_ID are refused with -EINVAL, as an OSD
 *   target reserves them;
 * - capacity accounting counts data bytes actually allocated (holes are free)
 *   plus attribute value bytes; an operation that would exceed the capacity
 *   fails with -ENOSPC and changes nothing;
 * - attribute values are at most 0xFFFE bytes (the OSD limit); page 1 (user
 *   object information) is computed: 0x2 object id, 0x81 used bytes and 0x82
 *   logical length (8-byte big-endian values); setting 0x82 truncates or
 *   extends the object and the other page-1 attributes are read-only;
 * - submit() runs the operation inline and calls done() before returning.
 *
 * @param[out] out the backend, released with osdfs_backend_free() or owned by
 *                 a mount
 * @param capacity bytes the partition may use, 0 = unlimited
 * @return 0 or -ENOMEM.
 */
OSD_EXTERN int osdfs_backend_mem_new(osdfs_backend **out, uint64_t capacity);

/**
 * An in-memory object store that outlives the backends attached to it
 * (opaque, reference-counted, thread-safe).
 */
typedef struct osdfs_mem_store osdfs_mem_store;

/**
 * Create an empty in-memory store.
 * @param[out] out the store, released with osdfs_mem_store_free()
 * @param capacity bytes the store may use, 0 = unlimited
 * @return 0 or -ENOMEM.
 */
OSD_EXTERN int osdfs_mem_store_new(osdfs_mem_store **out, uint64_t capacity);

/**
 * Drop the caller's reference to @p store. The contents are freed when the
 * last backend attached to it is freed as well. NULL is allowed.
 */
OSD_EXTERN void osdfs_mem_store_free(osdfs_mem_store *store);

/**
 * A mem backend on an existing store. The backend takes its own reference,
 * so a mount may own and free the backend while the caller keeps the store
 * (and its objects) for a later remount through a new attached backend.
 * Several backends may be attached at once; they see the same objects.
 * @param[out] out the backend, released with osdfs_backend_free() or owned by
 *                 a mount
 * @param store the store (borrowed; the backend keeps it alive)
 * @return 0, -EINVAL if @p store is NULL, or -ENOMEM.
 */
OSD_EXTERN int osdfs_backend_mem_attach(osdfs_backend **out, osdfs_mem_store *store);

/**
 * A backend on partition @p partition of an OSD reached through @p dev.
 *
 * Each operation is one OSD command (format and OSD-1 punch take several):
 * create = CREATE of the exact id with the attributes in its set list; write
 * = WRITE with a piggy-backed set list; read = READ (a short read at the
 * logical end is a success); truncate = SET ATTRIBUTES of the logical length
 * (page 1, 0x82); punch = PUNCH on OSD-2, and on OSD-1 WRITEs of zeros over the
 * part inside the logical length; list = LIST from the given id; flush =
 * FLUSH, or FLUSH PARTITION for oid 0; format = LIST of the root to see
 * whether the partition exists; if not, CREATE PARTITION with the partition
 * capacity quota (0x30000002/0x10001) set to the capacity; if it does, REMOVE
 * COLLECTION (OSD-2) and REMOVE of everything LIST COLLECTION and LIST name,
 * then SET ATTRIBUTES of that quota; the partition's keys and policy/security
 * attributes are kept (see docs/backends.md); statfs = that quota,
 * partition used capacity and object count (0x30000001/0x81, 0xC1) and root
 * total minus used capacity (0x90000001/0x80, 0x81) as device_free. Retrieved
 * attributes longer than the caller's buffer cost one more GET ATTRIBUTES.
 * submit() uses osd_req_submit(); poll() drives the device's event loop when
 * its transport has an fd. Errors are osd_req_result() values (see
 * osd_sense_errno_cmd()); security is whatever @p dev is configured for.
 *
 * @param[out] out the backend, released with osdfs_backend_free() or owned by
 *                 a mount
 * @param dev libosd device (osd/request.h), borrowed; must outlive the backend
 * @param partition partition id, at least OSD_FIRST_ID
 * @return 0, -EINVAL (NULL @p dev, reserved @p partition) or -ENOMEM.
 */
OSD_EXTERN int osdfs_backend_osd_new(osdfs_backend **out, struct osd_dev *dev,
				     uint64_t partition);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
