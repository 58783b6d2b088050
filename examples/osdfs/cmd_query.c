/* Commands that only read: ls, stat, cat, tree, df. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include "osdfs_tool.h"

/* The members of a json_stat() object, without the braces. */
static void json_stat_members(const char *path, const struct osdfs_stat *st, const char *target)
{
	printf("\"path\":");
	tc_json_string(stdout, path);
	printf(",\"name\":");
	tc_json_string(stdout, path_base(path));
	printf(",\"ino\":%" PRIu64 ",\"type\":\"%s\",\"mode\":%u,\"perm\":\"%04o\","
	       "\"nlink\":%u,\"uid\":%u,\"gid\":%u,\"size\":%" PRIu64 ",\"blocks\":%" PRIu64,
	       st->ino, type_name(st->mode), st->mode, st->mode & 07777, st->nlink, st->uid,
	       st->gid, st->size, st->blocks);
	printf(",\"atime\":\"%" PRId64 ".%09u\",\"mtime\":\"%" PRId64 ".%09u\","
	       "\"ctime\":\"%" PRId64 ".%09u\",\"crtime\":\"%" PRId64 ".%09u\"",
	       st->atime.sec, st->atime.nsec, st->mtime.sec, st->mtime.nsec,
	       st->ctime.sec, st->ctime.nsec, st->crtime.sec, st->crtime.nsec);
	if (S_ISCHR(st->mode) || S_ISBLK(st->mode))
		printf(",\"rdev\":%" PRIu64, st->rdev);
	if (target) {
		printf(",\"target\":");
		tc_json_string(stdout, target);
	}
}

static void json_stat(const char *path, const struct osdfs_stat *st, const char *target)
{
	printf("{");
	json_stat_members(path, st, target);
	printf("}");
}

/* A symlink's target into buf (empty on failure). */
static const char *link_target(osdfs *fs, const struct osdfs_stat *st, char *buf, size_t size)
{
	ssize_t n;

	if (!S_ISLNK(st->mode))
		return NULL;
	n = osdfs_readlink(fs, st->ino, buf, size - 1);
	buf[n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1] = '\0';
	return buf;
}

/* ---- ls ---- */

struct ls_opts {
	int longfmt, all, recursive;
	int first;       /* json: no comma before the next object */
	int printed;     /* text: something printed already (blank line before headers) */
	int status;
};

static int ls_opt(struct tool *t, int key, const char *arg, void *ctx)
{
	struct ls_opts *o = ctx;

	(void)t; (void)arg;
	switch (key) {
	case 'l': o->longfmt = 1; return 0;
	case 'a': o->all = 1; return 0;
	case 'R': o->recursive = 1; return 0;
	default: return TC_EXIT_USAGE;
	}
}

static void ls_entry(struct tool *t, struct ls_opts *o, const char *path, const char *name,
		     const struct osdfs_stat *st)
{
	char tbuf[OSDFS_SYMLINK_MAX + 1];
	const char *target = link_target(t->fs, st, tbuf, sizeof(tbuf));

	if (t->json) {
		printf("%s", o->first ? "" : ",\n");
		o->first = 0;
		json_stat(path, st, target);
		return;
	}
	if (o->longfmt) {
		char mode[11], when[64];

		format_mode(st->mode, mode);
		format_time(&st->mtime, when, sizeof(when));
		printf("%s %3u %5u %5u %10" PRIu64 " %s %s", mode, st->nlink, st->uid, st->gid,
		       st->size, when, name);
		if (target)
			printf(" -> %s", target);
		putchar('\n');
	} else {
		printf("%s\n", name);
	}
}

