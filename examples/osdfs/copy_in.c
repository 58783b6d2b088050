/*
 * cp into the filesystem: local trees become remote ones with modes, times
 * (nanoseconds), symlinks, device nodes and fifos, hard links (grouped by the
 * local device and inode number) and holes (only data extents reported by
 * SEEK_DATA are read, and all-zero blocks inside them are not written).
 * Symlinks are followed as GNU cp does (struct copy_opts.deref); "-" and a
 * fifo or device named on a non-recursive command line are read as data.
 * put writes under a temporary name and renames; a file that fails or is
 * interrupted is removed, so no partial file is left under its name.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
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

/* The directories being copied, to refuse a loop made of followed symlinks. */
struct ancestor {
	dev_t dev;
	ino_t ino;
	const struct ancestor *up;
};

struct cin {
	struct tool *t;
	const struct copy_opts *o;
	const struct ancestor *path;
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

		if (tool_interrupted())
			return -EINTR;
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

			if (tool_interrupted())
				return -EINTR;
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

/* Waits until @p fd is readable or a signal was caught. A signal that lands
 * after the last check and before read() would leave read() blocked on an
 * idle pipe for good; a bounded poll looks at the flag again. */
static int wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (!tool_interrupted()) {
		int n = poll(&p, 1, 200);

		if (n > 0 || (n < 0 && errno != EINTR))
			return 0; /* data, end, or an error read() reports */
	}
	return -EINTR;
}

/* Reads a pipe, terminal or device to its end (no size known ahead). */
static int copy_stream(struct cin *c, int fd, osdfs_file *fh, uint64_t *size)
{
	*size = 0;
	for (;;) {
		ssize_t n;
		int rc;

		if (wait_readable(fd) < 0)
			return -EINTR;
		n = read(fd, c->buf, CHUNK);
		if (tool_interrupted())
			return -EINTR;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		rc = write_sparse(c, fh, c->buf, (size_t)n, *size);
		if (rc < 0)
			return rc;
		*size += (uint64_t)n;
		tc_progress_add(&c->prog, 0, (uint64_t)n);
	}
}

/* The name a file is written under: for put a temporary one in the same
 * directory, renamed over @p name once complete; for cp @p name itself. */
static const char *work_name(const struct cin *c, const char *name, char *buf, size_t size)
{
	if (!c->o->atomic)
		return name;
	snprintf(buf, size, ".%.*s.osdfs-put-%ld", OSDFS_NAME_MAX - 32, name, (long)getpid());
	return buf;
}

/* Completes a file written under @p work (rename) or, after @p rc < 0,
 * removes it so that nothing partial stays. Returns @p rc or the rename's. */
static int settle(struct cin *c, uint64_t parent, const char *work, const char *name, int rc)
{
	if (rc == 0 && work != name)
		rc = osdfs_rename(c->t->fs, parent, work, parent, name, 0);
	if (rc < 0)
		osdfs_unlink(c->t->fs, parent, work);
	return rc;
}

static int fail_copy(struct cin *c, int rc, const char *rpath)
{
	if (rc == -EINTR && tool_interrupted())
		return rc; /* not an error: main() reports the interruption */
	return fail_remote(c, rc, rpath);
}

/*
 * A regular file (its data extents, @p st its size), or with @p stream the
 * whole of a pipe or device, into a new file NAME of @p parent.
 */
static int copy_file(struct cin *c, int fd, const struct stat *st, int stream, uint64_t parent,
		     const char *name, const char *rpath, uint64_t *ino)
{
	struct osdfs_cred cr = cred_for(c, st);
	struct osdfs_stat a, out;
	char tmp[OSDFS_NAME_MAX + 1];
	const char *work = work_name(c, name, tmp, sizeof(tmp));
	uint64_t size = (uint64_t)st->st_size;
	osdfs_file *fh;
	int rc = osdfs_create(c->t->fs, parent, work, 0600, O_WRONLY | O_TRUNC, &cr, &out, &fh);

	if (rc < 0)
		return fail_remote(c, rc, rpath);
	rc = stream ? copy_stream(c, fd, fh, &size) : copy_data(c, fd, fh, size);
	if (rc == 0) {
		/* the size, so a trailing hole is kept */
		memset(&a, 0, sizeof(a));
		a.size = size;
		rc = osdfs_setattr(c->t->fs, out.ino, &a, OSDFS_SET_SIZE, NULL);
	}
	if (rc == 0)
		rc = osdfs_release(c->t->fs, fh);
	else
		osdfs_release(c->t->fs, fh);
	if (rc == 0 && stream) { /* data, not the device: new-file mode and times */
		mode_t um = umask(0);

		umask(um);
		a.mode = 0666 & ~um;
		rc = osdfs_setattr(c->t->fs, out.ino, &a, OSDFS_SET_MODE, NULL);
	} else if (rc == 0) {
		rc = finish_attrs(c, out.ino, st);
	}
	rc = settle(c, parent, work, name, rc);
	*ino = out.ino;
	return rc < 0 ? fail_copy(c, rc, rpath) : 0;
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
		     const char *rpath, int top);

