/*
 * The durable object store under the software OSD target (internal API).
 *
 * A store lives in one directory and holds the OSD namespace: the root object
 * (0,0), partitions (P,0) and, inside each partition, user objects and
 * collections sharing one id space (P,O). Every object may carry attributes
 * addressed by (page, number); user objects also carry data.
 *
 * Conventions:
 * - Every function returns 0 (or the documented non-negative value) on
 *   success and a negative errno value on failure; errno is never used.
 * - All functions are thread-safe: any number of threads may call into one
 *   store at once. Only one process may open a store (-EBUSY otherwise).
 * - Durability: a mutation is durable once a flush covering it returns
 *   (osd_store_flush_object/_partition/_all), or when it returns if it was
 *   called with OSD_STORE_FUA or the store was opened with sync_writes.
 *   What a flush acknowledged survives kill -9 and a machine crash.
 *   Without a flush, a crash leaves a consistent earlier state.
 * - Object ids are not range-checked here (the exec engine enforces the
 *   0x10000 lower bound); only id 0 is special (root/partition object).
 *
 * Design and on-disk format: docs/target-store.md.
 */
#ifndef OSDTARGET_STORE_STORE_H
#define OSDTARGET_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <osd/types.h>

/** A store opened on one directory (opaque). */
struct osd_store;

/** Options for osd_store_open(). Zero-initialise, then set fields. */
struct osd_store_options {
	int create;          /* create (format) the store if the directory has none */
	uint64_t capacity;   /* total capacity in bytes, used unless one was set with
				osd_store_set_capacity()/osd_store_format(); 0 = the
				filesystem's size. Not persisted. */
	int sync_writes;     /* 1: every mutation is durable on return (as FUA) */
	/* 1: open a damaged store anyway. Keeps every intact record before and
	   after damage in the checkpoint and log (falling back to checkpoint.prev
	   and log.prev for a bad checkpoint), skips the damaged bytes, moves data
	   files no record names to quarantine/, reports what it skipped and
	   writes a clean checkpoint and log (docs/target-store.md, "Damage"). */
	int salvage;
	/* Told each store event with its level (OSD_STORE_LOG_*): what open
	   repaired (modes open to other users, damage), cut or quarantined, the filesystem running full and having
	   room again, I/O errors. One line, no line end. Called from any thread,
	   possibly with store locks held: it must not call into the store.
	   NULL: osd_store_error() only. */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
	/* 1: a store created by this open keeps no data checksums (for
	   benchmarks only: nothing then catches damaged data). Recorded in the
	   superblock; an existing store keeps the mode it was made with. */
	int no_checksums;
	/* 1: verify every READ against the data checksums. By default a block
	   verified once is trusted while its page stays in the host page cache
	   (docs/target-store.md, "Read trust"). Not persisted. */
	int verify_reads;
	/* 1: new objects get a data file of their own even when their data
	   would fit a pack slot (docs/target-store.md, "Packed small objects");
	   objects packed before stay packed while they fit. Not persisted. */
	int no_pack;
	/* Objects kept in memory once loaded, beyond those that must stay
	   (objects holding data, and changed ones until the next checkpoint):
	   the others stay on disk in the indexed checkpoint, with only a
	   16-byte index entry each in memory (docs/target-store.md, "Checkpoint
	   index"). 0: OSD_STORE_META_CACHE. Not persisted. */
	size_t meta_cache;
	/* 1: read every data file and sidecar of the store against its objects'
	   records, as opens before store format 6 did: the open loads every
	   object with data, counts the capacity used again from the files, and
	   moves files no object names to quarantine/ (what a crash can leave
	   behind: docs/target-store.md, Limits). Slow at millions of objects
	   with data; a checkpoint is written after it. Not persisted. */
	int scan_data;
};

/** Default osd_store_options.meta_cache (objects). */
#define OSD_STORE_META_CACHE 65536u

/** @name Levels of osd_store_options.log (the syslog values) */
/** @{ */
#define OSD_STORE_LOG_ERR 3
#define OSD_STORE_LOG_WARNING 4
#define OSD_STORE_LOG_NOTICE 5
/** @} */

/** Flag for mutating calls: durable before the call returns. */
#define OSD_STORE_FUA 0x1u
/*
 * osd_store_attr_set(): change the attribute in memory only (access times,
 * lazytime-like). The value is logged with the object's next logged
 * attribute change or by the next checkpoint, never by itself, a flush or
 * close; a crash or close before that loses it (docs/target-store.md).
 */
