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

/* One entry of a directory as fsck read it; its name is in the directory's
 * pool (fsck_ent_name()): a directory of 10M entries then takes 32 bytes an
 * entry and its names' lengths, not 272 bytes an entry. */
struct fsck_entry {
	uint64_t ino;
	struct fsck_inode *to; /* the inode it names, or NULL (osdfs__fsck_resolve()) */
	uint64_t name_off; /* in the directory's names, NUL-terminated */
	uint8_t ft;
	uint8_t drop;      /* repair removes this entry */
	uint8_t namelen;
};

/* What fsck checks of an inode attribute (repairs read the inode again):
 * 32 bytes of the 288 of a whole one, held for every inode. */
struct fsck_dinode {
	uint64_t size, generation, parent;
	uint32_t mode, nlink;
};

/* What fsck holds of a directory besides its inode (fsck_inode.dir): its
 * entries, and which entry of which directory the tree walk keeps for it. */
struct fsck_dir {
	struct fsck_entry *ents;
	size_t nents;
	char *names;          /* the entries' names, filled while it is scanned */
	size_t names_len, names_cap;
	uint64_t found_parent;/* the directory whose entry names it */
	const char *name;     /* that entry's name (borrowed) */
	int pscore;           /* how well that entry fits (see check.c, visit()) */
	uint32_t subdirs;     /* kept entries naming directories */
	uint64_t want_parent; /* planned repair of its parent pointer */
};

/* One inode object, held for every inode: 72 bytes, 720 MB for 10M (with
 * what only directories need in each it was 144 bytes: an fsck of 10M files
 * peaked at 2.1 GB instead of 1.4 GB, and 6 % of its time was the kernel
 * zeroing the pages). Flags are bits. What the walks over every entry read
 * or write of the inode an entry names lies in the first 64 bytes: with 10M
 * inodes, each is a cache miss. */
struct fsck_inode {
	uint64_t ino;
	unsigned bad : 1;         /* attribute unreadable */
	unsigned bad_link : 1;    /* a symlink whose target is missing or cut */
	unsigned bad_xattr : 1;   /* extended attributes that cannot be decoded */
	unsigned reached : 1;
	unsigned scanned : 1;     /* directories: scanned once, names do not move after */
	unsigned dir_bad : 1;     /* corrupt index or blocks: rebuild */
	unsigned dir_rebuild : 1; /* rebuild (corrupt, wrong count or size) */
	unsigned dir_edit : 1;    /* some entries dropped */
	unsigned sums_void : 1;   /* void the stamp of a name summary snapshot that fails */
	unsigned remove : 1;      /* remove the object (empty orphan, bad inode) */
	unsigned to_lost_found : 1; /* orphan linked into /lost+found */
	unsigned fix_inode : 1;   /* rewrite nlink / parent */
	unsigned fix_objlen : 1;  /* truncate the object to the inode size */
	unsigned fix_size : 1;    /* set the inode size to the object length */
	uint32_t links;       /* entries naming it (kept ones) */
	struct fsck_dinode d;
	uint64_t objlen;
	struct fsck_dir *dir; /* a directory's (a readable inode of that mode); else NULL */
	uint32_t want_nlink;  /* planned repair */
	uint16_t inline_len;  /* symlinks: target bytes held in the inode */
};
_Static_assert(sizeof(struct fsck_inode) <= 72, "fsck holds one per inode");

/* Entries are in hash order, so the inodes they name lie at random in the
 * array (1.5 GB at 10M inodes): a walk over a directory's entries asks for
 * the inode of the entry this many places ahead, so that its cache misses
 * overlap instead of following one another. */
#define FSCK_AHEAD 16

/* The entries of @p ip: 0 unless it is a directory. */
static inline size_t fsck_nents(const struct fsck_inode *ip)
{
	return ip->dir ? ip->dir->nents : 0;
}

/* The inode entry @p i of directory @p dp names (NULL if none), once resolved. */
static inline struct fsck_inode *fsck_ent_inode(const struct fsck_dir *dp, size_t i)
{
	if (i + FSCK_AHEAD < dp->nents && dp->ents[i + FSCK_AHEAD].to) {
		const char *t = (const char *)dp->ents[i + FSCK_AHEAD].to;

		__builtin_prefetch(t, 1);
		__builtin_prefetch(t + 63, 1);
	}
	return dp->ents[i].to;
}

static inline const char *fsck_ent_name(const struct fsck_dir *dp, const struct fsck_entry *e)
{
	return dp->names + e->name_off;
}

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
	/* inode number - slot_base -> index in inodes (FSCK_NO_SLOT: none),
	 * where the numbers in use are dense enough (osdfs__fsck_index());
	 * NULL: osdfs__fsck_find() searches the inodes */
	uint32_t *slot;
	uint64_t slot_base;
	size_t slot_len;
};

#define FSCK_NO_SLOT UINT32_MAX

/* fsck.c */
void osdfs__fsck_finding(struct fsck *f, enum osdfs_fsck_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct fsck_inode *osdfs__fsck_find(struct fsck *f, uint64_t ino);
/* Maps inode numbers to the inodes loaded, for osdfs__fsck_find(). */
void osdfs__fsck_index(struct fsck *f);
/* Sets each entry's inode (fsck_entry.to) once @p dp is scanned. */
void osdfs__fsck_resolve(struct fsck *f, struct fsck_dir *dp);
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
