/*
 * User object data: one sparse file per object, named by a generation
 * number that is never reused (so a removed object's file can outlive it
 * until its removal is durable), under 256 fan-out directories
 * (data/<gen & 0xff>/<gen>). The file
 * size is the logical length, so data writes need no metadata record.
 * Open descriptors are cached in an LRU; objects with unflushed data sit on
 * a dirty list that FLUSH walks. Removed objects' files are recycled through
 * data/pool (pool.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/byteorder.h"
#include "store/internal.h"

/* Writes at least this large start their writeback at once (start_writeback). */
#define WRITEBACK_MIN (256u << 10)

void osd__data_path(uint64_t gen, char name[32], unsigned *dir)
{
	*dir = (unsigned)(gen & (OSD__FANOUT - 1));
	snprintf(name, 32, "%02x/%016" PRIx64, *dir, gen);
}

/*
 * openat() of a data file or sidecar without access-time updates. Each
 * read that follows a write makes relatime dirty the host inode (its atime
 * is older than the write's mtime): an osdfs create reads its directory
 * block and then writes it, so every one paid an inode update. The store
 * keeps OSD access times itself (docs/target-store.md, "Access times") and
 * never reads the host's. O_NOATIME needs the file's owner or CAP_FOWNER:
 * a store opened by another user falls back to a plain open.
 */
int osd__open_noatime(int dirfd, const char *name, int flags, mode_t mode)
{
	int fd = openat(dirfd, name, flags | O_NOATIME, mode);
	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, name, flags, mode);
	return fd;
}

static void fd_evict_to(struct osd_store *st, int keep);

/*
 * Make fan-out directory @p dir (it may exist: a concurrent creator) and
 * fsync data/, so the directory is durable before any file in it can be.
 */
static int make_dir(struct osd_store *st, unsigned dir)
{
	char name[4];
	snprintf(name, sizeof(name), "%02x", dir);
	if (mkdirat(st->datafd, name, 0700) != 0 && errno != EEXIST)
		return -errno;
	return fsync(st->datafd) == 0 ? 0 : -errno;
}

