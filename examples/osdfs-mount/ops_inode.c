/*
 * Name and inode operations: lookup/forget, attributes, creating, linking,
 * removing and renaming. Each maps onto one osdfs call.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mount.h"
#include "ops.h"

void mnt_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mnt_ctx *c = mnt_ctx(req);
	struct osdfs_stat st;
	int rc = osdfs_lookup(c->fs, parent, name, &st);

	if (rc == -ENOENT) {
		/* the mount is exclusive: a negative entry stays true until we
		 * create the name ourselves, which the kernel sees */
		struct fuse_entry_param e;

		memset(&e, 0, sizeof(e));
		e.entry_timeout = c->opts->entry_timeout;
		fuse_reply_entry(req, &e);
	} else if (rc < 0) {
		mnt_reply_err(req, rc);
	} else {
		mnt_reply_entry(req, &st);
	}
}

static void forget_one(struct mnt_ctx *c, fuse_ino_t ino, uint64_t n)
{
	if (mnt_lookups_drop(c->lookups, ino, n) < 0 && c->opts->debug)
		fprintf(stderr, "osdfs-mount: forget of %" PRIu64 " references to inode %"
			PRIu64 " it does not hold\n", n, (uint64_t)ino);
}

void mnt_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(mnt_ctx(req), ino, nlookup);
	fuse_reply_none(req);
}

void mnt_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct mnt_ctx *c = mnt_ctx(req);

	for (size_t i = 0; i < count; i++)
		forget_one(c, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void reply_attr(fuse_req_t req, const struct osdfs_stat *st)
{
	struct stat host;

	mnt_stat_to_host(st, &host);
	fuse_reply_attr(req, &host, mnt_ctx(req)->opts->attr_timeout);
}

void mnt_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct osdfs_stat st;
	int rc = osdfs_getattr(mnt_ctx(req)->fs, ino, &st);

	(void)fi;
	if (rc < 0)
		mnt_reply_err(req, rc);
	else
		reply_attr(req, &st);
}

static struct osdfs_timespec to_osdfs_time(const struct timespec *ts)
{
	struct osdfs_timespec t = { (int64_t)ts->tv_sec, (uint32_t)ts->tv_nsec };

	return t;
}

/* FUSE_SET_ATTR_* bits to OSDFS_SET_* bits (and the values they select). */
static unsigned int setattr_mask(const struct stat *attr, int to_set, struct osdfs_stat *st)
{
	unsigned int mask = 0;

	memset(st, 0, sizeof(*st));
	if (to_set & FUSE_SET_ATTR_MODE) {
		mask |= OSDFS_SET_MODE;
		st->mode = (uint32_t)attr->st_mode;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		mask |= OSDFS_SET_UID;
		st->uid = (uint32_t)attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		mask |= OSDFS_SET_GID;
		st->gid = (uint32_t)attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		mask |= OSDFS_SET_SIZE;
		st->size = (uint64_t)attr->st_size;
	}
	/* UTIME_NOW arrives as *_NOW bits; UTIME_OMIT as no bit at all */
	if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
		mask |= OSDFS_SET_ATIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_ATIME) {
		mask |= OSDFS_SET_ATIME;
		st->atime = to_osdfs_time(&attr->st_atim);
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
		mask |= OSDFS_SET_MTIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_MTIME) {
		mask |= OSDFS_SET_MTIME;
		st->mtime = to_osdfs_time(&attr->st_mtim);
	}
	if (to_set & FUSE_SET_ATTR_CTIME) {
		mask |= OSDFS_SET_CTIME;
		st->ctime = to_osdfs_time(&attr->st_ctim);
	}
	return mask;
}

/* A time the mask selects must have nanoseconds in 0..999999999. */
static int bad_nsec(unsigned int mask, unsigned int bit, const struct timespec *ts)
{
	return (mask & bit) && (ts->tv_nsec < 0 || ts->tv_nsec > 999999999L);
}

void mnt_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		    struct fuse_file_info *fi)
{
	struct osdfs_stat in, out;
	unsigned int mask = setattr_mask(attr, to_set, &in);
	int rc;

	(void)fi;
	if (attr->st_size < 0 && (mask & OSDFS_SET_SIZE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (bad_nsec(mask, OSDFS_SET_ATIME, &attr->st_atim) ||
	    bad_nsec(mask, OSDFS_SET_MTIME, &attr->st_mtim) ||
	    bad_nsec(mask, OSDFS_SET_CTIME, &attr->st_ctim)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	rc = osdfs_setattr(mnt_ctx(req)->fs, ino, &in, mask, &out);
	if (rc < 0)
		mnt_reply_err(req, rc);
	else
		reply_attr(req, &out);
}

void mnt_op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[OSDFS_SYMLINK_MAX + 1];
	ssize_t n = osdfs_readlink(mnt_ctx(req)->fs, ino, buf, sizeof(buf));

	if (n < 0) {
		mnt_reply_err(req, (int)n);
		return;
	}
	if ((size_t)n >= sizeof(buf)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	buf[n] = '\0';
	fuse_reply_readlink(req, buf);
}

void mnt_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		  dev_t rdev)
{
	struct osdfs_cred cred;
	struct osdfs_stat st;
	int rc;

	mnt_cred(req, &cred);
	rc = osdfs_mknod(mnt_ctx(req)->fs, parent, name, (uint32_t)mode, (uint64_t)rdev,
			 &cred, &st);
	if (rc < 0)
		mnt_reply_err(req, rc);
	else
		mnt_reply_entry(req, &st);
}

void mnt_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct osdfs_cred cred;
	struct osdfs_stat st;
	int rc;

	mnt_cred(req, &cred);
	rc = osdfs_mkdir(mnt_ctx(req)->fs, parent, name, (uint32_t)mode, &cred, &st);
	if (rc < 0)
		mnt_reply_err(req, rc);
	else
		mnt_reply_entry(req, &st);
}

void mnt_op_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
	struct osdfs_cred cred;
	struct osdfs_stat st;
	int rc;

	mnt_cred(req, &cred);
	rc = osdfs_symlink(mnt_ctx(req)->fs, parent, name, target, &cred, &st);
	if (rc < 0)
		mnt_reply_err(req, rc);
	else
		mnt_reply_entry(req, &st);
}

void mnt_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct osdfs_stat st;
	int rc = osdfs_link(mnt_ctx(req)->fs, ino, newparent, newname, &st);

	if (rc < 0)
		mnt_reply_err(req, rc);
	else
		mnt_reply_entry(req, &st);
}

void mnt_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	mnt_reply_err(req, osdfs_unlink(mnt_ctx(req)->fs, parent, name));
}

void mnt_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	mnt_reply_err(req, osdfs_rmdir(mnt_ctx(req)->fs, parent, name));
}

void mnt_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		   fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	unsigned int of = 0;

	/* renameat2(): a flag the filesystem does not support is EINVAL */
	if (flags & ~(unsigned int)(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (flags & RENAME_NOREPLACE)
		of |= OSDFS_RENAME_NOREPLACE;
	if (flags & RENAME_EXCHANGE)
		of |= OSDFS_RENAME_EXCHANGE;
	mnt_reply_err(req, osdfs_rename(mnt_ctx(req)->fs, parent, name, newparent, newname, of));
}
