/*
 * test_rel_crash: checking a recovered filesystem. Every entry is walked
 * (files read to the end, symlinks read), then every sealed file is
 * compared byte for byte with what the journal says it holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "test_rel_crash.h"

#define CHUNK 65536u

/* Reads the whole file; compares it with @p seed's bytes unless seed is NULL. */
static int read_file(osdfs *fs, uint64_t ino, uint64_t size, const uint64_t *seed)
{
	uint8_t *buf = malloc(CHUNK), *want = seed ? malloc(CHUNK) : NULL;
	osdfs_file *fh = NULL;
	uint64_t off = 0;
	int rc = (!buf || (seed && !want)) ? -ENOMEM : osdfs_open(fs, ino, O_RDONLY, &fh);

	while (rc == 0) {
		ssize_t n = osdfs_read(fs, fh, buf, CHUNK, off);

		if (n <= 0) {
			rc = n < 0 ? (int)n : off == size ? 0 : -EIO;
			break;
		}
		if (seed) {
			rc_fill(want, (size_t)n, off, *seed);
			if (memcmp(buf, want, (size_t)n) != 0)
				rc = -EILSEQ;
		}
		off += (uint64_t)n;
	}
	if (fh)
		osdfs_release(fs, fh);
	free(buf);
	free(want);
	return rc;
}

struct walk {
	osdfs *fs;
	uint64_t *dirs;
	size_t n, cap;
	uint64_t walked;
	int rc;
};

static int walk_cb(const struct osdfs_dirent *d, void *payload)
{
	struct walk *w = payload;

	if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0)
		return 0;
	w->walked++;
	if (d->type != DT_DIR)
		return 0;
	if (w->n == w->cap) {
		size_t ncap = w->cap ? 2 * w->cap : 64;
		uint64_t *v = realloc(w->dirs, ncap * sizeof(*v));

		if (!v)
			return w->rc = -ENOMEM;
		w->dirs = v;
		w->cap = ncap;
	}
	w->dirs[w->n++] = d->ino;
	return 0;
}

struct entry_ctx {
	osdfs *fs;
	int rc;
};

/* Reads every non-directory entry of one directory. */
static int read_cb(const struct osdfs_dirent *d, void *payload)
{
	struct entry_ctx *c = payload;
	struct osdfs_stat st;
	char target[4200];

	if (d->type == DT_DIR)
		return 0;
	c->rc = osdfs_getattr(c->fs, d->ino, &st);
	if (c->rc == 0 && S_ISLNK(st.mode) &&
	    osdfs_readlink(c->fs, d->ino, target, sizeof(target)) != (ssize_t)st.size)
		c->rc = -EIO;
	return c->rc;
}

/* The "ls -R" part: every directory listed, every file read. */
static int walk_all(osdfs *fs, struct rc_check *c)
{
	struct walk w = { .fs = fs };
	int rc = 0;

	w.dirs = malloc(sizeof(*w.dirs));
	if (!w.dirs)
		return -ENOMEM;
	w.dirs[w.n++] = OSDFS_ROOT_INO;
	w.cap = 1;
	for (size_t i = 0; rc == 0 && i < w.n; i++) {
		struct entry_ctx e = { fs, 0 };

		rc = osdfs_readdir(fs, w.dirs[i], 0, walk_cb, &w);
		if (rc == 0)
			rc = w.rc;
		if (rc == 0)
			rc = osdfs_readdir(fs, w.dirs[i], 0, read_cb, &e);
		if (rc == 0)
			rc = e.rc;
	}
	c->walked += w.walked;
	free(w.dirs);
	return rc;
}

/* 1 if @p path holds the sealed file's exact bytes, else 0. */
static int intact(osdfs *fs, const struct rc_sealed *s, const char *path)
{
	struct osdfs_stat st;
	uint64_t ino;

	if (osdfs_resolve(fs, path, 0, &ino) < 0 || osdfs_getattr(fs, ino, &st) < 0)
		return 0;
	return S_ISREG(st.mode) && st.size == s->len && read_file(fs, ino, st.size, &s->seed) == 0;
}

static void loss(struct rc_check *c, const struct rc_sealed *s, const char *why)
{
	if (c->losses++ == 0)
		snprintf(c->first_loss, sizeof(c->first_loss), "%s%s%s: %s", s->path,
			 s->pending ? " or " : "", s->pending ? s->alt : "", why);
}

int rc_check_fs(osdfs *fs, struct rc_journal *j, struct rc_check *c)
{
	int rc = walk_all(fs, c);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < j->n; i++) {
		struct rc_sealed *s = &j->v[i];
		int old_ok = intact(fs, s, s->path);

		if (s->pending) {
			/* the rename was under way: either name will do */
			if (intact(fs, s, s->alt)) {
				memcpy(s->path, s->alt, sizeof(s->path));
				old_ok = 1;
			}
			if (!old_ok)
				loss(c, s, "neither name holds the fsync'ed bytes");
			s->pending = 0;
		} else if (!old_ok) {
			loss(c, s, "missing or not the fsync'ed bytes");
		}
		if (old_ok) {
			c->files_verified++;
			c->bytes_verified += s->len;
		}
	}
	return 0;
}
