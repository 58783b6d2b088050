/*
 * Internals of the layout backend (docs/layout.md): resolved data maps and
 * RFC 5664 placement, GF(2^8) parity, the device table, the per-device
 * fan-out pool and the backend state shared by layout.c, objinfo.c, io.c
 * and rebuild.c.
 */
#ifndef OSDFS_LAYOUT_INT_H
#define OSDFS_LAYOUT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <osdfs/layout.h>

/* Attribute numbers of page OSDFS_LAYOUT_PAGE (osdfs/layout.h). */
#define LAY_ATTR_MAP 1u   /* every component of a file: its encoded data map */
#define LAY_ATTR_SELF 2u  /* superblock on each device: that device's identity */
#define LAY_ATTR_SIZE 3u  /* attribute holders of a file: logical length, le64 */
#define LAY_ATTR_HEALTH 4u /* superblock on each device: counters and events (health.c) */
#define LAY_ATTR_DIRTY 5u  /* superblock on each live device: the dirty-region log (dirty.c) */

#define LAY_MAP_LEN 32u   /* encoded data map */
#define LAY_SELF_LEN 40u  /* fs uuid, device uuid, slot, generation */
#define LAY_TABLE_HDR 88u
#define LAY_TABLE_ENT 20u /* fixed part of an entry, before the address */
#define LAY_TABLE_MAGIC "OSDFSLT\0"
#define LAY_TABLE_VERSION 1u
#define LAY_ADDR_MAX 255u

/* A data map resolved against a device count: every field concrete. */
struct lay_map {
	struct osdfs_data_map m; /* as stored (resolved values) */
	unsigned ndev;           /* devices of the filesystem */
	unsigned W, P, Wd, M, G; /* group width, parity units, data units, copies, groups */
	uint64_t su, D;          /* stripe unit; rows per group (0 = one group) */
	unsigned nc;             /* components: G * W * M */
	unsigned tol;            /* device failures always tolerated */
};

/* Where a logical row lives. */
struct lay_row {
	unsigned g;      /* group */
	uint64_t row;    /* row on the group's components (offset row * su) */
};

/* Put the formatted reason in @p err (if not NULL) and return @p rc. */
int lay_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

int lay_map_resolve(struct lay_map *lm, const struct osdfs_data_map *m, unsigned ndev);
void lay_map_encode(uint8_t out[LAY_MAP_LEN], const struct osdfs_data_map *m);
int lay_map_decode(struct osdfs_data_map *m, const uint8_t *in, size_t len);
/* Logical row R -> group and component row. */
struct lay_row lay_row_of(const struct lay_map *lm, uint64_t R);
/* Inverse: the logical row stored at component row @p row of group @p g. */
uint64_t lay_row_logical(const struct lay_map *lm, unsigned g, uint64_t row);
/* Position (0..W-1) of data unit k, and of parity unit p (0 = P, 1 = Q), in a row. */
unsigned lay_data_pos(const struct lay_map *lm, uint64_t row, unsigned k);
unsigned lay_parity_pos(const struct lay_map *lm, uint64_t row, unsigned p);
/* Component index of position @p pos of group @p g, copy @p m. */
static inline unsigned lay_comp(const struct lay_map *lm, unsigned g, unsigned pos, unsigned m)
{
	return (g * lm->W + pos) * lm->M + m;
}
/* Device slot holding component @p c of object @p oid. */
static inline unsigned lay_slot(const struct lay_map *lm, uint64_t oid, unsigned c)
{
	return (unsigned)((oid + c) % lm->ndev);
}
/* Bytes component @p c (any copy) holds for a logical length @p size. */
uint64_t lay_comp_len(const struct lay_map *lm, unsigned c, uint64_t size);

