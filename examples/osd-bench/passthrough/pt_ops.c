/*
 * Name and attribute operations of the passthrough, and the FUSE handshake.
 * Each request becomes the matching *at() system call on the O_PATH
 * descriptors of the inodes involved.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "pt.h"
#include "caps.h" /* examples/osdfs-mount */

void pt_reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, err < 0 ? -err : err);
}

void pt_fd_path(int fd, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/self/fd/%d", fd);
}

/* osdfs-mount's choices (without -o writeback_cache), from its own header:
 * the comparison is about the filesystems, not the options. */
static void pt_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	mnt_caps_choose(conn, 0);
}

static void reply_entry_of(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int rc = pt_lookup_ref(fuse_req_userdata(req), pt_inode(req, parent), name, &e);

	if (rc < 0)
		pt_reply_err(req, rc);
	else if (fuse_reply_entry(req, &e) != 0)
		pt_unref(fuse_req_userdata(req), e.ino, 1);
}

static void pt_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int rc = pt_lookup_ref(fuse_req_userdata(req), pt_inode(req, parent), name, &e);

	if (rc == -ENOENT) {
		/* a cached negative entry, as osdfs-mount replies */
		e.ino = 0;
		fuse_reply_entry(req, &e);
	} else if (rc < 0) {
		pt_reply_err(req, rc);
	} else if (fuse_reply_entry(req, &e) != 0) {
		pt_unref(fuse_req_userdata(req), e.ino, 1);
	}
}

static void pt_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	pt_unref(fuse_req_userdata(req), ino, nlookup);
	fuse_reply_none(req);
}

static void pt_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		pt_unref(fuse_req_userdata(req), forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void pt_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (fstatat(pt_inode(req, ino)->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		pt_reply_err(req, errno);
	else
		fuse_reply_attr(req, &st, PT_TIMEOUT);
}

/* The times of a setattr as utimensat() wants them. */
static void setattr_times(const struct stat *attr, int to_set, struct timespec tv[2])
{
	tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		tv[0] = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		tv[1] = attr->st_mtim;
}

static int do_setattr(int fd, const char *path, const struct stat *attr, int to_set,
		      struct fuse_file_info *fi)
{
	struct timespec tv[2];
	int rc = 0;

	if (to_set & FUSE_SET_ATTR_MODE)
		rc = chmod(path, attr->st_mode);
	if (rc == 0 && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
		rc = fchownat(fd, "",
			      (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1,
			      (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1,
			      AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	if (rc == 0 && (to_set & FUSE_SET_ATTR_SIZE))
		rc = fi ? ftruncate((int)fi->fh, attr->st_size) : truncate(path, attr->st_size);
	if (rc == 0 && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
		setattr_times(attr, to_set, tv);
		rc = fi ? futimens((int)fi->fh, tv) : utimensat(AT_FDCWD, path, tv, 0);
	}
	return rc < 0 ? -errno : 0;
}

static void pt_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	int fd = pt_inode(req, ino)->fd;
	char path[64];
	int rc;

	pt_fd_path(fd, path, sizeof(path));
	rc = do_setattr(fd, path, attr, to_set, fi);
	if (rc < 0)
		pt_reply_err(req, rc);
	else
		pt_getattr(req, ino, fi);
}

static void pt_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX + 1];
	ssize_t n = readlinkat(pt_inode(req, ino)->fd, "", buf, sizeof(buf));

	if (n < 0)
		pt_reply_err(req, errno);
	else if ((size_t)n >= sizeof(buf))
		fuse_reply_err(req, ENAMETOOLONG);
	else {
		buf[n] = '\0';
		fuse_reply_readlink(req, buf);
	}
}

/* mknod, mkdir, symlink: create, then answer with the new entry. */
static void made(fuse_req_t req, fuse_ino_t parent, const char *name, int rc)
{
	if (rc < 0)
		pt_reply_err(req, errno);
	else
		reply_entry_of(req, parent, name);
}

static void pt_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	made(req, parent, name, mknodat(pt_inode(req, parent)->fd, name, mode, rdev));
}

static void pt_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	made(req, parent, name, mkdirat(pt_inode(req, parent)->fd, name, mode));
}

static void pt_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	made(req, parent, name, symlinkat(link, pt_inode(req, parent)->fd, name));
}

static void pt_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name)
{
	/* AT_EMPTY_PATH links the descriptor's file (we run as root) */
	made(req, parent, name, linkat(pt_inode(req, ino)->fd, "", pt_inode(req, parent)->fd,
				       name, AT_EMPTY_PATH));
}

static void pt_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	int rc = unlinkat(pt_inode(req, parent)->fd, name, 0);

	fuse_reply_err(req, rc < 0 ? errno : 0);
}

static void pt_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	int rc = unlinkat(pt_inode(req, parent)->fd, name, AT_REMOVEDIR);

	fuse_reply_err(req, rc < 0 ? errno : 0);
}

static void pt_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	int rc = renameat2(pt_inode(req, parent)->fd, name, pt_inode(req, newparent)->fd,
			   newname, flags);

	fuse_reply_err(req, rc < 0 ? errno : 0);
}

static void pt_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs v;

	if (fstatvfs(pt_inode(req, ino)->fd, &v) < 0)
		pt_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &v);
}

/* Extended attributes through /proc/self/fd (O_PATH descriptors refuse the
 * f*xattr calls). osdfs-mount has them too, so the kernel asks both. */
static void reply_sized(fuse_req_t req, ssize_t n, const char *buf, size_t size)
{
	if (n < 0)
		pt_reply_err(req, errno);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void pt_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char path[64], buf[65536];

	pt_fd_path(pt_inode(req, ino)->fd, path, sizeof(path));
	if (size > sizeof(buf))
		size = sizeof(buf);
	reply_sized(req, lgetxattr(path, name, size ? buf : NULL, size), buf, size);
}

static void pt_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char path[64], buf[65536];

	pt_fd_path(pt_inode(req, ino)->fd, path, sizeof(path));
	if (size > sizeof(buf))
		size = sizeof(buf);
	reply_sized(req, llistxattr(path, size ? buf : NULL, size), buf, size);
}

static void pt_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	char path[64];

	pt_fd_path(pt_inode(req, ino)->fd, path, sizeof(path));
	fuse_reply_err(req, lsetxattr(path, name, value, size, flags) < 0 ? errno : 0);
}

static void pt_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	char path[64];

	pt_fd_path(pt_inode(req, ino)->fd, path, sizeof(path));
	fuse_reply_err(req, lremovexattr(path, name) < 0 ? errno : 0);
}

void pt_name_ops(struct fuse_lowlevel_ops *ops)
{
	ops->init = pt_init;
	ops->lookup = pt_lookup;
	ops->forget = pt_forget;
	ops->forget_multi = pt_forget_multi;
	ops->getattr = pt_getattr;
	ops->setattr = pt_setattr;
	ops->readlink = pt_readlink;
	ops->mknod = pt_mknod;
	ops->mkdir = pt_mkdir;
	ops->symlink = pt_symlink;
	ops->link = pt_link;
	ops->unlink = pt_unlink;
	ops->rmdir = pt_rmdir;
	ops->rename = pt_rename;
	ops->statfs = pt_statfs;
	ops->getxattr = pt_getxattr;
	ops->listxattr = pt_listxattr;
	ops->setxattr = pt_setxattr;
	ops->removexattr = pt_removexattr;
}
