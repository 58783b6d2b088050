/*
 * cp into the filesystem: local trees become remote ones with modes, times
 * (nanoseconds), symlinks, device nodes and fifos, hard links (grouped by the
 * local device and inode number) and holes (only data extents reported by
 * SEEK_DATA are read, and all-zero blocks inside them are not written).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "osdfs_tool.h"

#define CHUNK (1u << 20)

struct link_in {
	dev_t dev;
	ino_t ino;
	uint64_t remote;
};

struct cin {
	struct tool *t;
	const struct copy_opts *o;
	struct tc_progress prog;
	struct link_in *links;
	size_t nlinks, cap;
	char *buf;
	int status;
};

static int fail_local(struct cin *c, int rc, const char *path)
{
	c->status = tc_err_rc(rc, "%s: %s", c->t->cmd, path);
	return rc;
}

static int fail_remote(struct cin *c, int rc, const char *path)
{
	c->status = tool_fail(c->t, rc, path);
	return rc;
}

static struct osdfs_cred cred_for(const struct cin *c, const struct stat *st)
{
	struct osdfs_cred cr = { (uint32_t)getuid(), (uint32_t)getgid() };

	if (c->o->archive) {
		cr.uid = st->st_uid;
		cr.gid = st->st_gid;
	}
	return cr;
}

/* Mode, times and (archive) owner of a copied inode. */
static int finish_attrs(struct cin *c, uint64_t ino, const struct stat *st)
{
	struct osdfs_stat a;
	unsigned mask = OSDFS_SET_ATIME | OSDFS_SET_MTIME;

	memset(&a, 0, sizeof(a));
	if (!S_ISLNK(st->st_mode))
		mask |= OSDFS_SET_MODE;
	if (c->o->archive)
		mask |= OSDFS_SET_UID | OSDFS_SET_GID;
	a.mode = st->st_mode;
	a.uid = st->st_uid;
	a.gid = st->st_gid;
	a.atime.sec = st->st_atim.tv_sec;
	a.atime.nsec = (uint32_t)st->st_atim.tv_nsec;
	a.mtime.sec = st->st_mtim.tv_sec;
	a.mtime.nsec = (uint32_t)st->st_mtim.tv_nsec;
	return osdfs_setattr(c->t->fs, ino, &a, mask, NULL);
}

/* Writes buf[0..len) at off, skipping all-zero blocks. */
static int write_sparse(struct cin *c, osdfs_file *fh, const char *buf, size_t len, uint64_t off)
{
	size_t i = 0, j;

	while (next_data_run(buf, len, &i, &j)) {
		ssize_t n = osdfs_write(c->t->fs, fh, buf + i, j - i, off + i);

		if (n < 0)
			return (int)n;
		i = j;
	}
	return 0;
}

/* Copies the data extents of fd into fh; holes stay holes. */
static int copy_data(struct cin *c, int fd, osdfs_file *fh, uint64_t size)
{
	off_t pos = 0;

	while ((uint64_t)pos < size) {
		off_t data = lseek(fd, pos, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0) { /* no SEEK_DATA here: treat all as data */
			data = pos;
			hole = (off_t)size;
		} else {
			hole = lseek(fd, data, SEEK_HOLE);
			if (hole < 0)
				hole = (off_t)size;
		}
		for (pos = data; pos < hole;) {
			size_t want = (size_t)(hole - pos) < CHUNK ? (size_t)(hole - pos) : CHUNK;
			ssize_t n = pread(fd, c->buf, want, pos);
			int rc;

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				return 0; /* shrank under us */
			rc = write_sparse(c, fh, c->buf, (size_t)n, (uint64_t)pos);
			if (rc < 0)
				return rc;
			pos += n;
			tc_progress_add(&c->prog, 0, (uint64_t)n);
		}
	}
	return 0;
}

