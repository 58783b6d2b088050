/*
 * Whole-filesystem operations: the FUSE handshake (capabilities chosen
 * here are explained in docs/osdfs-mount.md), the final flush, statfs and
 * extended attributes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/xattr.h>
#include "mount.h"
#include "ops.h"

static void want(struct fuse_conn_info *conn, unsigned int cap, int on)
{
	if (on && (conn->capable & cap))
		conn->want |= cap;
	else
		conn->want &= ~cap;
}

void mnt_op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct mnt_ctx *c = userdata;

	/* 1 MiB requests (libfuse caps max_write to its buffer and asks the
	 * kernel for max_pages to match; reads follow max_pages) */
	conn->max_write = MNT_MAX_IO;
	want(conn, FUSE_CAP_READDIRPLUS, 1);
	want(conn, FUSE_CAP_READDIRPLUS_AUTO, 1);
	want(conn, FUSE_CAP_ATOMIC_O_TRUNC, 1);
	want(conn, FUSE_CAP_PARALLEL_DIROPS, 1);
	want(conn, FUSE_CAP_ASYNC_READ, 1);
	/* an exclusive mount: symlink targets only change through us */
	want(conn, FUSE_CAP_CACHE_SYMLINKS, 1);
	/* the kernel clears set-id bits itself (osdfs does on write too) */
	want(conn, FUSE_CAP_HANDLE_KILLPRIV, 0);
	/* osdfs needs the data in memory: splicing would only add a copy */
	want(conn, FUSE_CAP_SPLICE_READ, 0);
	want(conn, FUSE_CAP_SPLICE_WRITE, 0);
	want(conn, FUSE_CAP_SPLICE_MOVE, 0);
	want(conn, FUSE_CAP_EXPORT_SUPPORT, 0);
	want(conn, FUSE_CAP_POSIX_ACL, 0);
	want(conn, FUSE_CAP_WRITEBACK_CACHE, c->opts->writeback);
	c->writeback = (conn->want & FUSE_CAP_WRITEBACK_CACHE) != 0;
	if (c->opts->writeback && !c->writeback)
		fprintf(stderr, "osdfs-mount: the kernel offers no writeback cache; "
			"writing through\n");
}

void mnt_op_destroy(void *userdata)
{
	struct mnt_ctx *c = userdata;

	if (c->unmounted)
		return;
	mnt_file_release_all(c);
	c->unmount_rc = osdfs_unmount(c->fs);
	c->fs = NULL;
	c->unmounted = 1;
}

void mnt_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct osdfs_statfs s;
	struct statvfs v = { 0 };
	int rc = osdfs_statfs(mnt_ctx(req)->fs, &s);

	(void)ino;
	if (rc < 0) {
		mnt_reply_err(req, rc);
		return;
	}
	v.f_bsize = (unsigned long)s.bsize;
	v.f_frsize = (unsigned long)s.frsize;
	v.f_blocks = (fsblkcnt_t)s.blocks;
	v.f_bfree = (fsblkcnt_t)s.bfree;
	v.f_bavail = (fsblkcnt_t)s.bavail;
	v.f_files = (fsfilcnt_t)s.files;
	v.f_ffree = (fsfilcnt_t)s.ffree;
	v.f_favail = (fsfilcnt_t)s.favail;
	v.f_fsid = (unsigned long)s.fsid;
	v.f_namemax = s.namemax;
	fuse_reply_statfs(req, &v);
}

void mnt_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags)
{
	int of = 0;

	if (flags & ~(XATTR_CREATE | XATTR_REPLACE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (flags & XATTR_CREATE)
		of |= OSDFS_XATTR_CREATE;
	if (flags & XATTR_REPLACE)
		of |= OSDFS_XATTR_REPLACE;
	mnt_reply_err(req, osdfs_setxattr(mnt_ctx(req)->fs, ino, name, value, size, of));
}

/* getxattr and listxattr: size 0 asks for the length only. */
static void reply_sized(fuse_req_t req, ssize_t n, const void *buf, size_t size)
{
	if (n < 0)
		mnt_reply_err(req, (int)n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

void mnt_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	ssize_t n;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = osdfs_getxattr(mnt_ctx(req)->fs, ino, name, buf, size);
	reply_sized(req, n, buf, size);
	free(buf);
}

void mnt_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	ssize_t n;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = osdfs_listxattr(mnt_ctx(req)->fs, ino, buf, size);
	reply_sized(req, n, buf, size);
	free(buf);
}

void mnt_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	mnt_reply_err(req, osdfs_removexattr(mnt_ctx(req)->fs, ino, name));
}