/* Directories are made 0700 and get their mode after their contents (so a
 * read-only one fills too), also when an interruption cuts the walk short. */
static int copy_dir(struct cin *c, const char *local, const struct stat *st, uint64_t parent,
		    const char *name, const char *rpath)
{
	struct osdfs_cred cr = cred_for(c, st);
	struct ancestor self = { st->st_dev, st->st_ino, c->path };
	struct osdfs_stat out;
	struct dirent *de;
	DIR *d;
	int rc;

	for (const struct ancestor *a = c->path; a; a = a->up) {
		if (a->dev == st->st_dev && a->ino == st->st_ino) {
			tc_err("%s: %s: a symlink loop back to a directory being copied; skipped",
			       c->t->cmd, local);
			c->status = TC_EXIT_FAILED;
			return -ELOOP;
		}
	}
	rc = osdfs_mkdir(c->t->fs, parent, name, 0700, &cr, &out);

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
	c->path = &self;
	while (!tool_interrupted() && (de = readdir(d)) != NULL) {
		char lsub[PATH_MAX], rsub[OSDFS_PATH_MAX];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (path_join(lsub, sizeof(lsub), local, de->d_name) < 0 ||
		    path_join(rsub, sizeof(rsub), rpath, de->d_name) < 0) {
			fail_local(c, -ENAMETOOLONG, local);
			continue;
		}
		copy_node(c, lsub, out.ino, de->d_name, rsub, 0);
	}
	c->path = self.up;
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

/* All a fifo or device named on the command line gives ("-": stdin). */
static int copy_operand_data(struct cin *c, const char *local, const struct stat *st,
			     uint64_t parent, const char *name, const char *rpath)
{
	int stdin_ = c->o->dash && strcmp(local, "-") == 0;
	int fd = stdin_ ? STDIN_FILENO : open(local, O_RDONLY);
	uint64_t ino;
	int rc;

	if (fd < 0)
		return fail_local(c, -errno, local);
	rc = c->o->atomic ? 0 : make_room(c, parent, name, 1);
	if (rc < 0)
		rc = fail_remote(c, rc, rpath);
	else
		rc = copy_file(c, fd, st, 1, parent, name, rpath, &ino);
	if (!stdin_)
		close(fd);
	if (rc == 0)
		tc_progress_add(&c->prog, 1, 0);
	return rc;
}

static int copy_node(struct cin *c, const char *local, uint64_t parent, const char *name,
		     const char *rpath, int top)
{
	int follow = c->o->deref == COPY_DEREF_ALL || (c->o->deref == COPY_DEREF_ARGS && top);
	struct stat st;
	uint64_t ino = 0;
	int rc;

	if (tool_interrupted())
		return -EINTR;
	if (top && c->o->dash && strcmp(local, "-") == 0)
		rc = fstat(STDIN_FILENO, &st);
	else
		rc = follow ? stat(local, &st) : lstat(local, &st);
	if (rc < 0)
		return fail_local(c, -errno, local);
	if (S_ISDIR(st.st_mode)) {
		if (!c->o->recursive) {
			tc_err("%s: %s: omitting directory (use -r)", c->t->cmd, local);
			c->status = TC_EXIT_FAILED;
			return -EISDIR;
		}
		return copy_dir(c, local, &st, parent, name, rpath);
	}
	/* named on a non-recursive command line: its data (GNU cp; /dev/stdin) */
	if (top && ((c->o->dash && strcmp(local, "-") == 0) ||
		    (!c->o->recursive && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))))
		return copy_operand_data(c, local, &st, parent, name, rpath);
	rc = c->o->atomic ? 0 : make_room(c, parent, name, S_ISREG(st.st_mode));
	if (rc < 0)
		return fail_remote(c, rc, rpath);
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && (ino = find_link(c, &st)) != 0) {
		rc = osdfs_link(c->t->fs, ino, parent, name, NULL);
		tc_progress_add(&c->prog, 1, 0);
		return rc < 0 ? fail_remote(c, rc, rpath) : 0;
	}
	if (S_ISREG(st.st_mode)) {
		int fd = open(local, O_RDONLY | (follow ? 0 : O_NOFOLLOW));

		if (fd < 0)
			return fail_local(c, -errno, local);
		rc = copy_file(c, fd, &st, 0, parent, name, rpath, &ino);
		close(fd);
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
	if (st.st_nlink > 1 && (rc = remember_link(c, &st, ino)) < 0)
		return fail_local(c, rc, local);
	if (!S_ISREG(st.st_mode)) /* copy_file set a regular file's */
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
	for (int i = 0; i < nsrc && !tool_interrupted(); i++) {
		char rpath[OSDFS_PATH_MAX], name[OSDFS_NAME_MAX + 1];
		uint64_t parent;

		if (dest_dir && o->dash && strcmp(srcs[i], "-") == 0) {
			tc_err("%s: -: standard input needs a file name, not a directory", t->cmd);
			c.status = TC_EXIT_USAGE;
			continue;
		}
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
		copy_node(&c, srcs[i], parent, name, rpath, 1);
	}
	tc_progress_end(&c.prog, 0);
	free(c.buf);
	free(c.links);
	return tool_unmount(t, c.status);
}