static int copy_file(struct cin *c, const char *local, const struct stat *st, uint64_t parent,
		     const char *name, const char *rpath, uint64_t *ino)
{
	struct osdfs_cred cr = cred_for(c, st);
	struct osdfs_stat a, out;
	osdfs_file *fh;
	int fd = open(local, O_RDONLY | O_NOFOLLOW), rc;

	if (fd < 0)
		return fail_local(c, -errno, local);
	rc = osdfs_create(c->t->fs, parent, name, 0600, O_WRONLY | O_TRUNC, &cr, &out, &fh);
	if (rc < 0) {
		close(fd);
		return fail_remote(c, rc, rpath);
	}
	rc = copy_data(c, fd, fh, (uint64_t)st->st_size);
	close(fd);
	if (rc == 0) {
		/* the size, so a trailing hole is kept */
		memset(&a, 0, sizeof(a));
		a.size = (uint64_t)st->st_size;
		rc = osdfs_setattr(c->t->fs, out.ino, &a, OSDFS_SET_SIZE, NULL);
	}
	if (rc == 0)
		rc = osdfs_release(c->t->fs, fh);
	else
		osdfs_release(c->t->fs, fh);
	*ino = out.ino;
	return rc < 0 ? fail_remote(c, rc, rpath) : 0;
}

static uint64_t find_link(const struct cin *c, const struct stat *st)
{
	for (size_t i = 0; i < c->nlinks; i++)
		if (c->links[i].dev == st->st_dev && c->links[i].ino == st->st_ino)
			return c->links[i].remote;
	return 0;
}

static int remember_link(struct cin *c, const struct stat *st, uint64_t remote)
{
	if (c->nlinks == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		struct link_in *n = realloc(c->links, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->links = n;
		c->cap = ncap;
	}
	c->links[c->nlinks++] = (struct link_in){ st->st_dev, st->st_ino, remote };
	return 0;
}

static int copy_node(struct cin *c, const char *local, uint64_t parent, const char *name,
		     const char *rpath);

static int copy_dir(struct cin *c, const char *local, const struct stat *st, uint64_t parent,
		    const char *name, const char *rpath)
{
	struct osdfs_cred cr = cred_for(c, st);
	struct osdfs_stat out;
	struct dirent *de;
	DIR *d;
	int rc = osdfs_mkdir(c->t->fs, parent, name, 0700, &cr, &out);

	if (rc == -EEXIST) { /* merge into an existing directory */
		rc = osdfs_lookup(c->t->fs, parent, name, &out);
		if (rc == 0 && !S_ISDIR(out.mode))
			rc = -ENOTDIR;
	}
	if (rc < 0)
		return fail_remote(c, rc, rpath);
	d = opendir(local);
	if (!d)
		return fail_local(c, -errno, local);
	while ((de = readdir(d)) != NULL) {
		char lsub[PATH_MAX], rsub[OSDFS_PATH_MAX];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (path_join(lsub, sizeof(lsub), local, de->d_name) < 0 ||
		    path_join(rsub, sizeof(rsub), rpath, de->d_name) < 0) {
			fail_local(c, -ENAMETOOLONG, local);
			continue;
		}
		copy_node(c, lsub, out.ino, de->d_name, rsub);
	}
	closedir(d);
	rc = finish_attrs(c, out.ino, st);
	return rc < 0 ? fail_remote(c, rc, rpath) : 0;
}

/* Removes a non-directory in the way of a copy (cp overwrites). */
static int make_room(struct cin *c, uint64_t parent, const char *name, int want_file)
{
	struct osdfs_stat old;
	int rc = osdfs_lookup(c->t->fs, parent, name, &old);

	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	if (S_ISDIR(old.mode))
		return -EISDIR;
	if (want_file && S_ISREG(old.mode) && old.nlink == 1)
		return 0; /* overwritten in place by O_TRUNC */
	return osdfs_unlink(c->t->fs, parent, name);
}

static int copy_node(struct cin *c, const char *local, uint64_t parent, const char *name,
		     const char *rpath)
{
	struct stat st;
	uint64_t ino = 0;
	int rc;

	if (lstat(local, &st) < 0)
		return fail_local(c, -errno, local);
	if (S_ISDIR(st.st_mode)) {
		if (!c->o->recursive) {
			tc_err("%s: %s: omitting directory (use -r)", c->t->cmd, local);
			c->status = TC_EXIT_FAILED;
			return -EISDIR;
		}
		return copy_dir(c, local, &st, parent, name, rpath);
	}
	rc = make_room(c, parent, name, S_ISREG(st.st_mode));
	if (rc < 0)
		return fail_remote(c, rc, rpath);
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && (ino = find_link(c, &st)) != 0) {
		rc = osdfs_link(c->t->fs, ino, parent, name, NULL);
		tc_progress_add(&c->prog, 1, 0);
		return rc < 0 ? fail_remote(c, rc, rpath) : 0;
	}
	if (S_ISREG(st.st_mode)) {
		rc = copy_file(c, local, &st, parent, name, rpath, &ino);
		if (rc < 0)
			return rc;
	} else if (S_ISLNK(st.st_mode)) {
		char target[OSDFS_SYMLINK_MAX + 2];
		struct osdfs_cred cr = cred_for(c, &st);
		struct osdfs_stat out;
		ssize_t n = readlink(local, target, sizeof(target));

		if (n < 0)
			return fail_local(c, -errno, local);
		if ((size_t)n >= sizeof(target) - 1)
			return fail_local(c, -ENAMETOOLONG, local);
		target[n] = '\0';
		rc = osdfs_symlink(c->t->fs, parent, name, target, &cr, &out);
		if (rc < 0)
			return fail_remote(c, rc, rpath);
		ino = out.ino;
	} else {
		struct osdfs_cred cr = cred_for(c, &st);
		struct osdfs_stat out;

		rc = osdfs_mknod(c->t->fs, parent, name, st.st_mode & (S_IFMT | 07777),
				 (uint64_t)st.st_rdev, &cr, &out);
		if (rc < 0)
			return fail_remote(c, rc, rpath);
		ino = out.ino;
	}
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && (rc = remember_link(c, &st, ino)) < 0)
		return fail_local(c, rc, local);
	rc = finish_attrs(c, ino, &st);
	tc_progress_add(&c->prog, 1, 0);
	return rc < 0 ? fail_remote(c, rc, rpath) : 0;
}

