/**
 * @file osdfs/osdfs.h
 * @brief The osdfs filesystem: mkfs, mount, and an inode-level POSIX API.
 *
 * osdfs stores a POSIX filesystem in the objects of one backend
 * (osdfs/sys/backend.h; shipped backends in osdfs/backends.h). The API is
 * shaped for a FUSE low-level frontend: every call names inodes by their
 * 64-bit number, and the root directory is @ref OSDFS_ROOT_INO. Path-based
 * helpers (osdfs_resolve(), osdfs_stat_path()) serve command-line tools.
 *
 * Conventions:
 * - Every function returns 0 (or a non-negative count) or a negative errno.
 *   osdfs_error() gives a message for the last failure on a handle.
 * - The library does not check permissions: a frontend enforces them (FUSE
 *   "default_permissions") and passes the caller's ids in struct osdfs_cred
 *   for new inodes.
 * - A mounted handle may be used from several threads at once.
 * - The on-object format is described in docs/osdfs-format.md.
 *
 * @defgroup osdfs Filesystem API
 * @{
 */
#ifndef OSDFS_OSDFS_H
#define OSDFS_OSDFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <osd/types.h>
#include <osdfs/sys/backend.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A mounted filesystem (opaque handle). */
typedef struct osdfs osdfs;

/** An open file (opaque handle), from osdfs_open() or osdfs_create(). */
typedef struct osdfs_file osdfs_file;

/** Inode number of the root directory. */
#define OSDFS_ROOT_INO 1
/** Longest name of a directory entry, in bytes. */
#define OSDFS_NAME_MAX 255
/** Longest symbolic link target, in bytes (without the terminating NUL). */
#define OSDFS_SYMLINK_MAX 4095
/** Longest path accepted by the path-based helpers, in bytes. */
#define OSDFS_PATH_MAX 4096
/** Symbolic links followed during one path resolution before -ELOOP. */
#define OSDFS_SYMLOOP_MAX 40
/** Longest label stored by osdfs_mkfs(), in bytes (without NUL). */
#define OSDFS_LABEL_MAX 63

/** A point in time: seconds since 1970-01-01 UTC plus nanoseconds. */
struct osdfs_timespec {
	int64_t sec;   /**< seconds (may be negative) */
	uint32_t nsec; /**< nanoseconds, 0..999999999 */
};

/** Attributes of an inode (host order; independent of the C library's stat). */
struct osdfs_stat {
	uint64_t ino;         /**< inode number */
	uint32_t mode;        /**< file type and permission bits (S_IF* | 07777) */
	uint32_t nlink;       /**< hard links */
	uint32_t uid;         /**< owner */
	uint32_t gid;         /**< group */
	uint64_t size;        /**< bytes (symlinks: target length) */
	uint64_t blocks;      /**< 512-byte units of space charged to the inode */
	uint64_t rdev;        /**< device number (Linux dev_t encoding) of device files */
	uint32_t blksize;     /**< preferred I/O size (the filesystem block size) */
	struct osdfs_timespec atime;  /**< last access */
	struct osdfs_timespec mtime;  /**< last data change */
	struct osdfs_timespec ctime;  /**< last inode change */
	struct osdfs_timespec crtime; /**< creation */
	uint64_t generation;  /**< changes whenever an inode number is given to a new inode */
};

/** Ids given to new inodes. */
struct osdfs_cred {
	uint32_t uid; /**< owner of new inodes */
	uint32_t gid; /**< group of new inodes (unless the parent is set-group-id) */
};

/** Version of struct osdfs_mkfs_options. */
#define OSDFS_MKFS_OPTIONS_VERSION 1

/** Options of osdfs_mkfs(); initialise with @ref OSDFS_MKFS_OPTIONS_INIT. */
struct osdfs_mkfs_options {
	unsigned int version;  /**< OSDFS_MKFS_OPTIONS_VERSION */
	uint64_t capacity;     /**< bytes for the partition; 0 keeps the backend's */
	uint32_t block_size;   /**< directory block and preferred I/O size: a power
				    of two, 1024..32768 (default 4096) */
	uint8_t uuid[16];      /**< filesystem uuid; all zero = random */
	const char *label;     /**< label (at most OSDFS_LABEL_MAX bytes) or NULL */
	uint32_t root_mode;    /**< permission bits of the root directory */
	uint32_t root_uid;     /**< owner of the root directory */
	uint32_t root_gid;     /**< group of the root directory */
};

