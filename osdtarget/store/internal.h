/*
 * Shared internals of the store: the in-memory namespace and the functions
 * the store's source files call in each other. Not for the exec engine,
 * which uses store.h only.
 *
 * Locking order: st->ns (rwlock) -> obj->mu -> st->log.mu / st->lru_mu /
 * st->dirty_mu / st->unlink_mu. Metadata mutations hold st->ns (read for
 * attributes and quotas, write for create/remove) while they append their
 * log record, so a checkpoint taken under the write lock sees a state that
 * matches a log position exactly. Data I/O holds only an object reference.
 */
#ifndef OSDTARGET_STORE_INTERNAL_H
#define OSDTARGET_STORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "lru/lru.h"
#include "store/log.h"
#include "store/store.h"

/* Copies from the page cache of one object that read trust tracks at once. */
#define OSD__TRUST_COPIES 4

/* Data files live in data/<gen & 0xFF as 2 hex>/<gen as 16 hex>. */
#define OSD__FANOUT 256
/* The notes of objects that leave memory (Dirty objects leave memory) may
 * grow the hash of notes to this many slots (40 MB) and the notes to this
 * many (24 MB), no further: past them such objects stay and a checkpoint
 * comes. At 10M objects that keeps the store within 256 MB beside the
 * index (160 MB) and the cache. A replay notes what its log holds
 * regardless. */
#define OSD__EVICT_MAX_SLOTS (1u << 21)
#define OSD__EVICT_MAX_NOTES (1u << 21)

/* Values up to this size live in the entry itself: the timestamps every
 * object has (6 bytes each) then cost no allocation of their own. */
#define OSD__ATTR_INLINE 8u

struct osd__attr {
	uint32_t page, num;
	uint16_t len;              /* at most OSD_STORE_ATTR_MAX */
	uint8_t lazy;              /* set with OSD_STORE_LAZY, not yet logged */
	union {
		uint8_t in[OSD__ATTR_INLINE]; /* len <= OSD__ATTR_INLINE */
		uint8_t *ptr;      /* longer values (malloc) */
	} v;
};

/* The bytes of an attribute's value. */
static inline const uint8_t *osd__attr_val(const struct osd__attr *a)
{
	return a->len <= OSD__ATTR_INLINE ? a->v.in : a->v.ptr;
}

struct osd__part;
struct osd__pack_free;

/*
 * What an object needs only once its data is accessed: the cached
 * descriptors, dirty state, checksum sidecar state and read trust. Made at
 * the object's first data access (osd__obj_io) and freed with the object,
 * never before: whoever reaches it through the object, a list or the
 * descriptor LRU holds a reference to the object, so it stays valid without
 * further rules. An object that was only created or listed costs none.
 */
struct osd__obj_io {
	struct osd__obj *obj;      /* the owner (the descriptor LRU finds objects by it) */
	int fd;                    /* cached data fd or -1 (obj->mu) */
	int fd_users;              /* I/O in progress on fd (obj->mu) */
	struct osd__lru_node fd_node; /* in st->fds while fd is open (st->lru_mu) */
	atomic_int dirty;          /* unflushed data: on st->dirty list */
	atomic_int dir_dirty;      /* data file created, directory not yet fsynced */
	struct osd__obj *dirty_next; /* st->dirty list (st->dirty_mu) */
	int on_dirty_list;         /* st->dirty_mu */

	/* Data checksums (sums.c). wmu orders data changes of this object:
	 * a partial block's checksum needs the block's other bytes. */
	pthread_mutex_t wmu;
	int sfd;                   /* checksum sidecar fd, open while fd is (obj->mu) */
	int sum_fresh;             /* the sidecar's header on disk is still the one made
				      with it (dirty over everything, unsynced): a first
				      mark needs no write or fdatasync (set with has_sums) */
	uint64_t dlo, dhi;         /* dirty block range the sidecar header records (wmu) */
	uint64_t sum_alloc;        /* sidecar bytes [0, sum_alloc) reserved, no hole: entries
				      written there need no fallocate (wmu) */
	_Atomic uint64_t wseq;     /* data changes so far (a flush marks clean only if none raced) */
	uint64_t armed_seq, armed_gen; /* wseq and st->flush_gen at the flush that left the
				      range open (wmu) */
	atomic_int changing;       /* data changes past data_mark() and not yet accounted: a
				      checkpoint names such an object in its new log */
	struct osd__obj *open_next; /* st->open list (st->open_mu) */
	int on_open;               /* st->open_mu */

	/* Read trust (trust.c): blocks verified since their page came into
	 * the page cache. Lives with the cached descriptor (obj->mu). */
	uint64_t *tbits;           /* trusted blocks */
	uint64_t tcap;             /* blocks tbits covers */
	_Atomic uint64_t tepoch;   /* bumped before the store may make the kernel read a
				      page of the data file from disk, and on any loss */
	struct timespec tctime;    /* data file ctime after the store's last own change */
	int tvalid;                /* tctime is known */
	int tchanging;             /* an own change is in flight (under wmu) */
	unsigned copies;           /* slots of copies from the page cache in flight: */
	uint64_t copy_lo[OSD__TRUST_COPIES], copy_hi[OSD__TRUST_COPIES]; /* blocks they may
				      make the kernel read from disk before they bump the epoch */
};

/*
 * One object of the namespace. Kept small (every object of the store is in
 * memory): state of data access lives in io, made on demand.
 */
struct osd__obj {
	uint64_t pid, oid;
	uint64_t gen;              /* data file generation (user objects) */
	struct osd__obj *hnext;    /* hash chain */
	struct osd__part *part;    /* owning partition (NULL for root and partitions) */
	struct osd__obj_io *_Atomic io; /* NULL until the first data access (obj->mu) */
	atomic_int refs;           /* 1 for the namespace + 1 per holder */
	uint8_t type;              /* enum osd_obj_type */

