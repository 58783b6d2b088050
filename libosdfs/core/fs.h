/*
 * Internal state of a mounted osdfs and the functions the core's files
 * share. Locking: fs->lock is taken shared by queries (lookup, getattr,
 * readdir, read, ...) and exclusive by namespace and attribute changes (data
 * writes and fsync take it shared, see below); fs->cache_lock guards
 * the inode table, the directory block cache and the inode allocator, which
 * queries under the shared lock also touch; inode->mu guards a directory's
 * lazily loaded hash table, and serialises data writes and fsync of one
 * inode, which run under fs->lock held shared.
 */
#ifndef OSDFS_CORE_FS_H
#define OSDFS_CORE_FS_H

#include <pthread.h>
#include <osdfs/osdfs.h>

#include "core/format.h"
#include "lru/lru.h"

/*
 * Locking of an in-memory inode. fs->lock (rwlock) is held shared by file
 * I/O and lookups, exclusive by namespace and attribute changes. Under it:
 * - d, dirty: with fs->lock exclusive, the holder alone; with fs->lock
 *   shared, only under mu (a write grows the size and clears set-id bits
 *   while reads of the same file run).
 * - refs and the hash and LRU links: fs->cache_lock (inode.c).
 * - dir_loaded, dh, table: filled once under mu with fs->lock shared
 *   (dir_load()); changed or dropped only with fs->lock exclusive.
 */
struct osdfs__inode {
	uint64_t ino;
	struct osdfs__dinode d;
	unsigned int refs;      /* handles and calls using it */
	unsigned int opens;     /* open files */
	int dirty;              /* d differs from the backend */
	int deleted;            /* object removed; drop when refs reaches 0 */
	struct osd__lru_node node; /* in fs->inodes; listed while refs is 0 */
	pthread_mutex_t mu;
	/* st_blocks: allocated bytes read from the backend (used), valid while
	 * used_for == used_seq + 1; every data change bumps used_seq */
	uint64_t used;
	unsigned int used_for;  /* mu */
	unsigned int used_seq;  /* atomic */
	/* directories: hash index, loaded on first use */
	int dir_loaded;
	int sums_valid;         /* dh's stamp vouches for a snapshot we checked */
	struct osdfs__dirhdr dh;
	uint32_t *table;        /* 1 << dh.depth block numbers */
};

/* A cached directory block (bcache.c). */
struct osdfs__block {
	uint64_t ino;
	uint32_t blk;
	struct osd__lru_node node; /* in fs->blocks */
	uint8_t data[];
};

struct osdfs_file {
	struct osdfs__inode *ip;
	int flags;
};

/* The mount record this mount wrote and the thread renewing its lease (lease.c). */
struct osdfs__lease {
	struct osdfs__mount_rec rec;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int running, stop;
};

struct osdfs {
	osdfs_backend *be;
	const struct osdfs_backend_ops *ops;
	void *impl;
	unsigned int flags;
	int no_used;            /* atomic: the backend reports no allocated bytes */
	int readonly;
	int taken_over;
	struct osdfs__super sb;
	uint32_t bsize;
	uint64_t mount_id;
	struct osdfs__lease lease;

	pthread_rwlock_t lock;
	pthread_mutex_t cache_lock;
	pthread_mutex_t err_lock;
	char err[256];
	/* the generic message of end(), formatted when read: a lookup of an
	 * absent name is routine, and formatting it cost more than the lookup */
	const char *err_op;           /* NULL: err holds the message */
	int err_rc;

	/* inode allocator: numbers [next_ino, ino_limit) are reserved on disk */
	uint64_t next_ino, ino_limit, next_gen, gen_limit;

	struct osd__lru inodes;       /* every cached inode; unreferenced ones listed */
	size_t icache_max;

	/* inodes unlinked while open (orphan.c); changed under fs->lock exclusive */
	uint64_t *orphans;
	size_t norphans;

	struct osd__lru blocks;       /* cached directory blocks */
	size_t bcache_max;
	struct osd__lru sums;         /* chunks of name summaries of directory blocks (sums.c) */
	size_t sums_max, sums_used;   /* summaries kept at most, room taken by the chunks */
	size_t sum_len;               /* bytes of one summary */
	uint32_t sum_chunk;           /* blocks a chunk spans (a power of two) */
	pthread_mutex_t run_lock;     /* held while run_buf is in use */
	uint8_t *run_buf;             /* buffer of read-ahead runs, kept: a new one
					 each time costs its page faults */
	size_t run_cap;
};

