/*
 * osdfs-mount: the FUSE 3 low-level frontend of osdfs.
 *
 * FUSE node ids are osdfs inode numbers (both call the root 1), so requests
 * map onto the inode API without a translation table; the only table kept
 * is the kernel's lookup count per inode (lookups.c).
 */
#ifndef OSDFS_MOUNT_H
#define OSDFS_MOUNT_H

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdint.h>
#include <osdfs/osdfs.h>
#include "toolcommon.h"

/* Unused inodes osdfs keeps cached (its default is 4096). The kernel asks for
 * attributes again once attr_timeout has passed, so a daemon serving it
 * gains from holding the inodes of a whole working set (~300 bytes each). */
#define MNT_INODE_CACHE 65536u

/* ---- command line (options.c) ---- */
#define MNT_PROBE_MS 5000u /* probe_interval= default: looks for devices back */
struct mnt_options {
	const char *target;       /* TARGET argument (the first of several) */
	const char *mountpoint;   /* MOUNTPOINT argument */
	struct tc_targets targets;/* every TARGET (several: a multi-device layout) */
	struct osdfs_data_map map;/* layout= (with mkfs) */
	int layout_given;         /* layout= */
	uint64_t partition;       /* pid= */
	int mkfs;                 /* mkfs */
	int force;                /* force: take over a stale mount record */
	uint64_t capacity;        /* format= (0: backend default) */
	int readonly;             /* ro */
	unsigned probe_ms;        /* probe_interval= (ms; 0: devices that come back
				     are not looked for while mounted) */
	int no_auto_resync;       /* no_auto_resync: report a device back, leave it down */
	int writeback;            /* writeback_cache */
	double attr_timeout;      /* attr_timeout= seconds */
	double entry_timeout;     /* entry_timeout= seconds */
	int foreground, debug, single_thread;
	unsigned int max_threads; /* max_threads= (0: libfuse's default) */
	int clone_fd;             /* clone_fd */
	struct tc_device_opts dev;
	char *key_file;           /* keyfile= (owned; dev.key_file points here) */
	char *strings[16];        /* iSCSI option values (owned; dev points here) */
	unsigned int nstrings;
	struct fuse_args fuse;    /* what libfuse parses (mount and session options) */
};

/* What mnt_parse_args() asks of the caller besides mounting. */
enum mnt_parse_result { MNT_PARSE_RUN, MNT_PARSE_HELP, MNT_PARSE_VERSION };

/* Parses argv into @p o. Returns an enum mnt_parse_result, or -TC_EXIT_USAGE
 * after printing a message. */
int mnt_parse_args(struct mnt_options *o, int argc, char **argv);
void mnt_options_free(struct mnt_options *o);
void mnt_print_help(const char *prog);

/* ---- kernel lookup counts (lookups.c) ---- */
struct mnt_lookups;
int mnt_lookups_new(struct mnt_lookups **out);
void mnt_lookups_free(struct mnt_lookups *t);
/* Adds one kernel reference to @p ino. Returns 0 or -ENOMEM. */
int mnt_lookups_add(struct mnt_lookups *t, uint64_t ino);
/* Drops @p n references; returns the count left, or -ENOENT if @p ino held
 * fewer than @p n (a kernel/frontend mismatch worth a debug message). */
int64_t mnt_lookups_drop(struct mnt_lookups *t, uint64_t ino, uint64_t n);
/* "No security.capability" remembered per held inode (see lookups.c):
 * the change counter to pass to set_nocaps, bumped by xattr_change (call it
 * before and after changing an xattr of @p ino; 0: no inode). */
uint64_t mnt_lookups_xattr_gen(struct mnt_lookups *t);
void mnt_lookups_xattr_change(struct mnt_lookups *t, uint64_t ino);
int mnt_lookups_nocaps(struct mnt_lookups *t, uint64_t ino);
/* Remembers the absence unless an xattr changed since @p gen was read. */
void mnt_lookups_set_nocaps(struct mnt_lookups *t, uint64_t ino, uint64_t gen);

/* ---- one mount's state, the FUSE userdata ---- */
struct mnt_file {
	osdfs_file *fh;
	struct mnt_file *prev, *next; /* open files, released at destroy */
};

struct mnt_ctx {
	osdfs *fs;
	const struct mnt_options *opts;
	struct mnt_lookups *lookups;
	pthread_mutex_t files_lock;
	struct mnt_file files;        /* list head of open files */
	int writeback;                /* writeback cache granted by the kernel */
	int unmount_rc;               /* osdfs_unmount() result at destroy */
	int unmounted;
	osdfs_backend *be;            /* the filesystem's backend (owned by fs) */
};

/* The FUSE operations (ops_*.c gathered in ops.c). */
extern const struct fuse_lowlevel_ops mnt_ops;

/* ---- shared by the ops files (reply.c) ---- */
struct mnt_ctx *mnt_ctx(fuse_req_t req);
void mnt_reply_err(fuse_req_t req, int rc);
void mnt_stat_to_host(const struct osdfs_stat *in, struct stat *out);
/* Builds the entry of @p st, counts the kernel's new reference and replies
 * (undoing the count if the reply is refused). */
void mnt_reply_entry(fuse_req_t req, const struct osdfs_stat *st);
void mnt_fill_entry(struct mnt_ctx *c, const struct osdfs_stat *st,
		    struct fuse_entry_param *e);
void mnt_cred(fuse_req_t req, struct osdfs_cred *cred);

/* ---- open files (files.c) ---- */
struct mnt_file *mnt_file_add(struct mnt_ctx *c, osdfs_file *fh);
/* Releases the osdfs file and forgets the wrapper; returns osdfs_release(). */
int mnt_file_release(struct mnt_ctx *c, struct mnt_file *f);
/* Releases whatever the kernel left open (connection aborted). */
void mnt_file_release_all(struct mnt_ctx *c);
/*
 * Answers an open or opendir whose osdfs_open() returned @p rc and @p fh:
 * the handle is listed and put in fi->fh (with @p keep_cache), or the error
 * is the reply. A refused reply (interrupted) releases the handle again.
 */
void mnt_file_reply_open(fuse_req_t req, int rc, osdfs_file *fh, struct fuse_file_info *fi,
			 int keep_cache);
static inline struct mnt_file *mnt_file_of(const struct fuse_file_info *fi)
{
	return (struct mnt_file *)(uintptr_t)fi->fh;
}

/* ---- layout events (events.c) ---- */
/* Log @p be's events (if it is a layout) with their severity: on stderr in
 * the foreground, else to syslog; first the resyncs its open did (events
 * since @p opened), then which slots are not up now. */
void mnt_events_attach(osdfs_backend *be, int foreground, int64_t opened);

/* ---- devices that come back while mounted (reopen.c) ---- */
/* Start the layout's return watch on @p be (nothing for a plain backend or
 * probe_interval=0), reopening a down slot's device at its table address
 * with @p o's device options; @p set lists the devices this process has
 * open. Returns 0 or the watch's error. */
int mnt_watch_start(osdfs_backend *be, const struct mnt_options *o, const struct tc_devset *set);
/* Close the devices the watch opened again (once the layout is freed). */
void mnt_watch_close(void);

/* ---- running in the background (daemon.c) ---- */
/* Forks; the parent waits for mnt_daemon_ready() or the child's exit and
 * exits with its status. Returns 0 in the child, -errno on failure. */
int mnt_daemon_start(void);
/* Detaches from the terminal and tells the parent the mount is up. */
void mnt_daemon_ready(void);
/* Tells the parent the start failed with @p status (the child exits next). */
void mnt_daemon_failed(int status);

#endif
