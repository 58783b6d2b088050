/* Commands that change the filesystem: mkdir, rm, mv, ln, put, get, cp. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "osdfs_tool.h"

static int flag_opt(struct tool *t, int key, const char *arg, void *ctx)
{
	int *flags = ctx;

	(void)t; (void)arg;
	switch (key) {
	case 'p': case 'r': case 'R': case 'f': case 's': case 'a':
		flags[key == 'R' ? 'r' : key] = 1;
		return 0;
	case 'P': case 'L': case 'H': /* the last one counts, as in GNU cp */
		flags['D'] = key;
		return 0;
	default:
		return TC_EXIT_USAGE;
	}
}

static struct osdfs_cred caller_cred(void)
{
	struct osdfs_cred c = { (uint32_t)getuid(), (uint32_t)getgid() };

	return c;
}

/* ---- mkdir ---- */

static int mkdir_parents(struct tool *t, const char *path)
{
	char buf[OSDFS_PATH_MAX];
	struct osdfs_cred cred = caller_cred();
	uint64_t ino = OSDFS_ROOT_INO;
	char *save = NULL, *comp;
	int rc = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (comp = strtok_r(buf, "/", &save); comp && rc == 0; comp = strtok_r(NULL, "/", &save)) {
		struct osdfs_stat st;

		rc = osdfs_lookup(t->fs, ino, comp, &st);
		if (rc == -ENOENT)
			rc = osdfs_mkdir(t->fs, ino, comp, 0777 & ~(uint32_t)0022, &cred, &st);
		if (rc == 0 && S_ISLNK(st.mode)) {
			char sub[OSDFS_PATH_MAX];
			size_t len = (size_t)(comp - buf) + strlen(comp);

			snprintf(sub, sizeof(sub), "%.*s", (int)len, path);
			rc = osdfs_stat_path(t->fs, sub, 1, &st);
		}
		if (rc == 0 && !S_ISDIR(st.mode))
			rc = -ENOTDIR;
		ino = st.ino;
	}
	return rc;
}

int cmd_mkdir(struct tool *t, int argc, char **argv)
{
	int flags[128] = { 0 }, status = 0;
	int i = tool_getopt(t, tool_find_command("mkdir"), argc, argv, "p", NULL, flag_opt, flags);
	mode_t um = umask(0);

	umask(um);
	if (i <= 0)
		return -i;
	if (i >= argc)
		return tc_usage_err("mkdir: no PATH given");
	if (tool_mount(t, 0) < 0)
		return TC_EXIT_FAILED;
	for (; i < argc; i++) {
		const char *p = remote_path(argv[i]);
		struct osdfs_cred cred = caller_cred();
		char name[OSDFS_NAME_MAX + 1];
		uint64_t parent;
		int rc;

		if (flags['p']) {
			rc = mkdir_parents(t, p);
		} else {
			rc = osdfs_resolve_parent(t->fs, p, &parent, name, sizeof(name));
			if (rc == 0)
				rc = osdfs_mkdir(t->fs, parent, name, 0777 & ~(uint32_t)um, &cred, NULL);
		}
		if (rc < 0)
			status = tool_fail(t, rc, p);
	}
	return tool_unmount(t, status);
}

/* ---- rm ---- */

static int remove_tree(struct tool *t, uint64_t dir, const char *path)
{
	struct dir_entry *v;
	size_t n;
	int rc = remote_list(t->fs, dir, &v, &n), first = 0;

	if (rc < 0)
		return tool_fail(t, rc, path), rc;
	for (size_t i = 0; i < n && first != -EINTR; i++) {
		char sub[OSDFS_PATH_MAX];

		if (tool_interrupted()) {
			first = -EINTR; /* stop here: reported by main() */
			break;
		}
		if (path_join(sub, sizeof(sub), path, v[i].name) < 0)
			rc = -ENAMETOOLONG;
		else if (v[i].type == DT_DIR && (rc = remove_tree(t, v[i].ino, sub)) == 0)
			rc = osdfs_rmdir(t->fs, dir, v[i].name);
		else if (v[i].type != DT_DIR)
			rc = osdfs_unlink(t->fs, dir, v[i].name);
		if (rc < 0 && first == 0) {
			first = rc;
			if (rc != -EINTR)
				tool_fail(t, rc, sub);
		}
	}
	dir_entries_free(v, n);
	return first;
}