/** Default mkfs options: backend capacity, 4096-byte blocks, random uuid, root 0755. */
#define OSDFS_MKFS_OPTIONS_INIT { OSDFS_MKFS_OPTIONS_VERSION, 0, 4096, {0}, NULL, 0755, 0, 0 }

/**
 * Create an empty filesystem on a backend, erasing everything on it.
 * @param be the backend (borrowed; still owned by the caller afterwards)
 * @param opts options, or NULL for the defaults
 * @return 0; -EINVAL for bad options; -ENOSPC, -EIO or another backend error.
 */
OSD_EXTERN int osdfs_mkfs(osdfs_backend *be, const struct osdfs_mkfs_options *opts);

/** Mount read-only: nothing is written (not even the mount record). */
#define OSDFS_MOUNT_RDONLY 0x1u
/**
 * Mount a filesystem whose mount record names a holder that is gone: its
 * lease expired, or it was a process of this host that no longer runs
 * (@ref osdfs_holder_get). A holder that still looks alive is refused
 * (-EBUSY) even so. Read-only, it allows looking at any mounted filesystem.
 */
#define OSDFS_MOUNT_FORCE 0x2u
/** The caller keeps ownership of the backend: osdfs_unmount() does not free it. */
#define OSDFS_MOUNT_KEEP_BACKEND 0x4u
/**
 * With OSDFS_MOUNT_FORCE: take over even a holder that still looks alive.
 * Only for a holder known to be gone that the checks cannot see (another
 * host that crashed before its lease ran out); a live holder that is taken
 * over gets -ESTALE and stops writing at its next sync or lease renewal.
 */
#define OSDFS_MOUNT_FORCE_LIVE 0x8u

/** Version of struct osdfs_mount_options (1: without @ref osdfs_mount_options.lease_sec). */
#define OSDFS_MOUNT_OPTIONS_VERSION 2

/** Lease of a read-write mount when the options give none, in seconds. */
#define OSDFS_LEASE_DEFAULT 30u

/** Options of osdfs_mount(); initialise with @ref OSDFS_MOUNT_OPTIONS_INIT. */
struct osdfs_mount_options {
	unsigned int version;     /**< OSDFS_MOUNT_OPTIONS_VERSION (1 is still accepted) */
	unsigned int flags;       /**< OSDFS_MOUNT_* bits */
	uint32_t inode_cache;     /**< inodes kept cached when unused; 0 = default (4096) */
	uint32_t dir_cache;       /**< directory blocks cached, and name summaries of 32 times as
				       many (docs/osdfs-format.md 4.5); 0 = default (4096) */
	const char *host;         /**< host name for the mount record; NULL = gethostname() */
	char *error;              /**< if not NULL, receives the reason when osdfs_mount() fails */
	size_t error_size;        /**< size of @ref error */
	uint32_t lease_sec;       /**< lease of a read-write mount, 3..86400 seconds;
				       0 = @ref OSDFS_LEASE_DEFAULT (version 2) */
};

/** Default mount options: read-write, exclusive, default cache sizes and lease. */
#define OSDFS_MOUNT_OPTIONS_INIT { OSDFS_MOUNT_OPTIONS_VERSION, 0, 0, 0, NULL, NULL, 0, 0 }

