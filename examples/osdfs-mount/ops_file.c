/* File data operations: open/create, read, write, flush, fsync, fallocate. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "mount.h"
#include "ops.h"

/* Open flags osdfs understands, adjusted for the writeback cache. */
static int open_flags(const struct mnt_ctx *c, int flags)
{
	flags &= O_ACCMODE | O_TRUNC | O_APPEND | O_EXCL;
	if (c->writeback) {
		/* the kernel reads pages to fill partial writes ... */
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		/* ... and places appends itself, knowing the size exactly
		 * because no one else writes to an exclusive mount */
		flags &= ~O_APPEND;
	}
	return flags;
}

/* The mount is exclusive: cached pages can only go stale through us. */
static void set_file_info(struct fuse_file_info *fi, struct mnt_file *f)
{
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->keep_cache = 1;
}

/* keep_cache as in set_file_info() */
void mnt_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt_ctx *c = mnt_ctx(req);
	osdfs_file *fh = NULL;
	int rc = osdfs_open(c->fs, ino, open_flags(c, fi->flags), &fh);

	mnt_file_reply_open(req, rc, fh, fi, 1);
}

void mnt_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   struct fuse_file_info *fi)
{
	struct mnt_ctx *c = mnt_ctx(req);
	struct fuse_entry_param e;
	struct osdfs_cred cred;
	struct osdfs_stat st;
	struct mnt_file *f;
	osdfs_file *fh;
	int rc;

	mnt_cred(req, &cred);
	rc = osdfs_create(c->fs, parent, name, (uint32_t)(mode & 07777),
			  open_flags(c, fi->flags), &cred, &st, &fh);
	if (rc < 0) {
		mnt_reply_err(req, rc);
		return;
	}
	f = mnt_file_add(c, fh);
	if (!f || mnt_lookups_add(c->lookups, st.ino) < 0) {
		if (f)
			mnt_file_release(c, f);
		else
			osdfs_release(c->fs, fh);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	set_file_info(fi, f);
	mnt_fill_entry(c, &st, &e);
	if (fuse_reply_create(req, &e, fi) != 0) {
		mnt_lookups_drop(c->lookups, st.ino, 1);
		mnt_file_release(c, f);
	}
}

void mnt_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	struct mnt_ctx *c = mnt_ctx(req);
	char *buf;
	ssize_t n;

	(void)ino;
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = osdfs_read(c->fs, mnt_file_of(fi)->fh, buf, size, (uint64_t)off);
	if (n < 0)
		mnt_reply_err(req, (int)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

/* Memory buffers of @p bufv as an iovec array (NULL if one is a pipe). */
static struct iovec *bufv_to_iov(const struct fuse_bufvec *bufv, int *iovcnt)
{
	struct iovec *iov = calloc(bufv->count, sizeof(*iov));
	size_t off = bufv->off;
	int n = 0;

	if (!iov)
		return NULL;
	for (size_t i = bufv->idx; i < bufv->count; i++, off = 0) {
		if (bufv->buf[i].flags & FUSE_BUF_IS_FD) {
			free(iov);
			return NULL;
		}
		if (bufv->buf[i].size <= off)
			continue;
		iov[n].iov_base = (char *)bufv->buf[i].mem + off;
		iov[n].iov_len = bufv->buf[i].size - off;
		n++;
	}
	*iovcnt = n;
	return iov;
}

/* A spliced request (pipe buffer) copied into memory. */
static ssize_t write_copied(struct mnt_ctx *c, struct mnt_file *f, struct fuse_bufvec *bufv,
			    uint64_t off)
{
	size_t size = fuse_buf_size(bufv);
	struct fuse_bufvec mem = FUSE_BUFVEC_INIT(size);
	ssize_t n;

	mem.buf[0].mem = malloc(size ? size : 1);
	if (!mem.buf[0].mem)
		return -ENOMEM;
	n = fuse_buf_copy(&mem, bufv, 0);
	if (n >= 0)
		n = osdfs_write(c->fs, f->fh, mem.buf[0].mem, (size_t)n, off);
	free(mem.buf[0].mem);
	return n;
}

void mnt_op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
		      struct fuse_file_info *fi)
{
	struct mnt_ctx *c = mnt_ctx(req);
	struct mnt_file *f = mnt_file_of(fi);
	struct iovec *iov;
	int iovcnt = 0;
	ssize_t n;

	(void)ino;
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	iov = bufv_to_iov(bufv, &iovcnt);
	if (iov)
		n = osdfs_writev(c->fs, f->fh, iov, iovcnt, (uint64_t)off);
	else
		n = write_copied(c, f, bufv, (uint64_t)off);
	free(iov);
	if (n < 0)
		mnt_reply_err(req, (int)n);
	else
		fuse_reply_write(req, (size_t)n);
}

/* close(2) promises no durability; fsync and unmount do (see docs). */
void mnt_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

void mnt_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	mnt_reply_err(req, mnt_file_release(mnt_ctx(req), mnt_file_of(fi)));
}

void mnt_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)fi;
	mnt_reply_err(req, osdfs_fsync(mnt_ctx(req)->fs, ino, datasync));
}

void mnt_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		      struct fuse_file_info *fi)
{
	unsigned int m = 0;

	(void)ino;
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (mode & FALLOC_FL_KEEP_SIZE)
		m |= OSDFS_FALLOC_KEEP_SIZE;
	if (mode & FALLOC_FL_PUNCH_HOLE)
		m |= OSDFS_FALLOC_PUNCH_HOLE;
	mnt_reply_err(req, osdfs_fallocate(mnt_ctx(req)->fs, mnt_file_of(fi)->fh, m,
					   (uint64_t)off, (uint64_t)len));
}