int cmd_rm(struct tool *t, int argc, char **argv)
{
	int flags[128] = { 0 }, status = 0;
	int i = tool_getopt(t, tool_find_command("rm"), argc, argv, "rRf", NULL, flag_opt, flags);

	if (i <= 0)
		return -i;
	if (i >= argc)
		return flags['f'] ? 0 : tc_usage_err("rm: no PATH given");
	if (tool_mount(t, 0) < 0)
		return TC_EXIT_FAILED;
	for (; i < argc && !tool_interrupted(); i++) {
		const char *p = remote_path(argv[i]);
		char name[OSDFS_NAME_MAX + 1];
		struct osdfs_stat st;
		uint64_t parent;
		int rc = osdfs_stat_path(t->fs, p, 0, &st);

		if (rc == -ENOENT && flags['f'])
			continue;
		if (rc == 0)
			rc = osdfs_resolve_parent(t->fs, p, &parent, name, sizeof(name));
		if (rc == -EINVAL) {
			tc_err("rm: %s: refusing to remove the root directory", p);
			status = TC_EXIT_FAILED;
			continue;
		}
		if (rc == 0 && S_ISDIR(st.mode) && !flags['r'])
			rc = -EISDIR;
		if (rc == 0 && S_ISDIR(st.mode)) {
			if (remove_tree(t, st.ino, p) < 0) {
				status = TC_EXIT_FAILED;
				continue;
			}
			rc = osdfs_rmdir(t->fs, parent, name);
		} else if (rc == 0) {
			rc = osdfs_unlink(t->fs, parent, name);
		}
		if (rc < 0)
			status = tool_fail(t, rc, p);
	}
	return tool_unmount(t, status);
}

/* ---- mv ---- */

int cmd_mv(struct tool *t, int argc, char **argv)
{
	int i = tool_getopt(t, tool_find_command("mv"), argc, argv, "", NULL, tool_no_options, NULL);
	char sname[OSDFS_NAME_MAX + 1], dname[OSDFS_NAME_MAX + 1], into[OSDFS_PATH_MAX];
	const char *src, *dst;
	uint64_t sp, dp;
	struct osdfs_stat st;
	int rc;

	if (i <= 0)
		return -i;
	if (argc - i != 2)
		return tc_usage_err("mv: needs SRC and DEST");
	src = remote_path(argv[i]);
	dst = remote_path(argv[i + 1]);
	if (tool_mount(t, 0) < 0)
		return TC_EXIT_FAILED;
	rc = osdfs_resolve_parent(t->fs, src, &sp, sname, sizeof(sname));
	if (rc < 0)
		return tool_unmount(t, tool_fail(t, rc, src));
	if (osdfs_stat_path(t->fs, dst, 1, &st) == 0 && S_ISDIR(st.mode)) {
		if (path_join(into, sizeof(into), dst, sname) < 0)
			return tool_unmount(t, tool_fail(t, -ENAMETOOLONG, dst));
		dst = into;
	}
	rc = osdfs_resolve_parent(t->fs, dst, &dp, dname, sizeof(dname));
	if (rc == 0)
		rc = osdfs_rename(t->fs, sp, sname, dp, dname, 0);
	if (rc < 0) {
		char what[2 * OSDFS_PATH_MAX + 8];

		snprintf(what, sizeof(what), "%s -> %s", src, dst);
		return tool_unmount(t, tool_fail(t, rc, what));
	}
	return tool_unmount(t, 0);
}

/* ---- ln ---- */