/**
 * Mount the filesystem stored on a backend.
 *
 * A read-write mount writes a mount record (random id, host, pid and a
 * lease) into the superblock and renews the lease from a thread of its own
 * every third of the lease until osdfs_unmount(). A second mount
 * (read-write or read-only) of a filesystem that carries a record fails
 * with -EBUSY (the options' error buffer says who holds it and whether it
 * looks alive) unless OSDFS_MOUNT_FORCE and the holder is gone (see
 * @ref OSDFS_MOUNT_FORCE). A forced read-write mount that finds a record
 * first repairs the filesystem with osdfs_fsck() (the holder crashed;
 * docs/crash-model.md). A read-write mount also frees the inodes a
 * previous mount left unlinked but open (the orphan list).
 *
 * @param[out] out the mounted filesystem, released with osdfs_unmount()
 * @param be the backend; on success the mount owns it (unless
 *           OSDFS_MOUNT_KEEP_BACKEND), on failure the caller still does
 * @param opts options, or NULL for the defaults
 * @return 0; -EBUSY (mounted elsewhere), -EUCLEAN (not an osdfs filesystem
 *         or a corrupt superblock), -EPROTONOSUPPORT (format version or
 *         incompatible features not supported), -EROFS (read-write mount of
 *         a filesystem with unknown read-only-compatible features), -EINVAL
 *         (bad options), -ENOMEM, or a backend error.
 */
OSD_EXTERN int osdfs_mount(osdfs **out, osdfs_backend *be,
			   const struct osdfs_mount_options *opts);

/**
 * Write everything cached, clear the mount record and release the handle
 * (and the backend unless OSDFS_MOUNT_KEEP_BACKEND). Open files should have
 * been released: any still open are leaked (never call osdfs_release() on
 * them afterwards), and unlinked ones stay on the orphan list for the next
 * mount to free. The handle is freed even when an error is returned.
 * @param fs the filesystem, or NULL
 * @return 0; -ESTALE if another mount took the filesystem over by force
 *         (nothing was written), or the first write error.
 */
OSD_EXTERN int osdfs_unmount(osdfs *fs);

/** What the mount record of a filesystem says about its holder. */
enum osdfs_holder_state {
	OSDFS_HOLDER_NONE,    /**< no mount record: not mounted read-write */
	OSDFS_HOLDER_LIVE,    /**< mounted, and the holder looks alive (its lease is
				   current, or it is a running process of this host) */
	OSDFS_HOLDER_EXPIRED, /**< the lease ran out without renewal (or the record
				   has no lease): the holder is presumed gone */
	OSDFS_HOLDER_DEAD     /**< the holder was a process of this host that no
				   longer runs */
};

/** The holder of a mounted filesystem, from osdfs_holder_get(). */
struct osdfs_holder {
	enum osdfs_holder_state state; /**< see @ref osdfs_holder_state */
	unsigned int record_version;   /**< 1 (no lease) or 2; 0 = unreadable record */
	char host[65];                 /**< host name of the holder, NUL terminated */
	uint32_t pid;                  /**< process id of the holder on its host */
	uint64_t mount_id;             /**< random id of that mount */
	int64_t mount_time;            /**< when it mounted, seconds since the epoch */
	int64_t renewed;               /**< last lease renewal (holder's clock), or 0 */
	uint32_t lease_sec;            /**< lease length in seconds; 0 = none recorded */
	int64_t expires_in;            /**< seconds until the lease runs out by this
					    host's clock (negative: ran out that long ago) */
};

/**
 * Read the mount record of the filesystem on @p be and judge its holder:
 * alive, gone (lease expired, or a process of this host that has ended),
 * or none. Records of format version 1 (no lease) count as expired unless
 * they name a running process of this host.
 * @param be the backend (borrowed)
 * @param[out] out the holder (state OSDFS_HOLDER_NONE when not mounted)
 * @return 0; -EUCLEAN if there is no superblock object; a backend error.
 */
OSD_EXTERN int osdfs_holder_get(osdfs_backend *be, struct osdfs_holder *out);

/**
 * One line describing a holder for messages, e.g. "mounted by host 'h'
 * pid 42 (mount id ...) since 2026-12-04 10:00:00 UTC; lease renewed 3 s
 * ago, runs out in 27 s".
 * @param h the holder
 * @param[out] buf receives the text, NUL terminated (truncated to fit)
 * @param size size of @p buf
 * @return @p buf
 */
OSD_EXTERN char *osdfs_holder_format(const struct osdfs_holder *h, char *buf, size_t size);

/**
 * A message describing the last failure on @p fs. Never NULL. Thread-safe:
 * the message is copied, under the handle's lock, into a buffer of the
 * calling thread, valid until that thread's next osdfs_error() call (on any
 * handle). With several threads the last failure may be another thread's
 * call; osdfs_error_copy() gives a copy the caller keeps.
 */
