/*
 * File data and directory listings of the passthrough. Open files keep a
 * real descriptor in fi->fh; open directories a DIR stream.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pt.h"

/* keep_cache as osdfs-mount: nothing else changes the files meanwhile */
static void reply_open(fuse_req_t req, int fd, struct fuse_file_info *fi)
{
	if (fd < 0) {
		pt_reply_err(req, errno);
		return;
	}
	fi->fh = (uint64_t)fd;
	fi->keep_cache = 1;
	if (fuse_reply_open(req, fi) != 0)
		close(fd);
}

static void pt_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	char path[64];

	pt_fd_path(pt_inode(req, ino)->fd, path, sizeof(path));
	reply_open(req, open(path, fi->flags & ~O_NOFOLLOW), fi);
}

static void pt_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct pt_fs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	int fd = openat(pt_inode(req, parent)->fd, name, (fi->flags | O_CREAT) & ~O_NOFOLLOW,
			mode);
	int rc;

	if (fd < 0) {
		pt_reply_err(req, errno);
		return;
	}
	rc = pt_lookup_ref(fs, pt_inode(req, parent), name, &e);
	if (rc < 0) {
		close(fd);
		pt_reply_err(req, rc);
		return;
	}
	fi->fh = (uint64_t)fd;
	fi->keep_cache = 1;
	if (fuse_reply_create(req, &e, fi) != 0) {
		pt_unref(fs, e.ino, 1);
		close(fd);
	}
}

static void pt_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);

	(void)ino;
	/* without splice libfuse preads this into memory and sends it */
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = (int)fi->fh;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void pt_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv,
			 off_t off, struct fuse_file_info *fi)
{
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(bufv));
	ssize_t n;

	(void)ino;
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = (int)fi->fh;
	out.buf[0].pos = off;
	n = fuse_buf_copy(&out, bufv, 0);
	if (n < 0)
		pt_reply_err(req, (int)n);
	else
		fuse_reply_write(req, (size_t)n);
}

/* close(2) of a copy: what a close of the real file would do */
static void pt_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int fd = dup((int)fi->fh);

	(void)ino;
	fuse_reply_err(req, fd < 0 || close(fd) < 0 ? errno : 0);
}

static void pt_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	close((int)fi->fh);
	fuse_reply_err(req, 0);
}

static void pt_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int fd = (int)fi->fh;
	int rc = datasync ? fdatasync(fd) : fsync(fd);

	(void)ino;
	fuse_reply_err(req, rc < 0 ? errno : 0);
}

static void pt_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	(void)ino;
	fuse_reply_err(req, fallocate((int)fi->fh, mode, off, len) < 0 ? errno : 0);
}

/* ---- directories ---- */

struct pt_dir {
	DIR *dp;
	struct dirent *pending; /* read but not yet sent (did not fit) */
	off_t pos;              /* offset the stream stands at */
	struct pt_dir *prev, *next; /* fs->dirs (fs->lock) */
};

static void dir_link(struct pt_fs *fs, struct pt_dir *d)
{
	pthread_mutex_lock(&fs->lock);
	d->next = fs->dirs;
	if (d->next)
		d->next->prev = d;
	fs->dirs = d;
	pthread_mutex_unlock(&fs->lock);
}

static void dir_close(struct pt_fs *fs, struct pt_dir *d)
{
	pthread_mutex_lock(&fs->lock);
	if (d->prev)
		d->prev->next = d->next;
	else
		fs->dirs = d->next;
	if (d->next)
		d->next->prev = d->prev;
	pthread_mutex_unlock(&fs->lock);
	closedir(d->dp);
	free(d);
}

void pt_dirs_free(struct pt_fs *fs)
{
	while (fs->dirs)
		dir_close(fs, fs->dirs);
}

static struct pt_dir *dir_of(const struct fuse_file_info *fi)
{
	return (struct pt_dir *)(uintptr_t)fi->fh;
}

static void pt_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pt_dir *d = calloc(1, sizeof(*d));
	int fd = openat(pt_inode(req, ino)->fd, ".", O_RDONLY | O_DIRECTORY);

	if (!d || fd < 0 || !(d->dp = fdopendir(fd))) {
		int err = d ? errno : ENOMEM;

		if (fd >= 0)
			close(fd);
		free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	dir_link(fuse_req_userdata(req), d);
	if (fuse_reply_open(req, fi) != 0)
		dir_close(fuse_req_userdata(req), d);
}

static int is_dot(const char *n)
{
	return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

/* One record into @p at; returns its size (> room: it did not fit, and any
 * lookup reference taken for it was given back). */
static size_t add_record(fuse_req_t req, fuse_ino_t ino, struct dirent *de, char *at,
			 size_t room, int plus)
{
	struct pt_fs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	size_t need;

	if (!plus) {
		struct stat st = { .st_ino = de->d_ino, .st_mode = (mode_t)de->d_type << 12 };

		return fuse_add_direntry(req, at, room, de->d_name, &st, de->d_off);
	}
	memset(&e, 0, sizeof(e));
	e.attr.st_ino = de->d_ino;
	e.attr.st_mode = (mode_t)de->d_type << 12;
	if (!is_dot(de->d_name) && pt_lookup_ref(fs, pt_inode(req, ino), de->d_name, &e) < 0)
		e.ino = 0; /* vanished: list the name only */
	need = fuse_add_direntry_plus(req, at, room, de->d_name, &e, de->d_off);
	if (need > room && e.ino)
		pt_unref(fs, e.ino, 1);
	return need;
}

static void list_dir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi, int plus)
{
	struct pt_dir *d = dir_of(fi);
	char *buf = malloc(size ? size : 1);
	size_t used = 0;
	int err = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off != d->pos) {
		seekdir(d->dp, off);
		d->pending = NULL;
		d->pos = off;
	}
	for (;;) {
		struct dirent *de = d->pending;
		size_t need;

		if (!de) {
			errno = 0;
			de = readdir(d->dp);
			if (!de) {
				err = errno;
				break;
			}
		}
		need = add_record(req, ino, de, buf + used, size - used, plus);
		if (need > size - used) {
			d->pending = de;
			/* an empty reply would mean "end of directory" */
			err = used ? 0 : EINVAL;
			break;
		}
		d->pending = NULL;
		d->pos = de->d_off;
		used += need;
	}
	if (used == 0 && err)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, used);
	free(buf);
}

static void pt_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	list_dir(req, ino, size, off, fi, 0);
}

static void pt_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	list_dir(req, ino, size, off, fi, 1);
}

static void pt_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	dir_close(fuse_req_userdata(req), dir_of(fi));
	fuse_reply_err(req, 0);
}

static void pt_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	int fd = dirfd(dir_of(fi)->dp);
	int rc = datasync ? fdatasync(fd) : fsync(fd);

	(void)ino;
	fuse_reply_err(req, rc < 0 ? errno : 0);
}

void pt_data_ops(struct fuse_lowlevel_ops *ops)
{
	ops->open = pt_open;
	ops->create = pt_create;
	ops->read = pt_read;
	ops->write_buf = pt_write_buf;
	ops->flush = pt_flush;
	ops->release = pt_release;
	ops->fsync = pt_fsync;
	ops->fallocate = pt_fallocate;
	ops->opendir = pt_opendir;
	ops->readdir = pt_readdir;
	ops->readdirplus = pt_readdirplus;
	ops->releasedir = pt_releasedir;
	ops->fsyncdir = pt_fsyncdir;
}