/* GF(2^8), polynomial 0x11D, generator 2 (as Linux RAID-6). */
uint8_t lay_gf_mul(uint8_t a, uint8_t b);
uint8_t lay_gf_exp(unsigned e);
uint8_t lay_gf_inv(uint8_t a);
/* P (and Q if @p q) of @p nd data units of @p len bytes. */
void lay_gf_gen(const uint8_t *const *d, unsigned nd, size_t len, uint8_t *p, uint8_t *q);
/* Rebuild the missing units: u[0..nd-1] data, u[nd] = P, u[nd+1] = Q (if
 * @p np == 2); @p lost lists up to @p np missing indexes, whose buffers are
 * overwritten. Returns 0 or -EIO (too many lost). */
int lay_gf_recover(uint8_t *const *u, unsigned nd, unsigned np, size_t len,
		   const unsigned *lost, unsigned nlost);
/* The same, always with our portable code (ISA-L's SIMD code is used by the
 * two above when the build has it; both give the same bytes). */
void lay_gf_gen_portable(const uint8_t *const *d, unsigned nd, size_t len, uint8_t *p,
			 uint8_t *q);
int lay_gf_recover_portable(uint8_t *const *u, unsigned nd, unsigned np, size_t len,
			    const unsigned *lost, unsigned nlost);
/* 1 if lay_gf_gen()/lay_gf_recover() use ISA-L, 0 if portable code only. */
int lay_gf_have_isal(void);
/* dst ^= src over @p len bytes. */
void lay_gf_xor(uint8_t *dst, const uint8_t *src, size_t len);

/* A buffer of at least @p n bytes from this thread's cache (else malloc),
 * and its return with the size asked for (scratch.c). */
void *lay_scratch_get(size_t n);
void lay_scratch_put(void *p, size_t n);

/* The device table: the fs uuid, default map and every slot. */
struct lay_table_ent {
	uint8_t uuid[16];
	uint8_t state;        /* enum osdfs_layout_dev_state */
	char address[LAY_ADDR_MAX + 1];
};
struct lay_table {
	uint64_t generation;
	uint64_t capacity;    /* usable bytes format() was given (0 = unlimited) */
	uint8_t fs_uuid[16];
	struct osdfs_data_map map;
	unsigned ndev;
	struct lay_table_ent ent[OSDFS_LAYOUT_MAX_DEVICES];
};
/* Encoded length of @p t. */
size_t lay_table_len(const struct lay_table *t);
/* Encode into @p out (lay_table_len() bytes). */
void lay_table_encode(uint8_t *out, const struct lay_table *t);
/* Decode and check; -EINVAL with the reason in @p err. */
int lay_table_decode(struct lay_table *t, const uint8_t *in, size_t len, char *err, size_t errlen);

/* One device's identity attribute (LAY_ATTR_SELF). */
struct lay_self {
	uint8_t fs_uuid[16];
	uint8_t dev_uuid[16];
	uint32_t slot;
};
void lay_self_encode(uint8_t out[LAY_SELF_LEN], const struct lay_self *s);
int lay_self_decode(struct lay_self *s, const uint8_t *in, size_t len);

/* Fan-out: jobs queued per device slot, run by that slot's workers. */
struct lay_batch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned pending;
};
struct lay_job {
	void (*fn)(struct lay_job *j);
	struct lay_batch *batch;
	struct lay_job *next;
};
struct lay_pool;
int lay_pool_new(struct lay_pool **out, unsigned nqueues, unsigned workers_per_queue);
void lay_pool_free(struct lay_pool *p);
void lay_batch_init(struct lay_batch *b);
void lay_batch_destroy(struct lay_batch *b);
/* Queue @p j on queue @p q as part of @p b. */
void lay_pool_run(struct lay_pool *p, unsigned q, struct lay_batch *b, struct lay_job *j);
void lay_batch_wait(struct lay_batch *b);

/* Backend state. */
struct lay_dev {
	osdfs_backend *be;      /* NULL while down with no device */
	const struct osdfs_backend_ops *ops;
	void *impl;
	enum osdfs_layout_dev_state state;
	uint64_t errors;
	uint64_t medium;        /* reads that failed while the device answered */
	uint64_t repairs;       /* component ranges rewritten from redundancy */
	uint64_t unrepaired;    /* medium errors left: rewrite failed or read-only */
	const void *reset_impl; /* the backend whose reset count ... */
	uint64_t resets;        /* ... was last seen to be this (reset_count) */
};