OSD_EXTERN const char *osdfs_error(osdfs *fs);

/**
 * The largest size of a file, in bytes (2^62). Writes, fallocate and
 * truncation (osdfs_setattr() with OSDFS_SET_SIZE) beyond it fail with
 * -EFBIG and change nothing.
 */
#define OSDFS_MAX_FILE_SIZE (1ULL << 62)

/**
 * Copy the message osdfs_error() would return into @p buf, like
 * snprintf(): at most @p len - 1 bytes and a NUL (nothing when @p len is 0).
 * Thread-safe.
 * @return the length of the whole message (>= @p len: cut short).
 */
OSD_EXTERN size_t osdfs_error_copy(osdfs *fs, char *buf, size_t len);

/** Facts about a mounted filesystem. */
struct osdfs_info {
	uint8_t uuid[16];              /**< filesystem uuid */
	char label[OSDFS_LABEL_MAX + 1]; /**< label, NUL terminated */
	uint32_t block_size;           /**< block size chosen at mkfs */
	uint32_t format_version;       /**< on-object format version */
	int readonly;                  /**< 1 if mounted read-only */
};

/**
 * Describe a mounted filesystem.
 * @param fs the mounted filesystem
 * @param[out] info filled in
 * @return 0.
 */
OSD_EXTERN int osdfs_get_info(osdfs *fs, struct osdfs_info *info);

/**
 * Find @p name in directory @p parent.
 * @param fs the mounted filesystem
 * @param parent the directory holding @p name
 * @param name entry name (1..OSDFS_NAME_MAX bytes, no '/')
 * @param[out] out attributes of the entry's inode (may be NULL)
 * @return 0; -ENOENT, -ENOTDIR (parent not a directory), -ENAMETOOLONG,
 *         -EUCLEAN (corrupt directory), -EIO.
 */
OSD_EXTERN int osdfs_lookup(osdfs *fs, uint64_t parent, const char *name,
			    struct osdfs_stat *out);

/**
 * Attributes of inode @p ino.
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param[out] out filled in
 * @return 0; -ENOENT if there is no such inode.
 */
OSD_EXTERN int osdfs_getattr(osdfs *fs, uint64_t ino, struct osdfs_stat *out);

/** @name osdfs_setattr() mask bits
 * @{ */
#define OSDFS_SET_MODE      0x001u /**< permission bits from mode (type ignored) */
#define OSDFS_SET_UID       0x002u /**< uid */
#define OSDFS_SET_GID       0x004u /**< gid */
#define OSDFS_SET_SIZE      0x008u /**< size: truncate or extend with zeros (regular files) */
#define OSDFS_SET_ATIME     0x010u /**< atime from the argument */
#define OSDFS_SET_MTIME     0x020u /**< mtime from the argument */
#define OSDFS_SET_ATIME_NOW 0x040u /**< atime = now */
#define OSDFS_SET_MTIME_NOW 0x080u /**< mtime = now */
#define OSDFS_SET_CTIME     0x100u /**< ctime from the argument (otherwise now) */
#define OSDFS_SET_CRTIME    0x200u /**< crtime from the argument */
/** @} */

/**
 * Change attributes (chmod, chown, utimens, truncate). ctime becomes now
 * unless OSDFS_SET_CTIME. Changing uid or gid clears set-user-id and, when
 * group-executable, set-group-id bits of non-directories.
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param st the new values (only the fields selected by @p mask are read)
 * @param mask OSDFS_SET_* bits
 * @param[out] out the resulting attributes (may be NULL)
 * @return 0; -ENOENT, -EISDIR (size of a directory), -EINVAL (size of
 *         another non-regular file), -EROFS, -EFBIG, -ENOSPC, -EIO.
 */
OSD_EXTERN int osdfs_setattr(osdfs *fs, uint64_t ino, const struct osdfs_stat *st,
			     unsigned int mask, struct osdfs_stat *out);

