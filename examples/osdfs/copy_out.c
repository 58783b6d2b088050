/*
 * cp out of the filesystem: remote trees become local ones with modes,
 * times (nanoseconds), symlinks, fifos (device nodes when root), hard links
 * (grouped by osdfs inode number) and holes (all-zero blocks are skipped
 * with lseek and the size set with ftruncate). Directory modes and times
 * are applied after their contents, so read-only directories copy too.
 * Symlinks are followed as GNU cp does (struct copy_opts.deref); get writes
 * a file to standard output when LOCAL is "-".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include "osdfs_tool.h"

#define CHUNK (1u << 20)

struct link_out {
	uint64_t ino;
	char *path;
};

/* The directories being copied, to refuse a loop made of followed symlinks. */
struct ancestor {
	uint64_t ino;
	const struct ancestor *up;
};

struct cout {
	struct tool *t;
	const struct copy_opts *o;
	const struct ancestor *path;
	struct tc_progress prog;
	struct link_out *links;
	size_t nlinks, cap;
	char *buf;
	int root;
	int status;
};

static int fail_local(struct cout *c, int rc, const char *path)
{
	c->status = tc_err_rc(rc, "%s: %s", c->t->cmd, path);
	return rc;
}

static int fail_remote(struct cout *c, int rc, const char *path)
{
	c->status = tool_fail(c->t, rc, path);
	return rc;
}

static void to_timespec(struct timespec ts[2], const struct osdfs_stat *st)
{
	ts[0].tv_sec = (time_t)st->atime.sec;
	ts[0].tv_nsec = st->atime.nsec;
	ts[1].tv_sec = (time_t)st->mtime.sec;
	ts[1].tv_nsec = st->mtime.nsec;
}

