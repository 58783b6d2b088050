/*
 * osdfs-mount: mount an osdfs filesystem through FUSE 3.
 *
 *   osdfs-mount [-o options] TARGET [TARGET...] MOUNTPOINT
 *
 * Several TARGETs are the devices of a multi-device layout (osdfs/layout.h);
 * one that cannot be reached is left out and the layout runs degraded.
 * Everything that can fail is done before the mount appears: options are
 * checked (exit 2), the device is opened, the filesystem made (-o mkfs)
 * and mounted by osdfs (exit 1 with the reason, e.g. when it is mounted
 * elsewhere). A clean unmount (fusermount3 -u, umount, SIGTERM, SIGINT)
 * releases every file and ends with osdfs_unmount(), which writes all
 * cached state; its result is the exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <osdfs/backends.h>
#include "mount.h"
#include "ops.h"

#define PROG "osdfs-mount"

/* Everything one run opens, closed in reverse order by shutdown(). */
struct run {
	struct mnt_options o;
	struct mnt_ctx ctx;
	struct tc_devset set;
	char *target_abs[TC_MAX_TARGETS];
	struct fuse_session *se;
	int signals_set, fuse_mounted;
	char hint[200]; /* after a refused mount: the way past its holder */
};

/* The daemon changes to "/": make directory TARGET @p i absolute first. */
static int absolute_target(struct run *r, unsigned i)
{
	const char *target = r->o.targets.v[i];
	char cwd[PATH_MAX];
	struct stat st;

	if (tc_target_is_url(target))
		return 0; /* a URL: checked and set by the option parser */
	if (stat(target, &st) == 0 && !S_ISDIR(st.st_mode))
		return tc_usage_err("%s: not a directory", target);
	if (target[0] == '/') {
		r->target_abs[i] = strdup(target);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return tc_err_rc(-errno, "current directory");
		if (asprintf(&r->target_abs[i], "%s/%s", cwd, target) < 0)
			r->target_abs[i] = NULL;
	}
	if (!r->target_abs[i])
		return tc_err_rc(-ENOMEM, "%s", target);
	r->o.targets.v[i] = r->target_abs[i];
	r->o.dev.target_dir = r->target_abs[i];
	return 0;
}

static int absolute_targets(struct run *r)
{
	int rc = 0;

	for (unsigned i = 0; i < r->o.targets.n && rc == 0; i++)
		rc = absolute_target(r, i);
	return rc;
}

/* What the filesystem is on, for messages: TARGET, or "N devices". */
static const char *fs_name(const struct run *r)
{
	return tc_targets_name(&r->o.targets);
}

/* tc_device_fail() with the device that refused (one device) or the method. */
static int device_fail(const struct run *r, int rc, const char *what)
{
	struct tc_device d;

	return tc_device_fail(tc_devset_refusing(&r->set, &r->o.dev, &d), rc, what);
}

static int check_mountpoint(const char *mp)
{
	struct stat st;

	if (stat(mp, &st) < 0)
		return tc_err_rc(-errno, "%s", mp);
	if (!S_ISDIR(st.st_mode)) {
		tc_err("%s: not a directory", mp);
		return TC_EXIT_FAILED;
	}
	return 0;
}

static int make_fs(struct run *r, osdfs_backend *be)
{
	struct osdfs_mkfs_options mo = OSDFS_MKFS_OPTIONS_INIT;
	struct osdfs_holder h;
	char who[256];
	int rc;

	/* -o mkfs erases by design, but never a filesystem another client holds */
	if (osdfs_holder_get(be, &h) == 0 && h.state == OSDFS_HOLDER_LIVE) {
		tc_err("mkfs on %s partition 0x%" PRIx64 ": it is %s; unmount it there first",
		       fs_name(r), r->o.partition, osdfs_holder_format(&h, who, sizeof(who)));
		return TC_EXIT_FAILED;
	}
	mo.capacity = r->o.capacity;
	mo.root_uid = (uint32_t)getuid();
	mo.root_gid = (uint32_t)getgid();
	/* the devices were keyed when opened: the format keeps the keys */
	rc = osdfs_mkfs(be, &mo);
	if (rc < 0) {
		char what[4200];

		snprintf(what, sizeof(what), "mkfs on %s partition 0x%" PRIx64, fs_name(r),
			 r->o.partition);
		return device_fail(r, rc, what);
	}
	return 0;
}