/**
 * Create a regular file, fifo, socket or device node.
 * @param fs the mounted filesystem
 * @param parent the directory holding @p name
 * @param name entry name (1..OSDFS_NAME_MAX bytes, no '/')
 * @param mode file type (S_IFREG, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK) and permissions
 * @param rdev device number for S_IFCHR / S_IFBLK (Linux dev_t encoding)
 * @param cred owner of the new inode, or NULL for 0:0
 * @param[out] out attributes of the new inode (may be NULL)
 * @return 0; -EEXIST, -ENOENT, -ENOTDIR, -ENAMETOOLONG, -EINVAL (bad type
 *         or name), -ENOSPC, -EROFS, -EIO.
 */
OSD_EXTERN int osdfs_mknod(osdfs *fs, uint64_t parent, const char *name, uint32_t mode,
			   uint64_t rdev, const struct osdfs_cred *cred,
			   struct osdfs_stat *out);

/**
 * Create a directory. Errors as osdfs_mknod(); -EMLINK if the parent has
 * too many links.
 * @param fs the mounted filesystem
 * @param parent the directory holding @p name
 * @param name entry name (1..OSDFS_NAME_MAX bytes, no '/')
 * @param mode permission bits
 * @param cred owner, or NULL for 0:0
 * @param[out] out attributes of the new directory (may be NULL)
 */
OSD_EXTERN int osdfs_mkdir(osdfs *fs, uint64_t parent, const char *name, uint32_t mode,
			   const struct osdfs_cred *cred, struct osdfs_stat *out);

/**
 * Create a regular file and open it.
 * If @p name exists: -EEXIST with O_EXCL in @p flags, else the existing
 * regular file is opened (-EISDIR for a directory).
 * @param fs the mounted filesystem
 * @param parent the directory holding @p name
 * @param name entry name (1..OSDFS_NAME_MAX bytes, no '/')
 * @param mode permission bits
 * @param flags open(2) flags: access mode, O_EXCL, O_TRUNC, O_APPEND
 * @param cred owner, or NULL for 0:0
 * @param[out] out attributes of the file (may be NULL)
 * @param[out] fh the open file, released with osdfs_release()
 * @return 0 or an error as osdfs_mknod().
 */
OSD_EXTERN int osdfs_create(osdfs *fs, uint64_t parent, const char *name, uint32_t mode,
			    int flags, const struct osdfs_cred *cred,
			    struct osdfs_stat *out, osdfs_file **fh);

/**
 * Create a symbolic link @p name pointing at @p target. Short targets are
 * kept in the inode ("fast"), longer ones in the object's data.
 * @param fs the mounted filesystem
 * @param parent the directory holding @p name
 * @param name entry name (1..OSDFS_NAME_MAX bytes, no '/')
 * @param target the link target
 * @param cred owner, or NULL for 0:0
 * @param[out] out attributes of the link (may be NULL)
 * @return 0; -ENAMETOOLONG if @p target is longer than OSDFS_SYMLINK_MAX;
 *         -ENOENT for an empty target; other errors as osdfs_mknod().
 */
OSD_EXTERN int osdfs_symlink(osdfs *fs, uint64_t parent, const char *name,
			     const char *target, const struct osdfs_cred *cred,
			     struct osdfs_stat *out);

/**
 * Read a symbolic link's target.
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param size size of the buffer in bytes
 * @param[out] buf receives up to @p size bytes; NUL terminated if the
 *                 target is shorter than @p size
 * @return the target's length; -EINVAL if @p ino is not a symlink; -ENOENT.
 */
OSD_EXTERN ssize_t osdfs_readlink(osdfs *fs, uint64_t ino, char *buf, size_t size);

/**
 * Add a hard link @p newname in @p newparent to inode @p ino.
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param newparent the directory to hold @p newname
 * @param newname the new entry name
 * @param[out] out attributes of @p ino (may be NULL)
 * @return 0; -EPERM for a directory; -EMLINK; -EEXIST; errors as osdfs_mknod().
 */
OSD_EXTERN int osdfs_link(osdfs *fs, uint64_t ino, uint64_t newparent, const char *newname,
			  struct osdfs_stat *out);

/**
 * Remove a non-directory entry. The inode is freed when its last link and
 * last open file are gone.
 * @return 0; -ENOENT, -EISDIR, -ENOTDIR, -EROFS, -EIO.
 */
OSD_EXTERN int osdfs_unlink(osdfs *fs, uint64_t parent, const char *name);