int osd__data_open_dir(struct osd_store *st, unsigned dir)
{
	char name[4];
	snprintf(name, sizeof(name), "%02x", dir);
	int fd = openat(st->datafd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		fd_evict_to(st, -1); /* give back cached data descriptors */
		fd = openat(st->datafd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	return fd >= 0 ? fd : -errno;
}

/* ---- descriptor cache -------------------------------------------------------- */

/* The descriptor cache is a libosd/lru keyed by the object's address. */
static uint64_t fd_key(const struct osd__obj *o)
{
	return (uint64_t)(uintptr_t)o;
}

static struct osd__obj *fd_obj(struct osd__lru_node *n)
{
	return n ? OSD__LRU_ENTRY(n, struct osd__obj_io, fd_node)->obj : NULL;
}

struct osd__obj_io *osd__obj_io_locked(struct osd__obj *o)
{
	struct osd__obj_io *io = o->io;
	if (io)
		return io;
	io = calloc(1, sizeof(*io));
	if (!io)
		return NULL;
	io->obj = o;
	io->fd = -1;
	io->sfd = -1;
	pthread_mutex_init(&io->wmu, NULL);
	o->io = io;
	return io;
}

/* osd__obj_io_locked() for an object whose mu the caller does not hold. */
static struct osd__obj_io *obj_io(struct osd__obj *o)
{
	pthread_mutex_lock(&o->mu);
	struct osd__obj_io *io = osd__obj_io_locked(o);
	pthread_mutex_unlock(&o->mu);
	return io;
}

/* Close the object's cached descriptors, data and sidecar; trust lives
 * with them. obj->mu held (or the object being freed). */
static void io_close_fds(struct osd__obj *o)
{
	struct osd__obj_io *io = o->io;
	if (io->fd >= 0)
		close(io->fd);
	io->fd = -1;
	if (io->sfd >= 0)
		close(io->sfd);
	io->sfd = -1;
	osd__trust_drop(o);
}

void osd__obj_io_free(struct osd__obj *o)
{
	struct osd__obj_io *io = o->io;
	if (!io)
		return;
	io_close_fds(o);
	pthread_mutex_destroy(&io->wmu);
	free(io);
	o->io = NULL;
}

/* Close an idle cached fd. obj->mu held. @return 1 if the LRU reference must be dropped. */
static int fd_close_locked(struct osd_store *st, struct osd__obj *o)
{
	if (!o->io || o->io->fd < 0 || o->io->fd_users)
		return 0;
	io_close_fds(o);
	pthread_mutex_lock(&st->lru_mu);
	osd__lru_remove(&st->fds, &o->io->fd_node);
	pthread_mutex_unlock(&st->lru_mu);
	return 1;
}

void osd__data_close_fd(struct osd_store *st, struct osd__obj *obj)
{
	pthread_mutex_lock(&obj->mu);
	int drop = fd_close_locked(st, obj);
	pthread_mutex_unlock(&obj->mu);
	if (drop)
		osd__obj_put(st, obj);
}

/* Close least recently used idle descriptors until at most @p keep are
 * open (-1: half of those open now). */
static void fd_evict_to(struct osd_store *st, int keep)
{
	/* Victims are collected in a local array: once off the LRU and
	 * unlocked, another thread may reopen the object and relink it. */
	struct osd__obj *victims[64];
	size_t n = 0;
	pthread_mutex_lock(&st->lru_mu);
	size_t want = keep < 0 ? st->fds.count / 2 : (size_t)keep;
	struct osd__obj *o = fd_obj(osd__lru_oldest(&st->fds));
	while (st->fds.count > want && o && n < 64) {
		struct osd__obj *next = fd_obj(o->io->fd_node.lnext);
		/* trylock: the usual order is obj->mu before lru_mu */
		if (pthread_mutex_trylock(&o->mu) == 0) {
			if (o->io->fd >= 0 && !o->io->fd_users) {
				io_close_fds(o);
				osd__lru_remove(&st->fds, &o->io->fd_node);
				victims[n++] = o;
			}
			pthread_mutex_unlock(&o->mu);
		}
		o = next;
	}
	pthread_mutex_unlock(&st->lru_mu);
	for (size_t i = 0; i < n; i++)
		osd__obj_put(st, victims[i]); /* the LRU's reference */
}

static void fd_evict(struct osd_store *st)
{
	fd_evict_to(st, st->max_fds);
}

/*
 * Get the object's data fd for I/O (obj->mu held). Without @p create an
 * object that has no file yet gets *fd = -1. Pair with fd_put().
 */
static int fd_get_locked(struct osd_store *st, struct osd__obj *o, int create, int *fd,
			 int *need_evict)
{
	*fd = -1;
	if (!osd__obj_io_locked(o))
		return -ENOMEM;
	if (o->io->fd < 0) {
		if (!o->has_file && !create)
			return 0;
		char name[32];
		unsigned dir;
		osd__data_path(o->gen, name, &dir);
		int sfd = -1;
		/* no file of a generation a durable GENS record does not cover:
		 * the open after a crash looks for files no record names only
		 * below it (osd__data_open_lazy) */
		int makes = !o->has_file || (st->sums && !o->has_sums);
		if (create && makes && atomic_load(&st->log_files)) {
			int g = osd__log_sync(&st->log, atomic_load(&st->gens_pos));
			if (g)
				return g;
		}
		if (st->sums) {
			/* the sidecar first: no data file is ever without one */
			int r = osd__sum_open(st, o, create, &sfd);
			if (r == -ENOENT && create && !o->has_file) {
				r = make_dir(st, dir);
				if (!r)
					r = osd__sum_open(st, o, create, &sfd);
			}
			if (r == -EMFILE || r == -ENFILE) {
				fd_evict_to(st, -1);
				r = osd__sum_open(st, o, create, &sfd);
			}
			if (r)
				return r;
		}
		/* A file of an object that has none is a leftover (a move out of
		 * the pack a crash undid, or a recycled file a crash left with
		 * bytes): its bytes are not the object's. */
		int flags = O_RDWR | O_CLOEXEC | (o->has_file ? 0 : O_CREAT | O_TRUNC);
		if (!o->has_file && osd__pool_take(st, name) == 0)
			flags = O_RDWR | O_CLOEXEC | O_TRUNC;
		int f = osd__open_noatime(st->datafd, name, flags, 0600);
		if (f < 0 && errno == ENOENT && !o->has_file) {
			int r = make_dir(st, dir); /* the first file of its directory */
			if (r)
				return r;
			f = osd__open_noatime(st->datafd, name, flags, 0600);
		}
		if (f < 0 && (errno == EMFILE || errno == ENFILE)) {
			/* Out of descriptors: give back half of the cache and retry.
			 * Safe under obj->mu: eviction only trylocks objects. */
			fd_evict_to(st, -1);
			f = osd__open_noatime(st->datafd, name, flags, 0600);
		}
		if (f < 0) {
			int e = errno;
			if (sfd >= 0)
				close(sfd);
			return -e;
		}
		o->io->sfd = sfd;
		/* The store's reads then bring in only the pages they ask for:
		 * no readahead reads a trusted block back from disk unseen
		 * (trust.c). Initiators read ahead themselves. */
		if (st->sums && !st->verify_reads)
			(void)posix_fadvise(f, 0, 0, POSIX_FADV_RANDOM);
		if (!o->has_file) {
			o->has_file = 1;
			atomic_store(&o->io->dir_dirty, 1);
			atomic_fetch_or(&st->dirs_dirty[dir / 64], 1ULL << (dir % 64));
		}
		o->io->fd = f;
		atomic_fetch_add(&o->refs, 1); /* held by the LRU while the fd is open */
		pthread_mutex_lock(&st->lru_mu);
		osd__lru_insert(&st->fds, &o->io->fd_node, fd_key(o), 0);
		*need_evict = st->fds.count > (size_t)st->max_fds;
		pthread_mutex_unlock(&st->lru_mu);
	} else {
		pthread_mutex_lock(&st->lru_mu);
		osd__lru_touch(&st->fds, &o->io->fd_node);
		pthread_mutex_unlock(&st->lru_mu);
	}
	o->io->fd_users++;
	*fd = o->io->fd;
	return 0;
}

/*
 * fd_get_locked() for a data change (write, truncate, punch): first hands the
 * log's buffered records to the kernel, so the records the change may depend
 * on (the object's CREATE, attributes written before it) survive a crash of
 * the process whenever the change does (docs/crash-model.md).
 */
static int fd_get_for_change(struct osd_store *st, struct osd__obj *o, int create, int *fd,
			     int *need_evict)
{
	int r = osd__log_write_out(&st->log);

	return r ? r : fd_get_locked(st, o, create, fd, need_evict);
}

static void fd_put(struct osd_store *st, struct osd__obj *o)
{
	pthread_mutex_lock(&o->mu);
	o->io->fd_users--;
	int drop = o->removed ? fd_close_locked(st, o) : 0;
	pthread_mutex_unlock(&o->mu);
	if (drop)
		osd__obj_put(st, o);
}

/* ---- accounting --------------------------------------------------------------- */

void osd__data_account(struct osd_store *st, struct osd__obj *obj, uint64_t used)
{
	/* Only the removal itself (under st->ns, partition alive) may zero a
	 * removed object's usage; late I/O must not touch the totals. */
	if (obj->removed && (used || !obj->used))
		return;
	uint64_t delta = used - obj->used; /* modular: also right when shrinking */
	obj->used = used;
	if (obj->part)
		atomic_fetch_add(&obj->part->used, delta);
	atomic_fetch_add(&st->used, delta);
}

/* After a data change: length and usage from the file; the change's ctime
 * is the store's own (read trust). */
static void account_fd_locked(struct osd_store *st, struct osd__obj *o, int fd)
{
	struct stat sb;
	int ok = fstat(fd, &sb) == 0;
	if (ok) {
		o->length = (uint64_t)sb.st_size;
		osd__data_account(st, o, (uint64_t)sb.st_blocks * 512);
	}
	if (o->io->tchanging && ok) {
		osd__trust_change_end(o, &sb.st_ctim);
	} else if (o->io->tchanging) {
		osd__trust_drop(o);
		o->io->tchanging = 0;
	}
}

/* Reads may trust blocks verified once (trust.c). */
static int trusting(struct osd_store *st)
{
	return st->sums && !st->verify_reads && !atomic_load(&st->trust_off);
}

/* Blocks [lo, hi) of byte range [off, end): every block it touches. */
static uint64_t blk_lo(uint64_t off)
{
	return off / OSD__SUM_BLOCK;
}

static uint64_t blk_hi(uint64_t end)
{
	return end / OSD__SUM_BLOCK + (end % OSD__SUM_BLOCK != 0);
}

/*
 * -ENOSPC if making [start, end) of the object hold data would exceed the
 * store capacity, -EDQUOT if the partition quota or the object quota (the
 * exec engine reports QUOTA ERROR only for these). obj->mu held.
 * The object quota bounds the logical length. Space is charged for what
 * can be allocated: bytes past the logical length (not the hole skipped to
 * reach @p start, so a sparse file far out costs what it writes), and bytes
 * inside it up to the holes the object has (length - used); overwrites of a
 * dense object are free. A truncate that extends is charged in full
 * (start = the old length): it must be able to hold what it promises, as
 * fallocate(2) expects.
 */
static int space_check_locked(struct osd_store *st, struct osd__obj *o, uint64_t start,
			      uint64_t end)
{
	if (end > o->length && end > o->quota)
		return -EDQUOT;
	uint64_t from = start > o->length ? start : o->length;
	uint64_t grow = end > from ? end - from : 0;
	uint64_t inside = (start < o->length ? (end < o->length ? end : o->length) - start : 0);
	uint64_t holes = o->length > o->used ? o->length - o->used : 0;
	grow += inside < holes ? inside : holes;
	if (!grow)
		return 0;
	if (atomic_load(&st->used) + grow > osd__store_capacity(st))
		return -ENOSPC;
	struct osd__obj *po = o->part->obj;
	pthread_mutex_lock(&po->mu);
	uint64_t pq = po->quota;
	pthread_mutex_unlock(&po->mu);
	if (atomic_load(&o->part->used) + grow > pq)
		return -EDQUOT;
	return 0;
}

/* ---- dirty tracking and flush ---------------------------------------------------- */

static void mark_dirty(struct osd_store *st, struct osd__obj *o)
{
	if (atomic_exchange(&o->io->dirty, 1))
		return;
	pthread_mutex_lock(&st->dirty_mu);
	if (!o->io->on_dirty_list) {
		o->io->on_dirty_list = 1;
		atomic_fetch_add(&o->refs, 1);
		o->io->dirty_next = st->dirty;
		st->dirty = o;
	}
	pthread_mutex_unlock(&st->dirty_mu);
}

static int fsync_dir(struct osd_store *st, unsigned dir)
{
	atomic_fetch_and(&st->dirs_dirty[dir / 64], ~(1ULL << (dir % 64)));
	int fd = osd__data_open_dir(st, dir);
	if (fd < 0)
		return fd;
	int r = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return r;
}

/*
 * After data and checksums of @p o were made durable by a flush that began
 * at data change @p seq: unless a change raced it, the sidecar header says
 * clean (no fsync: a lost clean mark only costs a recomputation at open).
 */
static void sums_clean(struct osd_store *st, struct osd__obj *o, uint64_t seq)
{
	int fd = -1, evict = 0;
	pthread_mutex_lock(&o->io->wmu);
	if (o->io->dlo < o->io->dhi && atomic_load(&o->io->wseq) == seq) {
		pthread_mutex_lock(&o->mu);
		int r = o->removed ? -ENOENT : fd_get_locked(st, o, 0, &fd, &evict);
		int sfd = o->io->sfd;
		uint64_t len = o->length;
		pthread_mutex_unlock(&o->mu);
		if (!r && fd >= 0) {
			if (sfd >= 0 && osd__sum_hdr_write(sfd, len, 0, 0) == 0)
				o->io->dlo = o->io->dhi = 0;
			fd_put(st, o);
		}
	}
	pthread_mutex_unlock(&o->io->wmu);
	if (evict)
		fd_evict(st);
}

/*
 * After data and checksums of @p o were made durable by a flush that began
 * at data change @p seq: its dirty range stays open, so a writer going on
 * through the object needs no new (synced) mark, and the object joins the
 * open list. A later FLUSH OSD that finds no change since writes it clean
 * (osd__data_close_ranges), as does close.
 */
static void sums_flushed(struct osd_store *st, struct osd__obj *o, uint64_t seq)
{
	pthread_mutex_lock(&o->io->wmu);
	int open = o->io->dlo < o->io->dhi && atomic_load(&o->io->wseq) == seq;
	if (open) {
		o->io->armed_seq = seq;
		o->io->armed_gen = atomic_load(&st->flush_gen);
	}
	pthread_mutex_unlock(&o->io->wmu);
	if (!open)
		return; /* clean already, or changed meanwhile: dirty, flushed again */
	pthread_mutex_lock(&st->open_mu);
	if (!o->io->on_open) {
		o->io->on_open = 1;
		atomic_fetch_add(&o->refs, 1);
		o->io->open_next = st->open;
		st->open = o;
	}
	pthread_mutex_unlock(&st->open_mu);
}

void osd__data_close_ranges(struct osd_store *st, uint64_t gen)
{
	pthread_mutex_lock(&st->open_mu);
	struct osd__obj *list = st->open;
	st->open = NULL;
	pthread_mutex_unlock(&st->open_mu);
	while (list) {
		struct osd__obj *o = list;
		list = o->io->open_next;
		pthread_mutex_lock(&o->io->wmu);
		uint64_t seq = o->io->armed_seq;
		int ripe = o->io->armed_gen < gen && atomic_load(&o->io->wseq) == seq;
		pthread_mutex_unlock(&o->io->wmu);
		if (ripe)
			sums_clean(st, o, seq);
		int drop = ripe || gen == UINT64_MAX;
		pthread_mutex_lock(&st->open_mu);
		if (drop) {
			o->io->on_open = 0;
		} else {
			o->io->open_next = st->open;
			st->open = o;
		}
		pthread_mutex_unlock(&st->open_mu);
		if (drop)
			osd__obj_put(st, o); /* the list's reference */
	}
}

/* fdatasync the object's data and checksums (and its directory entry if new). */
int osd__data_flush_obj(struct osd_store *st, struct osd__obj *obj)
{
	int r = 0, fd, evict = 0;
	if (!obj->io)
		return 0; /* no data access since open: nothing unflushed */
	if (atomic_exchange(&obj->io->dirty, 0)) {
		uint64_t seq = atomic_load(&obj->io->wseq);
		pthread_mutex_lock(&obj->mu);
		r = obj->removed ? 0 : fd_get_locked(st, obj, 0, &fd, &evict);
		if (obj->removed)
			fd = -1;
		int sfd = obj->io->sfd;
		pthread_mutex_unlock(&obj->mu);
		if (!r && fd >= 0) {
			if (fdatasync(fd) != 0 || (sfd >= 0 && fdatasync(sfd) != 0)) {
				r = -errno;
				mark_dirty(st, obj); /* keep it for a retry */
			}
			fd_put(st, obj);
			if (!r && sfd >= 0)
				sums_flushed(st, obj, seq);
		}
		if (evict)
			fd_evict(st);
	}
	if (!r && atomic_exchange(&obj->io->dir_dirty, 0)) {
		unsigned dir;
		char name[32];
		osd__data_path(obj->gen, name, &dir);
		r = fsync_dir(st, dir);
		if (r)
			atomic_store(&obj->io->dir_dirty, 1);
	}
	return r;
}

/* From this many dirty objects on, one syncfs() of the data filesystem costs
 * less than an fdatasync and a directory fsync per object, and covers both. */
#define SYNCFS_MIN_OBJECTS 16

/* Flush @p objs with one syncfs(), which also makes every new fan-out
 * directory durable. Dirty flags are cleared first, so a write racing with the
 * flush marks its object dirty again; on failure they are restored for a retry. */
static int flush_by_syncfs(struct osd_store *st, struct osd__obj **objs, size_t n)
{
	unsigned char *was = malloc(n);
	if (!was)
		return -ENOMEM;
	uint64_t dirs[OSD__FANOUT / 64];
	uint64_t *seq = malloc(n * sizeof(*seq));
	if (!seq) {
		free(was);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		seq[i] = atomic_load(&objs[i]->io->wseq);
		was[i] = (unsigned char)(atomic_exchange(&objs[i]->io->dirty, 0) |
					 atomic_exchange(&objs[i]->io->dir_dirty, 0) << 1);
	}
	for (size_t d = 0; d < OSD__FANOUT / 64; d++)
		dirs[d] = atomic_exchange(&st->dirs_dirty[d], 0);
	int r = syncfs(st->datafd) == 0 ? 0 : -errno;
	for (size_t d = 0; r && d < OSD__FANOUT / 64; d++)
		atomic_fetch_or(&st->dirs_dirty[d], dirs[d]);
	for (size_t i = 0; r && i < n; i++) {
		if (was[i] & 2)
			atomic_store(&objs[i]->io->dir_dirty, 1);
		if (was[i] & 1)
			mark_dirty(st, objs[i]);
	}
	for (size_t i = 0; !r && st->sums && i < n; i++)
		sums_flushed(st, objs[i], seq[i]);
	free(seq);
	free(was);
	return r;
}

/* Flush dirty objects of partition @p pid (or all of them). */
int osd__data_flush_dirty(struct osd_store *st, uint64_t pid, int all, int wiping)
{
	/* Detach into an array: once off the list an object may be re-marked
	 * dirty (and relinked through dirty_next) by a concurrent writer. */
	size_t n = 0, cap = 0;
	struct osd__obj **mine = NULL;
	pthread_mutex_lock(&st->dirty_mu);
	for (struct osd__obj *o = st->dirty; o; o = o->io->dirty_next)
		cap += all || o->pid == pid;
	if (cap && !(mine = malloc(cap * sizeof(*mine)))) {
		pthread_mutex_unlock(&st->dirty_mu);
		return -ENOMEM;
	}
	struct osd__obj **pp = &st->dirty;
	while (*pp) {
		struct osd__obj *o = *pp;
		if (all || o->pid == pid) {
			*pp = o->io->dirty_next;
			o->io->on_dirty_list = 0;
			o->io->dirty_next = NULL;
			mine[n++] = o; /* keeps the list's reference */
		} else {
			pp = &o->io->dirty_next;
		}
	}
	pthread_mutex_unlock(&st->dirty_mu);
	int r = 0, pr = 0;
	if (n >= SYNCFS_MIN_OBJECTS) {
		r = flush_by_syncfs(st, mine, n);
	} else {
		for (size_t i = 0; i < n; i++) {
			int e = osd__data_flush_obj(st, mine[i]);
			if (e && !r)
				r = e;
		}
	}
	/* Packed objects' new slots: their records go into the log, after the
	 * dirty flags were cleared above. A change made before the clear is
	 * logged here; one made after marks its object dirty again. (Logged
	 * before the clear, a change in between left its object pending with
	 * the flag cleared and off the list: no later flush logged it.) Not
	 * when FORMAT, holding st->ns, wipes everything. */
	for (size_t i = 0; !wiping && i < n; i++) {
		int e = osd__pack_log_pending(st, mine[i]);
		if (e && !pr)
			pr = e;
	}
	for (size_t i = 0; i < n; i++) {
		if (pr) {
			atomic_store(&mine[i]->io->dirty, 0);
			mark_dirty(st, mine[i]); /* kept for a retry */
		}
		osd__obj_put(st, mine[i]);
	}
	free(mine);
	return r ? r : pr;
}

/* fsync every fan-out directory that gained a file since its last fsync. */
int osd__data_sync_dirs(struct osd_store *st)
{
	int r = 0;
	for (unsigned d = 0; d < OSD__FANOUT; d++)
		if (atomic_load(&st->dirs_dirty[d / 64]) & (1ULL << (d % 64))) {
			int e = fsync_dir(st, d);
			if (e && !r)
				r = e;
		}
	return r;
}

/* ---- deferred unlink of removed objects' files ----------------------------------- */

void osd__data_unlink_later(struct osd_store *st, struct osd__obj *obj, uint64_t pos)
{
	struct osd__unlink *u = malloc(sizeof(*u));
	if (!u)
		return; /* the file becomes an orphan, removed at the next open */
	u->gen = obj->gen;
	u->pos = pos;
	/* Removal closed the descriptor unless I/O still holds it; that I/O may
	 * write after this, so its file must not get a new owner. */
	pthread_mutex_lock(&obj->mu);
	u->recycle = !obj->io || obj->io->fd < 0;
	pthread_mutex_unlock(&obj->mu);
	u->next = NULL;
	pthread_mutex_lock(&st->unlink_mu);
	*st->unlinks_tail = u;
	st->unlinks_tail = &u->next;
	pthread_mutex_unlock(&st->unlink_mu);
}

/* Unlink files whose REMOVE record is durable (log position <= @p synced). */
void osd__data_unlink_done(struct osd_store *st, uint64_t synced)
{
	struct osd__unlink *done = NULL, **tail = &done;
	osd__pack_release(st, synced);
	pthread_mutex_lock(&st->unlink_mu);
	while (st->unlinks && st->unlinks->pos <= synced) {
		struct osd__unlink *u = st->unlinks;
		st->unlinks = u->next;
		u->next = NULL;
		*tail = u;
		tail = &u->next;
	}
	if (!st->unlinks)
		st->unlinks_tail = &st->unlinks;
	pthread_mutex_unlock(&st->unlink_mu);
	while (done) {
		struct osd__unlink *next = done->next;
		char name[32];
		unsigned dir;
		osd__data_path(done->gen, name, &dir);
		if (!done->recycle || osd__pool_put(st, name) != 0)
			(void)unlinkat(st->datafd, name, 0);
		char sname[40];
		osd__sum_path(done->gen, sname);
		if (!done->recycle || osd__pool_put(st, sname) != 0)
			(void)unlinkat(st->datafd, sname, 0);
		free(done);
		done = next;
	}
}

/* ---- open-time scan -------------------------------------------------------------- */

struct gen_ent {
	uint64_t gen;
	struct osd__obj *obj;
};

static int gen_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct gen_ent *)a)->gen, y = ((const struct gen_ent *)b)->gen;
	return x < y ? -1 : x > y;
}

