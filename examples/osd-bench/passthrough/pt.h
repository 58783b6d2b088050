/*
 * osd-bench-passthrough: a FUSE 3 low-level filesystem that passes every
 * request on to a local directory. It is the baseline `osd-bench --fuse`
 * measures osdfs-mount against, so it asks the kernel for exactly what
 * osdfs-mount asks for (pt_init() uses osdfs-mount's caps.h; see
 * docs/benchmarks.md "FUSE").
 *
 * Node ids are pointers to struct pt_inode, which holds an O_PATH
 * descriptor of the file; the root is FUSE_ROOT_ID.
 */
#ifndef OSD_BENCH_PT_H
#define OSD_BENCH_PT_H

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

/* The timeouts osdfs-mount uses by default (seconds). */
#define PT_TIMEOUT 1.0

struct pt_inode {
	int fd;             /* O_PATH descriptor */
	dev_t dev;
	ino_t ino;
	uint64_t nlookup;   /* the kernel's references */
	struct pt_inode *next; /* hash chain */
};

struct pt_dir;

struct pt_fs {
	struct pt_inode root;
	pthread_mutex_t lock; /* the inode table and dirs */
	struct pt_inode **table;
	size_t nbuckets, count;
	struct pt_dir *dirs;  /* open directory streams: an unmount may come before
				 their RELEASEDIR (pt_dirs_free) */
};

/* ---- the inode table (pt_inodes.c) ---- */
int pt_table_init(struct pt_fs *fs, const char *source);
void pt_table_free(struct pt_fs *fs);
struct pt_inode *pt_inode(fuse_req_t req, fuse_ino_t ino);
/* Looks @p name up in @p parent and takes one kernel reference on the
 * result, filling @p e for the reply. 0 or -errno. */
int pt_lookup_ref(struct pt_fs *fs, struct pt_inode *parent, const char *name,
		  struct fuse_entry_param *e);
/* Gives back @p n kernel references of @p ino (forget). */
void pt_unref(struct pt_fs *fs, fuse_ino_t ino, uint64_t n);

/* ---- the operations ---- */
/* Name, attribute and xattr operations and the handshake (pt_ops.c). */
void pt_name_ops(struct fuse_lowlevel_ops *ops);
/* File data and directory listings (pt_data.c). */
void pt_data_ops(struct fuse_lowlevel_ops *ops);
/* Close the directory streams the kernel never released (after the session). */
void pt_dirs_free(struct pt_fs *fs);
void pt_reply_err(fuse_req_t req, int err);
/* "/proc/self/fd/N" of @p fd into @p buf (at least 32 bytes). */
void pt_fd_path(int fd, char *buf, size_t size);

#endif