/* error.c-style helpers (mount.c) */
int osdfs__fail(osdfs *fs, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void osdfs__now(struct osdfs__ts *ts);
/* Public entry points call begin() first and return through end(), which
 * records a generic message if nothing more specific was recorded (@p op
 * is a string literal: the message is made from it when read). */
void osdfs__begin(void);
int osdfs__end(osdfs *fs, int rc, const char *op);

/* lease.c: the mount record and its lease */
void osdfs__holder_judge(const struct osdfs__mount_rec *m, int readable, struct osdfs_holder *h);
int osdfs__holder_read(const struct osdfs_backend_ops *ops, void *impl, struct osdfs_holder *h);
/* Writes a new record naming this mount (and registers it in this process). */
int osdfs__lease_write(osdfs *fs, const char *host, uint32_t lease_sec);
/* Is the record still the one this mount wrote? (1 when it cannot tell) */
int osdfs__lease_owner(osdfs *fs);
int osdfs__lease_start(osdfs *fs);
/* Stops the renewals and forgets the mount in this process's registry. */
void osdfs__lease_stop(osdfs *fs);
/* Set while a forced mount runs its repair (fsck may then break a live record). */
int osdfs__in_takeover(void);

/* inode.c */
int osdfs__icache_init(osdfs *fs, size_t max);
void osdfs__icache_destroy(osdfs *fs);
int osdfs__iget(osdfs *fs, uint64_t ino, struct osdfs__inode **out);
void osdfs__iref(osdfs *fs, struct osdfs__inode *ip);
void osdfs__iput(osdfs *fs, struct osdfs__inode *ip);
void osdfs__inode_attr(const struct osdfs__inode *ip, struct osdfs_attr *a,
		       uint8_t buf[OSDFS__INODE_MAX_LEN]);
int osdfs__iwrite(osdfs *fs, struct osdfs__inode *ip);
int osdfs__ialloc(osdfs *fs, uint32_t mode, const struct osdfs_cred *cred,
		  const struct osdfs__inode *parent, struct osdfs__inode **out);
void osdfs__iabandon(osdfs *fs, struct osdfs__inode *ip);
int osdfs__ifree(osdfs *fs, struct osdfs__inode *ip);
int osdfs__idrop_link(osdfs *fs, struct osdfs__inode *ip);
void osdfs__stat_fill(const osdfs *fs, const struct osdfs__inode *ip, struct osdfs_stat *st);
/* The object's data changed: its allocated bytes must be read again. */
void osdfs__used_stale(struct osdfs__inode *ip);
/* Read the allocated bytes for st_blocks if they are stale (ip->mu held). */
void osdfs__used_refresh(osdfs *fs, struct osdfs__inode *ip);
/* The same under ip->mu, for callers holding fs->lock shared (data writes
 * change size and times under the shared lock plus ip->mu). */
void osdfs__stat_fill_locked(const osdfs *fs, struct osdfs__inode *ip, struct osdfs_stat *st);
int osdfs__sync_inodes(osdfs *fs);
/* punch.c: punch a hole in object @p oid the way the superblock says
 * (PUNCH, or zero-filling WRITEs); and the mkfs probe on a scratch object:
 * 1 if PUNCH deallocates as standard, 0 if it is missing or not standard. */
int osdfs__punch(osdfs *fs, uint64_t oid, uint64_t off, uint64_t len);
int osdfs__punch_probe(osdfs *fs, uint64_t scratch_oid);

int osdfs__counters_write(osdfs *fs, uint64_t next_ino, uint64_t next_gen);

/* orphan.c */
void osdfs__orphan_add(osdfs *fs, uint64_t ino);
void osdfs__orphan_remove(osdfs *fs, uint64_t ino);
int osdfs__orphan_recover(osdfs *fs);

/* The hash of block @p blk of directory @p ino: keys the block cache, and
 * the summary chunks by their first block. */
static inline uint64_t osdfs__block_hash(uint64_t ino, uint32_t blk)
{
	return ino * 0x9E3779B97F4A7C15ULL ^ (uint64_t)blk * 0xC2B2AE3D27D4EB4FULL;
}

/* bcache.c: copies of validated directory blocks */
int osdfs__bcache_init(osdfs *fs, size_t max);
void osdfs__bcache_destroy(osdfs *fs);
int osdfs__bcache_get(osdfs *fs, uint64_t ino, uint32_t blk, uint8_t *buf);
/* Reads block @p blk of directory @p ino from the backend: 0, or an error
 * (recorded: a read error, or the block missing). */
int osdfs__bcache_fetch(osdfs *fs, uint64_t ino, uint32_t blk, uint8_t *buf);
void osdfs__bcache_store(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf);
/* Caches a validated block read from the backend (store summarizes again). */
void osdfs__bcache_fill(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf);
void osdfs__bcache_forget(osdfs *fs, uint64_t ino, uint32_t blk);
/* A buffer of @p size bytes for a read-ahead run: the kept one (*kept 1),
 * or a new one while another thread uses it; NULL without memory. Give it
 * back with osdfs__bcache_run_done() and the same @p kept. */
uint8_t *osdfs__bcache_run_buf(osdfs *fs, size_t size, int *kept);
void osdfs__bcache_run_done(osdfs *fs, uint8_t *buf, int kept);

/* sums.c: name summaries of directory blocks (cache_lock taken inside) */
/* Room for the summaries of osdfs__bcache_init()'s @p blocks times
 * OSDFS__DIRSUMS_FACTOR blocks. */
int osdfs__sums_init(osdfs *fs, size_t blocks);
void osdfs__sums_destroy(osdfs *fs);
/* 1 if the summaries of a directory of @p nblocks blocks all fit. */
int osdfs__sums_fit(const osdfs *fs, uint32_t nblocks);
/* Summarizes validated block @p blk: always when it @p changed, else only
 * if it has no summary. */
void osdfs__sums_add(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf, int changed);
void osdfs__sums_forget(osdfs *fs, uint64_t ino, uint32_t blk);
/* 1 if block @p blk has a summary. */
int osdfs__sums_has(osdfs *fs, uint64_t ino, uint32_t blk);
/* 1 if the summary of block @p blk shows it holds no record named @p name
 * (then the block need not be read); 0 if it may, or there is no summary. */
int osdfs__sums_absent(osdfs *fs, uint64_t ino, uint32_t blk, const char *name, size_t len);
/* The summaries of directory @p ino's blocks into @p out (sum_len bytes
 * each; NULL: none copied); returns how many blocks have none. */
uint32_t osdfs__sums_export(osdfs *fs, uint64_t ino, uint32_t nblocks, uint8_t *out);
/* Summaries from a snapshot (vouched for by its stamp) for every block. */
void osdfs__sums_import(osdfs *fs, uint64_t ino, uint32_t nblocks, const uint8_t *in);
/* The directories with @p min or more summaries, ascending, into *out (to
 * free); their count (0, *out untouched, without memory). */
size_t osdfs__sums_dirs(osdfs *fs, uint32_t min, uint64_t **out);

/* dirsums.c: snapshots of a directory's name summaries */
/* The snapshot after the blocks of directory @p ino (header @p dh) into
 * *out (to free), if it vouches for them: 0; -EUCLEAN if it does not (cut,
 * other stamp or block count, bad CRC); a backend error, or -ENOMEM. */
int osdfs__dirsums_read(const struct osdfs_backend_ops *ops, void *impl, uint64_t ino,
			const struct osdfs__dirhdr *dh, uint32_t bsize, uint8_t **out);
/* Loads dp's snapshot if its header vouches for it (dir_load, mu held). */
void osdfs__dirsums_load(osdfs *fs, struct osdfs__inode *dp);
/* Voids dp's stamp on the backend, flushed, before dp changes. */
int osdfs__dirsums_void(osdfs *fs, struct osdfs__inode *dp);
/* Stores a snapshot for each cached directory that has none (unmount). */
int osdfs__dirsums_save_all(osdfs *fs);

/* dir.c */
int osdfs__dir_create(osdfs *fs, struct osdfs__inode *dp);
/* How a lookup reads a block never summarized: with its run (a lookup as
 * such: the run's summaries answer later ones), or alone (a check before a
 * change, which reads that block next anyway). */
enum osdfs__dir_read { OSDFS__DIR_ALONE = 0, OSDFS__DIR_AHEAD = 1 };
int osdfs__dir_lookup(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len,
		      uint64_t *ino, uint8_t *ft, enum osdfs__dir_read how);
int osdfs__dir_add(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len,
		   uint64_t ino, uint8_t ft);
int osdfs__dir_remove(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len);
int osdfs__dir_set(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len,
		   uint64_t ino, uint8_t ft);
int osdfs__dir_is_empty(osdfs *fs, struct osdfs__inode *dp);
int osdfs__dir_readdir(osdfs *fs, struct osdfs__inode *dp, uint64_t cookie,
		       osdfs_readdir_cb cb, void *payload);
void osdfs__dir_unload(osdfs *fs, struct osdfs__inode *dp);
/* Loads dp's index (and its snapshot) once. */
int osdfs__dir_load(osdfs *fs, struct osdfs__inode *dp);
/* Loads dp's index and summarizes every block without a summary. */
int osdfs__dir_summarize(osdfs *fs, struct osdfs__inode *dp);

/* namei.c */
int osdfs__check_name(osdfs *fs, const char *name, size_t *len);
int osdfs__lookup_ino(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len,
		      uint64_t *ino, uint8_t *ft, enum osdfs__dir_read how);

/* file.c: opens an inode the caller holds a reference to (exclusive lock held) */
int osdfs__open_inode(osdfs *fs, struct osdfs__inode *ip, int flags, osdfs_file **fh);

/* xattr.c: 0 if @p buf holds a well-formed xattr value (section 5), else -EUCLEAN */
int osdfs__xattr_check(const uint8_t *buf, size_t len);

/* path.c: a symlink's target, NUL terminated, into buf of OSDFS_SYMLINK_MAX + 1 bytes */
int osdfs__read_link(osdfs *fs, struct osdfs__inode *ip, char *buf);

#define OSDFS__IS_DIR(ip) (((ip)->d.mode & 0170000) == 0040000)

#endif
