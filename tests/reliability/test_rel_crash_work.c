/*
 * test_rel_crash: the workload. It keeps a model of the tree (directories
 * and non-directories with their paths), picks seeded operations on it and
 * reports to the driver. Sealed files (fsync'ed, with every directory on
 * their path) are never written, truncated, linked or unlinked afterwards,
 * nor are directories holding them renamed or removed: only renames through
 * the reported protocol change them, so the driver knows their exact bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/stat.h>

#include "test_rel_crash.h"

#define MAX_FILES 250   /* unsealed non-directories */
#define MAX_SEALED 400  /* sealed files in the journal: beyond, creates do not seal */
#define MAX_DIRS 40
#define MAX_ORPHANS 8

struct wl_ent {
	char path[RC_PATH_MAX];
	uint64_t ino;
	int is_dir;
	int is_reg;
};

struct wl {
	osdfs *fs;
	struct rc_journal *j;
	int fd;
	unsigned iter;
	uint64_t rng;
	unsigned counter;
	struct wl_ent *ents;
	size_t n, cap;
	osdfs_file *orphans[MAX_ORPHANS];
	int norphans;
	uint8_t *buf;
};

#define BUF_MAX 70000u

static void say(struct wl *w, const char *fmt, ...)
{
	char line[RC_PATH_MAX + 64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(line) && write(w->fd, line, (size_t)n) != n)
		_exit(3); /* the driver is gone */
}

static uint64_t rnd(struct wl *w, uint64_t n)
{
	return n ? rc_rand(&w->rng) % n : 0;
}

static int add_ent(struct wl *w, const char *path, uint64_t ino, uint32_t mode)
{
	struct wl_ent *e;

	if (w->n == w->cap) {
		size_t ncap = w->cap ? 2 * w->cap : 256;
		struct wl_ent *v = realloc(w->ents, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->ents = v;
		w->cap = ncap;
	}
	e = &w->ents[w->n++];
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->ino = ino;
	e->is_dir = S_ISDIR(mode);
	e->is_reg = S_ISREG(mode);
	return 0;
}

struct walk_ctx {
	struct wl *w;
	const char *dir;
	int rc;
};

static int walk_cb(const struct osdfs_dirent *d, void *payload)
{
	struct walk_ctx *c = payload;
	char path[RC_PATH_MAX];

	if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", c->dir, d->name);
	c->rc = add_ent(c->w, path, d->ino, d->type == DT_DIR ? S_IFDIR :
			d->type == DT_REG ? S_IFREG : S_IFLNK);
	return c->rc;
}

/* Rebuilds the model from the filesystem (entries are appended, so the
 * directories found are walked in turn). */
static int rebuild(struct wl *w)
{
	int rc;

	w->n = 0;
	rc = add_ent(w, "", OSDFS_ROOT_INO, S_IFDIR);
	for (size_t i = 0; rc == 0 && i < w->n; i++) {
		struct walk_ctx c = { w, NULL, 0 };
		char dir[RC_PATH_MAX];

		if (!w->ents[i].is_dir)
			continue;
		snprintf(dir, sizeof(dir), "%s", w->ents[i].path);
		c.dir = dir;
		rc = osdfs_readdir(w->fs, w->ents[i].ino, 0, walk_cb, &c);
		if (rc == 0)
			rc = c.rc;
	}
	return rc;
}

/* Is inode @p ino a sealed file (under any of its names)? */
static int sealed_ino(struct wl *w, uint64_t ino)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->ents[i].ino == ino && rc_journal_find(w->j, w->ents[i].path) >= 0)
			return 1;
	return 0;
}

/* A random entry of the wanted kind (dir: 1 directories, 0 others), or NULL. */
static struct wl_ent *pick(struct wl *w, int dir, int unsealed)
{
	for (int tries = 0; tries < 16 && w->n > 0; tries++) {
		struct wl_ent *e = &w->ents[rnd(w, w->n)];

		if (e->is_dir != dir)
			continue;
		if (unsealed && (dir ? rc_journal_under(w->j, e->path) || e->ino == OSDFS_ROOT_INO
				     : sealed_ino(w, e->ino)))
			continue;
		return e;
	}
	return NULL;
}

static size_t count(struct wl *w, int dir)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n; i++)
		n += w->ents[i].is_dir == dir;
	return n;
}

