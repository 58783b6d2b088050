/*
 * Open files. Each osdfs file handle is wrapped and listed so that destroy
 * can release what the kernel never released (a lazy unmount or a signal
 * ends the session with files still open, and osdfs_unmount() needs them
 * closed).
 */
#include <errno.h>
#include <stdlib.h>
#include "mount.h"

struct mnt_file *mnt_file_add(struct mnt_ctx *c, osdfs_file *fh)
{
	struct mnt_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fh = fh;
	pthread_mutex_lock(&c->files_lock);
	f->next = c->files.next;
	f->prev = &c->files;
	c->files.next->prev = f;
	c->files.next = f;
	pthread_mutex_unlock(&c->files_lock);
	return f;
}

static void unlink_file(struct mnt_file *f)
{
	f->prev->next = f->next;
	f->next->prev = f->prev;
}

int mnt_file_release(struct mnt_ctx *c, struct mnt_file *f)
{
	int rc;

	pthread_mutex_lock(&c->files_lock);
	unlink_file(f);
	pthread_mutex_unlock(&c->files_lock);
	rc = osdfs_release(c->fs, f->fh);
	free(f);
	return rc;
}

void mnt_file_release_all(struct mnt_ctx *c)
{
	/* no request runs any more: the session loop has ended */
	while (c->files.next != &c->files)
		mnt_file_release(c, c->files.next);
}

void mnt_file_reply_open(fuse_req_t req, int rc, osdfs_file *fh, struct fuse_file_info *fi,
			 int keep_cache)
{
	struct mnt_ctx *c = mnt_ctx(req);
	struct mnt_file *f;

	if (rc < 0) {
		mnt_reply_err(req, rc);
		return;
	}
	f = mnt_file_add(c, fh);
	if (!f) {
		osdfs_release(c->fs, fh);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->keep_cache = keep_cache ? 1 : 0;
	if (fuse_reply_open(req, fi) != 0)
		mnt_file_release(c, f); /* interrupted: the kernel has no handle */
}