	/* obj->mu for everything below; each flag its own byte, so that
	 * flags changed under different locks never share a memory location */
	uint8_t has_file;
	uint8_t removed;
	uint8_t has_sums;          /* a checksum sidecar exists */
	uint8_t sums_bad;          /* sidecar missing or damaged: data I/O fails with EIO */
	uint8_t has_lazy;          /* some attrs[].lazy is set */
	uint8_t packed;            /* the data is in pack slot `slot` (0: zeros), not a file */
	uint8_t pack_pending;      /* packed/slot/length changed since the last PACK record */
	uint8_t ckpt_clean;        /* its records in the checkpoint (st->ckfd) are its state:
				      it may be dropped from memory (osd__ns_trim) */
	uint8_t ckpt_written;      /* a checkpoint being written holds its pack state as it
				      is (cleared by a change of it: osd__ns_all_clean) */
	uint8_t ckpt_seen;         /* the checkpoint being written took it from memory; one
				      loaded meanwhile has the records it was loaded from */
	uint8_t unnoted;           /* changed since the checkpoint in a way that its notes do
				      not hold: it stays in memory until the next checkpoint */
	uint32_t nnotes, cnotes;   /* its notes: count, room */
	uint64_t *notes;           /* log offsets of the records that changed it since the
				      checkpoint, in log order (attribute sets: Dirty objects
				      leave memory); it may leave memory with them noted */
	uint64_t note_end;         /* log position just past the last of them */
	uint32_t ids_c, ids_k;     /* where its index entry was when it loaded (a hint) */
	uint8_t meta_bad;          /* OSD__META_BAD_*: its records are damaged: all but its
				      type and REMOVE fail with -EIO (table.c) */
	uint8_t attach;            /* loaded from a FILE record: its files are read before
				      anyone uses it (osd__ns_find, osd__data_attach) */
	uint32_t nattrs;           /* the array has room for more (attr_room, attr.c) */
	struct osd__attr *attrs;   /* sorted by (page, num) */
	uint64_t length;           /* logical length = data file size */
	uint64_t used;             /* allocated data bytes */
	uint64_t quota;
	uint32_t slot;             /* pack slot of a packed object; 0 = none (pack.c) */
	uint32_t slot_logged;      /* the slot the last record or checkpoint names */
	uint32_t pcrc;             /* CRC32C of the whole slot */
	_Atomic uint32_t data_epoch; /* st->data_epoch of its last DATA record (data_mark) */
	pthread_mutex_t mu;
};

#define OSD__META_BAD_CKPT 1      /* ...in the checkpoint */
#define OSD__META_BAD_LOG 2       /* ...a log record a replay left for it (pending.c) */

/* An object's entry in its partition's sorted array: all of it that stays in
 * memory while the object is not used (table.c). */
struct osd__id {
	uint64_t id;
	uint64_t off : 48;         /* its records in the checkpoint; 0: new since (in memory) */
	uint64_t flags : 8;        /* OSD__ID_* as the checkpoint wrote them */
	uint64_t type : 8;         /* enum osd_obj_type */
};
/* The object holds data in a file or a sidecar (checkpoint version 2: or a
 * pack slot): the open rebuilds its state from them, so it loads it. In
 * version 4 its records end with a FILE record, read when it loads. */
#define OSD__ID_DATA 0x1u
/* The object is packed (checkpoint version 3): its records and the
 * checkpoint's slot map are its state; it stays on disk at the open. */
#define OSD__ID_PACKED 0x2u
/* In memory only (never written): a replay noted log records for the object
 * (pending.c), so only such entries look their notes up. */
#define OSD__ID_NOTED 0x80u

/* A partition's member ids, sorted (ids.c): chunks of up to OSD__IDS_CHUNK
 * entries in id order, none empty. */
#define OSD__IDS_CHUNK 512u        /* 8 KiB: what an insert or a removal moves */
struct osd__ids {
	struct osd__id **c;        /* chunk i holds c[i][0 .. cn[i]) */
	uint32_t *cn;
	uint64_t *first;           /* c[i][0].id: the search's first level */
	uint64_t *last;            /* c[i][cn[i] - 1].id: a dense chunk lists from these */
	size_t *fen;               /* Fenwick tree of the cn (1-based, nc + 1): ranks */
	size_t nc, cap;            /* chunks, room in the five arrays */
	size_t n;                  /* entries */
};

/* An entry's place: chunk c, entry k; {nc, 0} is the end. */
struct osd__ids_pos {
	size_t c, k;
};

void osd__ids_free(struct osd__ids *x);
/* Add an entry above every other (an index read in order). */
int osd__ids_append(struct osd__ids *x, const struct osd__id *e);
/* The place of the first entry with an id >= @p id. */
struct osd__ids_pos osd__ids_lower(const struct osd__ids *x, uint64_t id);
/* The entry of @p id (its place in *@p pos if not NULL), or NULL. */
struct osd__id *osd__ids_find(const struct osd__ids *x, uint64_t id, struct osd__ids_pos *pos);
/* Entries before @p p. */
size_t osd__ids_rank(const struct osd__ids *x, struct osd__ids_pos p);
/* The entry with the highest id, or NULL. */
const struct osd__id *osd__ids_last(const struct osd__ids *x);
/* Insert @p e at @p p (osd__ids_lower() of its id); -ENOMEM leaves @p x as it was. */
int osd__ids_insert(struct osd__ids *x, struct osd__ids_pos p, const struct osd__id *e);
/* Remove the entry at @p p. */
void osd__ids_remove(struct osd__ids *x, struct osd__ids_pos p);