/* The health record (docs/layout.md): per-slot counters and recent events,
 * an attribute of the superblock on every device, like the table. */
#define LAY_HEALTH_MAGIC "OSDFSHL\0"
#define LAY_HEALTH_VERSION 1u
#define LAY_HEALTH_HDR 32u
#define LAY_HEALTH_SLOT 32u   /* medium, repairs, unrepaired, reserved: le64 each */
#define LAY_HEALTH_EVENT 128u
#define LAY_HEALTH_EVENTS 32u /* newest kept */
#define LAY_REASON_MAX 96u

struct lay_health {
	uint64_t generation;
	unsigned ndev;
	uint64_t medium[OSDFS_LAYOUT_MAX_DEVICES], repairs[OSDFS_LAYOUT_MAX_DEVICES],
		unrepaired[OSDFS_LAYOUT_MAX_DEVICES];
	unsigned nev;                                 /* events held, oldest first */
	struct osdfs_layout_event ev[LAY_HEALTH_EVENTS];
};
size_t lay_health_len(const struct lay_health *h);
void lay_health_encode(uint8_t *out, const struct lay_health *h);
int lay_health_decode(struct lay_health *h, const uint8_t *in, size_t len, char *err,
		      size_t errlen);

/* The dirty-region log (dirty.c, docs/layout.md): sorted (object, region)
 * keys; region LAY_DIRTY_ALL = the whole object (created, removed,
 * truncated, or metadata), LAY_DIRTY_ATTRS = its attributes only. */
#define LAY_DIRTY_MAGIC "OSDFSDL\0"
#define LAY_DIRTY_VERSION 1u
#define LAY_DIRTY_HDR 40u
#define LAY_DIRTY_ENT 16u
#define LAY_DIRTY_ALL UINT64_MAX
#define LAY_DIRTY_ATTRS (UINT64_MAX - 1)

struct lay_dkey {
	uint64_t oid, region;
};
/* A key of a change the devices acknowledged but may still hold only in a
 * volatile cache: noted in epoch @p epoch, dropped by a flush begun after. */
struct lay_ukey {
	uint64_t oid, region, epoch;
};
/* Unflushed keys: past LAY_UNFLUSHED_FLUSH the next object operation flushes
 * every device; past LAY_UNFLUSHED_MAX (flushes failing) a device that goes
 * down overflows the log (it then needs a rebuild). */
#define LAY_UNFLUSHED_FLUSH 1024u
#define LAY_UNFLUSHED_MAX OSDFS_LAYOUT_DIRTY_MAX
struct lay_dirty {
	pthread_mutex_t mu;   /* the keys and their stores, in order */
	uint64_t generation;  /* newest wins at open */
	uint64_t covered;     /* bit s: logged since slot s went down */
	atomic_uint_fast64_t went_down; /* slots down since, not yet in covered */
	int overflow;         /* past OSDFS_LAYOUT_DIRTY_MAX: covers nothing */
	int changed;          /* differs from what is stored */
	size_t n, cap;
	struct lay_dkey *k;
	uint64_t stores;      /* log stores by this handle (tests) */
	/* changes since the devices last completed a flush (in memory): what a
	 * device that fails may have lost with its volatile cache, logged when
	 * it goes down (as md's write-intent bitmap keeps bits until written) */
	struct lay_ukey *u;   /* sorted by (oid, region) */
	size_t un, ucap;
	uint64_t epoch;       /* advanced by every flush that begins */
	int ulost;            /* keys dropped past LAY_UNFLUSHED_MAX ... */
	uint64_t ulost_epoch; /* ... the last in this epoch */
	atomic_int merge;     /* a slot went down: log the unflushed keys */
	atomic_int flush_wanted; /* past LAY_UNFLUSHED_FLUSH */
};
size_t lay_dirty_len(size_t n);
void lay_dirty_encode(uint8_t *out, const struct lay_dirty *d);
/* Decode and check into @p d (its keys allocated); -EINVAL with the reason. */
int lay_dirty_decode(struct lay_dirty *d, const uint8_t *in, size_t len, char *err,
		     size_t errlen);