/*
 * Sort by generation: a radix sort, one pass per byte the largest
 * generation has (three at 16M). qsort() of the map was a sixth of the
 * open of 1M objects. Falls back to qsort() without memory for the copy.
 */
static void gen_sort(struct gen_ent *map, size_t n)
{
	uint64_t all = 0;
	for (size_t i = 0; i < n; i++)
		all |= map[i].gen;
	struct gen_ent *tmp = n > 1 ? malloc(n * sizeof(*tmp)) : NULL;
	if (!tmp) {
		qsort(map, n, sizeof(*map), gen_cmp);
		return;
	}
	struct gen_ent *from = map, *to = tmp;
	for (unsigned shift = 0; shift < 64 && all >> shift; shift += 8) {
		size_t at[256] = { 0 };
		for (size_t i = 0; i < n; i++)
			at[from[i].gen >> shift & 0xFF]++;
		for (size_t k = 0, sum = 0; k < 256; k++) {
			size_t c = at[k];
			at[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[at[from[i].gen >> shift & 0xFF]++] = from[i];
		struct gen_ent *t = from;
		from = to;
		to = t;
	}
	if (from != map)
		memcpy(map, from, n * sizeof(*map));
	free(tmp);
}

int osd__parse_hex16(const char *name, uint64_t *gen)
{
	uint64_t g = 0;
	size_t i;
	for (i = 0; name[i]; i++) {
		char c = name[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (v < 0 || i >= 16)
			return -1;
		g = g << 4 | (uint64_t)v;
	}
	*gen = g;
	return i == 16 ? 0 : -1;
}

/* Data files no record names, reported in one note. */
struct unnamed {
	int deleted, quarantined, failed;
	char names[200];
};

/*
 * A file no object refers to. Deleted only when a replayed REMOVE let go of
 * it (its unlink did not happen before a crash); anything else (a creation
 * whose record was lost, or records lost to damage) goes to quarantine/.
 */
static void unnamed_file(struct osd_store *st, int dfd, const char *name, uint64_t gen,
			 struct unnamed *u)
{
	if (osd__recover_gone(st, gen)) {
		(void)unlinkat(dfd, name, 0);
		u->deleted++;
		return;
	}
	if (osd__quarantine(st, dfd, name) != 0) {
		u->failed++; /* left in place: generations above it are new */
		return;
	}
	size_t n = strlen(u->names), k = strlen(name);
	if (u->quarantined++ < 8 && n + k + 2 <= sizeof(u->names)) {
		if (n)
			u->names[n++] = ' ';
		memcpy(u->names + n, name, k + 1);
	}
}

static void unnamed_report(struct osd_store *st, const struct unnamed *u)
{
	if (u->deleted)
		osd__store_note(st, OSD_STORE_LOG_NOTICE, "removed %d data file(s) of removals "
				"a crash interrupted", u->deleted);
	if (u->quarantined)
		osd__store_note(st, OSD_STORE_LOG_WARNING, "%s: %d data file(s) no record names "
				"moved to quarantine/: %s%s", st->path, u->quarantined, u->names,
				u->quarantined > 8 ? " ..." : "");
	if (u->failed)
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s: %d data file(s) no record names could "
				"not be moved to quarantine/ and stay in data/", st->path,
				u->failed);
}

/* The sidecar of @p o attached (@p have: its data file exists); a data file
 * that attaching made (the sidecar's length) is accounted. */
static int attach_sums(struct osd_store *st, struct osd__obj *o, int have,
		       struct osd__sum_scan *sc)
{
	o->has_sums = 0;
	int r = osd__sum_attach(st, o, have, sc);
	if (!r && o->has_file && !have) {
		struct stat sb;
		char name[32];
		unsigned dd;
		osd__data_path(o->gen, name, &dd);
		if (fstatat(st->datafd, name, &sb, 0) == 0)
			osd__data_account(st, o, (uint64_t)sb.st_blocks * 512);
	}
	return r;
}

/* Open: remember a packed object whose file a DATA record named. */
static void stale_push(struct osd_store *st, struct osd__obj *o)
{
	if (st->nstale == st->stale_cap) {
		size_t cap = st->stale_cap ? 2 * st->stale_cap : 16;
		struct osd__stale *v = realloc(st->stale, cap * sizeof(*v));
		if (!v)
			return; /* the file stays until the next move truncates it */
		st->stale = v;
		st->stale_cap = cap;
	}
	st->stale[st->nstale++] = (struct osd__stale){ o->pid, o->oid, o->gen };
}

int osd__data_attach(struct osd_store *st, struct osd__obj *o, struct osd__sum_scan *sc)
{
	o->attach = 0;
	if (o->type != OSD_OBJ_USER)
		return 0;
	/* A file of a packed object is a move out of the pack a crash undid,
	 * unless a later record of the replay logs the move: told at the end
	 * of the open (osd__data_open_lazy). Otherwise the next move truncates
	 * it (fd_get_locked). */
	if (o->packed) {
		if (sc && sc == st->attach_sc)
			stale_push(st, o);
		return 0;
	}
	uint64_t len = o->length, used = o->used;
	int file = o->has_file, sums = o->has_sums, r = 0;
	char name[32];
	unsigned dir;
	struct stat sb;
	osd__data_path(o->gen, name, &dir);
	int have = fstatat(st->datafd, name, &sb, 0) == 0;
	if (!have && errno != ENOENT) {
		r = -errno;
		o->sums_bad = 1; /* its data cannot be told: every access fails */
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s: data/%s of object 0x%" PRIx64 " in "
				"partition 0x%" PRIx64 " cannot be read: %s", st->path, name,
				o->oid, o->pid, strerror(-r));
		return r;
	}
	o->has_file = have;
	o->length = have ? (uint64_t)sb.st_size : 0;
	osd__data_account(st, o, have ? (uint64_t)sb.st_blocks * 512 : 0);
	if (st->sums) {
		struct osd__sum_scan one;
		memset(&one, 0, sizeof(one));
		r = attach_sums(st, o, have, sc ? sc : &one);
		if (!sc) {
			int e = osd__sum_settle(st, &one);
			r = r ? r : e;
			osd__sum_report(st, &one);
		}
	}
	if (o->length != len || o->used != used || o->has_file != file || o->has_sums != sums)
		osd__obj_changed(o); /* its FILE record is no longer its state */
	return r;
}

/* Attach the checksum sidecars of the objects found (osd__sum_attach). */
static int scan_sums(struct osd_store *st, struct gen_ent *map, size_t n)
{
	struct osd__sum_scan sc;
	int r = 0;
	memset(&sc, 0, sizeof(sc));
	for (size_t i = 0; i < n && !r; i++) {
		struct osd__obj *o = map[i].obj;
		if (o->has_sums || o->has_file)
			r = attach_sums(st, o, o->has_file, &sc);
	}
	int e = osd__sum_settle(st, &sc);
	if (!r)
		r = e;
	osd__sum_report(st, &sc);
	return r;
}

/*
 * The user objects in memory sorted by generation, made when the scan meets
 * its first file. The scan runs only when objects that hold data are all in
 * memory (a checkpoint before version 4 loads them at the open); a file of
 * any other is resolved through the checkpoint's records (scan_unknown()).
 */
static int gen_map(struct osd_store *st, struct gen_ent **mapp, size_t *np)
{
	struct gen_ent *map = malloc((st->nobjs + 1) * sizeof(*map));
	size_t n = 0;
	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < st->hash_size; i++)
		for (struct osd__obj *o = st->hash[i]; o; o = o->hnext)
			if (o->type == OSD_OBJ_USER)
				map[n++] = (struct gen_ent){ o->gen, o };
	gen_sort(map, n);
	*mapp = map;
	*np = n;
	return 0;
}