static void ls_dir(struct tool *t, struct ls_opts *o, const char *path, uint64_t ino,
		   int header)
{
	struct dir_entry *v;
	size_t n;
	char sub[OSDFS_PATH_MAX];
	int rc = remote_list(t->fs, ino, &v, &n);

	if (rc < 0) {
		o->status = tool_fail(t, rc, path);
		return;
	}
	if (header && !t->json)
		printf("%s%s:\n", o->printed ? "\n" : "", path);
	o->printed = 1;
	if (o->all) {
		struct osdfs_stat st;

		if (osdfs_getattr(t->fs, ino, &st) == 0)
			ls_entry(t, o, path, ".", &st);
		if (osdfs_stat_path(t->fs, path, 0, &st) == 0 &&
		    path_join(sub, sizeof(sub), path, "..") == 0 &&
		    osdfs_stat_path(t->fs, sub, 1, &st) == 0)
			ls_entry(t, o, sub, "..", &st);
	}
	for (size_t i = 0; i < n; i++) {
		struct osdfs_stat st;

		if (!o->all && v[i].name[0] == '.')
			continue;
		if (path_join(sub, sizeof(sub), path, v[i].name) < 0 ||
		    (rc = osdfs_getattr(t->fs, v[i].ino, &st)) < 0) {
			o->status = tool_fail(t, rc < 0 ? rc : -ENAMETOOLONG, sub);
			continue;
		}
		ls_entry(t, o, sub, v[i].name, &st);
	}
	for (size_t i = 0; o->recursive && i < n; i++) {
		if (v[i].type != DT_DIR || (!o->all && v[i].name[0] == '.'))
			continue;
		if (path_join(sub, sizeof(sub), path, v[i].name) == 0)
			ls_dir(t, o, sub, v[i].ino, 1);
	}
	dir_entries_free(v, n);
}

int cmd_ls(struct tool *t, int argc, char **argv)
{
	static const struct option longs[] = { { NULL, 0, NULL, 0 } };
	struct ls_opts o = { 0, 0, 0, 1, 0, 0 };
	char *dflt[] = { "/" };
	char **paths;
	int i = tool_getopt(t, tool_find_command("ls"), argc, argv, "laR", longs, ls_opt, &o);
	int npaths;

	if (i <= 0)
		return -i;
	paths = i < argc ? argv + i : dflt;
	npaths = i < argc ? argc - i : 1;
	if (tool_mount(t, 1) < 0)
		return TC_EXIT_FAILED;
	if (t->json)
		printf("[");
	for (int k = 0; k < npaths; k++) {
		const char *p = remote_path(paths[k]);
		struct osdfs_stat st;
		int rc = osdfs_stat_path(t->fs, p, 1, &st);

		if (rc < 0) {
			o.status = tool_fail(t, rc, p);
			continue;
		}
		if (S_ISDIR(st.mode))
			ls_dir(t, &o, p, st.ino, npaths > 1 || o.recursive);
		else if (osdfs_stat_path(t->fs, p, 0, &st) == 0)
			ls_entry(t, &o, p, p, &st);
	}
	if (t->json)
		printf("]\n");
	return tool_unmount(t, o.status);
}

/* ---- stat ---- */

static void stat_text(const char *path, const struct osdfs_stat *st, const char *target)
{
	char mode[11], when[64];

	format_mode(st->mode, mode);
	printf("  File: %s%s%s\n", path, target ? " -> " : "", target ? target : "");
	printf("  Size: %-12" PRIu64 " Blocks: %-8" PRIu64 " IO Block: %-6u %s\n", st->size,
	       st->blocks, st->blksize, type_name(st->mode));
	printf(" Inode: %-12" PRIu64 " Links: %-8u Generation: %" PRIu64, st->ino, st->nlink,
	       st->generation);
	if (S_ISCHR(st->mode) || S_ISBLK(st->mode))
		printf(" Device: %u,%u", major(st->rdev), minor(st->rdev));
	printf("\nAccess: (%04o/%s)  Uid: %u  Gid: %u\n", st->mode & 07777, mode, st->uid, st->gid);
	format_time(&st->atime, when, sizeof(when));
	printf("Access: %s\n", when);
	format_time(&st->mtime, when, sizeof(when));
	printf("Modify: %s\n", when);
	format_time(&st->ctime, when, sizeof(when));
	printf("Change: %s\n", when);
	format_time(&st->crtime, when, sizeof(when));
	printf(" Birth: %s\n", when);
}

int cmd_stat(struct tool *t, int argc, char **argv)
{
	int i = tool_getopt(t, tool_find_command("stat"), argc, argv, "", NULL, tool_no_options, NULL);
	int status = 0, first = 1;

	if (i <= 0)
		return -i;
	if (i >= argc)
		return tc_usage_err("stat: no PATH given");
	if (tool_mount(t, 1) < 0)
		return TC_EXIT_FAILED;
	if (t->json)
		printf("[");
	for (; i < argc; i++) {
		const char *p = remote_path(argv[i]);
		char tbuf[OSDFS_SYMLINK_MAX + 1];
		struct osdfs_stat st;
		int rc = osdfs_stat_path(t->fs, p, 0, &st);

		if (rc < 0) {
			status = tool_fail(t, rc, p);
			continue;
		}
		if (t->json) {
			printf("%s", first ? "" : ",\n");
			json_stat(p, &st, link_target(t->fs, &st, tbuf, sizeof(tbuf)));
		} else {
			stat_text(p, &st, link_target(t->fs, &st, tbuf, sizeof(tbuf)));
		}
		first = 0;
	}
	if (t->json)
		printf("]\n");
	return tool_unmount(t, status);
}

