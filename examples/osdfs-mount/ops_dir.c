/*
 * Directories. An open directory holds an osdfs handle, which keeps the
 * inode alive if it is removed while being listed. Listings resume from
 * osdfs cookies, which FUSE hands back as the offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mount.h"
#include "ops.h"

struct listing {
	struct mnt_ctx *c;
	fuse_req_t req;
	char *buf;
	size_t size, used;
	int plus;
	int entries;
	int full;           /* stopped because the next entry did not fit */
	uint64_t *counted;  /* inodes whose lookup count this reply added */
	size_t ncounted, cap;
	int err;
};

static int is_dot_or_dotdot(const struct osdfs_dirent *ent)
{
	return ent->name[0] == '.' &&
	       (ent->namelen == 1 || (ent->namelen == 2 && ent->name[1] == '.'));
}

static int remember_count(struct listing *l, uint64_t ino)
{
	if (l->ncounted == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		uint64_t *p = realloc(l->counted, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->counted = p;
		l->cap = cap;
	}
	if (mnt_lookups_add(l->c->lookups, ino) < 0)
		return -ENOMEM;
	l->counted[l->ncounted++] = ino;
	return 0;
}

/* The full entry of a readdirplus record. "." and ".." and entries that
 * vanish meanwhile get ino 0: the kernel then only lists the name. */
static void plus_entry(struct listing *l, const struct osdfs_dirent *ent,
		       struct fuse_entry_param *e, int *counted)
{
	struct osdfs_stat st;

	*counted = 0;
	if (!is_dot_or_dotdot(ent) && osdfs_getattr(l->c->fs, ent->ino, &st) == 0) {
		mnt_fill_entry(l->c, &st, e);
		*counted = 1;
		return;
	}
	memset(e, 0, sizeof(*e));
	e->attr.st_ino = (ino_t)ent->ino;
	e->attr.st_mode = (mode_t)(ent->type << 12);
}

static int add_entry(const struct osdfs_dirent *ent, void *payload)
{
	struct listing *l = payload;
	char *at = l->buf + l->used;
	size_t room = l->size - l->used, need;

	if (l->plus) {
		struct fuse_entry_param e;
		int counted;

		plus_entry(l, ent, &e, &counted);
		need = fuse_add_direntry_plus(l->req, at, room, ent->name, &e, (off_t)ent->next);
		if (need <= room && counted && remember_count(l, ent->ino) < 0) {
			l->err = -ENOMEM;
			return 1;
		}
	} else {
		struct stat st;

		memset(&st, 0, sizeof(st));
		st.st_ino = (ino_t)ent->ino;
		st.st_mode = (mode_t)(ent->type << 12);
		need = fuse_add_direntry(l->req, at, room, ent->name, &st, (off_t)ent->next);
	}
	if (need > room) {
		l->full = 1;
		return 1; /* this entry comes first in the next call */
	}
	l->used += need;
	l->entries++;
	return 0;
}

static void list_dir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus)
{
	struct listing l = { .c = mnt_ctx(req), .req = req, .size = size, .plus = plus };
	int rc;

	l.buf = malloc(size ? size : 1);
	if (!l.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rc = osdfs_readdir(l.c->fs, ino, (uint64_t)off, add_entry, &l);
	if (rc == 0 && l.err)
		rc = l.err;
	/* an empty reply means "end of directory": never send one because
	 * the buffer was too small for a single entry */
	if (rc == 0 && l.full && l.entries == 0)
		rc = -EINVAL;
	if (rc < 0 || fuse_reply_buf(req, l.buf, l.used) != 0) {
		for (size_t i = 0; i < l.ncounted; i++)
			mnt_lookups_drop(l.c->lookups, l.counted[i], 1);
		if (rc < 0)
			mnt_reply_err(req, rc);
	}
	free(l.counted);
	free(l.buf);
}

void mnt_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt_ctx *c = mnt_ctx(req);
	struct osdfs_stat st;
	osdfs_file *fh = NULL;
	int rc = osdfs_getattr(c->fs, ino, &st);

	if (rc == 0 && !S_ISDIR(st.mode))
		rc = -ENOTDIR;
	if (rc == 0)
		rc = osdfs_open(c->fs, ino, O_RDONLY, &fh);
	mnt_file_reply_open(req, rc, fh, fi, 0);
}

void mnt_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)fi;
	list_dir(req, ino, size, off, 0);
}

void mnt_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	(void)fi;
	list_dir(req, ino, size, off, 1);
}