static inline struct osd__id *osd__ids_at(const struct osd__ids *x, struct osd__ids_pos p)
{
	return p.c < x->nc ? &x->c[p.c][p.k] : NULL;
}

static inline void osd__ids_step(const struct osd__ids *x, struct osd__ids_pos *p)
{
	if (++p->k == x->cn[p->c]) {
		p->c++;
		p->k = 0;
	}
}

struct osd__part {
	uint64_t pid;
	struct osd__obj *obj;      /* the partition object (P,0) */
	struct osd__ids ids;       /* member objects, sorted by id */
	size_t ncoll;              /* collections among ids: LIST counts need no scan without */
	_Atomic uint64_t used;
};

struct osd__unlink {
	uint64_t gen;
	uint64_t pos;              /* log position of the REMOVE record */
	int recycle;               /* no descriptor was in use: may go to the pool */
	struct osd__unlink *next;
};

struct osd_store {
	int dirfd;
	int lockfd;
	int datafd;
	int sync_writes;
	char *path;

	/* Changes of the metadata hold it for reading, before st->ns; a checkpoint
	   made while the store serves holds it for writing, so reads go on while
	   it is written and changes wait (store.c, osd__change_lock) */
	pthread_rwlock_t gate;
	atomic_int ckpt_online;    /* such a checkpoint is being written (osd__ns_find) */
	/* tests only: called by such a checkpoint once it took the objects in
	   memory, before it writes any (table.c) */
	void (*ckpt_hook)(void *arg);
	void *ckpt_hook_arg;
	pthread_rwlock_t ns;
	pthread_mutex_t hash_mu;   /* the hash, while objects load under st->ns held for reading */
	int scan_data;             /* osd_store_options.scan_data: this open reads every file */
	int ckfd;                  /* the checkpoint objects load from (table.c); -1: none */
	uint64_t ckpt_objs_end;    /* where the objects' records end in it (UINT64_MAX: at END) */
	int gone_fd[2];            /* the checkpoint.prev and log.prev a checkpoint replaced, held
				      so their blocks are freed once it let its locks go (store.c) */
	/* log records a replay left for their objects (pending.c) */
	pthread_mutex_t pend_mu;
	struct osd__pend_obj *pend;
	size_t pend_cap, pend_used;
	struct osd__pend_off *pend_offs;
	size_t pend_noffs, pend_offs_cap;
	uint32_t pend_free;        /* 1-based first note of a taken object, free for reuse */
	size_t pend_nfree;
	int pend_fd;               /* the log they are in, read-only; -1: none */
	int pend_stale;            /* they are in a log a checkpoint replaced (one that could
				      not be read back): no object leaves memory noted */
	atomic_int pend_full;      /* an object could not leave memory noted: the notes are at
				      their bound; the next commit compacts */
	size_t pend_max_slots;     /* ...which is the hash at this many slots, or this many */
	size_t pend_max_notes;     /* notes (OSD__EVICT_MAX_*; tests lower them) */
	size_t cache_max;          /* objects kept in memory beyond those that must be */
	atomic_size_t loads;       /* objects loaded since the last trim */
	atomic_size_t trim_step;   /* ...from which the next call trims (osd__ns_trim) */
	struct osd__obj **hash;
	size_t hash_size, nobjs;
	struct osd__obj *root;
	struct osd__part **parts;  /* sorted by pid */
	size_t nparts, parts_cap;
	uint64_t next_gen;
	_Atomic uint64_t capacity_set; /* persisted (set_capacity/format); 0 = none */
	uint64_t capacity_opt;     /* from the open options; 0 = none */
	uint64_t fs_size;
	_Atomic uint64_t used;
	uint64_t epoch;
	_Atomic uint64_t ckpt_size; /* bytes of the last checkpoint */
	int log_attrs;             /* the log is version 2: ATTRS records may go in it
				      (changes under st->ns held for writing) */
	atomic_int log_files;      /* the log is version 3: DATA and GENS records may go in it */
	int files_counted;         /* a checkpoint of version 4 was loaded by its index: file
				      objects stay on disk, the totals count their bytes,
				      and one loads by reading its files (osd__data_attach) */
	_Atomic uint32_t data_epoch; /* bumped by each checkpoint before it writes objects:
				      a data change logs DATA once per value (data_mark) */
	atomic_size_t data_named;  /* DATA records in the log (a compaction bounds them) */
	uint64_t gens_logged;      /* no data file of this or a higher generation may be
				      made before a GENS record above it (st->ns) */
	_Atomic uint64_t gens_pos; /* log position past the last GENS record: synced before
				      a data file is made */
	uint64_t gens_reserved;    /* open: the highest GENS record replayed */
	struct osd__sum_scan *attach_sc; /* open: the attaches of the replay, settled at once */
	struct osd__stale *stale;  /* open: packed objects a DATA record named (their
				      file may be a move out of the pack a crash undid) */
	size_t nstale, stale_cap;
	struct osd__obj **carry;   /* checkpoint: objects with a change in flight */
	size_t ncarry, carry_cap;

	struct osd__log log;

	pthread_mutex_t lru_mu;
	struct osd__lru fds;       /* objects with a cached fd, keyed by address */
	int max_fds;

	pthread_mutex_t dirty_mu;
	struct osd__obj *dirty;
	_Atomic uint64_t dirs_dirty[OSD__FANOUT / 64];

	pthread_mutex_t unlink_mu;
	struct osd__unlink *unlinks, **unlinks_tail;

	pthread_mutex_t pool_mu;   /* recycled data files (pool.c) */
	uint64_t *pool;            /* their numbers: data/pool/<n, %016x> */
	size_t npool, pool_cap;
	uint64_t pool_next;