/* ---- cat ---- */

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int cat_one(struct tool *t, const char *p, char *buf, size_t size)
{
	osdfs_file *fh;
	uint64_t ino, off = 0;
	int rc = osdfs_resolve(t->fs, p, 1, &ino);

	if (rc == 0)
		rc = osdfs_open(t->fs, ino, O_RDONLY, &fh);
	if (rc < 0)
		return tool_fail(t, rc, p);
	for (;;) {
		ssize_t n = osdfs_read(t->fs, fh, buf, size, off);

		if (n < 0) {
			rc = (int)n;
			break;
		}
		if (n == 0)
			break;
		rc = write_all(STDOUT_FILENO, buf, (size_t)n);
		if (rc < 0) {
			osdfs_release(t->fs, fh);
			return tc_err_rc(rc, "cat: standard output");
		}
		off += (uint64_t)n;
	}
	osdfs_release(t->fs, fh);
	return rc < 0 ? tool_fail(t, rc, p) : 0;
}

int cmd_cat(struct tool *t, int argc, char **argv)
{
	int i = tool_getopt(t, tool_find_command("cat"), argc, argv, "", NULL, tool_no_options, NULL);
	size_t size = 1 << 20;
	char *buf;
	int status = 0;

	if (i <= 0)
		return -i;
	if (i >= argc)
		return tc_usage_err("cat: no PATH given");
	buf = malloc(size);
	if (!buf)
		return tc_err_rc(-ENOMEM, "cat");
	if (tool_mount(t, 1) < 0) {
		free(buf);
		return TC_EXIT_FAILED;
	}
	for (; i < argc; i++)
		if (cat_one(t, remote_path(argv[i]), buf, size) != 0)
			status = TC_EXIT_FAILED;
	free(buf);
	return tool_unmount(t, status);
}

/* ---- tree ---- */

struct tree_ctx {
	uint64_t dirs, files;
	int status;
	char prefix[1024];
};

/* --json: the entries of a directory as json_stat() objects, a directory's
 * with its own "children". */
static void tree_json(struct tool *t, struct tree_ctx *c, const char *path, uint64_t ino)
{
	struct dir_entry *v;
	size_t n;
	int rc = remote_list(t->fs, ino, &v, &n);

	if (rc < 0) {
		c->status = tool_fail(t, rc, path);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char sub[OSDFS_PATH_MAX], tbuf[OSDFS_SYMLINK_MAX + 1];
		struct osdfs_stat st;

		if (path_join(sub, sizeof(sub), path, v[i].name) < 0 ||
		    osdfs_getattr(t->fs, v[i].ino, &st) < 0) {
			c->status = tool_fail(t, -EIO, sub);
			continue;
		}
		printf("%s{", i ? "," : "");
		json_stat_members(sub, &st, link_target(t->fs, &st, tbuf, sizeof(tbuf)));
		if (S_ISDIR(st.mode)) {
			c->dirs++;
			printf(",\"children\":[");
			tree_json(t, c, sub, st.ino);
			printf("]");
		} else {
			c->files++;
		}
		printf("}");
	}
	dir_entries_free(v, n);
}

static void tree_dir(struct tool *t, struct tree_ctx *c, const char *path, uint64_t ino)
{
	struct dir_entry *v;
	size_t n, plen = strlen(c->prefix);
	int rc = remote_list(t->fs, ino, &v, &n);

	if (rc < 0) {
		c->status = tool_fail(t, rc, path);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		int last = i + 1 == n;
		char sub[OSDFS_PATH_MAX], tbuf[OSDFS_SYMLINK_MAX + 1];
		struct osdfs_stat st;

		printf("%s%s%s", c->prefix, last ? "`-- " : "|-- ", v[i].name);
		if (path_join(sub, sizeof(sub), path, v[i].name) < 0 ||
		    osdfs_getattr(t->fs, v[i].ino, &st) < 0) {
			printf("  [unreadable]\n");
			c->status = TC_EXIT_FAILED;
			continue;
		}
		if (S_ISLNK(st.mode))
			printf(" -> %s", link_target(t->fs, &st, tbuf, sizeof(tbuf)));
		putchar('\n');
		if (!S_ISDIR(st.mode)) {
			c->files++;
			continue;
		}
		c->dirs++;
		if (plen + 5 < sizeof(c->prefix)) {
			strcpy(c->prefix + plen, last ? "    " : "|   ");
			tree_dir(t, c, sub, st.ino);
			c->prefix[plen] = '\0';
		}
	}
	dir_entries_free(v, n);
}