#define LAY_CACHE_SIZE 4096u
#define LAY_LOCKS 256u

/* What an object is, cached by id (direct-mapped, bounded). */
struct lay_info {
	uint64_t oid;          /* 0 = empty entry */
	int file;              /* striped regular file (else mirrored metadata) */
	int size_known;
	uint64_t size;         /* files: logical length */
	struct osdfs_data_map map;
};

struct lay {
	pthread_mutex_t mu;     /* slots' states, table, cache, spares */
	struct lay_table table;
	int formatted;
	struct lay_dev dev[OSDFS_LAYOUT_MAX_DEVICES];
	osdfs_backend *spares[OSDFS_LAYOUT_MAX_DEVICES];
	char spare_addr[OSDFS_LAYOUT_MAX_DEVICES][LAY_ADDR_MAX + 1];
	unsigned nspares;
	struct lay_map defmap;
	struct lay_info *cache;
	pthread_rwlock_t locks[LAY_LOCKS];
	pthread_rwlock_t count_gate; /* shared by create and remove, exclusive while
				      * count_objects() lists: taken before an object lock */
	struct lay_pool *pool;
	int table_dirty;         /* a slot changed state: rewrite the table */
	uint64_t nobjects;       /* objects, once counted (statfs) */
	int nobjects_known;      /* nobjects is valid: kept by create/remove */
	int readonly;            /* write nothing: states change in memory only */
	struct lay_health health; /* events and generation (counters live in dev[]) */
	atomic_int health_dirty; /* counters or events changed: rewrite the record
				  * (atomic: every read checks it without the mutex) */
	pthread_mutex_t health_mu; /* orders the record's stores */
	void (*on_event)(const struct osdfs_layout_event *ev, void *payload);
	void *on_event_payload;
	struct lay_dirty dirty;  /* the dirty-region log */
	struct lay_watch *watch; /* the return watch (watch.c), once started or run */
	struct lay_gather *gather; /* writes held back to complete rows (gather.c) */
};

/* dirty.c. Take over @p d's keys as the handle's log (at open). */
void lay_dirty_adopt(struct lay *L, struct lay_dirty *d);
/* Before (and after) a change of @p oid: log regions first..last (or
 * LAY_DIRTY_ALL / LAY_DIRTY_ATTRS) if a slot is down, storing the log
 * durably when a key is new. Nonzero: the change must not be made. */
int lay_dirty_note(struct lay *L, uint64_t oid, uint64_t first, uint64_t last);
/* The regions of file bytes [off, off + len). */
int lay_dirty_note_file(struct lay *L, const struct lay_info *fi, uint64_t off, uint64_t len);
/* Slot @p s just went down: the log covers it from now on (unless overflowed). */
void lay_dirty_slot_down(struct lay *L, unsigned s);
/* A slot went down (from up or rebuilding): the changes it acknowledged
 * since its last flush may be lost; the log takes the unflushed keys. */
void lay_dirty_lost_cache(struct lay *L);
/* A flush of @p oid's devices (0: every device) begins: its epoch. */
uint64_t lay_dirty_flush_begin(struct lay *L);
/* It completed on every live device: drop the unflushed keys (of @p oid, or
 * all) noted before epoch @p epoch began. */
