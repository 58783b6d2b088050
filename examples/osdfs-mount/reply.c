/* Conversions and replies shared by every operation. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "mount.h"

struct mnt_ctx *mnt_ctx(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* osdfs returns negative errno values; FUSE wants them positive. */
void mnt_reply_err(fuse_req_t req, int rc)
{
	fuse_reply_err(req, rc < 0 ? -rc : rc);
}

void mnt_stat_to_host(const struct osdfs_stat *in, struct stat *out)
{
	memset(out, 0, sizeof(*out));
	out->st_ino = (ino_t)in->ino;
	out->st_mode = (mode_t)in->mode;
	out->st_nlink = (nlink_t)in->nlink;
	out->st_uid = (uid_t)in->uid;
	out->st_gid = (gid_t)in->gid;
	out->st_size = (off_t)in->size;
	out->st_blocks = (blkcnt_t)in->blocks;
	out->st_rdev = (dev_t)in->rdev;
	out->st_blksize = (blksize_t)in->blksize;
	out->st_atim.tv_sec = (time_t)in->atime.sec;
	out->st_atim.tv_nsec = (long)in->atime.nsec;
	out->st_mtim.tv_sec = (time_t)in->mtime.sec;
	out->st_mtim.tv_nsec = (long)in->mtime.nsec;
	out->st_ctim.tv_sec = (time_t)in->ctime.sec;
	out->st_ctim.tv_nsec = (long)in->ctime.nsec;
}

void mnt_fill_entry(struct mnt_ctx *c, const struct osdfs_stat *st,
		    struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = st->ino;
	e->generation = st->generation;
	mnt_stat_to_host(st, &e->attr);
	e->attr_timeout = c->opts->attr_timeout;
	e->entry_timeout = c->opts->entry_timeout;
}

void mnt_reply_entry(fuse_req_t req, const struct osdfs_stat *st)
{
	struct mnt_ctx *c = mnt_ctx(req);
	struct fuse_entry_param e;

	mnt_fill_entry(c, st, &e);
	/* count before replying: the kernel may forget before we return */
	if (mnt_lookups_add(c->lookups, st->ino) < 0) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (fuse_reply_entry(req, &e) != 0)
		mnt_lookups_drop(c->lookups, st->ino, 1);
}

void mnt_cred(fuse_req_t req, struct osdfs_cred *cred)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	cred->uid = (uint32_t)ctx->uid;
	cred->gid = (uint32_t)ctx->gid;
}