/* A data file or sidecar of generation @p gen the scan met. */
struct scan_file {
	uint64_t gen;
	unsigned dir;
	int sidecar;
};

struct scan {
	struct gen_ent *map;
	size_t n;
	struct unnamed u;
	struct scan_file *unknown; /* files of no object in memory */
	size_t nunknown, unknown_cap;
};

/*
 * Attach file @p name (in fan-out dir @p dfd) to its object. @p defer: a
 * file of no object in memory is kept in sc->unknown for later instead of
 * being taken for one nothing names.
 */
static int scan_file(struct osd_store *st, struct scan *sc, int dfd, unsigned dir,
		     const char *name, const struct scan_file *f, int defer)
{
	struct gen_ent key = { .gen = f->gen }, *hit;
	hit = bsearch(&key, sc->map, sc->n, sizeof(*sc->map), gen_cmp);
	if (!hit && defer) {
		if (sc->nunknown == sc->unknown_cap) {
			size_t cap = sc->unknown_cap ? 2 * sc->unknown_cap : 64;
			struct scan_file *u = realloc(sc->unknown, cap * sizeof(*u));
			if (!u)
				return -ENOMEM;
			sc->unknown = u;
			sc->unknown_cap = cap;
		}
		sc->unknown[sc->nunknown] = *f;
		sc->unknown[sc->nunknown++].dir = dir;
		return 0;
	}
	/* a packed object's file: its move out of the pack was never logged,
	 * so the file holds nothing flushed */
	if (!hit || hit->obj->packed) {
		unnamed_file(st, dfd, name, f->gen, &sc->u);
		return 0;
	}
	if (f->sidecar) {
		hit->obj->has_sums = 1;
		return 0;
	}
	struct stat sb;
	if (fstatat(dfd, name, &sb, 0) != 0)
		return -errno;
	hit->obj->has_file = 1;
	hit->obj->length = (uint64_t)sb.st_size;
	osd__data_account(st, hit->obj, (uint64_t)sb.st_blocks * 512);
	return 0;
}

/*
 * Files of objects not in memory: a crash before the first record naming
 * their data, or damage. The checkpoint's records name their owners, if any
 * (one pass over them, only when there are such files).
 */
static int scan_unknown(struct osd_store *st, struct scan *sc)
{
	if (!sc->nunknown)
		return 0;
	uint64_t *gens = malloc(sc->nunknown * sizeof(*gens));
	if (!gens)
		return -ENOMEM;
	for (size_t i = 0; i < sc->nunknown; i++)
		gens[i] = sc->unknown[i].gen;
	int r = osd__table_find_gens(st, gens, sc->nunknown);
	free(gens);
	free(sc->map);
	sc->map = NULL;
	if (!r)
		r = gen_map(st, &sc->map, &sc->n);
	for (size_t i = 0; i < sc->nunknown && !r; i++) {
		const struct scan_file *f = &sc->unknown[i];
		char base[24];
		snprintf(base, sizeof(base), "%016" PRIx64 "%s", f->gen,
			 f->sidecar ? OSD__SUM_SUFFIX : "");
		int dfd = osd__data_open_dir(st, f->dir);
		if (dfd < 0)
			return dfd;
		r = scan_file(st, sc, dfd, f->dir, base, f, 0);
		close(dfd);
	}
	return r;
}

/*
 * Attach every data file to its object (length and used bytes from the
 * file). Files no object refers to are deleted or quarantined
 * (unnamed_file()). New objects get generations above every file seen.
 */
int osd__data_scan(struct osd_store *st)
{
	struct scan sc = { .map = NULL };
	int r = 0;
	uint64_t max_gen = 0;
	for (unsigned d = 0; d < OSD__FANOUT && !r; d++) {
		int dfd = osd__data_open_dir(st, d);
		if (dfd == -ENOENT)
			continue; /* not made yet: no file ever needed it */
		DIR *dh = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (!dh) {
			r = dfd < 0 ? dfd : -errno;
			if (dfd >= 0)
				close(dfd);
			break;
		}
		struct dirent *de;
		while (!r && (de = readdir(dh)) != NULL) {
			struct scan_file f;
			char base[20];
			f.sidecar = strlen(de->d_name) == 16 + strlen(OSD__SUM_SUFFIX) &&
				    !strcmp(de->d_name + 16, OSD__SUM_SUFFIX);
			snprintf(base, sizeof(base), "%.16s", de->d_name);
			if (osd__parse_hex16(f.sidecar ? base : de->d_name, &f.gen) != 0)
				continue;
			if (f.gen > max_gen)
				max_gen = f.gen;
			if (!sc.map && (r = gen_map(st, &sc.map, &sc.n)) != 0)
				break;
			r = scan_file(st, &sc, dfd, d, de->d_name, &f, st->ckfd >= 0);
		}
		closedir(dh);
	}
	if (!r)
		r = scan_unknown(st, &sc);
	if (!r && st->sums)
		r = scan_sums(st, sc.map, sc.n);
	free(sc.map);
	free(sc.unknown);
	if (max_gen >= st->next_gen)
		st->next_gen = max_gen + 1;
	unnamed_report(st, &sc.u);
	return r;
}