int cmd_tree(struct tool *t, int argc, char **argv)
{
	int i = tool_getopt(t, tool_find_command("tree"), argc, argv, "", NULL, tool_no_options, NULL);
	struct tree_ctx c = { 0, 0, 0, "" };
	struct osdfs_stat st;
	const char *p;
	int rc;

	if (i <= 0)
		return -i;
	if (argc - i > 1)
		return tc_usage_err("tree: at most one PATH");
	p = i < argc ? remote_path(argv[i]) : "/";
	if (tool_mount(t, 1) < 0)
		return TC_EXIT_FAILED;
	rc = osdfs_stat_path(t->fs, p, 1, &st);
	if (rc < 0)
		return tool_unmount(t, tool_fail(t, rc, p));
	if (t->json) {
		printf("{\"path\":");
		tc_json_string(stdout, p);
		printf(",\"children\":[");
		if (S_ISDIR(st.mode))
			tree_json(t, &c, p, st.ino);
		printf("],\"directories\":%" PRIu64 ",\"files\":%" PRIu64 "}\n", c.dirs,
		       c.files);
		return tool_unmount(t, c.status);
	}
	printf("%s\n", p);
	if (S_ISDIR(st.mode))
		tree_dir(t, &c, p, st.ino);
	printf("\n%" PRIu64 " directories, %" PRIu64 " files\n", c.dirs, c.files);
	return tool_unmount(t, c.status);
}

/* ---- df ---- */

static int df_opt(struct tool *t, int key, const char *arg, void *ctx)
{
	(void)t; (void)arg;
	if (key != 'h')
		return TC_EXIT_USAGE;
	*(int *)ctx = 1;
	return 0;
}

static void df_size(uint64_t v, int human)
{
	char buf[32];

	if (human)
		tc_format_size(v, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, v / 1024);
	printf(" %10s", buf);
}

int cmd_df(struct tool *t, int argc, char **argv)
{
	struct osdfs_statfs s;
	struct osdfs_info info;
	int human = 0, rc;
	int i = tool_getopt(t, tool_find_command("df"), argc, argv, "h", NULL, df_opt, &human);
	uint64_t size, avail, used;

	if (i <= 0)
		return -i;
	if (i < argc)
		return tc_usage_err("df: unexpected argument '%s'", argv[i]);
	if (tool_mount(t, 1) < 0)
		return TC_EXIT_FAILED;
	rc = osdfs_statfs(t->fs, &s);
	if (rc < 0)
		return tool_unmount(t, tool_fail(t, rc, "statfs"));
	osdfs_get_info(t->fs, &info);
	size = s.blocks * s.frsize;
	avail = s.bavail * s.frsize;
	used = (s.blocks - s.bfree) * s.frsize;
	if (t->json) {
		printf("{\"label\":");
		tc_json_string(stdout, info.label);
		printf(",\"block_size\":%u,\"size\":%" PRIu64 ",\"used\":%" PRIu64
		       ",\"available\":%" PRIu64 ",\"inodes\":%" PRIu64 ",\"inodes_used\":%" PRIu64
		       ",\"inodes_free\":%" PRIu64 "}\n", info.block_size, size, used, avail,
		       s.files, s.files - s.ffree, s.ffree);
	} else {
		printf("%-20s %10s %10s %10s %4s %10s %10s\n", "Filesystem",
		       human ? "Size" : "1K-blocks", "Used", "Avail", "Use%", "Inodes", "IUsed");
		printf("%-20.20s", *info.label ? info.label : "osdfs");
		df_size(size, human);
		df_size(used, human);
		df_size(avail, human);
		printf(" %3u%% %10" PRIu64 " %10" PRIu64 "\n",
		       size ? (unsigned)((used * 100 + size - 1) / size) : 0, s.files,
		       s.files - s.ffree);
	}
	return tool_unmount(t, 0);
}