#define OSD_STORE_LAZY 0x2u
/*
 * Data calls (write, append, truncate, punch): the caller sets an attribute
 * of the object with a logged osd_store_attr_set() before its command
 * completes (the exec engine's "data modified" stamp), so a packed object's
 * new state goes into the log with that set, in one record. Without it the
 * data call logs the state itself: a command's records are in the log
 * before the next command's (docs/crash-model.md).
 */
#define OSD_STORE_STAMPED 0x4u

/** Largest attribute value length (OSD: 0xFFFF means "undefined"). */
#define OSD_STORE_ATTR_MAX 0xFFFEu

/** osd_store_attr_iterate() page value meaning "every page". */
#define OSD_STORE_ALL_PAGES 0xFFFFFFFFu

/** Quota value meaning "no limit" (the OSD default quota). */
#define OSD_STORE_NO_QUOTA UINT64_MAX

/* ---- lifetime ---------------------------------------------------------- */

/**
 * Open the store in @p dir (creating the directory and formatting a new store
 * when opts->create is set and no store exists there).
 * @param[out] out the store, closed with osd_store_close()
 * @param opts NULL for defaults (create = 0, capacity = fs size, no sync)
 * @param err if not NULL, receives a NUL-terminated message on failure
 * @return 0; -ENOENT (no store and create = 0); -EBUSY (opened by another
 *         process or handle); -EUCLEAN (damaged: bad superblock, checkpoint
 *         or log header, a missing or empty log, a damaged record with
 *         intact records after it; @p err names the file, the byte offset
 *         and what salvage would keep); or another -errno. A torn log tail
 *         (nothing intact after it) is not an error: it is cut off and
 *         reported by osd_store_error() and opts->log.
 */
int osd_store_open(struct osd_store **out, const char *dir,
		   const struct osd_store_options *opts, char *err, size_t errlen);

/** Make everything durable, release the lock and free @p st. NULL allowed. */
void osd_store_close(struct osd_store *st);

/**
 * The last notable message of @p st (recovery notes, last error detail).
 * Informational; the string is owned by the store, stable until close,
 * and may be overwritten by a later call from any thread.
 */
const char *osd_store_error(struct osd_store *st);

/**
 * FORMAT OSD: remove every partition, object, data byte and attribute
 * (root attributes included) and set the capacity (0 = keep the current one).
 * Durable on return. Concurrent calls on the store wait for it.
 */
int osd_store_format(struct osd_store *st, uint64_t capacity);

/* ---- partitions -------------------------------------------------------- */

/** Create partition @p pid (> 0). @return 0, -EINVAL, -EEXIST, -ENOMEM. */
int osd_store_partition_create(struct osd_store *st, uint64_t pid, unsigned flags);

/** Remove an empty partition and its attributes. @return 0, -ENOENT, -ENOTEMPTY. */
int osd_store_partition_remove(struct osd_store *st, uint64_t pid, unsigned flags);

/** @return 1 if partition @p pid exists, 0 if not. */
int osd_store_partition_exists(struct osd_store *st, uint64_t pid);

/**
 * List partition ids >= @p start in ascending order.
 * @param[out] ids up to @p max ids
 * @param[out] count number written
 * @param[out] next the id to pass as @p start to continue, 0 when the list
 *             is complete (may be NULL)
 */
int osd_store_partition_list(struct osd_store *st, uint64_t start, uint64_t *ids,
			     size_t max, size_t *count, uint64_t *next);

/** Number of partitions, and the highest partition id (0 if none); either may be NULL. */
int osd_store_partition_stats(struct osd_store *st, uint64_t *count, uint64_t *max_id);

/* ---- objects (user objects and collections) ---------------------------- */

/**
 * Create object (pid, oid) of @p type OSD_OBJ_USER or OSD_OBJ_COLLECTION.
 * @return 0, -EINVAL (oid 0 or bad type), -ENOENT (no partition), -EEXIST,
 *         -ENOMEM.
 */
int osd_store_object_create(struct osd_store *st, uint64_t pid, uint64_t oid,
			    enum osd_obj_type type, unsigned flags);

/**
 * Remove a user object or collection with its data and attributes
 * (its space is released when the removal is durable).
 * @return 0, -EINVAL (oid 0), -ENOENT.
 */