/* Owner (archive, as root), mode and times of a created path. */
static int finish_path(struct cout *c, const char *local, const struct osdfs_stat *st)
{
	struct timespec ts[2];

	if (c->o->archive && c->root &&
	    lchown(local, st->uid, st->gid) < 0 && errno != EPERM)
		return -errno;
	if (!S_ISLNK(st->mode) && chmod(local, st->mode & 07777) < 0)
		return -errno;
	to_timespec(ts, st);
	if (utimensat(AT_FDCWD, local, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

static int write_all(int fd, const char *p, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes the non-zero blocks of buf at off; zero blocks stay holes. */
static int write_sparse(int fd, const char *buf, size_t len, off_t off)
{
	size_t i = 0, j;

	while (next_data_run(buf, len, &i, &j)) {
		int rc = write_all(fd, buf + i, j - i, off + (off_t)i);

		if (rc < 0)
			return rc;
		i = j;
	}
	return 0;
}

static int copy_file(struct cout *c, const struct osdfs_stat *st, const char *local,
		     const char *rpath)
{
	osdfs_file *fh;
	uint64_t off = 0;
	int fd, rc = osdfs_open(c->t->fs, st->ino, O_RDONLY, &fh);

	if (rc < 0)
		return fail_remote(c, rc, rpath);
	fd = open(local, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		osdfs_release(c->t->fs, fh);
		return fail_local(c, -errno, local);
	}
	while (off < st->size) {
		ssize_t n = osdfs_read(c->t->fs, fh, c->buf, CHUNK, off);

		if (n <= 0) {
			rc = n < 0 ? (int)n : -EIO;
			fail_remote(c, rc, rpath);
			break;
		}
		rc = write_sparse(fd, c->buf, (size_t)n, (off_t)off);
		if (rc < 0) {
			fail_local(c, rc, local);
			break;
		}
		off += (uint64_t)n;
		tc_progress_add(&c->prog, 0, (uint64_t)n);
	}
	osdfs_release(c->t->fs, fh);
	if (rc == 0 && ftruncate(fd, (off_t)st->size) < 0)
		rc = fail_local(c, -errno, local);
	if (close(fd) < 0 && rc == 0)
		rc = fail_local(c, -errno, local);
	return rc;
}

static const char *find_link(const struct cout *c, uint64_t ino)
{
	for (size_t i = 0; i < c->nlinks; i++)
		if (c->links[i].ino == ino)
			return c->links[i].path;
	return NULL;
}

static int remember_link(struct cout *c, uint64_t ino, const char *path)
{
	char *p;

	if (c->nlinks == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		struct link_out *n = realloc(c->links, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->links = n;
		c->cap = ncap;
	}
	p = strdup(path);
	if (!p)
		return -ENOMEM;
	c->links[c->nlinks++] = (struct link_out){ ino, p };
	return 0;
}

static int copy_node(struct cout *c, const struct osdfs_stat *st, const char *local,
		     const char *rpath);

static int copy_dir(struct cout *c, const struct osdfs_stat *st, const char *local,
		    const char *rpath)
{
	struct ancestor self = { st->ino, c->path };
	struct dir_entry *v;
	struct stat lst;
	size_t n;
	int rc;

	for (const struct ancestor *a = c->path; a; a = a->up) {
		if (a->ino == st->ino) {
			tc_err("%s: %s: a symlink loop back to a directory being copied; skipped",
			       c->t->cmd, rpath);
			c->status = TC_EXIT_FAILED;
			return -ELOOP;
		}
	}
	if (mkdir(local, 0700) < 0 && !(errno == EEXIST && stat(local, &lst) == 0 &&
					 S_ISDIR(lst.st_mode)))
		return fail_local(c, -errno, local);
	rc = remote_list(c->t->fs, st->ino, &v, &n);
	if (rc < 0)
		return fail_remote(c, rc, rpath);
	c->path = &self;
	for (size_t i = 0; i < n; i++) {
		char lsub[PATH_MAX], rsub[OSDFS_PATH_MAX];
		struct osdfs_stat sub;

		if (path_join(lsub, sizeof(lsub), local, v[i].name) < 0 ||
		    path_join(rsub, sizeof(rsub), rpath, v[i].name) < 0) {
			fail_local(c, -ENAMETOOLONG, local);
			continue;
		}
		if (c->o->deref == COPY_DEREF_ALL)
			rc = osdfs_stat_path(c->t->fs, rsub, 1, &sub);
		else
			rc = osdfs_getattr(c->t->fs, v[i].ino, &sub);
		if (rc < 0)
			fail_remote(c, rc, rsub);
		else
			copy_node(c, &sub, lsub, rsub);
	}
	c->path = self.up;
	dir_entries_free(v, n);
	rc = finish_path(c, local, st);
	return rc < 0 ? fail_local(c, rc, local) : 0;
}

static int copy_node(struct cout *c, const struct osdfs_stat *st, const char *local,
		     const char *rpath)
{
	const char *first;
	int rc = 0;

	if (S_ISDIR(st->mode)) {
		if (!c->o->recursive) {
			tc_err("%s: %s: omitting directory (use -r)", c->t->cmd, rpath);
			c->status = TC_EXIT_FAILED;
			return -EISDIR;
		}
		return copy_dir(c, st, local, rpath);
	}
	if (unlink(local) < 0 && errno != ENOENT)
		return fail_local(c, -errno, local);
	if (st->nlink > 1 && (first = find_link(c, st->ino)) != NULL) {
		tc_progress_add(&c->prog, 1, 0);
		return link(first, local) < 0 ? fail_local(c, -errno, local) : 0;
	}
	if (S_ISREG(st->mode)) {
		rc = copy_file(c, st, local, rpath);
	} else if (S_ISLNK(st->mode)) {
		char target[OSDFS_SYMLINK_MAX + 1];
		ssize_t n = osdfs_readlink(c->t->fs, st->ino, target, sizeof(target));

		if (n < 0)
			return fail_remote(c, (int)n, rpath);
		target[(size_t)n < sizeof(target) ? (size_t)n : sizeof(target) - 1] = '\0';
		if (symlink(target, local) < 0)
			rc = fail_local(c, -errno, local);
	} else if (S_ISFIFO(st->mode) || ((S_ISCHR(st->mode) || S_ISBLK(st->mode)) && c->root)) {
		if (mknod(local, st->mode & (S_IFMT | 0777), (dev_t)st->rdev) < 0)
			rc = fail_local(c, -errno, local);
	} else {
		tc_err("%s: %s: skipping %s (%s)", c->t->cmd, rpath, type_name(st->mode),
		       S_ISSOCK(st->mode) ? "sockets cannot be created" : "needs root");
		return 0;
	}
	if (rc < 0)
		return rc;
	if (st->nlink > 1 && (rc = remember_link(c, st->ino, local)) < 0)
		return fail_local(c, rc, local);
	rc = finish_path(c, local, st);
	tc_progress_add(&c->prog, 1, 0);
	return rc < 0 ? fail_local(c, rc, local) : 0;
}

/* get REMOTE -: the file's bytes, holes as zeros, to standard output. */
static int copy_to_stdout(struct cout *c, const char *src)
{
	struct osdfs_stat st;
	osdfs_file *fh;
	uint64_t off = 0;
	int rc = osdfs_stat_path(c->t->fs, src, c->o->deref != COPY_DEREF_NONE, &st);

	if (rc == 0 && !S_ISREG(st.mode))
		rc = S_ISDIR(st.mode) ? -EISDIR : -EINVAL;
	if (rc == 0)
		rc = osdfs_open(c->t->fs, st.ino, O_RDONLY, &fh);
	if (rc < 0)
		return fail_remote(c, rc, src);
	while (rc == 0 && off < st.size) {
		ssize_t n = osdfs_read(c->t->fs, fh, c->buf, CHUNK, off);

		if (n <= 0) {
			rc = fail_remote(c, n < 0 ? (int)n : -EIO, src);
			break;
		}
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(STDOUT_FILENO, c->buf + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				rc = fail_local(c, -errno, "standard output");
				break;
			}
			done += w;
		}
		off += (uint64_t)n;
		tc_progress_add(&c->prog, 0, (uint64_t)n);
	}
	osdfs_release(c->t->fs, fh);
	return rc;
}

int copy_out(struct tool *t, char **srcs, int nsrc, const char *dest, const struct copy_opts *o)
{
	struct cout c = { .t = t, .o = o, .root = geteuid() == 0 };
	struct stat dst;
	int to_stdout = o->dash && strcmp(dest, "-") == 0;
	int dest_dir = !to_stdout && stat(dest, &dst) == 0 && S_ISDIR(dst.st_mode);

	if (nsrc > 1 && !dest_dir)
		return tc_err_rc(-ENOTDIR, "%s: %s", t->cmd, dest);
	c.buf = malloc(CHUNK);
	if (!c.buf)
		return tc_err_rc(-ENOMEM, "%s", t->cmd);
	if (tool_mount(t, 1) < 0) {
		free(c.buf);
		return TC_EXIT_FAILED;
	}
	tc_progress_init(&c.prog, "copying out", o->progress, 0);
	if (c.prog.enabled && !to_stdout)
		copy_totals_remote(&c.prog, t->fs, srcs, nsrc, o->recursive);
	for (int i = 0; i < nsrc && to_stdout; i++)
		copy_to_stdout(&c, srcs[i]);
	for (int i = 0; i < nsrc && !to_stdout; i++) {
		char local[PATH_MAX];
		struct osdfs_stat st;
		int follow = o->deref != COPY_DEREF_NONE; /* -H and -L: the operands */
		int rc = osdfs_stat_path(t->fs, srcs[i], follow, &st);
		if (rc < 0) {
			fail_remote(&c, rc, srcs[i]);
			continue;
		}
		if (!dest_dir)
			snprintf(local, sizeof(local), "%s", dest);
		else if (st.ino == OSDFS_ROOT_INO) /* ":/" into a directory: its contents */
			snprintf(local, sizeof(local), "%s", dest);
		else if (path_join(local, sizeof(local), dest, path_base(srcs[i])) < 0) {
			fail_local(&c, -ENAMETOOLONG, dest);
			continue;
		}
		copy_node(&c, &st, local, srcs[i]);
	}
	tc_progress_end(&c.prog, 0);
	for (size_t i = 0; i < c.nlinks; i++)
		free(c.links[i].path);
	free(c.links);
	free(c.buf);
	return tool_unmount(t, c.status);
}