	atomic_int compacting;
	_Atomic uint64_t compact_after; /* log size before which no compaction is tried again */
	pthread_mutex_t msg_mu;
	char msg[1024];
	int opening;               /* notes of the open are joined in msg */
	int salvage;               /* osd_store_options.salvage */
	void (*log_cb)(void *arg, int level, const char *msg);
	void *log_arg;
	atomic_int full;           /* a write found the filesystem full (reported once) */
	uint64_t *gone;            /* open only: generations of replayed REMOVEs */
	int sums;                  /* data blocks carry checksums (superblock version 2) */
	pthread_mutex_t open_mu;   /* objects a flush left with an open dirty range */
	struct osd__obj *open;
	_Atomic uint64_t flush_gen; /* FLUSH OSDs so far */
	int upgrading;             /* open only: a version 1 store gets its checksums */
	int verify_reads;          /* osd_store_options.verify_reads: no read trust */
	atomic_int trust_off;      /* RWF_NOWAIT refused: no read trust */
	_Atomic uint64_t blocks_verified, blocks_trusted; /* READ blocks (tests, bench) */
	size_t ngone, gone_cap;

	/* Packed small objects (pack.c) */
	int pack_on;               /* new small objects are packed (format 3) */
	int packfd;                /* data/pack */
	atomic_int pack_dirty;     /* written since its last fdatasync */
	atomic_uint pack_written;  /* slots written (writeback starts every 256) */
	pthread_mutex_t pack_mu;   /* the slot map and the frees */
	pthread_mutex_t pack_sync_mu; /* one osd__pack_sync at a time */
	uint64_t *pack_map;        /* slots in use */
	uint64_t *pack_loose_map;  /* slots freed since the last punch_loose() */
	size_t pack_words;         /* of each map */
	uint32_t pack_hint;        /* no free slot below it */
	uint32_t pack_loose;       /* bits set in pack_loose_map */
	uint64_t pack_open_slots;  /* slots data/pack had at the open (replay bound) */
	int pack_clash;            /* open: two records named one slot (osd__pack_settle) */
	int pack_counted;          /* the slot map and the used totals count every slot the
				      checkpoint's records name: an object loaded from them
				      counts nothing again (osd__pack_adopt) */
	unsigned ckpt_version;     /* of the checkpoints written: OSD__CKPT_VERSION (tests
				      write OSD__CKPT_VERSION_INDEX, a store of format 4) */
	struct osd__pack_free *pack_frees, **pack_frees_tail;
	size_t pack_nfrees;        /* in pack_frees */
	uint32_t *pack_ckpt;       /* slots a checkpoint being written frees */
	size_t pack_ckpt_n, pack_ckpt_cap;
};

/* A packed object whose data file a replayed DATA record named. */
struct osd__stale {
	uint64_t pid, oid, gen;
};

/* A sidecar recomputed whose header is written clean once its entries are
 * durable (osd__sum_settle). */
struct osd__sum_settle {
	uint64_t gen, length;
};

/* What the open's scan of checksum sidecars found (osd__sum_report). */
struct osd__sum_scan {
	uint64_t recomputed_objs, recomputed_blocks; /* dirty at a crash */
	uint64_t built_objs, built_bytes;            /* upgrade or salvage */
	uint64_t bad_objs;                           /* sidecar or data missing or damaged */
	char bad_names[200];
	struct osd__sum_settle *settle; /* recomputed, header still dirty */
	size_t nsettle, settle_cap;
};

