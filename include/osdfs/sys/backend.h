/**
 * @file osdfs/sys/backend.h
 * @brief The object-store API under osdfs: a versioned backend vtable.
 *
 * A backend stores the objects of one filesystem (one OSD partition): flat
 * 64-bit object ids, each with a byte array and attributes addressed by
 * (page, number). osdfs ships two backends, "osd" (libosd over any
 * transport) and "mem" (in memory); applications may supply their own.
 *
 * Every operation returns 0 (or a non-negative count) or a negative errno.
 * Operations may be called from several threads at once.
 *
 * @defgroup osdfs_backend Object-store backend interface
 * @{
 */
#ifndef OSDFS_SYS_BACKEND_H
#define OSDFS_SYS_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <osd/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One attribute in a get or set call. */
struct osdfs_attr {
	uint32_t page;    /**< attribute page */
	uint32_t number;  /**< attribute number */
	void *value;      /**< set: the value; get: buffer to fill */
	uint32_t len;     /**< set: value length (0 deletes); get: in = buffer size,
			       out = value length (0 = not defined; may exceed the
			       buffer size, in which case the value was cut) */
};

/** Space accounting of the backend's partition. */
struct osdfs_backend_stat {
	uint64_t capacity;   /**< bytes the partition may use; 0 = unlimited */
	uint64_t used;       /**< bytes used */
	uint64_t objects;    /**< number of objects */
	uint64_t device_free;/**< bytes free on the device (bounds "unlimited") */
};

/** Kinds of asynchronous operation. */
enum osdfs_op_kind {
	OSDFS_OP_READ,
	OSDFS_OP_WRITE,
	OSDFS_OP_GET_ATTRS,
	OSDFS_OP_SET_ATTRS,
	OSDFS_OP_CREATE,
	OSDFS_OP_REMOVE,
	OSDFS_OP_FLUSH
};

/**
 * What a new object will hold, as its creator says at create: a hint that
 * lets a backend place objects of each class differently (the layout
 * backend stripes data objects under their data map and mirrors the
 * others whole); a backend may ignore it. Values never change meaning; a
 * backend treats a value it does not know as OSDFS_OBJ_UNKNOWN.
 */
enum osdfs_obj_class {
	OSDFS_OBJ_UNKNOWN = 0, /**< not said (create(), or an op without the member) */
	OSDFS_OBJ_DATA = 1,    /**< bulk bytes read and written by extent: a regular file */
	OSDFS_OBJ_META = 2     /**< small records rewritten in place or whole: a superblock,
				    directory, symlink or device node */
};

/**
 * An asynchronous operation; the submitter owns it until @ref done runs.
 *
 * Extension rule: the struct only grows at its end, and @ref size says how
 * much of it the submitter knows (osdfs_op_init() sets it). A backend reads
 * a member added after @ref priv only when OSDFS_OP_HAS() says the
 * submitter's struct has it, and otherwise uses that member's documented
 * default. A size of 0 (a struct zeroed or built with designated
 * initializers by a submitter that does not set it) means "up to @ref
 * priv"; a non-zero size smaller than that is refused with -EINVAL.
 * Members are never removed, reordered or resized.
 */
struct osdfs_op {
	size_t size;               /**< sizeof(struct osdfs_op) the submitter was
				        built with, or 0 (see the rule above) */
	enum osdfs_op_kind kind;   /**< what to do */
	uint64_t oid;              /**< object */
	uint64_t offset;           /**< READ/WRITE */
	const struct iovec *iov;   /**< READ/WRITE data */
	int iovcnt;                /**< number of iovecs */
	struct osdfs_attr *attrs;  /**< attributes (GET/SET, or piggy-backed on
				        CREATE/WRITE as a set, on READ as a get) */
	int nattrs;                /**< number of attributes */
	ssize_t result;            /**< filled before done: bytes or 0, or -errno */
	void (*done)(struct osdfs_op *op); /**< completion; may run on any thread,
						 possibly inside submit() */
	void *priv;                /**< for the submitter */
	enum osdfs_obj_class obj_class; /**< CREATE: what the object will hold
					     (default OSDFS_OBJ_UNKNOWN) */
};

/** The size of struct osdfs_op through @ref osdfs_op::priv, the first layout. */
#define OSDFS_OP_BASE_SIZE (offsetof(struct osdfs_op, priv) + sizeof(void *))

/** Whether the submitter's struct osdfs_op @p op has member @p m. */
#define OSDFS_OP_HAS(op, m) \
	((op)->size >= offsetof(struct osdfs_op, m) + sizeof((op)->m))

/** Whether a backend can take @p op: its size is 0 or covers the first layout. */
#define OSDFS_OP_SIZE_OK(op) ((op)->size == 0 || (op)->size >= OSDFS_OP_BASE_SIZE)

/** Zero @p op and record the size this header declares. */
static inline void osdfs_op_init(struct osdfs_op *op)
{
	memset(op, 0, sizeof(*op));
	op->size = sizeof(*op);
}

/**
 * Backend operations. Set @ref version to OSDFS_BACKEND_VERSION. Every
 * member is required unless marked optional.
 */