/**
 * Remove an empty directory.
 * @return 0; -ENOTEMPTY, -ENOTDIR, -ENOENT, -EINVAL ("."), -EBUSY (the root).
 */
OSD_EXTERN int osdfs_rmdir(osdfs *fs, uint64_t parent, const char *name);

/** osdfs_rename(): fail with -EEXIST if the target exists. */
#define OSDFS_RENAME_NOREPLACE 0x1u
/** osdfs_rename(): atomically exchange source and target (both must exist). */
#define OSDFS_RENAME_EXCHANGE 0x2u

/**
 * Rename (POSIX rename(2) plus Linux renameat2() flags). Works across any
 * two directories of the filesystem (never -EXDEV).
 * @param fs the mounted filesystem
 * @param parent the directory holding @p name
 * @param name entry name (1..OSDFS_NAME_MAX bytes, no '/')
 * @param newparent the directory to hold @p newname
 * @param newname the new entry name
 * @param flags 0, OSDFS_RENAME_NOREPLACE or OSDFS_RENAME_EXCHANGE
 * @return 0; -ENOENT; -EEXIST (NOREPLACE); -EISDIR (file over directory);
 *         -ENOTDIR (directory over file); -ENOTEMPTY; -EINVAL (directory into
 *         its own subtree, bad flags); -EBUSY (the root); -EMLINK; -EROFS.
 */
OSD_EXTERN int osdfs_rename(osdfs *fs, uint64_t parent, const char *name,
			    uint64_t newparent, const char *newname, unsigned int flags);

/**
 * Open inode @p ino.
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param flags open(2) flags: O_RDONLY/O_WRONLY/O_RDWR, O_TRUNC, O_APPEND;
 *              a directory may only be opened read-only
 * @param[out] fh the open file, released with osdfs_release()
 * @return 0; -ENOENT; -EISDIR (directory opened for writing); -EROFS.
 */
OSD_EXTERN int osdfs_open(osdfs *fs, uint64_t ino, int flags, osdfs_file **fh);

/**
 * Close an open file (frees the inode if it was unlinked and this was its
 * last open file).
 * @param fs the mounted filesystem
 * @param fh the file, or NULL
 * @return 0 or a write error.
 */
OSD_EXTERN int osdfs_release(osdfs *fs, osdfs_file *fh);

/** Inode number of an open file. */
OSD_EXTERN uint64_t osdfs_file_ino(const osdfs_file *fh);

/**
 * Read like pread(2): short only at end of file; holes read as zeros.
 * @param fs the mounted filesystem
 * @param fh the open file
 * @param size size of the buffer in bytes
 * @param off byte offset in the file
 * @param[out] buf receives the data
 * @return bytes read; -EBADF (not open for reading), -EISDIR, -EIO.
 */
OSD_EXTERN ssize_t osdfs_read(osdfs *fs, osdfs_file *fh, void *buf, size_t size,
			      uint64_t off);

/**
 * Read into several buffers like preadv(2).
 * @return bytes read or an error as osdfs_read().
 */
OSD_EXTERN ssize_t osdfs_readv(osdfs *fs, osdfs_file *fh, const struct iovec *iov,
			       int iovcnt, uint64_t off);

/**
 * Write like pwrite(2) (files opened with O_APPEND write at the end,
 * ignoring @p off). Updates size, mtime and ctime in the same backend
 * operation as the data, and clears set-user-id / set-group-id bits.
 * @return bytes written; -EBADF (not open for writing), -EFBIG, -ENOSPC,
 *         -EROFS, -EIO.
 */
OSD_EXTERN ssize_t osdfs_write(osdfs *fs, osdfs_file *fh, const void *buf, size_t size,
			       uint64_t off);

/**
 * Write several buffers like pwritev(2).
 * @return bytes written or an error as osdfs_write().
 */
OSD_EXTERN ssize_t osdfs_writev(osdfs *fs, osdfs_file *fh, const struct iovec *iov,
				int iovcnt, uint64_t off);

/** osdfs_fallocate(): do not change the file size. */
#define OSDFS_FALLOC_KEEP_SIZE 0x1u
/** osdfs_fallocate(): deallocate the range (needs OSDFS_FALLOC_KEEP_SIZE). */
#define OSDFS_FALLOC_PUNCH_HOLE 0x2u

