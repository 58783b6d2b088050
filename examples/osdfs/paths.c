/* Remote path spelling, names, and formatting of modes and times. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "osdfs_tool.h"

int is_remote(const char *arg)
{
	return arg[0] == ':';
}

const char *remote_path(const char *arg)
{
	if (arg[0] == ':')
		arg++;
	return *arg ? arg : "/";
}

int path_join(char *buf, size_t size, const char *dir, const char *name)
{
	size_t dl = strlen(dir);
	int n;

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	n = snprintf(buf, size, "%.*s%s%s", (int)dl, dir, dl && dir[dl - 1] == '/' ? "" : "/",
		     name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

const char *path_base(const char *path)
{
	static char buf[OSDFS_NAME_MAX + 1];
	size_t len = strlen(path);
	const char *s;

	while (len > 1 && path[len - 1] == '/')
		len--;
	for (s = path + len; s > path && s[-1] != '/'; s--)
		;
	snprintf(buf, sizeof(buf), "%.*s", (int)(path + len - s), s);
	return buf;
}

void format_mode(uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : S_ISCHR(mode) ? 'c' :
		 S_ISBLK(mode) ? 'b' : S_ISFIFO(mode) ? 'p' : S_ISSOCK(mode) ? 's' : '-';
	for (int i = 0; i < 9; i++)
		out[1 + i] = (mode & (0400u >> i)) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = (mode & S_IXOTH) ? 't' : 'T';
	out[10] = '\0';
}

void format_time(const struct osdfs_timespec *ts, char *buf, size_t size)
{
	time_t sec = (time_t)ts->sec;
	struct tm tm;
	char day[64];

	if (!localtime_r(&sec, &tm)) {
		snprintf(buf, size, "%lld.%09u", (long long)ts->sec, ts->nsec);
		return;
	}
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, size, "%s.%09u", day, ts->nsec);
}

unsigned dt_of_mode(uint32_t mode)
{
	return IFTODT(mode);
}

const char *type_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFCHR: return "chardev";
	case S_IFBLK: return "blockdev";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	default: return "unknown";
	}
}

struct list_ctx {
	struct dir_entry *v;
	size_t n, cap;
	int err;
};

static int list_cb(const struct osdfs_dirent *ent, void *p)
{
	struct list_ctx *l = p;

	if (strcmp(ent->name, ".") == 0 || strcmp(ent->name, "..") == 0)
		return 0;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? 2 * l->cap : 64;
		struct dir_entry *nv = realloc(l->v, ncap * sizeof(*nv));

		if (!nv)
			goto nomem;
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n].name = strdup(ent->name);
	if (!l->v[l->n].name)
		goto nomem;
	l->v[l->n].ino = ent->ino;
	l->v[l->n].type = ent->type;
	l->n++;
	return 0;
nomem:
	l->err = -ENOMEM;
	return 1;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dir_entry *)a)->name, ((const struct dir_entry *)b)->name);
}

int remote_list(osdfs *fs, uint64_t dir, struct dir_entry **out, size_t *n)
{
	struct list_ctx l = { NULL, 0, 0, 0 };
	int rc = osdfs_readdir(fs, dir, 0, list_cb, &l);

	if (rc == 0)
		rc = l.err;
	if (rc < 0) {
		dir_entries_free(l.v, l.n);
		return rc;
	}
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), name_cmp);
	*out = l.v;
	*n = l.n;
	return 0;
}

void dir_entries_free(struct dir_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}