/* The way past a holder that refused the mount (printed after the reason). */
static void holder_hint(struct run *r, osdfs_backend *be)
{
	struct osdfs_holder h;

	r->hint[0] = '\0';
	if (osdfs_holder_get(be, &h) < 0 || h.state == OSDFS_HOLDER_NONE)
		return;
	if (r->o.readonly)
		snprintf(r->hint, sizeof(r->hint), "-o ro,force looks at it anyway (what the "
			 "holder has not written yet is not seen)");
	else if (h.state == OSDFS_HOLDER_LIVE && h.lease_sec)
		snprintf(r->hint, sizeof(r->hint), "the holder is alive: unmount it there first "
			 "(if it crashed, --force takes over once its lease runs out, in %lld s)",
			 (long long)h.expires_in);
	else if (h.state == OSDFS_HOLDER_LIVE)
		snprintf(r->hint, sizeof(r->hint), "the holder is a running process of this "
			 "host: unmount it first");
	else if (!r->o.force)
		snprintf(r->hint, sizeof(r->hint), "the holder is gone: take over with --force "
			 "(-o force)");
}

/* Device, optional mkfs, and the osdfs mount (which then owns the backend). */
static int open_fs(struct run *r)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	int64_t opened = (int64_t)time(NULL); /* resyncs of the open are logged */
	osdfs_backend *be;
	char err[256] = "";
	int rc;

	if (tc_targets_check(&r->o.targets, &r->o.dev) < 0)
		return TC_EXIT_USAGE;
	if (tc_devset_open(&r->set, &r->o.dev, &r->o.targets, r->o.partition,
			   r->o.mkfs ? &r->o.map : NULL, !r->o.layout_given, r->o.readonly) < 0)
		return TC_EXIT_FAILED;
	be = r->set.be;
	r->set.be = NULL;
	mnt_events_attach(be, r->o.foreground, opened);
	if (r->o.mkfs && (rc = make_fs(r, be)) != 0) {
		osdfs_backend_free(be);
		return rc;
	}
	mo.flags = (r->o.readonly ? OSDFS_MOUNT_RDONLY : 0) | (r->o.force ? OSDFS_MOUNT_FORCE : 0);
	mo.inode_cache = MNT_INODE_CACHE;
	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mount(&r->ctx.fs, be, &mo);
	if (rc < 0) {
		char what[4200];

		if (rc == -EBUSY)
			holder_hint(r, be);
		osdfs_backend_free(be);
		snprintf(what, sizeof(what), "cannot mount %s partition 0x%" PRIx64, fs_name(r),
			 r->o.partition);
		if (rc == -EACCES)
			return device_fail(r, rc, what);
		tc_err("%s: %s", what, *err ? err : strerror(-rc));
		if (r->hint[0])
			tc_err("%s", r->hint);
		return TC_EXIT_FAILED;
	}
	r->ctx.be = be;
	rc = mnt_watch_start(be, &r->o, &r->set);
	if (rc < 0) /* the mount works without it: devices back wait for a remount */
		tc_err_rc(rc, "warning: devices that come back are not looked for");
	return 0;
}

static int init_ctx(struct run *r)
{
	r->ctx.opts = &r->o;
	if (mnt_lookups_new(&r->ctx.lookups) < 0)
		return tc_err_rc(-ENOMEM, "start");
	return 0;
}

static int start_fuse(struct run *r)
{
	if (fuse_set_signal_handlers(r->se) != 0) {
		tc_err("cannot install signal handlers");
		return TC_EXIT_FAILED;
	}
	r->signals_set = 1;
	if (fuse_session_mount(r->se, r->o.mountpoint) != 0) {
		tc_err("cannot mount on %s", r->o.mountpoint);
		return TC_EXIT_FAILED;
	}
	r->fuse_mounted = 1;
	return 0;
}

