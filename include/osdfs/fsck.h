/**
 * @file osdfs/fsck.h
 * @brief Checking and repairing an osdfs filesystem (repairs only while unmounted).
 *
 * osdfs_fsck() reads every object of a backend: the superblock, every inode
 * attribute and every directory, and cross-checks them. With repair it
 * fixes what it found (see docs/osdfs-cli.md, "fsck", for what each repair
 * does), then checks again; damage still present afterwards is reported as
 * unrepaired.
 *
 * @defgroup osdfs_fsck Filesystem check
 * @{
 */
#ifndef OSDFS_FSCK_H
#define OSDFS_FSCK_H

#include <stdint.h>
#include <osd/types.h>
#include <osdfs/sys/backend.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Kinds of finding. */
enum osdfs_fsck_kind {
	OSDFS_FSCK_SUPERBLOCK,      /**< superblock or root directory missing or
				         corrupt (not repairable) */
	OSDFS_FSCK_MOUNT_RECORD,    /**< a mount record left by a crash (cleared) */
	OSDFS_FSCK_COUNTERS,        /**< next inode number not above every inode in use,
				         or a directory's entry count wrong */
	OSDFS_FSCK_BAD_INODE,       /**< an inode attribute that cannot be decoded
				         (the object is removed) */
	OSDFS_FSCK_ORPHAN,          /**< an inode no directory reaches from the root
				         (moved to /lost+found, or removed if empty or
				         already unlinked) */
	OSDFS_FSCK_LINK_COUNT,      /**< link count differs from the entries naming it */
	OSDFS_FSCK_DANGLING_ENTRY,  /**< a directory entry naming a missing inode (removed) */
	OSDFS_FSCK_BAD_SIZE,        /**< a size that disagrees with the object or index */
	OSDFS_FSCK_CORRUPT_DIR,     /**< an unreadable directory index or block (the
				         directory is rebuilt from its valid entries) */
	OSDFS_FSCK_DUPLICATE_ENTRY, /**< a stored "." or ".." record, a name twice in one
				         directory, or a directory linked twice (extra
				         entries dropped) */
	OSDFS_FSCK_PARENT,          /**< a directory's parent pointer is wrong */
	OSDFS_FSCK_DATA_IO,         /**< a file's data could not be read (an I/O
				         error; found by
				         @ref osdfs_fsck_options.verify_data, not
				         repairable by fsck) */
	OSDFS_FSCK_KIND_COUNT       /**< number of kinds (not a kind) */
};

/**
 * Receives one finding.
 * @param kind what was found
 * @param message a one-line description naming the inode, directory and entry
 *                (borrowed for the call)
 * @param payload the options' @ref osdfs_fsck_options.payload
 */
typedef void (*osdfs_fsck_cb)(enum osdfs_fsck_kind kind, const char *message,
			      void *payload);

/** How far osdfs_fsck() has got (osdfs_fsck_options version 2). */
struct osdfs_fsck_progress {
	const char *phase; /**< "inodes": reading every inode; then "directories":
			        reading every directory (static strings) */
	uint64_t done;     /**< inodes or directories read so far in this phase */
	uint64_t total;    /**< how many there are: exact for "directories", the
			        partition's object count for "inodes"; 0 if unknown */
};

/**
 * Called as osdfs_fsck() progresses: after each inode and each directory
 * read by the check (not by the verification after a repair).
 * @param p where it is
 * @param payload the pointer given with the callback
 */
typedef void (*osdfs_fsck_progress_cb)(const struct osdfs_fsck_progress *p, void *payload);

/** Version of struct osdfs_fsck_options (1: without the progress callback;
 *  2: without @ref osdfs_fsck_options.verify_data). Older versions are accepted. */
#define OSDFS_FSCK_OPTIONS_VERSION 3

/** Options of osdfs_fsck(); initialise with @ref OSDFS_FSCK_OPTIONS_INIT. */
struct osdfs_fsck_options {
	unsigned int version;  /**< OSDFS_FSCK_OPTIONS_VERSION */
	int repair;            /**< non-zero: repair what is found */
	osdfs_fsck_cb cb;      /**< called for each finding, or NULL */
	void *payload;         /**< passed to @ref cb */
	osdfs_fsck_progress_cb progress; /**< version 2: called as it goes, or NULL */
	void *progress_payload;          /**< version 2: passed to @ref progress */
	int verify_data;       /**< (version 3) non-zero: also read every byte of
				    every regular file and report each range that
				    fails as OSDFS_FSCK_DATA_IO, naming the path */
};

/** Default fsck options: check only, no callbacks. */
#define OSDFS_FSCK_OPTIONS_INIT { OSDFS_FSCK_OPTIONS_VERSION, 0, NULL, NULL, NULL, NULL, 0 }

/** What osdfs_fsck() found and did. */
struct osdfs_fsck_report {
	uint64_t found[OSDFS_FSCK_KIND_COUNT]; /**< findings of each kind (first pass) */
	uint64_t total;       /**< all findings of the first pass */
	uint64_t repaired;    /**< findings repaired (0 without repair) */
	uint64_t unrepaired;  /**< findings still present at the end */
	uint64_t inodes;      /**< inodes examined */
	uint64_t directories; /**< directories examined */
	uint64_t entries;     /**< directory entries examined */
	uint64_t data_bytes;  /**< file bytes read by verify_data */
};

/**
 * Check (and optionally repair) the filesystem on @p be. A mount record
 * whose holder is gone (osdfs_holder_get()) is stale and reported (and
 * cleared by a repair). A filesystem whose holder still looks alive is
 * checked without repair only: the record is no finding, and changes the
 * holder makes during the check may be reported as damage; a repair is
 * refused with -EBUSY.
 * @param be the backend (borrowed)
 * @param opts options, or NULL for the defaults
 * @param[out] out the report (may be NULL)
 * @return 0 if the filesystem is clean at the end (nothing found, or every
 *         finding repaired); -EUCLEAN if damage remains (found without
 *         repair, or not repairable); -EPROTONOSUPPORT for a format version
 *         or incompatible features this library does not know (as
 *         osdfs_mount() refuses them: one superblock finding, nothing
 *         checked or changed); -EROFS for a repair of a filesystem with
 *         read-only-compatible features it does not know (one superblock
 *         finding, nothing changed; a check without repair runs);
 *         -EBUSY for a repair of a filesystem in use;
 *         -EINVAL for bad options; -ENOMEM or a backend error if the check
 *         could not run.
 */
OSD_EXTERN int osdfs_fsck(osdfs_backend *be, const struct osdfs_fsck_options *opts,
			  struct osdfs_fsck_report *out);

/**
 * A short name of a finding kind ("orphan", "link-count", ...), or "unknown".
 */
OSD_EXTERN const char *osdfs_fsck_kind_name(enum osdfs_fsck_kind kind);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
