/*
 * osd-bench-passthrough SOURCE MOUNTPOINT: mirror the local directory SOURCE
 * at MOUNTPOINT through FUSE 3, as the baseline of `osd-bench --fuse`.
 *
 *   osd-bench-passthrough [-f] [-s] [-o opt,...] SOURCE MOUNTPOINT
 *
 * Runs like osdfs-mount: libfuse's multithreaded loop (-s: one thread),
 * default_permissions, attr/entry timeouts 1 s, and the FUSE capabilities
 * osdfs-mount asks for (pt_ops.c). It runs as root and creates files as the
 * caller it runs as: it is a benchmark tool, not a sharing service.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "pt.h"

struct args {
	const char *source;
};

static int on_arg(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct args *a = data;

	(void)out;
	if (key == FUSE_OPT_KEY_NONOPT && !a->source) {
		a->source = arg;
		return 0; /* ours; the next one is the mount point */
	}
	return 1;
}

/* One O_PATH descriptor per inode the kernel holds: allow as many as we may
 * (root may go up to fs.nr_open). */
static void raise_fd_limit(void)
{
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	unsigned long nr_open = 0;
	struct rlimit rl;

	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (nr_open > rl.rlim_max) {
		struct rlimit up = { nr_open, nr_open };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return;
	}
	setrlimit(RLIMIT_NOFILE, &rl);
}

static void usage(const char *prog)
{
	printf("usage: %s [-f] [-s] [-o options] SOURCE MOUNTPOINT\n\n", prog);
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

static int run(struct fuse_session *se, const struct fuse_cmdline_opts *o)
{
	struct fuse_loop_config *cfg;
	int rc;

	if (o->singlethread)
		return fuse_session_loop(se);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned int)o->clone_fd);
	if (o->max_threads)
		fuse_loop_cfg_set_max_threads(cfg, o->max_threads);
	rc = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return rc;
}

static int serve(struct fuse_args *fa, const struct fuse_cmdline_opts *o, struct pt_fs *fs)
{
	struct fuse_lowlevel_ops ops;
	struct fuse_session *se;
	int rc = 1;

	memset(&ops, 0, sizeof(ops));
	pt_name_ops(&ops);
	pt_data_ops(&ops);
	se = fuse_session_new(fa, &ops, sizeof(ops), fs);
	if (!se)
		return 2;
	if (fuse_set_signal_handlers(se) == 0) {
		if (fuse_session_mount(se, o->mountpoint) == 0) {
			fuse_daemonize(o->foreground);
			rc = run(se, o) < 0 ? 1 : 0;
			fuse_session_unmount(se);
		}
		fuse_remove_signal_handlers(se);
	}
	fuse_session_destroy(se);
	return rc;
}

int main(int argc, char **argv)
{
	struct fuse_args fa = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts o;
	struct args a = { NULL };
	struct pt_fs fs;
	char fsname[4200];
	int rc = 2;

	memset(&o, 0, sizeof(o));
	if (fuse_opt_parse(&fa, &a, NULL, on_arg) != 0 || fuse_parse_cmdline(&fa, &o) != 0)
		goto out;
	if (o.show_help || o.show_version) {
		if (o.show_help)
			usage(argv[0]);
		else
			printf("osd-bench-passthrough (libfuse %s)\n", fuse_pkgversion());
		rc = 0;
		goto out;
	}
	if (!a.source || !o.mountpoint) {
		fprintf(stderr, "usage: %s [-f] [-s] [-o options] SOURCE MOUNTPOINT\n", argv[0]);
		goto out;
	}
	/* the options osdfs-mount always adds */
	snprintf(fsname, sizeof(fsname), "-ofsname=%s", strpbrk(a.source, ",\\") ? "pt" : a.source);
	if (fuse_opt_add_arg(&fa, "-odefault_permissions") || fuse_opt_add_arg(&fa, fsname) ||
	    fuse_opt_add_arg(&fa, "-osubtype=passthrough"))
		goto out;
	raise_fd_limit();
	rc = pt_table_init(&fs, a.source);
	if (rc < 0) {
		fprintf(stderr, "osd-bench-passthrough: %s: %s\n", a.source, strerror(-rc));
		rc = 1;
	} else {
		rc = serve(&fa, &o, &fs);
	}
	pt_dirs_free(&fs);
	pt_table_free(&fs);
out:
	free(o.mountpoint);
	fuse_opt_free_args(&fa);
	return rc;
}