static int run_loop(struct run *r)
{
	struct fuse_loop_config *cfg;
	int rc;

	if (r->o.single_thread)
		return fuse_session_loop(r->se);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned int)r->o.clone_fd);
	if (r->o.max_threads)
		fuse_loop_cfg_set_max_threads(cfg, r->o.max_threads);
	rc = fuse_session_loop_mt(r->se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return rc;
}

/* Unmounts the kernel side, then osdfs (through destroy), then the device. */
static int shutdown_all(struct run *r, int status)
{
	if (r->fuse_mounted)
		fuse_session_unmount(r->se);
	if (r->signals_set)
		fuse_remove_signal_handlers(r->se);
	if (r->se)
		fuse_session_destroy(r->se);
	if (r->ctx.fs && !r->ctx.unmounted) /* init never came: destroy did not run */
		mnt_op_destroy(&r->ctx);
	if (r->ctx.unmounted && r->ctx.unmount_rc < 0) {
		tc_err_rc(r->ctx.unmount_rc, "unmount of %s: %s", fs_name(r),
			  r->ctx.unmount_rc == -ESTALE ? "taken over by a forced mount"
						       : "could not write everything back");
		status = TC_EXIT_FAILED;
	}
	tc_devset_close(&r->set);
	mnt_watch_close(); /* after the layout that used them */
	mnt_lookups_free(r->ctx.lookups);
	pthread_mutex_destroy(&r->ctx.files_lock);
	for (unsigned i = 0; i < TC_MAX_TARGETS; i++)
		free(r->target_abs[i]);
	mnt_options_free(&r->o);
	return status;
}

/* Before the fork: everything that needs only the command line. */
static int prepare(struct run *r, int argc, char **argv)
{
	int rc = mnt_parse_args(&r->o, argc, argv);

	if (rc < 0)
		return -rc;
	if (rc == MNT_PARSE_HELP) {
		mnt_print_help(PROG);
		return -1;
	}
	if (rc == MNT_PARSE_VERSION) {
		printf(PROG " %s (osdfs, libfuse %s)\n", osd_version_string(), fuse_pkgversion());
		return -1;
	}
	rc = absolute_targets(r);
	if (rc == 0 && tc_targets_check(&r->o.targets, &r->o.dev) < 0)
		rc = TC_EXIT_USAGE;
	if (rc == 0)
		rc = check_mountpoint(r->o.mountpoint);
	if (rc == 0)
		rc = init_ctx(r);
	if (rc)
		return rc;
	/* libfuse parses its options here: an unknown one is a usage error */
	r->se = fuse_session_new(&r->o.fuse, &mnt_ops, sizeof(mnt_ops), &r->ctx);
	if (!r->se)
		return tc_usage_err("bad FUSE option (see above)");
	return 0;
}

int main(int argc, char **argv)
{
	struct run r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.ctx.files.next = r.ctx.files.prev = &r.ctx.files;
	r.ctx.files_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	tc_set_prog(PROG);
	rc = prepare(&r, argc, argv);
	if (rc != 0)
		return shutdown_all(&r, rc < 0 ? TC_EXIT_OK : rc);
	if (!r.o.foreground && (rc = mnt_daemon_start()) < 0) {
		tc_err_rc(rc, "cannot go to the background");
		return shutdown_all(&r, TC_EXIT_FAILED);
	}
	rc = open_fs(&r);
	if (rc == 0)
		rc = start_fuse(&r);
	if (rc != 0) {
		rc = shutdown_all(&r, rc);
		mnt_daemon_failed(rc);
		return rc;
	}
	mnt_daemon_ready();
	rc = run_loop(&r);
	/* > 0: ended by a signal, which is a normal way to unmount */
	return shutdown_all(&r, rc < 0 ? TC_EXIT_FAILED : TC_EXIT_OK);
}