int osd_store_object_remove(struct osd_store *st, uint64_t pid, uint64_t oid,
			    unsigned flags);

/**
 * Type of any object: (0,0) root, (P,0) partition, (P,O) user object or
 * collection. @p type may be NULL (existence check).
 * @return 0 or -ENOENT.
 */
int osd_store_object_type(struct osd_store *st, uint64_t pid, uint64_t oid,
			  enum osd_obj_type *type);

/**
 * List object ids >= @p start (and >= 1) of partition @p pid in ascending
 * order; @p type 0 lists both kinds, OSD_OBJ_USER or OSD_OBJ_COLLECTION one.
 * @param[out] next the id to continue from, 0 when complete (may be NULL)
 * @return 0 or -ENOENT (no partition).
 */
int osd_store_object_list(struct osd_store *st, uint64_t pid, uint64_t start,
			  enum osd_obj_type type, uint64_t *ids, size_t max,
			  size_t *count, uint64_t *next);

/**
 * Number of objects of @p type (0: both kinds) in @p pid with ids >= @p start
 * (and >= 1), for LIST's ADDITIONAL LENGTH without collecting them: a binary
 * search, plus a scan when @p type is one kind and the partition holds
 * collections. @return 0 or -ENOENT (no partition).
 */
int osd_store_object_count(struct osd_store *st, uint64_t pid, uint64_t start,
			   enum osd_obj_type type, uint64_t *count);

/**
 * Number of objects (both kinds) in @p pid and the highest object id there
 * (0 if none); either may be NULL. @return 0 or -ENOENT.
 */
int osd_store_object_stats(struct osd_store *st, uint64_t pid, uint64_t *count,
			   uint64_t *max_id);

/* ---- user object data -------------------------------------------------- */
/* Data calls need a user object: -ENOENT if missing, -EINVAL for other types. */

/**
 * Read from @p offset into the iovecs. Bytes beyond the logical length are
 * not returned (short read); holes read as zeros. Every block read is
 * checked against its checksum.
 * @param[out] nread bytes read; on -EIO the bytes before the first bad one
 *             (offset + *nread is the first bad byte)
 * @return 0, -EIO (a checksum mismatch, a missing or short data file,
 *         missing checksums, or a read error of the host: an unrecovered
 *         read error; told to opts->log as an error), -ENOENT, -EINVAL.
 */
int osd_store_read(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t offset,
		   const struct iovec *iov, int iovcnt, size_t *nread);

/**
 * Verify every data checksum of user object (pid, oid) (scrub). Runs while
 * the store serves; a racing write is seen whole or not at all.
 * @param[out] bytes data bytes read and verified (holes are skipped)
 * @param[out] bad on -EIO, the offset of the first bad block
 * @return 0; -EIO (a checksum mismatch, missing or damaged checksums, or a
 *         read error of the host; told to opts->log as an error);
 *         -ENOTSUP (the store keeps no checksums); -ENOENT; -EINVAL.
 */
int osd_store_verify(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *bytes,
		     uint64_t *bad);

/**
 * Write all iovec bytes at @p offset, extending the logical length if needed.
 * @return 0, -EDQUOT (object or partition quota), -ENOSPC (store capacity,
 *         or the filesystem is full), -EFBIG, or an I/O -errno.
 */
int osd_store_write(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t offset,
		    const struct iovec *iov, int iovcnt, unsigned flags);

/**
 * Append at the logical length (atomically with respect to other appends).
 * @param[out] offset where the data went (may be NULL)
 */
int osd_store_append(struct osd_store *st, uint64_t pid, uint64_t oid,
		     const struct iovec *iov, int iovcnt, unsigned flags,
		     uint64_t *offset);

/** Set the logical length (shrinking discards data, extending reads zeros). */
int osd_store_truncate(struct osd_store *st, uint64_t pid, uint64_t oid,
		       uint64_t length, unsigned flags);

/**
 * Deallocate [offset, offset+len) clipped to the logical length; it reads as
 * zeros afterwards and the logical length does not change.
 */
int osd_store_punch(struct osd_store *st, uint64_t pid, uint64_t oid,
		    uint64_t offset, uint64_t len, unsigned flags);

/** Logical length in bytes. */
int osd_store_length(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *length);

/**
 * Used capacity in bytes of any object: for a user object its allocated data
 * bytes, for a partition the sum over its objects, for the root the total.
 */
int osd_store_used(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *used);

