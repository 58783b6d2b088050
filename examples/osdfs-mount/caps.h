/*
 * The FUSE capabilities osdfs-mount asks the kernel for (the reasons are in
 * docs/osdfs-mount.md, "FUSE capabilities chosen"). Header-only so that
 * osd-bench-passthrough, the baseline of `osd-bench --fuse`, asks for
 * exactly the same: the comparison is then about the filesystems.
 * Include it after <fuse_lowlevel.h> (the includer picks FUSE_USE_VERSION).
 */
#ifndef OSDFS_MOUNT_CAPS_H
#define OSDFS_MOUNT_CAPS_H

/* Largest write request (libfuse's cap; reads follow max_pages). */
#define MNT_CAPS_MAX_WRITE (1024u * 1024u)

/* Capabilities wanted (1) or refused (0) whatever the options. */
static const struct mnt_cap {
	unsigned int cap;
	int on;
} mnt_caps_fixed[] = {
	{ FUSE_CAP_READDIRPLUS, 1 },
	{ FUSE_CAP_READDIRPLUS_AUTO, 1 },
	{ FUSE_CAP_ATOMIC_O_TRUNC, 1 },
	{ FUSE_CAP_PARALLEL_DIROPS, 1 },
	{ FUSE_CAP_ASYNC_READ, 1 },
	/* an exclusive mount: symlink targets only change through us */
	{ FUSE_CAP_CACHE_SYMLINKS, 1 },
	/* the kernel clears set-id bits itself (osdfs does on write too) */
	{ FUSE_CAP_HANDLE_KILLPRIV, 0 },
	/* osdfs needs the data in memory: splicing would only add a copy */
	{ FUSE_CAP_SPLICE_READ, 0 },
	{ FUSE_CAP_SPLICE_WRITE, 0 },
	{ FUSE_CAP_SPLICE_MOVE, 0 },
	{ FUSE_CAP_EXPORT_SUPPORT, 0 },
	{ FUSE_CAP_POSIX_ACL, 0 },
};

static inline void mnt_caps_want(struct fuse_conn_info *conn, unsigned int cap, int on)
{
	if (on && (conn->capable & cap))
		conn->want |= cap;
	else
		conn->want &= ~cap;
}

/* Sets max_write and the capability bits; @p writeback: -o writeback_cache. */
static inline void mnt_caps_choose(struct fuse_conn_info *conn, int writeback)
{
	conn->max_write = MNT_CAPS_MAX_WRITE;
	for (size_t i = 0; i < sizeof(mnt_caps_fixed) / sizeof(mnt_caps_fixed[0]); i++)
		mnt_caps_want(conn, mnt_caps_fixed[i].cap, mnt_caps_fixed[i].on);
	mnt_caps_want(conn, FUSE_CAP_WRITEBACK_CACHE, writeback);
}

#endif