/* Generation @p gen's data file or sidecar (@p sidecar) that no record names
 * is deleted (@p gone: a replayed REMOVE let go of it) or goes to
 * quarantine/; @p u counts. */
static void lazy_unnamed(struct osd_store *st, uint64_t gen, int sidecar, int gone,
			 struct unnamed *u)
{
	char name[40];
	unsigned dir;
	struct stat sb;
	if (sidecar)
		osd__sum_path(gen, name);
	else
		osd__data_path(gen, name, &dir);
	if (gone) {
		u->deleted += unlinkat(st->datafd, name, 0) == 0;
		return;
	}
	if (fstatat(st->datafd, name, &sb, 0) != 0)
		return;
	int dfd = osd__data_open_dir(st, (unsigned)(gen & 0xFF));
	if (dfd < 0) {
		u->failed++;
		return;
	}
	unnamed_file(st, dfd, strchr(name, '/') + 1, gen, u);
	close(dfd);
}

int osd__data_open_lazy(struct osd_store *st)
{
	struct unnamed u = { 0 };
	/* the files of objects a replayed REMOVE let go and a crash kept */
	for (size_t i = 0; i < st->ngone; i++)
		for (int sc = 0; sc < 2; sc++)
			lazy_unnamed(st, st->gone[i], sc, 1, &u);
	/* Generations from the next on were never given to an object any
	 * record names; a file of one is a creation whose records a crash lost.
	 * No file exists above the highest GENS record (fd_get_locked). */
	for (uint64_t g = st->next_gen; g < st->gens_reserved; g++)
		for (int sc = 0; sc < 2; sc++)
			lazy_unnamed(st, g, sc, 0, &u);
	/* packed objects whose file a DATA record named, still packed: the
	 * move out of the pack was never logged, so the file holds nothing
	 * a flush made durable */
	for (size_t i = 0; i < st->nstale; i++) {
		struct osd__obj *o = osd__ns_lookup(st, st->stale[i].pid, st->stale[i].oid);
		if (o && o->gen == st->stale[i].gen && o->packed)
			for (int sc = 0; sc < 2; sc++)
				lazy_unnamed(st, o->gen, sc, 0, &u);
	}
	free(st->stale);
	st->stale = NULL;
	st->nstale = st->stale_cap = 0;
	unnamed_report(st, &u);
	int r = 0;
	if (st->attach_sc) {
		r = osd__sum_settle(st, st->attach_sc);
		osd__sum_report(st, st->attach_sc);
	}
	return r;
}

/* ---- public API ------------------------------------------------------------------- */

/* A referenced user object, or -ENOENT / -EINVAL. */
static int user_obj(struct osd_store *st, uint64_t pid, uint64_t oid, struct osd__obj **out)
{
	struct osd__obj *o = osd__ns_get(st, pid, oid);
	if (!o)
		return -ENOENT;
	if (o->type != OSD_OBJ_USER || o->meta_bad) {
		osd__obj_put(st, o);
		return o->meta_bad ? -EIO : -EINVAL;
	}
	*out = o;
	return 0;
}

static int iov_total(const struct iovec *iov, int iovcnt, uint64_t *total)
{
	uint64_t t = 0;
	if (iovcnt < 0 || (iovcnt && !iov))
		return -EINVAL;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > INT64_MAX - t)
			return -EINVAL;
		t += iov[i].iov_len;
	}
	*total = t;
	return 0;
}

/*
 * Before a change of an object's data file: its first change under each
 * value of st->data_epoch (one per checkpoint) logs a DATA record, so that
 * an open after a crash reads the files of the objects the log names
 * instead of every file (osd__data_attach). io->changing counts the change
 * until data_unmark(): a checkpoint that bumps the epoch after this check
 * sees it and names the object in its new log itself. Either this load of
 * the epoch sees the bump, or the checkpoint sees the count (both atomics
 * sequentially consistent). On error nothing is counted.
 */
static int data_mark(struct osd_store *st, struct osd__obj *o)
{
	atomic_fetch_add(&o->io->changing, 1);
	uint32_t ep = atomic_load(&st->data_epoch);
	if (!atomic_load(&st->log_files) || atomic_load(&o->data_epoch) == ep)
		return 0;
	int r = 0;
	osd__change_lock(st, 0);
	pthread_mutex_lock(&o->mu);
	/* a checkpoint may have run meanwhile */
	if (atomic_load(&o->data_epoch) != atomic_load(&st->data_epoch) && !o->removed &&
	    (r = osd__data_name(st, o)) == 0) {
		osd__obj_changed(o);
		o->ckpt_written = 0;
	}
	pthread_mutex_unlock(&o->mu);
	osd__change_unlock(st);
	if (r)
		atomic_fetch_sub(&o->io->changing, 1);
	return r;
}

int osd__data_name(struct osd_store *st, struct osd__obj *o)
{
	uint8_t b[16];
	osd__put_be64(b, o->pid);
	osd__put_be64(b + 8, o->oid);
	int r = osd__log_append(&st->log, OSD__REC_DATA, b, sizeof(b), NULL, 0, NULL);
	if (!r) {
		atomic_store(&o->data_epoch, atomic_load(&st->data_epoch));
		atomic_fetch_add(&st->data_named, 1);
	}
	return r;
}

/* The change data_mark() counted is accounted (length and used bytes set). */
static void data_unmark(struct osd__obj *o)
{
	atomic_fetch_sub(&o->io->changing, 1);
}

/* Make a data change durable now when asked to (FUA or sync_writes). */
static int data_commit(struct osd_store *st, struct osd__obj *o, unsigned flags)
{
	if (!(flags & OSD_STORE_FUA) && !st->sync_writes)
		return 0;
	int r = osd__pack_log_pending(st, o);
	if (!r)
		r = osd__data_flush_obj(st, o);
	/* The object's CREATE record must be durable for its data to be found. */
	return r ? r : osd__store_commit(st, UINT64_MAX, OSD_STORE_FUA);
}