void lay_dirty_flushed(struct lay *L, uint64_t oid, uint64_t epoch);
/* Flush every device when the unflushed keys asked for it (no lock held). */
void lay_dirty_flush_if_wanted(struct lay *L);
/* Store the log if it changed (with the table). */
void lay_dirty_sync(struct lay *L);
/* Whether the log covers slot @p s (it can be resynced). */
int lay_dirty_covers(struct lay *L, unsigned s);
/* A copy of the keys (the caller frees *out). */
int lay_dirty_snapshot(struct lay *L, struct lay_dkey **out, size_t *n);
/* Slot @p s was resynced from @p done: uncover it; with no slot down, drop
 * those keys. Stores the log. */
int lay_dirty_resynced(struct lay *L, unsigned s, const struct lay_dkey *done, size_t ndone);
/* rebuild.c: resync slot @p s from the log (osdfs_layout_resync()). */
int lay_resync(struct lay *L, unsigned s, struct osdfs_layout_resync_stats *st);
/* Every slot is up (after a rebuild): empty the log, overflow included. */
void lay_dirty_clear_if_clean(struct lay *L);

/* watch.c: stop the return watch and free what it holds (at destroy). */
struct lay_watch;
void lay_watch_destroy(struct lay *L);

/* layout.c: the layout behind @p be, or NULL if it is another backend. */
struct lay *lay_of(const osdfs_backend *be);
/* layout.c: device state. */
int lay_is_dev_error(long rc);
/* Whether slot @p s can be read from / must be written to. */
int lay_readable(struct lay *L, unsigned s);
int lay_writable(struct lay *L, unsigned s);
/* Count an error of slot @p s; device errors mark it down. */
void lay_dev_failed(struct lay *L, unsigned s, long rc);
/* Whether the device of slot @p s (@p ops and @p impl) reports a reset
 * (backend op reset_count) since the layout last looked: it may have lost
 * its volatile cache without failing a command (a target back within the
 * initiator's failover window), so the slot goes down as if it had failed
 * and its unflushed keys are logged; the return watch resyncs it. The first
 * look at a backend takes its count. Returns 1 when it saw a reset. */
int lay_dev_reset_seen(struct lay *L, unsigned s, const struct osdfs_backend_ops *ops,
		       void *impl);
/* lay_dev_reset_seen() with the count @p n the caller read from @p impl
 * (a command's reads around it: no third read of the device's count). */
int lay_dev_reset_count_seen(struct lay *L, unsigned s, void *impl, uint64_t n);
/* Whether slot @p s still answers (a size query of @p oid gets an answer
 * other than a device error): tells a medium error from a failed device. */
int lay_dev_answers(const struct osdfs_backend_ops *ops, void *impl, uint64_t oid);

/* health.c: events and counters. Record an event (reason printf-style), call
 * the handler, mark the record dirty. */