/**
 * Allocate or deallocate a range of a regular file, like fallocate(2).
 * Without flags the size grows to cover the range (space is not reserved).
 * @param fs the mounted filesystem
 * @param fh the open file
 * @param off byte offset in the file
 * @param len length of the range in bytes
 * @param mode 0, OSDFS_FALLOC_KEEP_SIZE, or KEEP_SIZE | PUNCH_HOLE
 * @return 0; -EOPNOTSUPP for other modes; -EBADF; -EINVAL; -EIO.
 */
OSD_EXTERN int osdfs_fallocate(osdfs *fs, osdfs_file *fh, unsigned int mode,
			       uint64_t off, uint64_t len);

/**
 * Make an inode's data and attributes durable (fsync(2) / fdatasync(2);
 * also fsyncdir).
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param datasync non-zero: only data and attributes needed to read it
 * @return 0; -ENOENT; -EIO.
 */
OSD_EXTERN int osdfs_fsync(osdfs *fs, uint64_t ino, int datasync);

/** One directory entry passed to an osdfs_readdir_cb. */
struct osdfs_dirent {
	uint64_t ino;      /**< inode number */
	uint64_t next;     /**< cookie that resumes after this entry */
	const char *name;  /**< name, NUL terminated (borrowed for the call) */
	size_t namelen;    /**< strlen(name) */
	unsigned int type; /**< DT_* file type (DT_REG, DT_DIR, ...) */
};

/**
 * Receives one directory entry. It runs with the filesystem locked for
 * reading: it may call osdfs_lookup() / osdfs_getattr() (readdirplus) but
 * must not change the filesystem.
 * @param ent the entry (borrowed for the call)
 * @param payload as passed to osdfs_readdir()
 * @return 0 to continue, non-zero to stop (the entry is not consumed:
 *         resume from the previous entry's cookie).
 */
typedef int (*osdfs_readdir_cb)(const struct osdfs_dirent *ent, void *payload);

/**
 * List a directory from @p cookie (0 = the beginning; "." and ".." come
 * first). Entries come in an order that does not change as others are
 * added or removed: an entry present during a whole listing is returned
 * exactly once, whatever is created or unlinked between calls.
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param cookie 0, or the @c next value of an entry returned earlier
 * @param cb called for each entry
 * @param payload passed to @p cb
 * @return 0 at the end or when @p cb stopped; -ENOTDIR, -ENOENT,
 *         -EUCLEAN (corrupt directory block), -EIO.
 */
OSD_EXTERN int osdfs_readdir(osdfs *fs, uint64_t ino, uint64_t cookie,
			     osdfs_readdir_cb cb, void *payload);

/** osdfs_setxattr(): fail with -EEXIST if the attribute exists. */
#define OSDFS_XATTR_CREATE 0x1
/** osdfs_setxattr(): fail with -ENODATA if the attribute does not exist. */
#define OSDFS_XATTR_REPLACE 0x2
/** Limit of the encoded extended attributes of one inode: a 4-byte header
 *  plus, per attribute, 4 bytes, the name and the value. */
#define OSDFS_XATTR_TOTAL_MAX 65000

/**
 * Read an extended attribute.
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param name entry name (1..OSDFS_NAME_MAX bytes, no '/')
 * @param size size of the buffer in bytes
 * @param[out] value receives the value; with @p size 0 only the length is returned
 * @return the value's length; -ENODATA; -ERANGE if @p size is too small.
 */
OSD_EXTERN ssize_t osdfs_getxattr(osdfs *fs, uint64_t ino, const char *name,
				  void *value, size_t size);

/**
 * Set an extended attribute.
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param name entry name (1..OSDFS_NAME_MAX bytes, no '/')
 * @param value the value
 * @param size size of the buffer in bytes
 * @param flags 0, OSDFS_XATTR_CREATE or OSDFS_XATTR_REPLACE
 * @return 0; -EEXIST, -ENODATA, -ERANGE (name empty or longer than 255),
 *         -ENOSPC (all attributes together exceed OSDFS_XATTR_TOTAL_MAX).
 */
