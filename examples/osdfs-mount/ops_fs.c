/*
 * Whole-filesystem operations: the FUSE handshake (capabilities chosen
 * here are explained in docs/osdfs-mount.md), the final flush, statfs and
 * extended attributes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <osdfs/layout.h>

#include "mount.h"
#include "caps.h"
#include "ops.h"

void mnt_op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct mnt_ctx *c = userdata;

	mnt_caps_choose(conn, c->opts->writeback);
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
	/* no resync starts or runs once the unmount lets the filesystem go */
	osdfs_layout_watch_stop(c->be);
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

/* Replies to a setxattr or removexattr of @p ino that osdfs answered with
 * @p rc; the change was announced before it too (see lookups.c). */
static void reply_xattr_changed(fuse_req_t req, fuse_ino_t ino, int rc)
{
	mnt_lookups_xattr_change(mnt_ctx(req)->lookups, ino);
	mnt_reply_err(req, rc);
}

void mnt_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags)
{
	struct mnt_ctx *c = mnt_ctx(req);
	int of = 0;

	if (flags & ~(XATTR_CREATE | XATTR_REPLACE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	mnt_lookups_xattr_change(c->lookups, ino);
	if (flags & XATTR_CREATE)
		of |= OSDFS_XATTR_CREATE;
	if (flags & XATTR_REPLACE)
		of |= OSDFS_XATTR_REPLACE;
	reply_xattr_changed(req, ino, osdfs_setxattr(c->fs, ino, name, value, size, of));
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

/* The kernel asks this before every write (see lookups.c). */
static int is_caps(const char *name)
{
	return !strcmp(name, "security.capability");
}

void mnt_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct mnt_ctx *c = mnt_ctx(req);
	char *buf;
	uint64_t gen = 0;
	ssize_t n;

	if (is_caps(name)) {
		if (mnt_lookups_nocaps(c->lookups, ino)) {
			fuse_reply_err(req, ENODATA);
			return;
		}
		gen = mnt_lookups_xattr_gen(c->lookups);
	}
	buf = size ? malloc(size) : NULL;
	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = osdfs_getxattr(c->fs, ino, name, buf, size);
	if (n == -ENODATA && is_caps(name))
		mnt_lookups_set_nocaps(c->lookups, ino, gen);
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
	mnt_lookups_xattr_change(mnt_ctx(req)->lookups, ino);
	reply_xattr_changed(req, ino, osdfs_removexattr(mnt_ctx(req)->fs, ino, name));
}
