/*
 * Open files, data I/O and attribute changes. A data write carries the
 * updated inode (size, mtime, ctime) as an attribute set in the same
 * backend operation, so data and size can never disagree. chmod, chown
 * and utimens are written back later (fsync, sync, unmount or eviction);
 * size changes are written at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fs.h"

#define MAX_FILE_SIZE OSDFS_MAX_FILE_SIZE
#define IOV_STACK 16

static void touch_mtime(struct osdfs__inode *ip)
{
	osdfs__now(&ip->d.mtime);
	ip->d.ctime = ip->d.mtime;
}

static int do_truncate(osdfs *fs, struct osdfs__inode *ip, uint64_t size)
{
	int rc;

	if (size > MAX_FILE_SIZE)
		return -EFBIG;
	rc = fs->ops->truncate(fs->impl, OSDFS__OID_BASE + ip->ino, size);
	osdfs__used_stale(ip);
	if (rc < 0)
		return osdfs__fail(fs, rc, "truncating inode %llu: %s",
				   (unsigned long long)ip->ino, strerror(-rc));
	ip->d.size = size;
	touch_mtime(ip);
	return osdfs__iwrite(fs, ip);
}

int osdfs__open_inode(osdfs *fs, struct osdfs__inode *ip, int flags, osdfs_file **fh)
{
	int acc = flags & O_ACCMODE, rc = 0;
	osdfs_file *f;

	if (OSDFS__IS_DIR(ip) && (acc != O_RDONLY || (flags & O_TRUNC)))
		return -EISDIR;
	if (S_ISLNK(ip->d.mode))
		return -ELOOP;
	if (fs->readonly && (acc != O_RDONLY || (flags & O_TRUNC)))
		return -EROFS;
	if ((flags & O_TRUNC) && acc != O_RDONLY && S_ISREG(ip->d.mode) && ip->d.size > 0)
		rc = do_truncate(fs, ip, 0);
	if (rc < 0)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	osdfs__iref(fs, ip);
	f->ip = ip;
	f->flags = flags;
	ip->opens++;
	*fh = f;
	return 0;
}

int osdfs_open(osdfs *fs, uint64_t ino, int flags, osdfs_file **fh)
{
	struct osdfs__inode *ip;
	int rc;

	osdfs__begin();
	*fh = NULL;
	pthread_rwlock_wrlock(&fs->lock);
	rc = osdfs__iget(fs, ino, &ip);
	if (rc == 0) {
		rc = osdfs__open_inode(fs, ip, flags, fh);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "open");
}

int osdfs_release(osdfs *fs, osdfs_file *fh)
{
	struct osdfs__inode *ip;
	int rc = 0;

	if (!fh)
		return 0;
	osdfs__begin();
	ip = fh->ip;
	pthread_rwlock_wrlock(&fs->lock);
	if (ip->opens > 0)
		ip->opens--;
	if (ip->opens == 0 && ip->d.nlink == 0 && !ip->deleted && !fs->readonly) {
		rc = osdfs__ifree(fs, ip);
		if (rc == 0)
			osdfs__orphan_remove(fs, ip->ino);
	}
	osdfs__iput(fs, ip);
	pthread_rwlock_unlock(&fs->lock);
	free(fh);
	return osdfs__end(fs, rc, "release");
}

uint64_t osdfs_file_ino(const osdfs_file *fh)
{
	return fh->ip->ino;
}

static int io_check(const struct osdfs__inode *ip)
{
	if (OSDFS__IS_DIR(ip))
		return -EISDIR;
	return S_ISREG(ip->d.mode) ? 0 : -EINVAL;
}

static size_t iov_total(const struct iovec *iov, int iovcnt, int *overflow)
{
	size_t t = 0;

	*overflow = 0;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > SIZE_MAX / 2 - t)
			*overflow = 1;
		t += iov[i].iov_len;
	}
	return t;
}

/* Copies iov cut to `want` bytes into out (at most iovcnt entries). */
static int iov_clip(const struct iovec *iov, int iovcnt, size_t want, struct iovec *out)
{
	int n = 0;

	for (int i = 0; i < iovcnt && want > 0; i++) {
		out[n] = iov[i];
		if (out[n].iov_len > want)
			out[n].iov_len = want;
		want -= out[n].iov_len;
		n++;
	}
	return n;
}

