/*
 * State of one osdfs_fsck() pass: every inode of the backend with what the
 * directories say about it, the planned repairs, and the shared helpers of
 * the fsck files.
 */
#ifndef OSDFS_FSCK_STATE_H
#define OSDFS_FSCK_STATE_H

#include <stdint.h>
#include <osdfs/fsck.h>
#include <osdfs/osdfs.h>

#include "core/format.h"

/* One entry of a directory as fsck read it. */
struct fsck_entry {
	uint64_t ino;
	uint8_t ft;
	uint8_t drop;      /* repair removes this entry */
	uint8_t namelen;
	char name[255 + 1];
};

/* One inode object. */
struct fsck_inode {
	uint64_t ino;
	struct osdfs__dinode d;
	uint64_t objlen;
	int bad;              /* attribute unreadable */
	int bad_link;         /* a symlink whose target is missing or cut */
	int bad_xattr;        /* extended attributes that cannot be decoded */
	uint32_t links;       /* entries naming it (kept ones) */
	uint32_t subdirs;     /* directories: kept entries naming directories */
	uint64_t found_parent;/* directories: the directory whose entry names it */
	const char *name;     /* directories: that entry's name (borrowed) */
	int pscore;           /* how well that entry fits (see check.c, visit()) */
	int reached;
	/* directories */
	struct fsck_entry *ents;
	size_t nents;
	int dir_bad;          /* corrupt index or blocks: rebuild */
	int dir_rebuild;      /* rebuild (corrupt, wrong count or size) */
	int dir_edit;         /* some entries dropped */
	/* planned repairs */
	int remove;           /* remove the object (empty orphan, bad inode) */
	int to_lost_found;    /* orphan linked into /lost+found */
	uint32_t want_nlink;
	uint64_t want_parent;
	int fix_inode;        /* rewrite nlink / parent */
	int fix_objlen;       /* truncate the object to the inode size */
	int fix_size;         /* set the inode size to the object length */
};

struct fsck {
	osdfs_backend *be;
	const struct osdfs_backend_ops *ops;
	void *impl;
	const struct osdfs_fsck_options *opts;
	struct osdfs_fsck_report *rep;
	int quiet;            /* verification pass: count, do not call back */
	uint64_t found;       /* findings in this pass */
	uint64_t unrepairable;
	uint64_t data_bad;    /* OSDFS_FSCK_DATA_IO findings (verify_data) */
	int fatal;            /* superblock or root unusable: nothing to repair on */

	struct osdfs__super sb;
	struct osdfs__counters ctr;
	int sb_ok;
	int mount_rec;
	int fix_counters;
	uint64_t max_ino;
	uint64_t ndirs, dirs_read; /* directories to read, read so far (progress) */

	uint8_t *xbuf;        /* an xattr value being checked */
	struct fsck_inode *inodes; /* sorted by ino */
	size_t ninodes, cap;
};

/* fsck.c */
void osdfs__fsck_finding(struct fsck *f, enum osdfs_fsck_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct fsck_inode *osdfs__fsck_find(struct fsck *f, uint64_t ino);
/* The progress callback (version 2 options; not in the verification pass). */
void osdfs__fsck_progress(struct fsck *f, const char *phase, uint64_t done, uint64_t total);
/* "/a/b" path of a reached directory into buf, or "#ino" */
const char *osdfs__fsck_dir_path(struct fsck *f, const struct fsck_inode *ip, char *buf,
				 size_t size);

/* scan.c: superblock and inode objects */
int osdfs__fsck_read_super(struct fsck *f);
int osdfs__fsck_load_inodes(struct fsck *f);

/* dirscan.c: one directory's entries, validating its index and blocks */
int osdfs__fsck_scan_dir(struct fsck *f, struct fsck_inode *dp);

/* check.c: cross-checks; plans repairs */
void osdfs__fsck_check(struct fsck *f);

/* repair.c */
int osdfs__fsck_repair(struct fsck *f);

/* verify.c: read every regular file's data, report each unreadable range */
int osdfs__fsck_verify_data(struct fsck *f);

#endif