static void new_name(struct wl *w, char kind, const struct wl_ent *dir, char *path)
{
	if (snprintf(path, RC_PATH_MAX, "%s/%c%u_%u", dir->path, kind, w->iter,
		     w->counter++) >= RC_PATH_MAX)
		path[0] = '\0'; /* cannot happen: directories nest at most 200 bytes deep */
}

static const char *base(const char *path)
{
	return strrchr(path, '/') + 1;
}

/* The directory holding @p path (an entry of the model). */
static struct wl_ent *parent_of(struct wl *w, const char *path)
{
	size_t n = (size_t)(base(path) - path) - 1;

	for (size_t i = 0; i < w->n; i++)
		if (w->ents[i].is_dir && strlen(w->ents[i].path) == n &&
		    strncmp(w->ents[i].path, path, n) == 0)
			return &w->ents[i];
	return NULL;
}

static void drop_ent(struct wl *w, struct wl_ent *e)
{
	*e = w->ents[--w->n];
}

/* fsync of every directory from @p path's parent up to the root. */
static int fsync_chain(struct wl *w, const char *path)
{
	char p[RC_PATH_MAX];
	int rc = 0;

	snprintf(p, sizeof(p), "%s", path);
	for (char *slash = strrchr(p, '/'); rc == 0 && slash; slash = strrchr(p, '/')) {
		struct wl_ent *d;

		*slash = '\0';
		d = *p ? NULL : &w->ents[0];
		for (size_t i = 0; !d && i < w->n; i++)
			if (w->ents[i].is_dir && strcmp(w->ents[i].path, p) == 0)
				d = &w->ents[i];
		rc = d ? osdfs_fsync(w->fs, d->ino, 0) : -ENOENT;
	}
	return rc;
}

static int write_range(struct wl *w, osdfs_file *fh, uint64_t off, size_t len, uint64_t seed)
{
	/* one to three writes, so a kill can land between them */
	size_t done = 0;

	rc_fill(w->buf, len, off, seed);
	while (done < len) {
		size_t n = len - done > 1 ? 1 + rnd(w, len - done) : len - done;
		ssize_t r = osdfs_write(w->fs, fh, w->buf + done, n, off + done);

		if (r < 0)
			return (int)r;
		done += (size_t)r;
	}
	return 0;
}

static size_t rand_size(struct wl *w)
{
	switch (rnd(w, 4)) {
	case 0: return 0;
	case 1: return 1 + rnd(w, 4096);
	default: return 1 + rnd(w, BUF_MAX);
	}
}

static int op_create(struct wl *w, int seal)
{
	struct wl_ent *d = pick(w, 1, 0);
	char path[RC_PATH_MAX];
	struct osdfs_stat st;
	osdfs_file *fh;
	size_t len = rand_size(w);
	uint64_t seed = rc_rand(&w->rng);
	int rc;

	if (!d || count(w, 0) >= MAX_FILES + w->j->n)
		return 0;
	seal = seal && w->j->n < MAX_SEALED;
	new_name(w, 'f', d, path);
	rc = osdfs_create(w->fs, d->ino, base(path), 0644, O_WRONLY | O_EXCL, NULL, &st, &fh);
	if (rc < 0)
		return rc;
	rc = write_range(w, fh, 0, len, seed);
	if (rc == 0 && seal)
		rc = osdfs_fsync(w->fs, st.ino, 0);
	osdfs_release(w->fs, fh);
	if (rc == 0)
		rc = add_ent(w, path, st.ino, S_IFREG);
	if (rc == 0 && seal)
		rc = fsync_chain(w, path);
	if (rc == 0 && seal) {
		if (rc_journal_add(w->j, path, len, seed) < 0)
			return -ENOMEM;
		say(w, "S %zu %llu %s\n", len, (unsigned long long)seed, path);
	}
	return rc;
}

static int op_write(struct wl *w, int truncate)
{
	struct wl_ent *e = pick(w, 0, 1);
	osdfs_file *fh;
	int rc;

	if (!e || !e->is_reg)
		return 0;
	if (truncate) {
		struct osdfs_stat st = { .size = rnd(w, BUF_MAX) };

		return osdfs_setattr(w->fs, e->ino, &st, OSDFS_SET_SIZE, NULL);
	}
	rc = osdfs_open(w->fs, e->ino, O_WRONLY, &fh);
	if (rc < 0)
		return rc;
	rc = write_range(w, fh, rnd(w, BUF_MAX), 1 + rnd(w, 20000), rc_rand(&w->rng));
	osdfs_release(w->fs, fh);
	return rc;
}