static void iov_zero(const struct iovec *iov, int iovcnt, size_t from)
{
	for (int i = 0; i < iovcnt; i++) {
		if (from < iov[i].iov_len) {
			memset((char *)iov[i].iov_base + from, 0, iov[i].iov_len - from);
			from = 0;
		} else {
			from -= iov[i].iov_len;
		}
	}
}

static ssize_t readv_locked(osdfs *fs, osdfs_file *fh, const struct iovec *iov, int iovcnt,
			    uint64_t off)
{
	struct osdfs__inode *ip = fh->ip;
	struct iovec stack[IOV_STACK], *cut = stack;
	size_t total, want;
	uint64_t size;
	ssize_t n;
	int overflow, cnt, rc;

	if ((fh->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	/* ip->d under the inode lock: writers change the mode and size under it
	 * while we hold fs->lock shared too (fs.h) */
	pthread_mutex_lock(&ip->mu);
	rc = io_check(ip);
	size = ip->d.size;
	pthread_mutex_unlock(&ip->mu);
	if (rc < 0)
		return rc;
	if (iovcnt < 0)
		return -EINVAL;
	total = iov_total(iov, iovcnt, &overflow);
	if (overflow)
		return -EINVAL;
	if (off >= size || total == 0)
		return 0;
	want = size - off < total ? (size_t)(size - off) : total;
	if (iovcnt > IOV_STACK && !(cut = malloc((size_t)iovcnt * sizeof(*cut))))
		return -ENOMEM;
	cnt = iov_clip(iov, iovcnt, want, cut);
	n = fs->ops->read(fs->impl, OSDFS__OID_BASE + ip->ino, off, cut, cnt);
	if (n >= 0 && (size_t)n < want)
		iov_zero(cut, cnt, (size_t)n); /* object shorter than i_size: a hole */
	if (cut != stack)
		free(cut);
	if (n < 0)
		return osdfs__fail(fs, (int)n, "reading inode %llu: %s",
				   (unsigned long long)ip->ino, strerror((int)-n));
	return (ssize_t)want;
}

ssize_t osdfs_readv(osdfs *fs, osdfs_file *fh, const struct iovec *iov, int iovcnt,
		    uint64_t off)
{
	ssize_t n;

	osdfs__begin();
	pthread_rwlock_rdlock(&fs->lock);
	n = readv_locked(fs, fh, iov, iovcnt, off);
	pthread_rwlock_unlock(&fs->lock);
	return n < 0 ? osdfs__end(fs, (int)n, "read") : n;
}

ssize_t osdfs_read(osdfs *fs, osdfs_file *fh, void *buf, size_t size, uint64_t off)
{
	struct iovec iov = { buf, size };

	return osdfs_readv(fs, fh, &iov, 1, off);
}

/* Clears set-user-id and (for group-executable files) set-group-id on change. */
static void kill_suid(struct osdfs__inode *ip)
{
	ip->d.mode &= ~(uint32_t)S_ISUID;
	if ((ip->d.mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		ip->d.mode &= ~(uint32_t)S_ISGID;
}

static ssize_t writev_locked(osdfs *fs, osdfs_file *fh, const struct iovec *iov, int iovcnt,
			     uint64_t off)
{
	struct osdfs__inode *ip = fh->ip;
	struct osdfs__dinode saved = ip->d;
	uint8_t ibuf[OSDFS__INODE_MAX_LEN];
	struct osdfs_attr a;
	size_t total;
	ssize_t n;
	int overflow, rc;

	if ((fh->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if ((rc = io_check(ip)) < 0)
		return rc;
	if (iovcnt < 0)
		return -EINVAL;
	total = iov_total(iov, iovcnt, &overflow);
	if (overflow)
		return -EINVAL;
	if (fh->flags & O_APPEND)
		off = ip->d.size;
	if (total == 0)
		return 0;
	if (off > MAX_FILE_SIZE || total > MAX_FILE_SIZE - off)
		return -EFBIG;
	if (off + total > ip->d.size)
		ip->d.size = off + total;
	touch_mtime(ip);
	kill_suid(ip);
	osdfs__inode_attr(ip, &a, ibuf);
	n = fs->ops->write(fs->impl, OSDFS__OID_BASE + ip->ino, off, iov, iovcnt, &a, 1);
	osdfs__used_stale(ip);
	if (n < 0) {
		ip->d = saved;
		return osdfs__fail(fs, (int)n, "writing inode %llu: %s",
				   (unsigned long long)ip->ino, strerror((int)-n));
	}
	ip->dirty = 0;
	if ((size_t)n < total) {
		ip->d.size = off + (uint64_t)n > saved.size ? off + (uint64_t)n : saved.size;
		rc = osdfs__iwrite(fs, ip);
		if (rc < 0)
			return rc;
	}
	return n;
}

ssize_t osdfs_writev(osdfs *fs, osdfs_file *fh, const struct iovec *iov, int iovcnt,
		     uint64_t off)
{
	ssize_t n;

	osdfs__begin();
	if (fs->readonly)
		return osdfs__end(fs, -EROFS, "write");
	/* Writes to different files run in parallel; one file's writes are
	 * serialised by its inode lock (which also makes O_APPEND atomic). */
	pthread_rwlock_rdlock(&fs->lock);
	pthread_mutex_lock(&fh->ip->mu);
	n = writev_locked(fs, fh, iov, iovcnt, off);
	pthread_mutex_unlock(&fh->ip->mu);
	pthread_rwlock_unlock(&fs->lock);
	return n < 0 ? osdfs__end(fs, (int)n, "write") : n;
}

ssize_t osdfs_write(osdfs *fs, osdfs_file *fh, const void *buf, size_t size, uint64_t off)
{
	struct iovec iov = { (void *)buf, size };

	return osdfs_writev(fs, fh, &iov, 1, off);
}

static int fallocate_locked(osdfs *fs, osdfs_file *fh, unsigned int mode, uint64_t off,
			    uint64_t len)
{
	struct osdfs__inode *ip = fh->ip;
	int rc;

	if ((fh->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if ((rc = io_check(ip)) < 0)
		return rc == -EINVAL ? -ENODEV : rc;
	if (len == 0 || off > MAX_FILE_SIZE || len > MAX_FILE_SIZE - off)
		return len == 0 ? -EINVAL : -EFBIG;
	if (mode == (OSDFS_FALLOC_KEEP_SIZE | OSDFS_FALLOC_PUNCH_HOLE)) {
		if (off >= ip->d.size)
			return 0;
		if (len > ip->d.size - off)
			len = ip->d.size - off;
		rc = osdfs__punch(fs, OSDFS__OID_BASE + ip->ino, off, len);
		osdfs__used_stale(ip);
		if (rc < 0)
			return osdfs__fail(fs, rc, "punching inode %llu: %s",
					   (unsigned long long)ip->ino, strerror(-rc));
		touch_mtime(ip);
		return osdfs__iwrite(fs, ip);
	}
	if (mode == OSDFS_FALLOC_KEEP_SIZE)
		return 0; /* the object store allocates on write */
	if (mode != 0)
		return -EOPNOTSUPP;
	if (off + len <= ip->d.size)
		return 0;
	return do_truncate(fs, ip, off + len);
}

int osdfs_fallocate(osdfs *fs, osdfs_file *fh, unsigned int mode, uint64_t off, uint64_t len)
{
	int rc;

	osdfs__begin();
	if (fs->readonly)
		return osdfs__end(fs, -EROFS, "fallocate");
	pthread_rwlock_wrlock(&fs->lock);
	rc = fallocate_locked(fs, fh, mode, off, len);
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "fallocate");
}

int osdfs_getattr(osdfs *fs, uint64_t ino, struct osdfs_stat *out)
{
	struct osdfs__inode *ip;
	int rc;

	osdfs__begin();
	pthread_rwlock_rdlock(&fs->lock);
	rc = osdfs__iget(fs, ino, &ip);
	if (rc == 0) {
		pthread_mutex_lock(&ip->mu);
		osdfs__used_refresh(fs, ip);
		osdfs__stat_fill(fs, ip, out);
		pthread_mutex_unlock(&ip->mu);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "getattr");
}

static void set_ts(struct osdfs__ts *ts, const struct osdfs_timespec *v)
{
	ts->sec = v->sec;
	ts->nsec = v->nsec;
}

static int setattr_locked(osdfs *fs, struct osdfs__inode *ip, const struct osdfs_stat *st,
			  unsigned int mask)
{
	struct osdfs__ts now;
	int rc;

	if ((mask & (OSDFS_SET_ATIME | OSDFS_SET_MTIME | OSDFS_SET_CTIME | OSDFS_SET_CRTIME)) &&
	    (((mask & OSDFS_SET_ATIME) && st->atime.nsec >= 1000000000u) ||
	     ((mask & OSDFS_SET_MTIME) && st->mtime.nsec >= 1000000000u) ||
	     ((mask & OSDFS_SET_CTIME) && st->ctime.nsec >= 1000000000u) ||
	     ((mask & OSDFS_SET_CRTIME) && st->crtime.nsec >= 1000000000u)))
		return -EINVAL;
	if (mask & OSDFS_SET_SIZE) {
		if ((rc = io_check(ip)) < 0)
			return rc;
		if (st->size != ip->d.size) {
			rc = do_truncate(fs, ip, st->size);
			if (rc < 0)
				return rc;
		}
	}
	osdfs__now(&now);
	if (mask & OSDFS_SET_MODE)
		ip->d.mode = (ip->d.mode & S_IFMT) | (st->mode & 07777);
	if ((mask & (OSDFS_SET_UID | OSDFS_SET_GID)) && !OSDFS__IS_DIR(ip)) {
		if ((mask & OSDFS_SET_UID && st->uid != ip->d.uid) ||
		    (mask & OSDFS_SET_GID && st->gid != ip->d.gid))
			if (!(mask & OSDFS_SET_MODE))
				kill_suid(ip);
	}
	if (mask & OSDFS_SET_UID)
		ip->d.uid = st->uid;
	if (mask & OSDFS_SET_GID)
		ip->d.gid = st->gid;
	if (mask & OSDFS_SET_ATIME_NOW)
		ip->d.atime = now;
	else if (mask & OSDFS_SET_ATIME)
		set_ts(&ip->d.atime, &st->atime);
	if (mask & OSDFS_SET_MTIME_NOW)
		ip->d.mtime = now;
	else if (mask & OSDFS_SET_MTIME)
		set_ts(&ip->d.mtime, &st->mtime);
	if (mask & OSDFS_SET_CRTIME)
		set_ts(&ip->d.crtime, &st->crtime);
	if (mask & OSDFS_SET_CTIME)
		set_ts(&ip->d.ctime, &st->ctime);
	else
		ip->d.ctime = now;
	ip->dirty = 1;
	return 0;
}

int osdfs_setattr(osdfs *fs, uint64_t ino, const struct osdfs_stat *st, unsigned int mask,
		  struct osdfs_stat *out)
{
	struct osdfs__inode *ip;
	int rc;

	osdfs__begin();
	if (fs->readonly)
		return osdfs__end(fs, -EROFS, "setattr");
	pthread_rwlock_wrlock(&fs->lock);
	rc = osdfs__iget(fs, ino, &ip);
	if (rc == 0) {
		rc = setattr_locked(fs, ip, st, mask);
		if (rc == 0 && out)
			osdfs__stat_fill(fs, ip, out);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "setattr");
}

int osdfs_fsync(osdfs *fs, uint64_t ino, int datasync)
{
	struct osdfs__inode *ip;
	int rc;

	(void)datasync; /* the inode is small: always written with the data */
	osdfs__begin();
	if (fs->readonly)
		return 0;
	/* shared lock plus the inode lock: fsyncs of different files and other
	 * files' I/O proceed during the flush round trip */
	pthread_rwlock_rdlock(&fs->lock);
	rc = osdfs__iget(fs, ino, &ip);
	if (rc == 0) {
		pthread_mutex_lock(&ip->mu);
		if (ip->dirty)
			rc = osdfs__iwrite(fs, ip);
		if (rc == 0 && !ip->deleted)
			rc = fs->ops->flush(fs->impl, OSDFS__OID_BASE + ino);
		pthread_mutex_unlock(&ip->mu);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "fsync");
}