int cmd_ln(struct tool *t, int argc, char **argv)
{
	int flags[128] = { 0 };
	int i = tool_getopt(t, tool_find_command("ln"), argc, argv, "s", NULL, flag_opt, flags);
	char name[OSDFS_NAME_MAX + 1];
	struct osdfs_cred cred = caller_cred();
	const char *target, *link;
	uint64_t parent, ino;
	int rc;

	if (i <= 0)
		return -i;
	if (argc - i != 2)
		return tc_usage_err("ln: needs TARGET and LINKNAME");
	target = argv[i];
	link = remote_path(argv[i + 1]);
	if (!flags['s'])
		target = remote_path(target);
	if (tool_mount(t, 0) < 0)
		return TC_EXIT_FAILED;
	rc = osdfs_resolve_parent(t->fs, link, &parent, name, sizeof(name));
	if (rc == 0 && flags['s']) {
		rc = osdfs_symlink(t->fs, parent, name, target, &cred, NULL);
	} else if (rc == 0) {
		rc = osdfs_resolve(t->fs, target, 0, &ino);
		if (rc < 0)
			return tool_unmount(t, tool_fail(t, rc, target));
		rc = osdfs_link(t->fs, ino, parent, name, NULL);
	}
	return tool_unmount(t, rc < 0 ? tool_fail(t, rc, link) : 0);
}

/* ---- put, get, cp ---- */

/* -P, -H, -L (flags['D']); otherwise -H for a single level, -P for -r. */
static enum copy_deref deref_of(const int *flags, int recursive)
{
	switch (flags['D']) {
	case 'P': return COPY_DEREF_NONE;
	case 'L': return COPY_DEREF_ALL;
	case 'H': return COPY_DEREF_ARGS;
	default: return recursive ? COPY_DEREF_NONE : COPY_DEREF_ARGS;
	}
}

int cmd_put(struct tool *t, int argc, char **argv)
{
	int flags[128] = { 0 };
	struct copy_opts o = { 0 };
	int i = tool_getopt(t, tool_find_command("put"), argc, argv, "PLH", NULL, flag_opt, flags);

	if (i <= 0)
		return -i;
	if (argc - i != 2)
		return tc_usage_err("put: needs LOCAL and REMOTE");
	o.progress = t->progress;
	o.deref = deref_of(flags, 0);
	o.atomic = 1;
	o.dash = 1;
	return copy_in(t, argv + i, 1, remote_path(argv[i + 1]), &o);
}

int cmd_get(struct tool *t, int argc, char **argv)
{
	int flags[128] = { 0 };
	struct copy_opts o = { 0 };
	int i = tool_getopt(t, tool_find_command("get"), argc, argv, "PLH", NULL, flag_opt, flags);
	char *src;

	if (i <= 0)
		return -i;
	if (argc - i != 2)
		return tc_usage_err("get: needs REMOTE and LOCAL");
	o.progress = t->progress;
	o.deref = deref_of(flags, 0);
	o.dash = 1;
	src = (char *)remote_path(argv[i]);
	return copy_out(t, &src, 1, argv[i + 1], &o);
}

int cmd_cp(struct tool *t, int argc, char **argv)
{
	int flags[128] = { 0 };
	int i = tool_getopt(t, tool_find_command("cp"), argc, argv, "rRaPLH", NULL, flag_opt, flags);
	struct copy_opts o = { 0 };
	int nsrc, remote_src;
	const char *dest;

	if (i <= 0)
		return -i;
	if (argc - i < 2)
		return tc_usage_err("cp: needs SRC... and DEST");
	nsrc = argc - i - 1;
	dest = argv[argc - 1];
	remote_src = is_remote(argv[i]);
	for (int k = i; k < argc - 1; k++)
		if (is_remote(argv[k]) != remote_src)
			return tc_usage_err("cp: sources must be all local or all remote (':PATH')");
	if (is_remote(dest) == remote_src)
		return tc_usage_err(remote_src ? "cp: DEST must be local when copying out"
					       : "cp: DEST must be remote (':PATH') when copying in");
	o.recursive = flags['r'] || flags['a'];
	o.archive = flags['a'];
	o.progress = t->progress;
	o.deref = deref_of(flags, o.recursive);
	if (remote_src) {
		for (int k = i; k < argc - 1; k++)
			argv[k] = (char *)remote_path(argv[k]);
		return copy_out(t, argv + i, nsrc, dest, &o);
	}
	return copy_in(t, argv + i, nsrc, remote_path(dest), &o);
}