/* ---- attributes (of any object, including root and partitions) ---------- */

/**
 * Get attribute (@p page, @p num) of object (pid, oid).
 * Copies min(len, bufsize) bytes into @p buf (may be NULL with bufsize 0).
 * @param[out] len the full value length
 * @return 0; -ENOENT if the object does not exist; -ENODATA if the attribute
 *         is not set.
 */
int osd_store_attr_get(struct osd_store *st, uint64_t pid, uint64_t oid,
		       uint32_t page, uint32_t num, void *buf, size_t bufsize,
		       size_t *len);

/**
 * Set attribute (@p page, @p num) to @p len bytes; @p len 0 deletes it.
 * Without OSD_STORE_FUA, setting the value the attribute already holds
 * logs nothing (it is already as durable as the store's commit policy makes it).
 * A logged set first logs the object's pending OSD_STORE_LAZY values, so a
 * write persists the access times read before it. OSD_STORE_LAZY with @p len
 * 0 deletes as without it.
 * @return 0, -ENOENT (no object), -EINVAL (len > OSD_STORE_ATTR_MAX), -ENOMEM.
 */
int osd_store_attr_set(struct osd_store *st, uint64_t pid, uint64_t oid,
		       uint32_t page, uint32_t num, const void *val, size_t len,
		       unsigned flags);

/** One attribute value of osd_store_attrs_set(). */
struct osd_store_attr {
	uint32_t page, num;
	const void *val;
	size_t len;                /* 0 deletes */
};

/**
 * Set @p n attributes of object (pid, oid) in that order, logged together
 * as one record with the object's pending OSD_STORE_LAZY values (a command's
 * values and its timestamp: one record where osd_store_attr_set() wrote one
 * each). Without OSD_STORE_FUA, values the attributes already hold are
 * left out, and nothing is logged when all are. On -ENOMEM the values before
 * the one that failed are set and logged.
 * @return 0, -ENOENT (no object), -EIO (damaged records), -EINVAL (a len
 *         > OSD_STORE_ATTR_MAX), -ENOMEM, or a log write error.
 */
int osd_store_attrs_set(struct osd_store *st, uint64_t pid, uint64_t oid,
			const struct osd_store_attr *v, size_t n, unsigned flags);

/**
 * Called for each attribute; return 0 to continue, anything else stops the
 * iteration and becomes osd_store_attr_iterate()'s return value. The value
 * pointer is valid only during the call. The callback must not call into
 * the store.
 */
typedef int (*osd_store_attr_cb)(uint32_t page, uint32_t num, const void *val,
				 size_t len, void *payload);

/**
 * Visit the attributes of one page (or OSD_STORE_ALL_PAGES) of an object in
 * ascending (page, number) order.
 * @return 0, -ENOENT (no object), or the callback's non-zero value.
 */
int osd_store_attr_iterate(struct osd_store *st, uint64_t pid, uint64_t oid,
			   uint32_t page, osd_store_attr_cb cb, void *payload);

/* ---- durability ---------------------------------------------------------- */

/** Make the data and attributes of one object durable. -ENOENT if missing. */
int osd_store_flush_object(struct osd_store *st, uint64_t pid, uint64_t oid);

/** Make partition @p pid and everything in it durable. */
int osd_store_flush_partition(struct osd_store *st, uint64_t pid);

/** Make everything durable (FLUSH OSD). */
int osd_store_flush_all(struct osd_store *st);

/* ---- capacity -------------------------------------------------------------- */

/** Total capacity and used bytes of the store; either may be NULL. */
int osd_store_capacity(struct osd_store *st, uint64_t *total, uint64_t *used);

/**
 * Set the persisted total capacity (0 = none: the open option, else the
 * filesystem's size). Durable with the next flush.
 */
int osd_store_set_capacity(struct osd_store *st, uint64_t total, unsigned flags);

/**
 * Set the quota of a partition (oid 0) or user object (OSD_STORE_NO_QUOTA
 * = unlimited, the default). Writes that would make the used capacity exceed
 * a quota fail with -EDQUOT. @return 0, -ENOENT, -EINVAL (root).
 */
int osd_store_set_quota(struct osd_store *st, uint64_t pid, uint64_t oid,
			uint64_t quota, unsigned flags);

/** Current quota of a partition or user object. */
int osd_store_get_quota(struct osd_store *st, uint64_t pid, uint64_t oid,
			uint64_t *quota);

#endif