struct osdfs_backend_ops {
	int version; /**< OSDFS_BACKEND_VERSION */
	/** Create object @p oid (exact id; -EEXIST if it exists) and set
	 *  @p nattrs attributes on it in the same operation. */
	int (*create)(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int nattrs);
	/** Remove object @p oid with its data and attributes (-ENOENT). */
	int (*remove)(void *impl, uint64_t oid);
	/** Read up to the iovec total from @p off. Returns bytes read: short
	 *  only at the object's logical end; holes read as zeros. */
	ssize_t (*read)(void *impl, uint64_t oid, uint64_t off,
			const struct iovec *iov, int iovcnt);
	/** Write the iovecs at @p off (extending the object) and set @p nattrs
	 *  attributes in the same operation (e.g. the inode's new size).
	 *  Returns bytes written. */
	ssize_t (*write)(void *impl, uint64_t oid, uint64_t off,
			 const struct iovec *iov, int iovcnt,
			 const struct osdfs_attr *attrs, int nattrs);
	/** Set the logical length (truncate or extend with zeros). */
	int (*truncate)(void *impl, uint64_t oid, uint64_t size);
	/** Deallocate a byte range (reads back zeros; length unchanged). */
	int (*punch)(void *impl, uint64_t oid, uint64_t off, uint64_t len);
	/** Get attributes (see struct osdfs_attr for lengths). -ENOENT if the
	 *  object does not exist. */
	int (*get_attrs)(void *impl, uint64_t oid, struct osdfs_attr *attrs, int nattrs);
	/** Set attributes (length 0 deletes). */
	int (*set_attrs)(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int nattrs);
	/** The object's logical length in bytes. */
	int (*size)(void *impl, uint64_t oid, uint64_t *size);
	/** List object ids >= @p start in ascending order: up to @p max into
	 *  @p ids, count in @p n, next start in @p next (0 = done). */
	int (*list)(void *impl, uint64_t start, uint64_t *ids, size_t max,
		    size_t *n, uint64_t *next);
	/** Make @p oid (or, with oid 0, everything) durable. */
	int (*flush)(void *impl, uint64_t oid);
	/** Create the partition (or empty it if it exists) with @p capacity
	 *  bytes (0 = unlimited). */
	int (*format)(void *impl, uint64_t capacity);
	/** Space accounting. */
	int (*statfs)(void *impl, struct osdfs_backend_stat *st);
	/** Optional: queue @p op; 0 if queued (done() will run), else -errno
	 *  and done() never runs. NULL: osdfs runs operations synchronously. */
	int (*submit)(void *impl, struct osdfs_op *op);
	/** Optional: wait until at least one submitted op completes (backends
	 *  whose completions need driving); NULL if completions just happen. */
	int (*poll)(void *impl);
	/** Release the backend. */
	void (*destroy)(void *impl);
	/** Optional (version 2): get every attribute a create, write or
	 *  set_attrs put on @p oid, not values the backend computes (OSD:
	 *  GET ATTRIBUTES of every page, osd2r01 §4.7.3, less the pages the
	 *  target maintains). Fills up to @p max entries of @p attrs, with the
	 *  values copied into @p buf (@p buflen bytes). Returns the number of
	 *  attributes, -ENOSPC if they do not fit (nothing is partial), -ENOENT.
	 *  NULL: an object cannot be copied whole; the layout backend refuses
	 *  to rebuild or resync with such a device (-EOPNOTSUPP). */
	int (*get_all_attrs)(void *impl, uint64_t oid, struct osdfs_attr *attrs, int max,
			     void *buf, size_t buflen);
	/** Optional (version 3): create() with a hint of what @p oid will hold
	 *  (@p cls, enum osdfs_obj_class), for a backend that places objects
	 *  by class. NULL: callers use create() and the backend is told nothing. */
	int (*create_class)(void *impl, uint64_t oid, enum osdfs_obj_class cls,
			    const struct osdfs_attr *attrs, int nattrs);
	/** Optional (version 4): how many times the device has reported a
	 *  reset that may have emptied its volatile cache (for OSD, unit
	 *  attentions 29h/00h-04h once it has answered a command: osd_dev_reset_count()),
	 *  in @p count. A change tells the layout backend the device lost what
	 *  it acknowledged since its last flush although no command failed (a
	 *  target restarted within the initiator's failover window). Returns 0,
	 *  or -EOPNOTSUPP when unknown. NULL: unknown. */
	int (*reset_count)(void *impl, uint64_t *count);
};

#define OSDFS_BACKEND_VERSION 4 /**< current struct osdfs_backend_ops version */
#define OSDFS_BACKEND_VERSION_1 1 /**< version without get_all_attrs (still accepted) */
#define OSDFS_BACKEND_VERSION_2 2 /**< version without create_class (still accepted) */
#define OSDFS_BACKEND_VERSION_3 3 /**< version without reset_count (still accepted) */

/** A backend instance: operations plus state (opaque handle). */
typedef struct osdfs_backend osdfs_backend;

/**
 * Wrap an implementation as a backend.
 * @param[out] out the backend, released with osdfs_backend_free() (which calls
 *                 ops->destroy(impl)), or handed to osdfs_mount() which then owns it
 * @param ops  the operations (copied; the table need not outlive the call)
 * @param impl the implementation's state, passed to every operation; owned by
 *             the backend on success, still the caller's on failure
 * @param name short name for messages, e.g. "mem" (copied)
 * @return 0, -EINVAL for a wrong version or a missing required member, -ENOMEM.
 */
OSD_EXTERN int osdfs_backend_new(osdfs_backend **out, const struct osdfs_backend_ops *ops,
				 void *impl, const char *name);

/** Release a backend not handed to a mount. NULL is allowed. */
OSD_EXTERN void osdfs_backend_free(osdfs_backend *be);

/** The operations of a backend (borrowed). */
OSD_EXTERN const struct osdfs_backend_ops *osdfs_backend_ops_of(const osdfs_backend *be);

/** The implementation pointer of a backend (borrowed). */
OSD_EXTERN void *osdfs_backend_impl(const osdfs_backend *be);

/** The name given to osdfs_backend_new (borrowed). */
OSD_EXTERN const char *osdfs_backend_name(const osdfs_backend *be);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