static int op_rename_file(struct wl *w)
{
	struct wl_ent *e = pick(w, 0, 1), *from, *d = pick(w, 1, 0), *victim = pick(w, 0, 1);
	char path[RC_PATH_MAX];
	int rc;

	if (!e || !d || !(from = parent_of(w, e->path)))
		return 0;
	if (victim && victim->ino != e->ino && rnd(w, 3) == 0) {
		/* replace another unsealed file */
		struct wl_ent *vd = parent_of(w, victim->path);

		rc = vd ? osdfs_rename(w->fs, from->ino, base(e->path), vd->ino,
				       base(victim->path), 0) : 0;
		if (rc == 0 && vd) {
			snprintf(path, sizeof(path), "%s", victim->path);
			snprintf(e->path, sizeof(e->path), "%s", path);
			drop_ent(w, victim);
		}
		return rc;
	}
	new_name(w, 'r', d, path);
	rc = osdfs_rename(w->fs, from->ino, base(e->path), d->ino, base(path), 0);
	if (rc == 0)
		snprintf(e->path, sizeof(e->path), "%s", path);
	return rc;
}

/* Renames a sealed file under the reported protocol, then makes it durable. */
static int op_rename_sealed(struct wl *w)
{
	struct wl_ent *d = pick(w, 1, 0), *from, *e = NULL;
	char path[RC_PATH_MAX];
	long idx;
	int rc;

	if (w->j->n == 0 || !d)
		return 0;
	idx = (long)rnd(w, w->j->n);
	for (size_t i = 0; i < w->n && !e; i++)
		if (strcmp(w->ents[i].path, w->j->v[idx].path) == 0)
			e = &w->ents[i];
	if (!e || !(from = parent_of(w, e->path)))
		return 0;
	new_name(w, 's', d, path);
	snprintf(w->j->v[idx].alt, sizeof(w->j->v[idx].alt), "%s", path);
	w->j->v[idx].pending = 1;
	say(w, "M %ld %s\n", idx, path);
	rc = osdfs_rename(w->fs, from->ino, base(e->path), d->ino, base(path), 0);
	if (rc < 0)
		return rc;
	snprintf(e->path, sizeof(e->path), "%s", path);
	rc = osdfs_fsync(w->fs, from->ino, 0);
	if (rc == 0)
		rc = fsync_chain(w, path);
	if (rc == 0) {
		snprintf(w->j->v[idx].path, sizeof(w->j->v[idx].path), "%s", path);
		w->j->v[idx].pending = 0;
		say(w, "m %ld\n", idx);
	}
	return rc;
}

static int op_link(struct wl *w)
{
	struct wl_ent *e = pick(w, 0, 1), *d = pick(w, 1, 0);
	char path[RC_PATH_MAX];
	uint64_t ino;
	int rc;

	if (!e || !d || !e->is_reg || count(w, 0) >= MAX_FILES + w->j->n)
		return 0;
	ino = e->ino;
	new_name(w, 'l', d, path);
	rc = osdfs_link(w->fs, ino, d->ino, base(path), NULL);
	return rc == 0 ? add_ent(w, path, ino, S_IFREG) : rc;
}

static int op_unlink(struct wl *w)
{
	struct wl_ent *e = pick(w, 0, 1), *d;
	int rc;

	if (!e || !(d = parent_of(w, e->path)))
		return 0;
	rc = osdfs_unlink(w->fs, d->ino, base(e->path));
	if (rc == 0)
		drop_ent(w, e);
	return rc;
}

static int op_symlink(struct wl *w)
{
	struct wl_ent *d = pick(w, 1, 0);
	char path[RC_PATH_MAX], target[400];
	struct osdfs_stat st;
	size_t len = 1 + rnd(w, sizeof(target) - 1);
	int rc;

	if (!d || count(w, 0) >= MAX_FILES + w->j->n)
		return 0;
	for (size_t i = 0; i < len; i++)
		target[i] = (char)('a' + rnd(w, 26));
	target[len] = '\0';
	new_name(w, 'y', d, path);
	rc = osdfs_symlink(w->fs, d->ino, base(path), target, NULL, &st);
	return rc == 0 ? add_ent(w, path, st.ino, S_IFLNK) : rc;
}