int copy_in(struct tool *t, char **srcs, int nsrc, const char *dest, const struct copy_opts *o)
{
	struct cin c = { .t = t, .o = o };
	struct osdfs_stat dst;
	int dest_dir, rc;

	c.buf = malloc(CHUNK);
	if (!c.buf)
		return tc_err_rc(-ENOMEM, "%s", t->cmd);
	if (tool_mount(t, 0) < 0) {
		free(c.buf);
		return TC_EXIT_FAILED;
	}
	rc = osdfs_stat_path(t->fs, dest, 1, &dst);
	dest_dir = rc == 0 && S_ISDIR(dst.mode);
	if (nsrc > 1 && !dest_dir) {
		free(c.buf);
		return tool_unmount(t, tool_fail(t, rc < 0 ? rc : -ENOTDIR, dest));
	}
	tc_progress_init(&c.prog, "copying in", o->progress, 0);
	if (c.prog.enabled)
		copy_totals_local(&c.prog, srcs, nsrc, o->recursive);
	for (int i = 0; i < nsrc; i++) {
		char rpath[OSDFS_PATH_MAX], name[OSDFS_NAME_MAX + 1];
		uint64_t parent;

		if (dest_dir) {
			const char *base = path_base(srcs[i]);

			if (strcmp(base, "/") == 0 || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
				tc_err("%s: %s: name the directory to copy, not '%s'", t->cmd,
				       srcs[i], base);
				c.status = TC_EXIT_USAGE;
				continue;
			}
			if (path_join(rpath, sizeof(rpath), dest, base) < 0) {
				fail_remote(&c, -ENAMETOOLONG, dest);
				continue;
			}
		} else {
			snprintf(rpath, sizeof(rpath), "%s", dest);
		}
		rc = osdfs_resolve_parent(t->fs, rpath, &parent, name, sizeof(name));
		if (rc < 0) {
			fail_remote(&c, rc, rpath);
			continue;
		}
		copy_node(&c, srcs[i], parent, name, rpath);
	}
	tc_progress_end(&c.prog, 0);
	free(c.buf);
	free(c.links);
	return tool_unmount(t, c.status);
}