/* store.c */
void osd__store_msg(struct osd_store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A message for osd_store_error() that is also told to the log callback
 * with @p level (OSD_STORE_LOG_*). During open, notes add up. */
void osd__store_note(struct osd_store *st, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* After a write to the filesystem: @p err 0 or its -errno. A full filesystem
 * is reported once, and once more when writes work again. */
void osd__store_space(struct osd_store *st, int err, const char *what);
int osd__read_file(int dirfd, const char *name, uint8_t **out, size_t *len);
/* Atomically install an empty log of the current version (see store.c);
 * @p keep receives its open descriptor. Sets st->log_attrs. */
int osd__install_log(struct osd_store *st, uint64_t epoch, int *keep);
uint64_t osd__store_capacity(struct osd_store *st);
int osd__store_commit(struct osd_store *st, uint64_t pos, unsigned flags);
void osd__store_maybe_compact(struct osd_store *st);
/* Write a checkpoint and start a new log now, while the store serves
 * (maybe_compact, close, tests). */
int osd__store_compact(struct osd_store *st);
/* Close the files a checkpoint replaced (st->gone_fd), freeing their blocks. */
void osd__store_free_gone(struct osd_store *st);
/* A change of the metadata: st->gate for reading, then st->ns for writing
 * (@p excl) or reading; osd__change_unlock() lets both go. */
void osd__change_lock(struct osd_store *st, int excl);
void osd__change_unlock(struct osd_store *st);

/* recover.c */
#define OSD__CKPT_MAGIC "OSDCKPT1"
#define OSD__LOG_MAGIC "OSDLOG01"
/* Load the checkpoint and replay the log (st->salvage: whatever is intact
 * of them and of checkpoint.prev and log.prev), leaving st->log ready. A
 * damaged store gives -EUCLEAN with a message naming file and offset. */
int osd__recover_load(struct osd_store *st);
/* Salvage: link the metadata files it read into quarantine/ and remove
 * checkpoint.prev and log.prev, before a clean checkpoint replaces them. */
void osd__recover_keep_damaged(struct osd_store *st);
/* Move file @p name of directory @p dfd into quarantine/ (a free name). */
int osd__quarantine(struct osd_store *st, int dfd, const char *name);
/* 1 if a replayed REMOVE let go of data file generation @p gen. */
int osd__recover_gone(struct osd_store *st, uint64_t gen);

/* namespace.c */
int osd__ns_init(struct osd_store *st);
void osd__ns_free(struct osd_store *st);
/* The object (loaded from the checkpoint if need be); st->ns held. */
struct osd__obj *osd__ns_find(struct osd_store *st, uint64_t pid, uint64_t oid);
/* The object if it is in memory (no load). */
struct osd__obj *osd__ns_lookup(struct osd_store *st, uint64_t pid, uint64_t oid);
struct osd__obj *osd__ns_obj_new(uint64_t pid, uint64_t oid, enum osd_obj_type type);
/* A change of @p o that neither the checkpoint nor its notes hold (obj->mu). */
static inline void osd__obj_changed(struct osd__obj *o)
{
	o->ckpt_clean = 0;
	o->unnoted = 1;
}
/* The record of a change of @p o just logged, at @p file_off of the log file
 * and ending at log position @p end, is noted in @p o (obj->mu): with all its
 * changes so noted, it may leave memory before the next checkpoint. -ENOMEM
 * leaves it marked unnoted. */
int osd__obj_note(struct osd__obj *o, uint64_t file_off, uint64_t end);
void osd__ns_obj_free(struct osd__obj *o);
/* Put a loaded object into the hash; @return the one there (@p o or an
 * object another thread loaded first, @p o then freed). */
struct osd__obj *osd__ns_adopt(struct osd_store *st, struct osd__obj *o);
/* Open: a partition from the checkpoint's index (takes @p po and the
 * entries of @p ids, which it leaves empty). */
int osd__ns_part_add(struct osd_store *st, struct osd__obj *po, struct osd__ids *ids,
		     size_t ncoll, struct osd__part **out);
/* Drop unused objects the checkpoint holds, when many were loaded (no ns lock held). */
void osd__ns_trim(struct osd_store *st);
/* Every object in memory matches the checkpoint (st->ns held for writing). */
void osd__ns_all_clean(struct osd_store *st);
/* An object in memory, by its ids (osd__ns_resident()). */
struct osd__resident {
	uint64_t pid, oid;
	struct osd__obj *o;
};
/* The objects in memory sorted by (pid, oid), *n of them, each with a
 * reference the caller puts: a malloc'd array, NULL without memory or when
 * they outnumber nobjs. st->ns held for writing, or taken here for reading by
 * a checkpoint made while the store serves (st->ckpt_online). */
struct osd__resident *osd__ns_resident(struct osd_store *st, size_t *n);
/* Size the hash for @p n objects now (the open, before a replay): growing
 * it one doubling at a time rehashed every object again and again. */
void osd__ns_reserve(struct osd_store *st, size_t n);
struct osd__obj *osd__ns_get(struct osd_store *st, uint64_t pid, uint64_t oid);
void osd__obj_put(struct osd_store *st, struct osd__obj *obj);
struct osd__part *osd__ns_part(struct osd_store *st, uint64_t pid);
int osd__ns_apply(struct osd_store *st, const struct osd__rec *rec);

/* A well-mixed hash of an object's ids (the object hash, pending.c's). */
uint64_t osd__ns_hash(uint64_t pid, uint64_t oid);
/* The attribute entries of an ATTRS record (payload @p b, @p n bytes) to
 * @p o: 0, or -EUCLEAN when they do not fill the record exactly. */
int osd__ns_attrs_apply(struct osd__obj *o, const uint8_t *b, uint32_t n);
/* The index entry of (pid, oid) if it is not in memory and has records in
 * the checkpoint, else NULL. */
struct osd__id *osd__ns_on_disk(struct osd_store *st, uint64_t pid, uint64_t oid);
/* 1 for a well-formed ATTR, ATTRS or QUOTA record (the kinds a replay defers). */
int osd__ns_deferrable(const struct osd__rec *rec);
/* Start the cache misses of a lookup of (pid, oid): its hash slot and the
 * index entry a dense run puts it at (a replay runs ahead of its records). */
void osd__ns_prefetch(struct osd_store *st, uint64_t pid, uint64_t oid);
/* Start the cache miss of (pid, oid)'s hash slot alone (an open loading
 * objects whose index entries it holds). */
void osd__ns_prefetch_slot(struct osd_store *st, uint64_t pid, uint64_t oid);

/* pending.c: log records a replay left for their objects, and those of changed
 * objects that left memory */
/* Note the record at log offset @p off for (pid, oid) (the replay). */
int osd__pend_add(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t off);
/* Note the @p n records at log offsets @p offs (log order) for (pid, oid): all
 * or none (-ENOMEM; -ENOSPC past the bound of such notes, which asks for a
 * checkpoint). st->ns held for writing. */
int osd__pend_add_all(struct osd_store *st, uint64_t pid, uint64_t oid, const uint64_t *offs,
		      size_t n);
/* Room for @p n notes before the replay (a hint: without memory they grow). */
void osd__pend_reserve(struct osd_store *st, size_t n);
/* Start the cache miss of the note slot of (pid, oid). */
void osd__pend_prefetch(const struct osd_store *st, uint64_t pid, uint64_t oid);
/* 1 if (pid, oid) has notes (the tests look; the index entry's flag tells the store). */
int osd__pend_has(struct osd_store *st, uint64_t pid, uint64_t oid);
/* The log offsets noted for (pid, oid), in log order: a copy (*n of them,
 * NULL if none; *err -ENOMEM without memory). They are read through
 * st->pend_fd (osd__table_obj). */
uint64_t *osd__pend_offsets(struct osd_store *st, uint64_t pid, uint64_t oid, size_t *n,
			    int *err);
/* Forget the records of (pid, oid): its object holds them now. */
void osd__pend_take(struct osd_store *st, uint64_t pid, uint64_t oid);
/* Open the log read-only for the records noted in it. */
int osd__pend_open(struct osd_store *st);
/* Forget every record (a checkpoint holds them) and close the log. */
void osd__pend_clear(struct osd_store *st);

/* table.c: the indexed checkpoint (version 2; 3 adds the slot map; 4 the FILE
 * records of objects with a data file) */
#define OSD__CKPT_VERSION_INDEX 2u
#define OSD__CKPT_VERSION_PACKMAP 3u
#define OSD__CKPT_VERSION 4u
/* Write the namespace after the file header of @p fd (st->ns held for writing). */
int osd__table_write(struct osd_store *st, int fd, uint64_t *size);
/* Open: the index of checkpoint @p fd, every record verified; root,
 * partitions and objects holding data loaded. @p fd is kept (st->ckfd).
 * -EUCLEAN with *bad the offset of damage. */
int osd__table_load(struct osd_store *st, int fd, uint64_t *bad, size_t *nrecs);
/* Where the records of the version 2 checkpoint in @p buf start (-EUCLEAN
 * when its head is damaged): read whole, they load as version 1's do. */
int osd__table_records(const uint8_t *buf, size_t len, size_t *records_off);
/* Checkpoint @p fd, just written, read back: its head, its index's CRC32C,
 * and the same ids as the namespace (-EIO otherwise: a bug). Changes nothing. */
int osd__table_check(struct osd_store *st, int fd);
/* After checkpoint @p fd was checked and installed, st->ns held for writing:
 * objects load from it (takes @p fd). */
int osd__table_reload(struct osd_store *st, int fd);
/* Load an object from its entry, with the log records a replay left for it
 * (pending.c): damaged records give an object with meta_bad set (told
 * once); NULL without memory. */
struct osd__obj *osd__table_obj(struct osd_store *st, struct osd__part *p,
				struct osd__ids_pos pos);
/* Load the objects of data-file generations @p gens (sorted in place). */
int osd__table_find_gens(struct osd_store *st, uint64_t *gens, size_t n);
/* Open: load every packed object still on disk (judging slots named twice,
 * or past the end of data/pack, needs them all). */
int osd__table_load_packed(struct osd_store *st);

/* attr.c */
int osd__attr_put(struct osd__obj *obj, uint32_t page, uint32_t num,
		  const void *val, size_t len);
void osd__attr_free_all(struct osd__obj *obj);

/* data.c */
/* Path of a data file relative to st->datafd, and its fan-out directory. */
void osd__data_path(uint64_t gen, char name[32], unsigned *dir);
/* openat() without host access-time updates where permitted; an fd or -1. */
int osd__open_noatime(int dirfd, const char *name, int flags, mode_t mode);
/* Open fan-out directory @p dir; returns an fd or -errno. */
int osd__data_open_dir(struct osd_store *st, unsigned dir);
void osd__data_close_fd(struct osd_store *st, struct osd__obj *obj);
/* The object's I/O state, made if it has none (obj->mu held); NULL when out
 * of memory. */
struct osd__obj_io *osd__obj_io_locked(struct osd__obj *obj);
/* Free the I/O state of an object being freed (closes its descriptors). */
void osd__obj_io_free(struct osd__obj *obj);
int osd__data_flush_obj(struct osd_store *st, struct osd__obj *obj);
/* Flush the dirty objects of partition @p pid (@p all: every one), first
 * logging packed objects' pending states unless @p wiping (FORMAT). */
int osd__data_flush_dirty(struct osd_store *st, uint64_t pid, int all, int wiping);
int osd__data_sync_dirs(struct osd_store *st);
/* pwrite() every byte of @p iov at @p off (retrying short writes and EINTR). */
int osd__pwrite_all(int fd, const struct iovec *iov, int iovcnt, uint64_t off);
/* Write clean the sidecar headers of objects a flush left with an open dirty
 * range and that no change touched since a flush before generation @p gen
 * (UINT64_MAX: all of them, dropping the list: close and FORMAT). */
void osd__data_close_ranges(struct osd_store *st, uint64_t gen);
/* Set obj->used and adjust partition and store totals; obj->mu held. */
void osd__data_account(struct osd_store *st, struct osd__obj *obj, uint64_t used);
int osd__data_scan(struct osd_store *st);
/* Read an object's data file and sidecar as they are: its length, used
 * bytes (the totals adjusted) and sidecar state, as the scan of an open
 * does; a dirty range a crash left is recomputed (settled in @p sc, or at
 * once when NULL). obj->mu held, or the object not yet published. */
int osd__data_attach(struct osd_store *st, struct osd__obj *o, struct osd__sum_scan *sc);
/* Open of a store whose file objects stay on disk, instead of the scan:
 * the files of replayed REMOVEs go, files of generations a GENS record
 * reserved but no record names go to quarantine/, and the replay's
 * attaches are settled. */
int osd__data_open_lazy(struct osd_store *st);
/* Append a DATA record naming @p o in the current epoch (st->ns held, for
 * reading with obj->mu, or for writing): counted, its epoch set. */
int osd__data_name(struct osd_store *st, struct osd__obj *o);
/* Generations reserved ahead of the next by a GENS record. */
#define OSD__GENS_AHEAD 4096u
/* The number a data or pool file is named by: exactly 16 lowercase hex
 * digits; -1 for any other name. */
int osd__parse_hex16(const char *name, uint64_t *n);
void osd__data_unlink_later(struct osd_store *st, struct osd__obj *obj, uint64_t pos);
void osd__data_unlink_done(struct osd_store *st, uint64_t synced);

/* sums.c: a CRC32C per data block, in the sidecar data/<dir>/<gen>.sum */
#define OSD__SUM_BLOCK 4096u
#define OSD__SUM_HDR 64u
#define OSD__SUM_SUFFIX ".sum"
/* Name of the sidecar of generation @p gen relative to st->datafd. */
void osd__sum_path(uint64_t gen, char name[40]);
/* Open (and with @p create, make) the sidecar of @p o; -errno. obj->mu held. */
int osd__sum_open(struct osd_store *st, struct osd__obj *o, int create, int *sfd);
/* Read verification of [off, off+got) just read into @p iov; -EIO with
 * *bad = the first bad byte. */
int osd__sum_verify(const struct osd__obj *o, int fd, int sfd, uint64_t off,
		    const struct iovec *iov, int iovcnt, uint64_t got, uint64_t *bad);
/* Before a write of [off, off+total): checksums of the blocks it covers
 * (edge blocks read, verified and merged), the dirty range recorded.
 * *ent (malloc) is written with osd__sum_put() after the data. wmu held. */
int osd__sum_prepare_write(struct osd__obj *o, int fd, int sfd,
			   uint64_t len, uint64_t off, const struct iovec *iov, int iovcnt,
			   uint64_t total, uint8_t **ent, uint64_t *bad);
int osd__sum_put(int sfd, uint64_t first, const uint8_t *ent, size_t n);
/* Record blocks [lo, hi) dirty in the sidecar header (durably) before they
 * change; @p len is the object's length. wmu held. */
int osd__sum_mark(struct osd__obj *o, int sfd, uint64_t len, uint64_t lo, uint64_t hi);
/* Truncate and punch: the checksums of what is left. wmu held, before the
 * data change; *after* is called once the data changed. */
int osd__sum_truncate(struct osd__obj *o, int fd, int sfd,
		      uint64_t oldlen, uint64_t newlen, uint64_t *bad);
int osd__sum_punch(struct osd__obj *o, int fd, int sfd, uint64_t len,
		   uint64_t start, uint64_t end, uint64_t *bad);
/* Entries of blocks [lo, hi) computed from the data as it is (holes: 0);
 * after a failed write. @return blocks computed or -errno. */
int64_t osd__sum_recompute(int fd, int sfd, uint64_t len, uint64_t lo, uint64_t hi);
/* Write the sidecar header: logical @p length, dirty blocks [lo, hi). */
int osd__sum_hdr_write(int sfd, uint64_t length, uint64_t lo, uint64_t hi);
/* Open: attach the sidecar of @p o (@p have_data: its data file exists),
 * recompute the dirty range after a crash, build it when upgrading or
 * salvaging, extend a short or missing data file to the checksummed length. */
int osd__sum_attach(struct osd_store *st, struct osd__obj *o, int have_data,
		    struct osd__sum_scan *sc);
/* After the attaches: one syncfs makes every recomputed entry durable, then
 * their headers are written clean (one fdatasync per object was the bulk of
 * an open after a crash). Frees the list. 0 or -errno. */
int osd__sum_settle(struct osd_store *st, struct osd__sum_scan *sc);
void osd__sum_report(struct osd_store *st, const struct osd__sum_scan *sc);
/* Scrub: verify up to osd__sum_chunk_blocks() blocks from block @p b into
 * @p buf (that many blocks large). -EIO with *bad = the bad block's offset. */
int osd__sum_scrub_range(int fd, int sfd, uint64_t len, uint64_t b, uint64_t k,
			 uint8_t *buf, uint64_t *bad);
uint64_t osd__sum_chunk_blocks(void);

/* trust.c: verify a data block once per stay in the page cache (obj->mu
 * held for all but osd__trust_ctime). Blocks are OSD__SUM_BLOCK units. */
/* Forget all trust (descriptor closed, file changed by someone else). */
void osd__trust_drop(struct osd__obj *o);
/* Before the store may make the kernel read blocks [lo, hi) from disk, or
 * after they changed or failed: they are no longer trusted. @return the new
 * epoch, which a grant for the same operation must pass. */
uint64_t osd__trust_fault(struct osd__obj *o, uint64_t lo, uint64_t hi);
/* 1 if every block of [lo, hi) is trusted. */
int osd__trust_covers(const struct osd__obj *o, uint64_t lo, uint64_t hi);
/* Trust blocks [lo, hi) if nothing moved the epoch since @p epoch. */
void osd__trust_grant(struct osd__obj *o, uint64_t epoch, uint64_t lo, uint64_t hi);
int osd__trust_ctime(int fd, struct timespec *ts);
/* An own change of blocks [lo, hi) starts (wmu held): their trust ends and
 * a ctime other than the last own change's drops all. @return the epoch. */
uint64_t osd__trust_change_begin(struct osd__obj *o, int fd, uint64_t lo, uint64_t hi);
/* ... and ended, leaving the data file with @p ctime. */
void osd__trust_change_end(struct osd__obj *o, const struct timespec *ctime);
/* A copy of blocks [lo, hi) from the page cache begins: its slot, or -1 when
 * all are taken (then it must not try one). */
int osd__trust_copy_begin(struct osd__obj *o, uint64_t lo, uint64_t hi);
/* 1 if no other copy in flight may have read a page of [lo, hi) from disk. */
int osd__trust_copy_alone(const struct osd__obj *o, int slot, uint64_t lo, uint64_t hi);
void osd__trust_copy_end(struct osd__obj *o, int slot);
/* After a read that began at @p epoch with the file's ctime @p c0 (NULL:
 * tvalid was set, tctime) and ended with @p now: 1 if what it copied may be
 * (or is) trusted. */
int osd__trust_read_ok(struct osd__obj *o, uint64_t epoch, const struct timespec *c0,
		       const struct timespec *now);
/* Blocks READ verified and READ trusted so far (tests and benchmarks). */
void osd__store_read_counts(struct osd_store *st, uint64_t *verified, uint64_t *trusted);

/* pack.c: small objects in slots of data/pack */
#define OSD__PACK_SLOT 4096u      /* bytes of a slot: the largest packed object */
#define OSD__PACK_NAME "pack"     /* relative to data/ */
#define OSD__PACK_HDR 36u         /* PACK record header: pid oid where(8) length(8) crc(4) */
#define OSD__PACK_IN_FILE UINT64_MAX /* "where" of an object whose data is in its file */
/* Open data/pack (made when missing); slot 0 is its header. */
int osd__pack_open(struct osd_store *st, int create);
void osd__pack_close(struct osd_store *st);
/* FORMAT: every slot free, the file emptied. Caller holds st->ns for writing. */
void osd__pack_reset(struct osd_store *st);
/* fdatasync data/pack if written since; osd__pack_presync is the log's hook. */
int osd__pack_sync(struct osd_store *st);
int osd__pack_presync(void *arg);
uint32_t osd__pack_crc(const uint8_t img[OSD__PACK_SLOT]);
/* The object's slot, checked against its CRC: -EIO on a mismatch. obj->mu held. */
int osd__pack_load(struct osd_store *st, const struct osd__obj *o, uint8_t img[OSD__PACK_SLOT]);
/* Make @p img (zero past @p length) the object's data in a fresh slot (none
 * when all zero); the state is pending. obj->mu held. */
int osd__pack_store(struct osd_store *st, struct osd__obj *o,
		    const uint8_t img[OSD__PACK_SLOT], uint64_t length);
/* The object's data moved into its (durable) data file. obj->mu held. */
void osd__pack_unpacked(struct osd_store *st, struct osd__obj *o);
/* The PACK record header of the object's current state. */
void osd__pack_rec(const struct osd__obj *o, uint8_t out[OSD__PACK_HDR]);
/* A record with the current state was appended at @p pos. obj->mu held. */
void osd__pack_logged(struct osd_store *st, struct osd__obj *o, uint64_t pos);
/* Append a PACK record of the state. st->ns (read) and obj->mu held. */
int osd__pack_log_locked(struct osd_store *st, struct osd__obj *o, uint64_t *pos);
/* Log the object's pending state, if any (takes st->ns and obj->mu). */
int osd__pack_log_pending(struct osd_store *st, struct osd__obj *o);
/* REMOVE logged at @p pos: the slots go. obj->mu held. */
void osd__pack_forget(struct osd_store *st, struct osd__obj *o, uint64_t pos);
/* Replay of a REMOVE: the object's slot is free at once. */
void osd__pack_drop(struct osd_store *st, struct osd__obj *o);
/* Checkpoint: 1 and the record header if the object is packed. obj->mu held. */
int osd__pack_ckpt(struct osd_store *st, struct osd__obj *o, uint8_t rec[OSD__PACK_HDR]);
/* The checkpoint is durable (@p ok) or failed. */
void osd__pack_ckpt_done(struct osd_store *st, int ok);
/* Replay of a PACK record's header onto @p o: its slot marked in the map
 * and counted (the open of a checkpoint without a map, and log records). */
int osd__pack_apply(struct osd_store *st, struct osd__obj *o, const uint8_t *b);
/* A PACK record of the checkpoint onto @p o when st->pack_counted: the map
 * and totals count its slot already. */
int osd__pack_adopt(struct osd_store *st, struct osd__obj *o, const uint8_t *b);
/* "where" of a checkpoint's PACK record for a packed object whose slot is
 * not its own (damage): the number, with this bit (checkpoint version 3). */
#define OSD__PACK_DAMAGED (1ULL << 32)
/* The state the header of PACK record @p b names: in its file (0, nothing
 * else set), or packed in *@p slot (1; *@p damaged: a number a checkpoint
 * kept for an object whose slot is not its own). -EBADMSG for anything else. */
int osd__pack_rec_where(const uint8_t *b, uint32_t *slot, int *damaged);
/* Words of the slot map a PACK_MAP record carries at most (32 KiB). */
#define OSD__PACK_MAP_WORDS 4096u
/* 1 for a well-formed PACK_MAP or PART_USED record. */
int osd__pack_summary_ok(const struct osd__rec *rec);
/* Open: the slot map words of a PACK_MAP record (checked) set in the map,
 * but for slots at or past the end of data/pack: *@p past counts those. */
int osd__pack_map_load(struct osd_store *st, const struct osd__rec *rec, uint64_t *past);
/* Every slot but the header's free again (an open that starts over). */
void osd__pack_map_clear(struct osd_store *st);
/* After the replay: of objects naming one slot, only the one whose CRC the
 * slot's bytes match keeps it; the others read as damaged. */
int osd__pack_settle(struct osd_store *st);
/* Slots waiting for their superseding record to be durable, from which a
 * data change first syncs the log: rewrites without a flush would grow
 * data/pack without bound (16 MiB). */
#define OSD__PACK_FREES_MAX 4096u
int osd__pack_frees_many(struct osd_store *st);
/* Free the slots whose superseding record is durable (log position <= @p synced). */
void osd__pack_release(struct osd_store *st, uint64_t synced);

/* pool.c */
/* Make data/pool (@p create: a new store, whose caller fsyncs data/) or
 * adopt the files in it. */
int osd__pool_open(struct osd_store *st, int create);
/* Rename a pooled, empty file to @p name (relative to data/); -ENOENT when
 * the pool is empty, or the rename's -errno. */
int osd__pool_take(struct osd_store *st, const char *name);
/* Empty the data file @p name and move it into the pool; -ENOSPC when the
 * pool is full, or -errno: then the caller unlinks it. */
int osd__pool_put(struct osd_store *st, const char *name);
/* Delete every pooled file (FORMAT). */
void osd__pool_wipe(struct osd_store *st);
void osd__pool_free(struct osd_store *st);

#endif