void lay_event(struct lay *L, enum osdfs_layout_event_kind kind, int slot, uint64_t oid,
	       uint64_t off, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Count a rewrite of @p what (a unit or range) on slot @p s after a medium
 * error or mismatch: rc 0 a repair, else unrepaired (-EROFS: read-only),
 * with its event. */
void lay_repair_note(struct lay *L, unsigned s, uint64_t oid, uint64_t off, int rc,
		     const char *what);
/* objops.c: write @p n bytes from @p iov over [off, off + n) of the metadata
 * copy on slot @p s (a medium error or mismatch there) and count it. */
int lay_heal_meta(struct lay *L, unsigned s, uint64_t oid, uint64_t off,
		  const struct iovec *iov, int iovcnt, size_t n);
/* Load the newest health record of @p n device images (at open). */
void lay_health_load(struct lay *L, const struct lay_health *h);
/* Store the record on every readable device if dirty (not when read-only). */
void lay_health_sync(struct lay *L);
pthread_rwlock_t *lay_lock_of(struct lay *L, uint64_t oid);
/* Write the table (new generation) to every writable device. */
int lay_table_store(struct lay *L);
/* Store the table if a slot changed state since the last store. */
void lay_table_sync(struct lay *L);
/* objops.c: look @p oid up and take its lock (exclusive with @p excl); on
 * success the lock is held until lay_obj_leave(), which returns @p rc. */
int lay_obj_enter(struct lay *L, uint64_t oid, int excl, struct lay_info *fi);
int lay_obj_leave(struct lay *L, uint64_t oid, int rc);
/* The vtable (objops.c). */
extern const struct osdfs_backend_ops lay_ops;
/* Backend callbacks defined in layout.c and used by the vtable. */
int lay_be_list(void *impl, uint64_t start, uint64_t *ids, size_t max, size_t *n, uint64_t *next);
int lay_be_flush(void *impl, uint64_t oid);
int lay_be_format(void *impl, uint64_t capacity);
int lay_be_statfs(void *impl, struct osdfs_backend_stat *st);
void lay_be_destroy(void *impl);
int lay_random(void *buf, size_t len);
/* A create (+1) or remove (-1) of a whole object succeeded. */
void lay_count_add(struct lay *L, int delta);

/* objinfo.c: classification and the metadata mirror set. */
int lay_info_get(struct lay *L, uint64_t oid, struct lay_info *out);
void lay_info_put(struct lay *L, const struct lay_info *in);
void lay_info_drop(struct lay *L, uint64_t oid);
/* Slots of metadata object @p oid: the first is *first, then consecutive. */
unsigned lay_meta_copies(const struct lay *L, uint64_t oid);
/* Components of a file that carry its attributes. */
unsigned lay_holders(const struct lay_map *lm);

/* io.c: striped file I/O (object lock held by the caller). */
ssize_t lay_file_read(struct lay *L, const struct lay_info *fi, uint64_t off, uint8_t *buf,
		      size_t len);
ssize_t lay_file_write(struct lay *L, struct lay_info *fi, uint64_t off, const uint8_t *buf,
		       size_t len, const struct osdfs_attr *attrs, int nattrs);
int lay_file_truncate(struct lay *L, struct lay_info *fi, uint64_t size);
int lay_file_setattrs(struct lay *L, struct lay_info *fi, const struct osdfs_attr *attrs,
		      int nattrs);
int lay_file_size(struct lay *L, struct lay_info *fi, uint64_t *size);

/* The bytes of a write: [hoff, split) from head, [split, ...) from rest; a
 * write gathered into whole rows (gather.c) puts the completed first row in
 * head, split on a row boundary so that no unit straddles the two. */
struct lay_wsrc {
	uint64_t hoff, split;
	const uint8_t *head, *rest;
};

static inline const uint8_t *lay_src_at(const struct lay_wsrc *s, uint64_t x)
{
	return x < s->split ? s->head + (x - s->hoff) : s->rest + (x - s->split);
}

/* io.c: write file bytes [off, off + len) from @p src through the dirty log
 * and row batches (the caller holds the object exclusively). */
int lay_write_range(struct lay *L, struct lay_info *fi, const struct lay_map *lm,
		    const struct lay_wsrc *src, uint64_t off, size_t len,
		    const struct osdfs_attr *attrs, int nattrs);
/* Write bytes gathering held back, with the file's current map. */
int lay_file_write_held(struct lay *L, struct lay_info *fi, uint64_t off, const uint8_t *buf,
			size_t len);
/* The file's length as callers see it: with the bytes held back. */
int lay_file_length(struct lay *L, struct lay_info *fi, uint64_t *size);

/* gather.c: sequential writes gathered into whole rows (docs/layout.md,
 * "Write gathering"). new/free at open/close (free writes what is held). */
int lay_gather_new(struct lay *L, int off);
void lay_gather_free(struct lay *L);
/* A parity write of [off, off + len): whole rows now, a partial last row of
 * an extending write held back until the next write completes it, a flush,
 * a read's need, or GATHER_AGE_MS. */
int lay_gather_write(struct lay *L, struct lay_info *fi, const struct lay_map *lm, uint64_t off,
		     const uint8_t *buf, size_t len, const struct osdfs_attr *attrs, int nattrs);
/* Forget what is held for @p oid (removed; its lock held exclusively). */
void lay_gather_drop(struct lay *L, uint64_t oid);
/* Write what is held for @p oid (0: every object; takes the object locks). */
int lay_gather_flush(struct lay *L, uint64_t oid);
/* The same for a file whose exclusive lock the caller holds. */
int lay_gather_flush_locked(struct lay *L, struct lay_info *fi);
/* @p size, or the end of the bytes held for @p oid if larger. */
uint64_t lay_gather_size(struct lay *L, uint64_t oid, uint64_t size);
/* Lay the bytes held for @p oid over @p buf = file bytes [off, off + len). */
void lay_gather_overlay(struct lay *L, uint64_t oid, uint64_t off, uint8_t *buf, size_t len);
/* Unit @p pos of row @p row of group @p g of a file, from a copy or parity;
 * never from slot @p skip. */
int lay_unit_rebuild(struct lay *L, const struct lay_info *fi, unsigned g, uint64_t row,
		     unsigned pos, unsigned skip, uint8_t *out);
/* Bytes of row @p row of group @p g that its longest unit holds for a file
 * of @p size (su for every row but the last). */
size_t lay_row_extent(const struct lay_map *lm, unsigned g, uint64_t row, uint64_t size);
/* Rewrite bytes [0, ext) of unit row @p row on component @p c from @p unit
 * (clipped to the component's length) after a medium error there; counts
 * the repair or the failure and records the event. Returns 0 or the error. */
int lay_heal_write(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
		   unsigned c, uint64_t row, const uint8_t *unit, size_t ext);

/* rebuild.c: every attribute of an object (get_all_attrs), less the
 * per-device ones, read from the first readable of @p count slots from
 * @p first (never @p skip). The caller frees as->buf. */
#define LAY_MAX_ATTRS 64
struct lay_attrset {
	struct osdfs_attr a[LAY_MAX_ATTRS];
	int n;
	uint8_t *buf;
};
int lay_attrs_read(struct lay *L, unsigned first, unsigned count, unsigned skip, uint64_t oid,
		   struct lay_attrset *as);
/* Whether every device of the layout (its slots, and @p fresh if not
 * NULL) can list an object's attributes (get_all_attrs), as copying
 * objects needs: the layout keeps no list of what a filesystem stores, and
 * a copy by such a list would drop what is not on it. 0 or -EOPNOTSUPP. */
int lay_attrs_listable(struct lay *L, const osdfs_backend *fresh);

/* A job running one child operation. */
enum lay_op_kind { LAY_READ, LAY_WRITE, LAY_SETATTR, LAY_GETATTR, LAY_CREATE, LAY_REMOVE,
		   LAY_TRUNC, LAY_FLUSH };
struct lay_cop {
	struct lay_job job;
	struct lay *L;
	enum lay_op_kind kind;
	unsigned slot, comp;
	uint64_t oid, off;
	struct iovec *iov;
	int iovcnt, iovcap;
	size_t len;
	const struct osdfs_attr *attrs;
	struct osdfs_attr *gattrs;
	int nattrs;
	long rc;
	enum osdfs_obj_class cls; /* LAY_CREATE: the class hint for the device */
	int medium;     /* a read's -EIO from a device that still answers */
	int recheck;    /* a read again of what failed: its medium error is not counted */
};
/* Run @p n ops in parallel (one job per op, the caller runs the first) and wait. */
void lay_cops_run(struct lay *L, struct lay_cop *ops, size_t n);
/* A growable list of ops. */
struct lay_copv {
	struct lay_cop *v;
	size_t n, cap;
};
/* Append a zeroed op (pointer valid until the next add); NULL if out of memory. */
struct lay_cop *lay_copv_add(struct lay_copv *v, enum lay_op_kind kind, unsigned slot,
			     uint64_t oid);
/* Append @p len bytes at @p p to the op's data, merging with the last iovec. */
int lay_cop_iov(struct lay_cop *c, void *p, size_t len);
int lay_copv_run(struct lay *L, struct lay_copv *v);
void lay_copv_free(struct lay_copv *v);

#endif