int osd__pwrite_all(int fd, const struct iovec *iov, int iovcnt, uint64_t off)
{
	for (int i = 0; i < iovcnt; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;
		while (left) {
			ssize_t n = pwrite(fd, p, left, (off_t)off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return n < 0 ? -errno : -EIO;
			p += n;
			off += (uint64_t)n;
			left -= (size_t)n;
		}
	}
	return 0;
}

/*
 * Start writing large extents back now, without waiting: the disk then
 * works while the next request is copied, and a later flush (fdatasync)
 * finds most pages already clean. Purely a hint: errors surface at flush.
 */
static void start_writeback(int fd, uint64_t off, uint64_t len)
{
	if (len >= WRITEBACK_MIN)
		(void)sync_file_range(fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
}

/* A checksum mismatch (or unreadable checksums) at byte @p bad of @p o. */
static void report_bad(struct osd_store *st, struct osd__obj *o, uint64_t bad, const char *what)
{
	char name[48];
	unsigned dir;
	if (o->packed)
		snprintf(name, sizeof(name), "%s slot %" PRIu32, OSD__PACK_NAME, o->slot);
	else
		osd__data_path(o->gen, name, &dir);
	osd__store_note(st, OSD_STORE_LOG_ERR, "%s: %s object 0x%" PRIx64 " in partition 0x%"
			PRIx64 " (data/%s): %s at byte %" PRIu64 "; MEDIUM ERROR returned",
			st->path, what, o->oid, o->pid, name,
			o->sums_bad ? "checksums missing or damaged" : "checksum mismatch", bad);
}

/* ---- packed small objects (pack.c) ---------------------------------------------------- */

enum pack_op { PACK_WRITE, PACK_APPEND, PACK_TRUNCATE, PACK_PUNCH };

/* Copy [off, off + total) of the iovecs into @p dst. */
static void iov_copy_in(uint8_t *dst, const struct iovec *iov, int iovcnt)
{
	for (int i = 0; i < iovcnt; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
}

/*
 * Move a packed object's data into its own data file: written, checksummed
 * and made durable (with its directory entry) before the state that says
 * so can be logged, so no record ever names a file that a crash can lose
 * while the slot is already reused. wmu and obj->mu held.
 */
static int pack_migrate(struct osd_store *st, struct osd__obj *o, uint64_t *bad)
{
	uint8_t img[OSD__PACK_SLOT];
	uint8_t *ent = NULL;
	int fd = -1, evict = 0, had = o->has_file;
	uint64_t len = o->length;
	int r = osd__pack_load(st, o, img);
	if (r == -EIO)
		*bad = 0;
	if (!r)
		r = fd_get_for_change(st, o, 1, &fd, &evict);
	if (r)
		return r;
	int sfd = o->io->sfd;
	struct stat sb;
	/* a migration that failed before may have left bytes in the file */
	if (had && fstat(fd, &sb) == 0 && sb.st_size)
		r = osd__sum_truncate(o, fd, sfd, (uint64_t)sb.st_size, 0, bad);
	struct iovec iov = { img, (size_t)len };
	if (!r && len)
		r = osd__sum_prepare_write(o, fd, sfd, 0, 0, &iov, 1, len, &ent, bad);
	if (!r && len)
		r = osd__pwrite_all(fd, &iov, 1, 0);
	if (!r && ent)
		r = osd__sum_put(sfd, 0, ent, (size_t)((len - 1) / OSD__SUM_BLOCK + 1));
	free(ent);
	if (!r && (fdatasync(fd) != 0 || (sfd >= 0 && fdatasync(sfd) != 0)))
		r = -errno;
	if (!r && atomic_exchange(&o->io->dir_dirty, 0)) {
		char name[32];
		unsigned dir;
		osd__data_path(o->gen, name, &dir);
		r = fsync_dir(st, dir);
		if (r)
			atomic_store(&o->io->dir_dirty, 1);
	}
	osd__store_space(st, r, "data");
	if (!r) {
		account_fd_locked(st, o, fd);
		osd__pack_unpacked(st, o);
	}
	atomic_fetch_add(&o->io->wseq, 1);
	o->io->fd_users--; /* fd_put() without retaking obj->mu */
	if (evict)
		fd_evict(st);
	return r;
}

/*
 * A data change of an object that has no data file, when packing is on:
 * made on its slot if the result fits one (*handled = 1), else a packed
 * object first moves into a file and the caller goes on as for any file.
 * For PACK_WRITE/APPEND @p a is the offset and @p b the byte count; for
 * PACK_TRUNCATE @p a is the length; for PACK_PUNCH [a, a + b).
 */
static int pack_change(struct osd_store *st, struct osd__obj *o, enum pack_op op, uint64_t a,
		       uint64_t b, const struct iovec *iov, int iovcnt, unsigned flags,
		       uint64_t *where, uint64_t *bad, int *handled)
{
	int r = 0, moved = 0;
	*handled = 0;
	if (st->packfd < 0)
		return 0;
	if (osd__pack_frees_many(st) && (r = osd__store_commit(st, UINT64_MAX, OSD_STORE_FUA)) != 0)
		return r;
	if (!obj_io(o))
		return -ENOMEM;
	pthread_mutex_lock(&o->io->wmu);
	pthread_mutex_lock(&o->mu);
	uint64_t len = o->length, start = op == PACK_APPEND ? len : a, end, newlen = len;
	int fits;
	if (op == PACK_TRUNCATE) {
		start = len;
		end = newlen = a;
		fits = a <= OSD__PACK_SLOT;
	} else if (op == PACK_PUNCH) {
		end = start >= len ? start : b > len - start ? len : start + b;
		fits = o->packed;
	} else {
		fits = start <= OSD__PACK_SLOT && b <= OSD__PACK_SLOT - start;
		end = fits ? start + b : start;
		newlen = end > len ? end : len;
	}
	/* without pack_on (osd_store_options.no_pack) new objects get files */
	if (!o->removed && !o->has_file && fits && (st->pack_on || o->packed)) {
		*handled = 1;
		uint8_t img[OSD__PACK_SLOT];
		/* a change that replaces every byte reads nothing (and heals a
		 * damaged slot, as a whole block written heals a file's block) */
		int whole = op == PACK_TRUNCATE ? a == 0 : op != PACK_PUNCH && start == 0 && end >= len;
		if (op != PACK_PUNCH)
			r = space_check_locked(st, o, start, end);
		if (!r && whole)
			memset(img, 0, sizeof(img));
		else if (!r && (r = osd__pack_load(st, o, img)) == -EIO)
			*bad = 0;
		if (!r && (op == PACK_WRITE || op == PACK_APPEND))
			iov_copy_in(img + start, iov, iovcnt);
		else if (!r && op == PACK_TRUNCATE)
			memset(img + newlen, 0, OSD__PACK_SLOT - newlen);
		else if (!r && start < end)
			memset(img + start, 0, end - start);
		int change = op == PACK_TRUNCATE ? newlen != len : op == PACK_PUNCH ? start < end : b;
		if (!r && change)
			r = osd__pack_store(st, o, img, newlen);
		if (where)
			*where = start;
	} else if (!o->removed && o->packed) {
		r = pack_migrate(st, o, bad); /* then the file's way */
		moved = !r;
	}
	pthread_mutex_unlock(&o->mu);
	pthread_mutex_unlock(&o->io->wmu);
	/* a move is logged by the next flush even if the change after it fails */
	if ((*handled || moved) && !r)
		mark_dirty(st, o);
	/* the new state rides on the caller's stamp, or is logged now (after
	 * wmu: st->ns is taken before it elsewhere) */
	if ((*handled || moved) && !r && !(flags & OSD_STORE_STAMPED))
		r = osd__pack_log_pending(st, o);
	return r;
}

/* The end of a truncate or punch that pack_change() made or failed. */
static int pack_done(struct osd_store *st, struct osd__obj *o, int r, uint64_t bad,
		     const char *what, unsigned flags)
{
	if (r == -EIO)
		report_bad(st, o, bad, what);
	if (!r)
		r = data_commit(st, o, flags);
	osd__obj_put(st, o);
	return r;
}

/* READ of a packed object. obj->mu held. */
static int pack_read_locked(struct osd_store *st, struct osd__obj *o, uint64_t offset,
			    const struct iovec *iov, int iovcnt, uint64_t total, uint64_t *got)
{
	uint8_t img[OSD__PACK_SLOT];
	uint64_t want = offset >= o->length ? 0 : o->length - offset < total ?
			o->length - offset : total;
	*got = 0;
	if (!want)
		return 0;
	int r = osd__pack_load(st, o, img);
	for (int i = 0; !r && i < iovcnt && *got < want; i++) {
		size_t n = iov[i].iov_len < want - *got ? iov[i].iov_len : (size_t)(want - *got);
		memcpy(iov[i].iov_base, img + offset + *got, n);
		*got += n;
	}
	return r;
}

/* Write at @p off with obj->mu held for the length/quota bookkeeping; with
 * checksums, wmu orders the whole change (sums.c). */
static int data_write(struct osd_store *st, struct osd__obj *o, int append, uint64_t off,
		      const struct iovec *iov, int iovcnt, uint64_t total, unsigned flags,
		      uint64_t *where, uint64_t *bad)
{
	int fd = -1, evict = 0, r, have = 0;
	/* appends are ordered by obj->mu, or by wmu with checksums */
	int hold = append && !st->sums;
	uint8_t *ent = NULL;
	r = pack_change(st, o, append ? PACK_APPEND : PACK_WRITE, off, total, iov, iovcnt, flags,
			where, bad, &have);
	if (r == -EIO)
		report_bad(st, o, *bad, "write of");
	if (r || have)
		return r;
	if (!obj_io(o))
		return -ENOMEM;
	if ((r = data_mark(st, o)) != 0)
		return r;
	if (st->sums)
		pthread_mutex_lock(&o->io->wmu);
	pthread_mutex_lock(&o->mu);
	if (append)
		off = o->length;
	if (off > (uint64_t)INT64_MAX - total) {
		pthread_mutex_unlock(&o->mu);
		if (st->sums)
			pthread_mutex_unlock(&o->io->wmu);
		data_unmark(o);
		return -EFBIG;
	}
	r = o->removed ? -ENOENT : space_check_locked(st, o, off, off + total);
	if (!r && o->sums_bad) {
		*bad = off;
		r = -EIO;
	}
	if (!r)
		r = fd_get_for_change(st, o, 1, &fd, &evict);
	have = !r;
	int trust = have && trusting(st);
	uint64_t epoch = trust ? osd__trust_change_begin(o, fd, blk_lo(off), blk_hi(off + total)) : 0;
	int sfd = o->io->sfd;
	uint64_t len = o->length;
	if (!hold)
		pthread_mutex_unlock(&o->mu); /* plain writes run in parallel */
	if (have && st->sums)
		r = osd__sum_prepare_write(o, fd, sfd, len, off, iov, iovcnt, total, &ent, bad);
	if (!r) {
		r = osd__pwrite_all(fd, iov, iovcnt, off);
		if (ent && !r)
			r = osd__sum_put(sfd, off / OSD__SUM_BLOCK, ent,
					 (size_t)((off + total - 1) / OSD__SUM_BLOCK -
						  off / OSD__SUM_BLOCK + 1));
		else if (ent) { /* what reached the file, old or new, is what counts */
			(void)osd__sum_recompute(fd, sfd, off + total, off / OSD__SUM_BLOCK,
						 (off + total - 1) / OSD__SUM_BLOCK + 1);
			o->io->sum_alloc = 0; /* it may punch holes in the sidecar */
		}
		if (!r)
			start_writeback(fd, off, total);
		osd__store_space(st, r, "data");
	}
	free(ent);
	if (have) {
		if (!hold)
			pthread_mutex_lock(&o->mu);
		account_fd_locked(st, o, fd);
		/* whole blocks hold exactly the bytes their checksums were computed from */
		if (trust && !r)
			osd__trust_grant(o, epoch, blk_hi(off), (off + total) / OSD__SUM_BLOCK);
		pthread_mutex_unlock(&o->mu);
		fd_put(st, o);
		mark_dirty(st, o);
	} else if (hold) {
		pthread_mutex_unlock(&o->mu);
	}
	data_unmark(o);
	if (st->sums) {
		atomic_fetch_add(&o->io->wseq, 1);
		pthread_mutex_unlock(&o->io->wmu);
	}
	if (r == -EIO)
		report_bad(st, o, *bad, "write of");
	if (evict)
		fd_evict(st);
	if (where)
		*where = off;
	return r;
}

int osd_store_write(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t offset,
		    const struct iovec *iov, int iovcnt, unsigned flags)
{
	struct osd__obj *o;
	uint64_t total, bad = 0;
	int r = iov_total(iov, iovcnt, &total);
	if (!r)
		r = user_obj(st, pid, oid, &o);
	if (r)
		return r;
	if (total)
		r = data_write(st, o, 0, offset, iov, iovcnt, total, flags, NULL, &bad);
	if (!r)
		r = data_commit(st, o, flags);
	osd__obj_put(st, o);
	return r;
}

int osd_store_append(struct osd_store *st, uint64_t pid, uint64_t oid,
		     const struct iovec *iov, int iovcnt, unsigned flags, uint64_t *offset)
{
	struct osd__obj *o;
	uint64_t total, where = 0, bad = 0;
	int r = iov_total(iov, iovcnt, &total);
	if (!r)
		r = user_obj(st, pid, oid, &o);
	if (r)
		return r;
	r = data_write(st, o, 1, 0, iov, iovcnt, total, flags, &where, &bad);
	if (!r)
		r = data_commit(st, o, flags);
	if (!r && offset)
		*offset = where;
	osd__obj_put(st, o);
	return r;
}

/* pread [offset, offset + want) into the iovecs; *got: bytes before EOF. */
static int read_iov(int fd, uint64_t offset, const struct iovec *iov, int iovcnt, uint64_t want,
		    uint64_t *gotp)
{
	uint64_t got = 0;
	int r = 0;
	for (int i = 0; i < iovcnt && got < want && !r; i++) {
		uint8_t *p = iov[i].iov_base;
		size_t left = iov[i].iov_len < want - got ? iov[i].iov_len : (size_t)(want - got);
		while (left) {
			ssize_t n = pread(fd, p, left, (off_t)(offset + got));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				r = -errno;
			if (n <= 0)
				break; /* EOF: truncated meanwhile; a short read */
			p += n;
			got += (uint64_t)n;
			left -= (size_t)n;
		}
		if (left)
			break;
	}
	*gotp = got;
	return r;
}

/* preadv2(RWF_NOWAIT) of [offset, offset + want): 1 if every byte came from
 * pages in the page cache, 0 if some page was missing (its read may have
 * started) or any error, -EOPNOTSUPP if the filesystem cannot. */
static int read_nowait(int fd, uint64_t offset, const struct iovec *iov, int iovcnt,
		       uint64_t want, uint64_t total)
{
	uint64_t got = 0;
	if (want == total && iovcnt <= IOV_MAX) {
		ssize_t k = preadv2(fd, iov, iovcnt, (off_t)offset, RWF_NOWAIT);
		return k < 0 && errno == EOPNOTSUPP ? -EOPNOTSUPP : k >= 0 && (uint64_t)k == want;
	}
	for (int i = 0; i < iovcnt && got < want; i++) {
		size_t n = iov[i].iov_len < want - got ? iov[i].iov_len : (size_t)(want - got);
		struct iovec one = { iov[i].iov_base, n };
		ssize_t k = preadv2(fd, &one, 1, (off_t)(offset + got), RWF_NOWAIT);
		if (k < 0 && errno == EOPNOTSUPP)
			return -EOPNOTSUPP;
		if (k < 0 || (size_t)k != n)
			return 0;
		got += n;
	}
	return 1;
}

/* What a read found out for read trust (read_copy). */
struct read_trust {
	int on;                  /* the store trusts verified blocks */
	int hit;                 /* every block was trusted and came from its verified page */
	uint64_t epoch;          /* of the copy: a grant must find it unchanged */
	struct timespec c0;      /* the file's ctime before the copy ... */
	int has_c0;              /* ... when the store did not know it (!tvalid) */
};

/*
 * Copy [offset, offset + want) out of the data file. With read trust, the
 * copy is tried from the page cache alone (RWF_NOWAIT), under a slot that
 * tells other copies which blocks it may make the kernel read from disk
 * until it has bumped the epoch (trust.c).
 */
static int read_copy(struct osd_store *st, struct osd__obj *o, int fd, uint64_t offset,
		     const struct iovec *iov, int iovcnt, uint64_t want, uint64_t total,
		     uint64_t *gotp, struct read_trust *t)
{
	uint64_t lo = blk_lo(offset), hi = blk_hi(offset + want);
	t->hit = 0;
	if (!t->on || !want)
		return read_iov(fd, offset, iov, iovcnt, want, gotp);
	pthread_mutex_lock(&o->mu);
	int slot = osd__trust_copy_begin(o, lo, hi);
	int all = slot >= 0 && osd__trust_covers(o, lo, hi);
	/* no slot: no RWF_NOWAIT try; the epoch moves before the read */
	t->epoch = slot >= 0 ? atomic_load(&o->io->tepoch) : osd__trust_fault(o, lo, hi);
	/* the ctime before the copy is needed only to learn it (trust.c) */
	t->has_c0 = !o->io->tvalid;
	pthread_mutex_unlock(&o->mu);
	int known = !t->has_c0 || osd__trust_ctime(fd, &t->c0) == 0;
	int full = known && slot >= 0 ? read_nowait(fd, offset, iov, iovcnt, want, total) : 0;
	if (full == -EOPNOTSUPP)
		atomic_store(&st->trust_off, 1);
	struct timespec now;
	if (slot >= 0) {
		pthread_mutex_lock(&o->mu);
		if (full != 1)
			t->epoch = osd__trust_fault(o, lo, hi); /* before our read from disk */
		else if (all && osd__trust_copy_alone(o, slot, lo, hi) &&
			 osd__trust_ctime(fd, &now) == 0)
			t->hit = osd__trust_read_ok(o, t->epoch, t->has_c0 ? &t->c0 : NULL, &now);
		osd__trust_copy_end(o, slot);
		pthread_mutex_unlock(&o->mu);
	}
	if (full == 1) {
		*gotp = want;
		return 0;
	}
	return read_iov(fd, offset, iov, iovcnt, want, gotp);
}

/* After @p r of verifying [offset, offset + got) copied as @p t says. */
static void read_trust_after(struct osd_store *st, struct osd__obj *o, int fd, uint64_t offset,
			     uint64_t got, uint64_t len, int r, const struct read_trust *t)
{
	struct timespec now;
	uint64_t lo = blk_lo(offset), end = offset + got;
	/* blocks whose every byte the verification took from this copy (the
	 * last block of the object ends at its length) */
	uint64_t hi = end == len ? blk_hi(end) : end / OSD__SUM_BLOCK;
	/* a last block read in part had its other bytes read for the check
	 * (read_once cleared its folio, 64 KiB at most) */
	if (end != len && end % OSD__SUM_BLOCK)
		hi -= hi % (65536u / OSD__SUM_BLOCK);
	atomic_fetch_add(&st->blocks_verified, blk_hi(end) - lo);
	if (!t->on || !got)
		return;
	pthread_mutex_lock(&o->mu);
	if (r)
		(void)osd__trust_fault(o, lo, blk_hi(end));
	else if (offset % OSD__SUM_BLOCK == 0 && osd__trust_ctime(fd, &now) == 0 &&
		 osd__trust_read_ok(o, t->epoch, t->has_c0 ? &t->c0 : NULL, &now))
		osd__trust_grant(o, t->epoch, lo, hi);
	pthread_mutex_unlock(&o->mu);
}

static int read_once(struct osd_store *st, struct osd__obj *o, int fd, uint64_t offset,
		     const struct iovec *iov, int iovcnt, uint64_t total, uint64_t *gotp,
		     uint64_t *bad)
{
	struct read_trust t = { .on = trusting(st) };
	pthread_mutex_lock(&o->mu);
	uint64_t len = o->length;
	int sfd = o->io->sfd;
	pthread_mutex_unlock(&o->mu);
	uint64_t want = offset >= len ? 0 : len - offset < total ? len - offset : total;
	int r = read_copy(st, o, fd, offset, iov, iovcnt, want, total, gotp, &t);
	if (r == -EIO)
		*bad = offset + *gotp; /* the host's own read error */
	if (r || !st->sums) {
		if (r && t.on) {
			pthread_mutex_lock(&o->mu);
			(void)osd__trust_fault(o, blk_lo(offset), blk_hi(offset + want));
			pthread_mutex_unlock(&o->mu);
		}
		return r;
	}
	if (t.hit) {
		atomic_fetch_add(&st->blocks_trusted, blk_hi(offset + *gotp) - blk_lo(offset));
		return 0;
	}
	uint64_t end = offset + *gotp;
	if (t.on && (offset % OSD__SUM_BLOCK || (end % OSD__SUM_BLOCK && end < len))) {
		/* the check reads the other bytes of a first or last block read in
		 * part: that may bring its page in from disk */
		pthread_mutex_lock(&o->mu);
		if (offset % OSD__SUM_BLOCK)
			t.epoch = osd__trust_fault(o, blk_lo(offset), blk_lo(offset) + 1);
		if (end % OSD__SUM_BLOCK && end < len)
			t.epoch = osd__trust_fault(o, blk_lo(end), blk_lo(end) + 1);
		pthread_mutex_unlock(&o->mu);
	}
	r = osd__sum_verify(o, fd, sfd, offset, iov, iovcnt, *gotp, bad);
	read_trust_after(st, o, fd, offset, *gotp, len, r, &t);
	return r;
}

/*
 * Read and verify. A mismatch may be a write racing this lock-free read, so
 * it is read and verified once more under wmu before it counts.
 */
static int read_verified(struct osd_store *st, struct osd__obj *o, int fd, uint64_t offset,
			 const struct iovec *iov, int iovcnt, uint64_t total, uint64_t *gotp,
			 uint64_t *bad)
{
	int r = read_once(st, o, fd, offset, iov, iovcnt, total, gotp, bad);
	if (r != -EIO || !st->sums)
		return r;
	pthread_mutex_lock(&o->io->wmu);
	r = read_once(st, o, fd, offset, iov, iovcnt, total, gotp, bad);
	pthread_mutex_unlock(&o->io->wmu);
	return r;
}

int osd_store_read(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t offset,
		   const struct iovec *iov, int iovcnt, size_t *nread)
{
	struct osd__obj *o;
	uint64_t total, got = 0, bad = 0;
	int fd = -1, evict = 0;
	*nread = 0;
	int r = iov_total(iov, iovcnt, &total);
	if (!r)
		r = user_obj(st, pid, oid, &o);
	if (r)
		return r;
	pthread_mutex_lock(&o->mu);
	uint64_t len = o->length;
	if (!o->removed && o->packed) {
		r = pack_read_locked(st, o, offset, iov, iovcnt, total, &got);
		pthread_mutex_unlock(&o->mu);
		if (r == -EIO)
			report_bad(st, o, offset, "read of");
		osd__obj_put(st, o);
		*nread = (size_t)got;
		return r;
	}
	/* a removed object's file may already belong to another object */
	if (o->removed)
		r = -ENOENT;
	else if (offset < len && total && o->sums_bad)
		r = -EIO;
	else if (offset < len && total)
		r = fd_get_locked(st, o, 0, &fd, &evict);
	pthread_mutex_unlock(&o->mu);
	if (evict)
		fd_evict(st);
	if (r == -EIO) {
		report_bad(st, o, offset, "read of");
		*nread = 0;
	}
	if (r || fd < 0) {
		osd__obj_put(st, o);
		return r;
	}
	r = read_verified(st, o, fd, offset, iov, iovcnt, total, &got, &bad);
	fd_put(st, o);
	if (r == -EIO) {
		report_bad(st, o, bad, "read of");
		got = bad - offset; /* the bytes before the first bad one */
	}
	osd__obj_put(st, o);
	*nread = (size_t)got;
	return r;
}

int osd_store_truncate(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t length,
		       unsigned flags)
{
	struct osd__obj *o;
	int fd = -1, evict = 0;
	if (length > (uint64_t)INT64_MAX)
		return -EFBIG;
	uint64_t bad = 0;
	int handled = 0;
	int r = user_obj(st, pid, oid, &o);
	if (r)
		return r;
	r = pack_change(st, o, PACK_TRUNCATE, length, 0, NULL, 0, flags, NULL, &bad, &handled);
	if (r || handled)
		return pack_done(st, o, r, bad, "truncate of", flags);
	if (!obj_io(o) || (r = data_mark(st, o)) != 0) {
		osd__obj_put(st, o);
		return r ? r : -ENOMEM;
	}
	if (st->sums)
		pthread_mutex_lock(&o->io->wmu);
	pthread_mutex_lock(&o->mu);
	r = o->removed ? -ENOENT : space_check_locked(st, o, o->length, length);
	if (!r && length != o->length && o->sums_bad)
		r = -EIO;
	if (!r && length != o->length)
		r = fd_get_for_change(st, o, 1, &fd, &evict);
	if (!r && fd >= 0) {
		if (trusting(st))
			(void)osd__trust_change_begin(o, fd, blk_lo(length < o->length ? length
								    : o->length), UINT64_MAX);
		if (st->sums)
			r = osd__sum_truncate(o, fd, o->io->sfd, o->length, length, &bad);
		else if (ftruncate(fd, (off_t)length) != 0)
			r = -errno;
		account_fd_locked(st, o, fd);
	}
	pthread_mutex_unlock(&o->mu);
	data_unmark(o);
	if (st->sums) {
		atomic_fetch_add(&o->io->wseq, 1);
		pthread_mutex_unlock(&o->io->wmu);
	}
	if (r == -EIO)
		report_bad(st, o, bad, "truncate of");
	if (fd >= 0) {
		fd_put(st, o);
		mark_dirty(st, o);
	}
	if (evict)
		fd_evict(st);
	if (!r)
		r = data_commit(st, o, flags);
	osd__obj_put(st, o);
	return r;
}

int osd_store_punch(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t offset,
		    uint64_t len, unsigned flags)
{
	struct osd__obj *o;
	int fd = -1, evict = 0, handled = 0;
	uint64_t bad = 0;
	int r = user_obj(st, pid, oid, &o);
	if (r)
		return r;
	pthread_mutex_lock(&o->mu);
	int inside = offset < o->length;
	pthread_mutex_unlock(&o->mu);
	if (inside && len)
		r = pack_change(st, o, PACK_PUNCH, offset, len, NULL, 0, flags, NULL, &bad, &handled);
	if (r || handled)
		return pack_done(st, o, r, bad, "punch of", flags);
	if (!obj_io(o) || (r = data_mark(st, o)) != 0) {
		osd__obj_put(st, o);
		return r ? r : -ENOMEM;
	}
	if (st->sums)
		pthread_mutex_lock(&o->io->wmu);
	pthread_mutex_lock(&o->mu);
	uint64_t end = len > o->length - offset ? o->length : offset + len;
	if (o->removed)
		r = -ENOENT;
	else if (offset < o->length && len && o->sums_bad)
		r = -EIO;
	else if (offset < o->length && len)
		r = fd_get_for_change(st, o, 0, &fd, &evict);
	if (!r && fd >= 0) {
		if (trusting(st))
			(void)osd__trust_change_begin(o, fd, blk_lo(offset), blk_hi(end));
		if (st->sums)
			r = osd__sum_punch(o, fd, o->io->sfd, o->length, offset, end, &bad);
		else if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset,
				   (off_t)(end - offset)) != 0)
			r = -errno;
		account_fd_locked(st, o, fd);
	}
	pthread_mutex_unlock(&o->mu);
	data_unmark(o);
	if (st->sums) {
		atomic_fetch_add(&o->io->wseq, 1);
		pthread_mutex_unlock(&o->io->wmu);
	}
	if (r == -EIO)
		report_bad(st, o, bad, "punch of");
	if (fd >= 0) {
		fd_put(st, o);
		mark_dirty(st, o);
	}
	if (evict)
		fd_evict(st);
	if (!r)
		r = data_commit(st, o, flags);
	osd__obj_put(st, o);
	return r;
}

int osd_store_length(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *length)
{
	struct osd__obj *o;
	int r = user_obj(st, pid, oid, &o);
	if (r)
		return r;
	pthread_mutex_lock(&o->mu);
	*length = o->length;
	pthread_mutex_unlock(&o->mu);
	osd__obj_put(st, o);
	return 0;
}

int osd_store_used(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *used)
{
	struct osd__obj *o = osd__ns_get(st, pid, oid);
	if (!o)
		return -ENOENT;
	if (o->type == OSD_OBJ_ROOT) {
		*used = atomic_load(&st->used);
	} else if (o->type == OSD_OBJ_PARTITION) {
		pthread_rwlock_rdlock(&st->ns);
		struct osd__part *p = osd__ns_part(st, pid);
		*used = p ? atomic_load(&p->used) : 0;
		pthread_rwlock_unlock(&st->ns);
	} else {
		pthread_mutex_lock(&o->mu);
		*used = o->used;
		pthread_mutex_unlock(&o->mu);
	}
	osd__obj_put(st, o);
	return 0;
}

/* ---- scrub ------------------------------------------------------------------------- */

/* Next block from @p b that may hold data or a checksum (holes in both skip). */
static uint64_t next_checked(int fd, int sfd, uint64_t b, uint64_t end)
{
	off_t d = lseek(fd, (off_t)(b * OSD__SUM_BLOCK), SEEK_DATA);
	uint64_t nb = d < 0 ? end : (uint64_t)d / OSD__SUM_BLOCK;
	if (nb <= b)
		return b;
	/* a checksum where the data has a hole is checked (it must be 0) */
	off_t e = sfd >= 0 ? lseek(sfd, (off_t)(OSD__SUM_HDR + 4 * b), SEEK_DATA) : -1;
	uint64_t eb = e < (off_t)OSD__SUM_HDR ? 0 : ((uint64_t)e - OSD__SUM_HDR) / 4;
	if (e >= 0 && eb < nb)
		return eb > b ? eb : b;
	return nb < end ? nb : end;
}

int osd_store_verify(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *bytes,
		     uint64_t *bad)
{
	struct osd__obj *o;
	int fd = -1, evict = 0;
	*bytes = 0;
	*bad = 0;
	if (!st->sums)
		return -ENOTSUP;
	int r = user_obj(st, pid, oid, &o);
	if (r)
		return r;
	pthread_mutex_lock(&o->mu);
	if (!o->removed && o->packed) {
		uint8_t img[OSD__PACK_SLOT];
		r = osd__pack_load(st, o, img);
		*bytes = r ? 0 : o->length;
		pthread_mutex_unlock(&o->mu);
		if (r == -EIO)
			report_bad(st, o, 0, "scrub of");
		osd__obj_put(st, o);
		return r;
	}
	r = o->removed ? -ENOENT : o->sums_bad && o->length ? -EIO
	    : fd_get_locked(st, o, 0, &fd, &evict);
	pthread_mutex_unlock(&o->mu);
	if (evict)
		fd_evict(st);
	uint64_t chunk = osd__sum_chunk_blocks();
	uint8_t *buf = !r && fd >= 0 ? malloc((size_t)(chunk * OSD__SUM_BLOCK)) : NULL;
	if (!r && fd >= 0 && !buf)
		r = -ENOMEM;
	for (uint64_t b = 0; !r && buf;) {
		/* per chunk under wmu: a racing write is never seen half done */
		pthread_mutex_lock(&o->io->wmu);
		pthread_mutex_lock(&o->mu);
		uint64_t len = o->length, end = len / OSD__SUM_BLOCK + (len % OSD__SUM_BLOCK != 0);
		int sfd = o->io->sfd;
		pthread_mutex_unlock(&o->mu);
		b = b < end ? next_checked(fd, sfd, b, end) : end;
		uint64_t k = end - b < chunk ? end - b : chunk;
		if (k) {
			/* its reads may bring pages in from disk unverified by READ */
			pthread_mutex_lock(&o->mu);
			(void)osd__trust_fault(o, b, b + k);
			pthread_mutex_unlock(&o->mu);
			r = osd__sum_scrub_range(fd, sfd, len, b, k, buf, bad);
			uint64_t upto = (b + k) * OSD__SUM_BLOCK < len ? (b + k) * OSD__SUM_BLOCK : len;
			*bytes += upto - b * OSD__SUM_BLOCK;
		}
		pthread_mutex_unlock(&o->io->wmu);
		if (!k)
			break;
		b += k;
	}
	free(buf);
	if (fd >= 0)
		fd_put(st, o);
	if (r == -EIO)
		report_bad(st, o, *bad, "scrub of");
	osd__obj_put(st, o);
	return r;
}