static int op_mkdir(struct wl *w)
{
	struct wl_ent *d = pick(w, 1, 0);
	char path[RC_PATH_MAX];
	struct osdfs_stat st;
	int rc;

	if (!d || count(w, 1) >= MAX_DIRS || strlen(d->path) > 200)
		return 0;
	new_name(w, 'd', d, path);
	rc = osdfs_mkdir(w->fs, d->ino, base(path), 0755, NULL, &st);
	return rc == 0 ? add_ent(w, path, st.ino, S_IFDIR) : rc;
}

/* rmdir (fails with ENOTEMPTY on most) or a directory rename; then the
 * model is rebuilt, as paths below it changed. */
static int op_dir_change(struct wl *w, int remove)
{
	struct wl_ent *e = pick(w, 1, 1), *from, *d = pick(w, 1, 0);
	char path[RC_PATH_MAX];
	int rc;

	if (!e || !d || !(from = parent_of(w, e->path)))
		return 0;
	if (remove) {
		rc = osdfs_rmdir(w->fs, from->ino, base(e->path));
	} else {
		if (strlen(d->path) > 200)
			return 0;
		new_name(w, 'D', d, path);
		rc = osdfs_rename(w->fs, from->ino, base(e->path), d->ino, base(path), 0);
	}
	if (rc == -ENOTEMPTY || rc == -EINVAL)
		return 0; /* not empty; or into its own subtree */
	return rc == 0 ? rebuild(w) : rc;
}

/* A file unlinked while open and left open: the orphan list must free it. */
static int op_orphan(struct wl *w)
{
	struct wl_ent *d = pick(w, 1, 0);
	char path[RC_PATH_MAX];
	osdfs_file *fh;
	int rc;

	if (!d || w->norphans >= MAX_ORPHANS)
		return 0;
	new_name(w, 'o', d, path);
	rc = osdfs_create(w->fs, d->ino, base(path), 0600, O_RDWR | O_EXCL, NULL, NULL, &fh);
	if (rc < 0)
		return rc;
	rc = write_range(w, fh, 0, 1 + rnd(w, 8192), rc_rand(&w->rng));
	if (rc == 0)
		rc = osdfs_unlink(w->fs, d->ino, base(path));
	if (rc < 0) {
		osdfs_release(w->fs, fh);
		return rc;
	}
	w->orphans[w->norphans++] = fh;
	say(w, "O\n");
	return 0;
}

static int op_xattr(struct wl *w)
{
	struct wl_ent *e = pick(w, (int)rnd(w, 2), 1);
	char name[32];
	size_t len = 1 + rnd(w, 300);

	if (!e || (!e->is_dir && !e->is_reg))
		return 0;
	snprintf(name, sizeof(name), "user.k%u", (unsigned)rnd(w, 4));
	rc_fill(w->buf, len, 0, rc_rand(&w->rng));
	return osdfs_setxattr(w->fs, e->ino, name, w->buf, len, 0);
}

static int op_fsync_dir(struct wl *w)
{
	struct wl_ent *d = pick(w, 1, 0);

	return osdfs_fsync(w->fs, d ? d->ino : OSDFS_ROOT_INO, 0);
}

static int one_op(struct wl *w)
{
	unsigned r = (unsigned)rnd(w, 100);

	if (r < 12) return op_create(w, 0);
	if (r < 24) return op_create(w, 1);
	if (r < 32) return op_write(w, 0);
	if (r < 36) return op_write(w, 1);
	if (r < 46) return op_rename_file(w);
	if (r < 50) return op_rename_sealed(w);
	if (r < 56) return op_link(w);
	if (r < 68) return op_unlink(w);
	if (r < 74) return op_symlink(w);
	if (r < 82) return op_mkdir(w);
	if (r < 86) return op_dir_change(w, 1);
	if (r < 90) return op_dir_change(w, 0);
	if (r < 92) return op_orphan(w);
	if (r < 97) return op_xattr(w);
	return op_fsync_dir(w);
}

int rc_workload(osdfs *fs, struct rc_journal *j, int fd, unsigned iter, uint64_t seed,
		unsigned nops)
{
	struct wl w = { .fs = fs, .j = j, .fd = fd, .iter = iter, .rng = seed };
	int rc;

	w.buf = malloc(BUF_MAX);
	if (!w.buf)
		return -ENOMEM;
	rc = rebuild(&w);
	for (unsigned i = 0; rc == 0 && i < nops; i++) {
		rc = one_op(&w);
		if (rc == 0)
			say(&w, "A\n");
	}
	free(w.ents);
	free(w.buf);
	return rc; /* orphans stay open: the process ends without closing them */
}