OSD_EXTERN int osdfs_setxattr(osdfs *fs, uint64_t ino, const char *name,
			      const void *value, size_t size, int flags);

/**
 * List extended attribute names, each NUL terminated.
 * @param fs the mounted filesystem
 * @param ino the inode
 * @param size size of the buffer in bytes
 * @param[out] list receives the names; with @p size 0 only the length is returned
 * @return total length of the list; -ERANGE if @p size is too small.
 */
OSD_EXTERN ssize_t osdfs_listxattr(osdfs *fs, uint64_t ino, char *list, size_t size);

/**
 * Remove an extended attribute.
 * @return 0; -ENODATA if it does not exist.
 */
OSD_EXTERN int osdfs_removexattr(osdfs *fs, uint64_t ino, const char *name);

/** Filesystem statistics (units as statvfs(3)). */
struct osdfs_statfs {
	uint64_t bsize;   /**< preferred I/O size */
	uint64_t frsize;  /**< unit of blocks, bfree and bavail */
	uint64_t blocks;  /**< capacity in frsize units */
	uint64_t bfree;   /**< free frsize units */
	uint64_t bavail;  /**< free frsize units for unprivileged users */
	uint64_t files;   /**< inodes in use plus ffree */
	uint64_t ffree;   /**< inodes that could still be created */
	uint64_t favail;  /**< as ffree */
	uint64_t fsid;    /**< filesystem id (from the uuid) */
	uint32_t namemax; /**< OSDFS_NAME_MAX */
};

/**
 * Filesystem statistics from the backend's space accounting.
 * @param fs the mounted filesystem
 * @param[out] st filled in
 * @return 0 or a backend error.
 */
OSD_EXTERN int osdfs_statfs(osdfs *fs, struct osdfs_statfs *st);

/**
 * Write all cached changes and make them durable (sync(2)). Also checks that
 * no forced mount has taken the filesystem over; if one has, nothing is
 * written and the handle becomes read-only.
 * @param fs the mounted filesystem
 * @return 0; -ESTALE (taken over); or the first write error.
 */
OSD_EXTERN int osdfs_sync(osdfs *fs);

/**
 * Resolve a path to an inode number. Paths are relative to the root
 * (a leading '/' is allowed); "." and ".." are honoured; symbolic links
 * in the middle are always followed, the last one only with @p follow.
 * @param fs the mounted filesystem
 * @param path the path
 * @param follow non-zero to follow a final symbolic link
 * @param[out] ino the inode number
 * @return 0; -ENOENT, -ENOTDIR, -ENAMETOOLONG, -ELOOP (more than
 *         OSDFS_SYMLOOP_MAX links), -EUCLEAN, -EIO.
 */
OSD_EXTERN int osdfs_resolve(osdfs *fs, const char *path, int follow, uint64_t *ino);

/**
 * Attributes of the inode a path names (stat(2) with @p follow, else lstat(2)).
 * @param fs the mounted filesystem
 * @param path the path
 * @param follow non-zero to follow a final symbolic link
 * @param[out] out filled in
 * @return 0 or an error as osdfs_resolve().
 */
OSD_EXTERN int osdfs_stat_path(osdfs *fs, const char *path, int follow,
			       struct osdfs_stat *out);

/**
 * Split @p path into its parent directory (resolved, following links) and
 * last component, for tools that create or remove by path.
 * @param fs the mounted filesystem
 * @param path the path
 * @param[out] parent inode number of the parent directory
 * @param[out] name receives the last component, NUL terminated
 * @param size size of @p name (OSDFS_NAME_MAX + 1 is always enough)
 * @return 0; -EINVAL if the path has no last component (e.g. "/");
 *         errors as osdfs_resolve().
 */
OSD_EXTERN int osdfs_resolve_parent(osdfs *fs, const char *path, uint64_t *parent,
				    char *name, size_t size);

/**
 * libosdfs's version as text, e.g. "0.1.0" (OSD_VERSION_STRING of
 * osd/version.h when it was built). Static storage.
 */
OSD_EXTERN const char *osdfs_version_string(void);

/** libosdfs's version as one number (OSD_VERSION_NUMBER when it was built). */
OSD_EXTERN long osdfs_version_number(void);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
