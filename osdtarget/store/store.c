/*
 * Store lifetime: the directory layout, the superblock, the process lock,
 * loading the checkpoint and replaying the metadata log at open, writing
 * checkpoints (log compaction), FORMAT, flushes and capacity.
 *
 * Directory layout (docs/target-store.md):
 *   superblock   32-byte header "OSDSTORE"; written last when formatting
 *   lock         fcntl OFD lock held while open
 *   checkpoint   header "OSDCKPT1" + records + END record
 *   log          header "OSDLOG01" + records appended since the checkpoint
 *   data/00..ff  one sparse file per user object with data
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "proto/byteorder.h"
#include "store/internal.h"

#define SB_MAGIC "OSDSTORE"
#define CKPT_MAGIC OSD__CKPT_MAGIC
#define LOG_MAGIC OSD__LOG_MAGIC
/* Compact once the log exceeds this and twice the last checkpoint... */
#define COMPACT_MIN_LOG (64ull << 20)
/* ...or this, whatever the checkpoint: it bounds the replay of an open
 * (about 0.5 s here) and the objects it keeps in memory. */
#define COMPACT_MAX_LOG (128ull << 20)
/* A clean close compacts a log larger than this: the next open replays none
 * (a smaller log replays in about 0.1 s). */
#define CLOSE_COMPACT_LOG (32ull << 20)
/* Compact once the log names this many objects in DATA records: an open
 * after a crash reads the files of each (about 5 µs), so this bounds that
 * part of it (about 0.3 s). */
#define COMPACT_DATA_NAMED 65536u
/* A clean close compacts a log that names more than this many: the next
 * open reads their files otherwise (Objects with a data file). */
#define CLOSE_DATA_NAMED 4096u

void osd__store_msg(struct osd_store *st, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&st->msg_mu);
	va_start(ap, fmt);
	vsnprintf(st->msg, sizeof(st->msg), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&st->msg_mu);
}

void osd__store_note(struct osd_store *st, int level, const char *fmt, ...)
{
	char line[sizeof(st->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&st->msg_mu);
	size_t n = st->opening ? strlen(st->msg) : 0;
	snprintf(st->msg + n, sizeof(st->msg) - n, "%s%s", n ? "; " : "", line);
	pthread_mutex_unlock(&st->msg_mu);
	if (st->log_cb)
		st->log_cb(st->log_arg, level, line);
}

void osd__store_space(struct osd_store *st, int err, const char *what)
{
	int full = err == -ENOSPC || err == -EDQUOT;
	if (err && !full) {
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s: %s: %s", st->path, what, strerror(-err));
		return;
	}
	if (atomic_load(&st->full) == full || atomic_exchange(&st->full, full) == full)
		return;
	if (full)
		osd__store_note(st, OSD_STORE_LOG_WARNING, "%s: %s: the filesystem is full (%s); "
				"FLUSH and new data fail until there is room, records not yet "
				"written stay buffered", st->path, what, strerror(-err));
	else
		osd__store_note(st, OSD_STORE_LOG_NOTICE, "%s: the filesystem has room again (%s "
				"written)", st->path, what);
}

/* The log's write-outs failing or working again (osd__log.event). */
static void log_event(void *arg, int err)
{
	osd__store_space(arg, err, "metadata log");
}

void osd__store_read_counts(struct osd_store *st, uint64_t *verified, uint64_t *trusted)
{
	*verified = atomic_load(&st->blocks_verified);
	*trusted = atomic_load(&st->blocks_trusted);
}

const char *osd_store_error(struct osd_store *st)
{
	return st ? st->msg : "no store";
}

uint64_t osd__store_capacity(struct osd_store *st)
{
	uint64_t c = atomic_load(&st->capacity_set);
	return c ? c : st->capacity_opt ? st->capacity_opt : st->fs_size;
}

/* ---- small file helpers ------------------------------------------------------ */

static int write_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read a whole file into a malloc'ed buffer. */
static int read_file(int dirfd, const char *name, uint8_t **out, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat sb;
	uint8_t *buf = NULL;
	int r = fstat(fd, &sb) == 0 ? 0 : -errno;
	if (!r && !(buf = malloc((size_t)sb.st_size + 1)))
		r = -ENOMEM;
	size_t got = 0;
	while (!r && got < (size_t)sb.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)sb.st_size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (r) {
		free(buf);
		return r;
	}
	*out = buf;
	*len = got;
	return 0;
}

int osd__read_file(int dirfd, const char *name, uint8_t **out, size_t *len)
{
	return read_file(dirfd, name, out, len);
}

/* Hard-link @p from as @p to, replacing it: @p from itself never goes missing. */
static int link_as(struct osd_store *st, const char *from, const char *to)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
	(void)unlinkat(st->dirfd, tmp, 0);
	if (linkat(st->dirfd, from, st->dirfd, tmp, 0) != 0)
		return -errno;
	if (renameat(st->dirfd, tmp, st->dirfd, to) != 0) {
		int r = -errno;
		(void)unlinkat(st->dirfd, tmp, 0);
		return r;
	}
	return 0;
}

/*
 * Freeing the blocks of a file of a whole checkpoint is the unlink of its
 * last name (about 0.1 s per 400 MB on ext4): the files that keep_previous()
 * replaces are held open so that happens at osd__store_free_gone(), once
 * the checkpoint let its locks go.
 */
static void hold_gone(struct osd_store *st)
{
	static const char *const names[2] = { "checkpoint.prev", "log.prev" };
	osd__store_free_gone(st);
	for (int i = 0; i < 2; i++)
		st->gone_fd[i] = openat(st->dirfd, names[i], O_RDONLY | O_CLOEXEC);
}

void osd__store_free_gone(struct osd_store *st)
{
	for (int i = 0; i < 2; i++) {
		if (st->gone_fd[i] >= 0)
			close(st->gone_fd[i]);
		st->gone_fd[i] = -1;
	}
}

/*
 * Keep the checkpoint and log about to be replaced as checkpoint.prev and
 * log.prev, so salvage can rebuild a damaged checkpoint from them. The log
 * is synced first: log.prev then holds all the new checkpoint does. When
 * that fails, no stale pair is left behind. The directory fsync of the
 * checkpoint's rename covers these names.
 */
static void keep_previous(struct osd_store *st)
{
	int r = st->log.fd >= 0 ? osd__log_sync(&st->log, UINT64_MAX) : -EBADF;
	hold_gone(st);
	if (!r)
		r = link_as(st, "checkpoint", "checkpoint.prev");
	if (!r)
		r = link_as(st, "log", "log.prev");
	if (r) {
		(void)unlinkat(st->dirfd, "checkpoint.prev", 0);
		(void)unlinkat(st->dirfd, "log.prev", 0);
		return;
	}
	/* Only salvage reads them again, yet writing the new checkpoint read
	 * the old one whole: at 10M objects 3.5 GB of page cache that would
	 * push out the data and records in use. Both are synced, so their
	 * pages are clean and simply dropped. */
	if (st->ckfd >= 0)
		(void)posix_fadvise(st->ckfd, 0, 0, POSIX_FADV_DONTNEED);
	(void)posix_fadvise(st->log.fd, 0, 0, POSIX_FADV_DONTNEED);
}

/* What install_file_ver() writes after the header. */
#define BODY_CKPT 0x1       /* the namespace: a checkpoint */
#define BODY_KEEP_PREV 0x2  /* ...keeping the one it replaces (keep_previous()) */

/*
 * Atomically install file @p name holding a header and, via @p body, more
 * content: write NAME.tmp, fsync, rename, fsync the directory. With @p keep
 * the new fd is returned open (for the log).
 */
static int install_file_ver(struct osd_store *st, const char *name, const char *magic,
			    uint32_t version, uint32_t flags, uint64_t epoch, int body, int *keep,
			    uint64_t *size)
{
	char tmp[64];
	uint8_t hdr[OSD__FILE_HDR];
	uint64_t sz = OSD__FILE_HDR;
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	int fd = osd__open_noatime(st->dirfd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	osd__file_hdr_put_ver(hdr, magic, version, flags, epoch);
	int r = write_all(fd, hdr, sizeof(hdr), 0);
	if (!r && body)
		r = osd__table_write(st, fd, &sz);
	/* the pack slots the checkpoint names hold their bytes first (each was
	 * written before its object's state was taken) */
	if (!r && body)
		r = osd__pack_sync(st);
	if (!r && fsync(fd) != 0)
		r = -errno;
	/* only once the new one is written whole: writing it read every record
	 * of the old one, which may have rotted since the open (an old one that
	 * did must not replace the previous generation salvage rebuilds from) */
	if (!r && (body & BODY_KEEP_PREV))
		keep_previous(st);
	if (!r && renameat(st->dirfd, tmp, st->dirfd, name) != 0)
		r = -errno;
	if (!r && fsync(st->dirfd) != 0)
		r = -errno;
	if (r) {
		close(fd);
		(void)unlinkat(st->dirfd, tmp, 0);
		return r;
	}
	if (keep)
		*keep = fd;
	else
		close(fd);
	if (size)
		*size = sz;
	return 0;
}

static int install_checkpoint(struct osd_store *st, uint64_t epoch, int keep_prev, int *keep,
			      uint64_t *size)
{
	return install_file_ver(st, "checkpoint", CKPT_MAGIC, st->ckpt_version, 0, epoch,
				BODY_CKPT | (keep_prev ? BODY_KEEP_PREV : 0), keep, size);
}

/* The superblock makes the store valid, of format version 2 (checksums). */
static int install_superblock(struct osd_store *st, uint64_t created)
{
	return install_file_ver(st, "superblock", SB_MAGIC, OSD__SB_VERSION,
				st->sums ? 0 : OSD__SB_FLAG_NO_SUMS, created, 0, NULL, NULL);
}

int osd__install_log(struct osd_store *st, uint64_t epoch, int *keep)
{
	int r = install_file_ver(st, "log", LOG_MAGIC, OSD__LOG_VERSION, 0, epoch, 0, keep, NULL);
	if (!r) {
		st->log_attrs = 1;
		atomic_store(&st->log_files, 1);
	}
	return r;
}

/* Forget the objects a checkpoint carried (table.c), letting their references go. */
static void carry_drop(struct osd_store *st)
{
	for (size_t i = 0; i < st->ncarry; i++)
		osd__obj_put(st, st->carry[i]);
	st->ncarry = 0;
}

/*
 * The new log's first records (st->ns held for writing): a DATA record for
 * each object whose data change was in flight while the checkpoint wrote it
 * (data_mark() in data.c checked the old epoch), and the generations
 * reserved so far (GENS), which the checkpoint does not hold.
 */
static void log_carry(struct osd_store *st)
{
	uint8_t b[8];
	uint64_t pos;
	atomic_store(&st->data_named, 0);
	for (size_t i = 0; i < st->ncarry; i++)
		(void)osd__data_name(st, st->carry[i]); /* without it: totals off until a load */
	carry_drop(st);
	if (st->gens_logged > st->next_gen) {
		osd__put_be64(b, st->gens_logged);
		if (osd__log_append(&st->log, OSD__REC_GENS, b, 8, NULL, 0, &pos) == 0)
			atomic_store(&st->gens_pos, pos);
		else
			st->gens_logged = st->next_gen; /* the next creation logs one */
	}
}

/*
 * A checkpoint's first part: the new checkpoint written, synced, installed
 * and read back (*@p chk), under a new epoch. A data change checking the
 * epoch from now on logs its DATA record in the new log; one checked before
 * is in flight (data_mark). Nothing that changes the metadata runs meanwhile
 * (st->ns or st->gate held for writing).
 */
static int ckpt_write(struct osd_store *st, int keep_prev, int *ckfd, uint64_t *size,
		      int *chk)
{
	atomic_fetch_add(&st->data_epoch, 1);
	carry_drop(st);
	int r = install_checkpoint(st, st->epoch + 1, keep_prev, ckfd, size);
	*chk = r ? 0 : osd__table_check(st, *ckfd);
	return r;
}

/*
 * Its second part, st->ns held for writing: objects load from the new
 * checkpoint (@p r its writing's result, @p chk its read back) and an empty
 * log of its epoch starts. A crash between the checkpoint's rename and the
 * log's leaves a log of the old epoch, which open then ignores: the
 * checkpoint already holds everything it had.
 */
static int ckpt_install(struct osd_store *st, int r, int ckfd, uint64_t size, int chk)
{
	uint64_t epoch = st->epoch + 1;
	int logfd = -1;
	osd__pack_ckpt_done(st, !r);
	int e = r ? 0 : chk ? chk : osd__table_reload(st, ckfd);
	if (e) {
		/* objects keep loading from the previous checkpoint, still open */
		close(ckfd);
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s/checkpoint just written cannot be "
				"read back: %s", st->path, strerror(-e));
	}
	if (!r)
		r = osd__install_log(st, epoch, &logfd);
	if (r) {
		if (r != -EUCLEAN) /* damaged records: the writer named them */
			osd__store_msg(st, "writing checkpoint failed: %s", strerror(-r));
		carry_drop(st);
		return r;
	}
	st->epoch = epoch;
	st->ckpt_size = size;
	osd__log_switch(&st->log, logfd, OSD__FILE_HDR);
	log_carry(st);
	/* its totals count every file: file objects may leave memory now */
	if (!e && st->ckpt_version >= OSD__CKPT_VERSION)
		st->files_counted = 1;
	/* objects load from the new checkpoint, which holds what the records a
	 * replay left did; when it could not be read back they still load from
	 * the old one, and the records stay readable through pend_fd */
	if (!e)
		osd__pend_clear(st);
	else
		st->pend_stale = 1;
	return 0;
}

/*
 * Write a checkpoint of the current namespace and start an empty log, both
 * under a new epoch. Caller holds st->ns for writing. With @p keep_prev the
 * files replaced stay as checkpoint.prev and log.prev.
 */
static int store_checkpoint(struct osd_store *st, int keep_prev)
{
	int ckfd = -1, chk = 0;
	uint64_t size = 0;
	int r = ckpt_write(st, keep_prev, &ckfd, &size, &chk);
	return ckpt_install(st, r, ckfd, size, chk);
}

/*
 * A checkpoint while the store serves. Writing it reads and writes every
 * record of the store (seconds at 10M objects). That part holds st->gate for
 * writing, which keeps every change of the metadata out, and not st->ns:
 * reads, lookups and LIST go on, objects load and trims drop them. The
 * writer holds a reference to each object that was in memory when it began
 * (osd__ns_resident). Only the install holds st->ns for writing.
 */
int osd__store_compact(struct osd_store *st)
{
	int ckfd = -1, chk = 0;
	uint64_t size = 0;
	pthread_rwlock_wrlock(&st->gate);
	atomic_store(&st->ckpt_online, 1);
	int r = ckpt_write(st, 1, &ckfd, &size, &chk);
	pthread_rwlock_wrlock(&st->ns);
	atomic_store(&st->ckpt_online, 0);
	r = ckpt_install(st, r, ckfd, size, chk);
	pthread_rwlock_unlock(&st->ns);
	pthread_rwlock_unlock(&st->gate);
	osd__store_free_gone(st);
	if (!r)
		osd__data_unlink_done(st, osd__log_end(&st->log));
	return r;
}

void osd__change_lock(struct osd_store *st, int excl)
{
	pthread_rwlock_rdlock(&st->gate);
	if (excl)
		pthread_rwlock_wrlock(&st->ns);
	else
		pthread_rwlock_rdlock(&st->ns);
}

void osd__change_unlock(struct osd_store *st)
{
	pthread_rwlock_unlock(&st->ns);
	pthread_rwlock_unlock(&st->gate);
}

static uint64_t log_size(struct osd_store *st)
{
	pthread_mutex_lock(&st->log.mu);
	uint64_t n = st->log.file_end + st->log.len;
	pthread_mutex_unlock(&st->log.mu);
	return n;
}

void osd__store_maybe_compact(struct osd_store *st)
{
	uint64_t logsz = log_size(st);
	int big = logsz >= COMPACT_MIN_LOG &&
		  (logsz >= 2 * st->ckpt_size || logsz >= COMPACT_MAX_LOG);
	if ((!big && atomic_load(&st->data_named) < COMPACT_DATA_NAMED &&
	     !atomic_load(&st->pend_full)) ||
	    logsz < atomic_load(&st->compact_after))
		return;
	if (atomic_exchange(&st->compacting, 1))
		return;
	int r = osd__store_compact(st);
	/* a failed one (damaged records, a full disk) is not tried again on
	 * every commit: each reads and writes the whole checkpoint */
	atomic_store(&st->compact_after, r ? logsz + COMPACT_MIN_LOG : 0);
	atomic_store(&st->compacting, 0);
}

int osd__store_commit(struct osd_store *st, uint64_t pos, unsigned flags)
{
	int r = 0;
	if ((flags & OSD_STORE_FUA) || st->sync_writes) {
		if (pos == UINT64_MAX)
			pos = osd__log_end(&st->log);
		r = osd__log_sync(&st->log, pos);
		if (!r)
			osd__data_unlink_done(st, pos);
	}
	osd__store_maybe_compact(st);
	return r;
}

/* ---- flush --------------------------------------------------------------------- */

static int log_sync_all(struct osd_store *st)
{
	uint64_t end = osd__log_end(&st->log);
	int r = osd__log_sync(&st->log, end);
	if (!r)
		osd__data_unlink_done(st, end);
	return r;
}

int osd_store_flush_object(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	struct osd__obj *o = osd__ns_get(st, pid, oid);
	if (!o)
		return -ENOENT;
	int r = o->type == OSD_OBJ_USER ? osd__pack_log_pending(st, o) : 0;
	if (!r && o->type == OSD_OBJ_USER)
		r = osd__data_flush_obj(st, o);
	osd__obj_put(st, o);
	return r ? r : log_sync_all(st);
}

int osd_store_flush_partition(struct osd_store *st, uint64_t pid)
{
	if (!osd_store_partition_exists(st, pid))
		return -ENOENT;
	int r = osd__data_flush_dirty(st, pid, 0, 0);
	return r ? r : log_sync_all(st);
}

int osd_store_flush_all(struct osd_store *st)
{
	uint64_t gen = atomic_fetch_add(&st->flush_gen, 1) + 1;
	int r = osd__data_flush_dirty(st, 0, 1, 0);
	if (!r)
		r = osd__data_sync_dirs(st);
	if (!r)
		r = log_sync_all(st);
	/* ranges a flush before this one left open, unchanged since: clean */
	if (!r && st->sums)
		osd__data_close_ranges(st, gen);
	return r;
}

/* ---- capacity ------------------------------------------------------------------- */

int osd_store_capacity(struct osd_store *st, uint64_t *total, uint64_t *used)
{
	if (total)
		*total = osd__store_capacity(st);
	if (used)
		*used = atomic_load(&st->used);
	return 0;
}

int osd_store_set_capacity(struct osd_store *st, uint64_t total, unsigned flags)
{
	uint8_t b[8];
	uint64_t pos = 0;
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(total >> (56 - 8 * i));
	osd__change_lock(st, 1);
	atomic_store(&st->capacity_set, total);
	int r = osd__log_append(&st->log, OSD__REC_CAPACITY, b, 8, NULL, 0, &pos);
	osd__change_unlock(st);
	return r ? r : osd__store_commit(st, pos, flags);
}

static void fs_size(struct osd_store *st)
{
	struct statvfs sv;
	st->fs_size = fstatvfs(st->dirfd, &sv) == 0 ? (uint64_t)sv.f_blocks * sv.f_frsize : 0;
}

/* ---- open ------------------------------------------------------------------------ */

/*
 * data/ and, for a new store, its fan-out directories with one fsync of
 * data/: made lazily, each would cost an fsync in the middle of a workload's
 * first writes. A missing one (a store made before) is still made lazily.
 * Also data/pool, the recycled files (pool.c), made or adopted.
 */
static int open_fanout(struct osd_store *st, int create, int make_pack)
{
	if (create && mkdirat(st->dirfd, "data", 0700) != 0 && errno != EEXIST)
		return -errno;
	st->datafd = openat(st->dirfd, "data", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->datafd < 0)
		return -errno;
	/* data/pack: made with the store, or by the upgrade of a format
	 * before 3 (store_open) */
	int r = osd__pack_open(st, create || make_pack);
	if (r)
		return r;
	if (!create)
		return osd__pool_open(st, 0);
	r = osd__pool_open(st, 1);
	if (r)
		return r;
	for (unsigned d = 0; d < OSD__FANOUT; d++) {
		char name[4];

		snprintf(name, sizeof(name), "%02x", d);
		if (mkdirat(st->datafd, name, 0700) != 0 && errno != EEXIST)
			return -errno;
	}
	if (fsync(st->datafd) != 0 || fsync(st->dirfd) != 0)
		return -errno;
	return 0;
}

/* Format an empty directory: data dirs, checkpoint, log, superblock last. */
static int store_create(struct osd_store *st)
{
	int r = open_fanout(st, 1, 1);
	if (!r)
		r = osd__log_init(&st->log, -1, 0);
	if (r)
		return r;
	r = store_checkpoint(st, 0);
	if (r)
		return r;
	/* The checkpoint installed a log and switched to it; the superblock makes the store valid. */
	return install_superblock(st, (uint64_t)time(NULL));
}

static int store_lock(struct osd_store *st)
{
	st->lockfd = openat(st->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (st->lockfd < 0)
		return -errno;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	/* OFD locks conflict between handles of one process too. */
	if (fcntl(st->lockfd, F_OFD_SETLK, &fl) != 0) {
		int e = errno;
		if (e == EAGAIN || e == EACCES) {
			osd__store_msg(st, "store %s is already open", st->path);
			return -EBUSY;
		}
		return -e;
	}
	return 0;
}

static int store_init(struct osd_store *st, const char *dir, const struct osd_store_options *o)
{
	st->dirfd = st->lockfd = st->datafd = st->packfd = st->pend_fd = -1;
	st->log.fd = -1;
	st->path = strdup(dir);
	st->sync_writes = o->sync_writes;
	st->salvage = o->salvage;
	st->scan_data = o->scan_data;
	st->verify_reads = o->verify_reads;
	st->log_cb = o->log;
	st->log_arg = o->log_arg;
	st->opening = 1;
	st->ckpt_version = OSD__CKPT_VERSION;
	atomic_store(&st->data_epoch, 1); /* objects start at 0: their first change logs */
	st->unlinks_tail = &st->unlinks;
	/* Cache at most a quarter of the descriptor limit, 16..1024. */
	struct rlimit rl;
	st->max_fds = 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 4 < (rlim_t)st->max_fds)
		st->max_fds = rl.rlim_cur / 4 < 16 ? 16 : (int)(rl.rlim_cur / 4);
	pthread_rwlockattr_t ra;
	pthread_rwlockattr_init(&ra);
	/* Writers (create, remove, checkpoint) must not starve behind lookups. */
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&st->ns, &ra);
	pthread_rwlock_init(&st->gate, &ra);
	pthread_rwlockattr_destroy(&ra);
	pthread_mutex_init(&st->hash_mu, NULL);
	pthread_mutex_init(&st->pend_mu, NULL);
	st->ckfd = -1;
	st->gone_fd[0] = st->gone_fd[1] = -1;
	st->cache_max = o->meta_cache ? o->meta_cache : OSD_STORE_META_CACHE;
	st->pend_max_slots = OSD__EVICT_MAX_SLOTS;
	st->pend_max_notes = OSD__EVICT_MAX_NOTES;
	atomic_init(&st->trim_step, st->cache_max / 4 ? st->cache_max / 4 : 1);
	pthread_mutex_init(&st->lru_mu, NULL);
	pthread_mutex_init(&st->dirty_mu, NULL);
	pthread_mutex_init(&st->unlink_mu, NULL);
	pthread_mutex_init(&st->pool_mu, NULL);
	pthread_mutex_init(&st->open_mu, NULL);
	pthread_mutex_init(&st->msg_mu, NULL);
	pthread_mutex_init(&st->pack_mu, NULL);
	pthread_mutex_init(&st->pack_sync_mu, NULL);
	st->pack_frees_tail = &st->pack_frees;
	if (!st->path || osd__lru_init(&st->fds, (size_t)st->max_fds) < 0)
		return -ENOMEM;
	return osd__ns_init(st);
}

/* ---- permissions ------------------------------------------------------------------ */

/* Clear group/other bits of @p name in @p dfd ("" = @p dfd itself): 0700 or 0600. */
static void repair_mode(struct osd_store *st, int dfd,
			const char *name, const char *shown)
{
	struct stat sb;
	int self = !*name;

	if ((self ? fstat(dfd, &sb) : fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW)) != 0 ||
	    !(S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode)) || !(sb.st_mode & 077))
		return;
	mode_t want = S_ISDIR(sb.st_mode) ? 0700 : 0600;
	int r = self ? fchmod(dfd, want) : fchmodat(dfd, name, want, 0);

	if (r == 0)
		osd__store_note(st, OSD_STORE_LOG_WARNING, "%s%s%s was mode %04o, open to other users (the store "
			   "holds secret keys); changed to %04o", st->path, self ? "" : "/", shown,
			   (unsigned)(sb.st_mode & 07777), (unsigned)want);
	else
		osd__store_note(st, OSD_STORE_LOG_WARNING, "%s%s%s is mode %04o, open to other users, and cannot be "
			   "changed: %s", st->path, self ? "" : "/", shown,
			   (unsigned)(sb.st_mode & 07777), strerror(errno));
}

/* Every entry of directory @p dfd (not recursing); @p prefix names it in messages. */
static void repair_entries(struct osd_store *st, int dfd,
			   const char *prefix)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	char shown[300];

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(shown, sizeof(shown), "%s%s", prefix, e->d_name);
		repair_mode(st, dfd, e->d_name, shown);
	}
	closedir(d);
}

/*
 * The log and checkpoint hold the root, partition and working keys in clear,
 * so the store is its owner's alone: 0700 directories, 0600 files. A store
 * made before (0755/0644) is repaired at open: the directory (store_open),
 * its files and data/'s directories. Object files deeper down are not walked (there may be
 * millions); the 0700 directories above them already shut others out.
 */
static void repair_modes(struct osd_store *st)
{
	repair_entries(st, st->dirfd, "");
	if (st->datafd >= 0)
		repair_entries(st, st->datafd, "data/");
}

/* Make a newly created store directory's own entry durable. */
static int fsync_parent(const char *dir)
{
	char *copy = strdup(dir);
	if (!copy)
		return -ENOMEM;
	size_t n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = 0;
	char *slash = strrchr(copy, '/');
	const char *parent = !slash ? "." : slash == copy ? "/" : (*slash = 0, copy);
	int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = fd < 0 || fsync(fd) != 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	free(copy);
	return r;
}

static int store_open(struct osd_store *st, const char *dir, const struct osd_store_options *o)
{
	int r = store_init(st, dir, o);
	if (r)
		return r;
	st->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->dirfd < 0 && errno == ENOENT && o->create) {
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			return -errno;
		if ((r = fsync_parent(dir)) != 0)
			return r;
		st->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (st->dirfd < 0) {
		r = -errno;
		osd__store_msg(st, "cannot open %s: %s", dir, strerror(-r));
		return r;
	}
	fs_size(st);
	st->capacity_opt = o->capacity;
	if ((r = store_lock(st)) != 0)
		return r;
	repair_mode(st, st->dirfd, "", "");

	uint8_t *sb;
	size_t sblen;
	uint64_t created;
	r = read_file(st->dirfd, "superblock", &sb, &sblen);
	if (r == -ENOENT) {
		if (!o->create) {
			osd__store_msg(st, "no store in %s", dir);
			return -ENOENT;
		}
		st->sums = !o->no_checksums;
		st->pack_on = st->sums && !o->no_pack;
		return store_create(st);
	}
	if (r)
		return r;
	uint32_t version = 0, flags = 0;
	r = sblen == OSD__FILE_HDR ? osd__file_hdr_get_ver(sb, SB_MAGIC, &version, &flags,
							   &created) : -EUCLEAN;
	free(sb);
	if (r) {
		osd__store_msg(st, "%s: superblock damaged (bad magic or checksum); "
			       "not an OSD store", dir);
		return -EUCLEAN;
	}
	if (version < OSD__SB_VERSION_NOSUMS || version > OSD__SB_VERSION) {
		osd__store_msg(st, "%s: store format version %u; this build reads versions %u "
			       "to %u only: not opened", dir, version, OSD__SB_VERSION_NOSUMS,
			       OSD__SB_VERSION);
		return -EUCLEAN;
	}
	/* Version 1 had no data checksums: the open computes them (upgrade). */
	st->upgrading = version == OSD__SB_VERSION_NOSUMS;
	st->sums = st->upgrading || !(flags & OSD__SB_FLAG_NO_SUMS);
	st->pack_on = st->sums && !o->no_pack;
	/* before version 3 there is no data/pack: the open makes it (upgrade) */
	if ((r = open_fanout(st, 0, version < OSD__SB_VERSION_PACK)) != 0) {
		osd__store_msg(st, "%s: data directories missing or unreadable", dir);
		return r == -ENOENT ? -EUCLEAN : r;
	}
	repair_modes(st);
	/* the sidecars the replay's attaches recompute are settled at once */
	struct osd__sum_scan asc;
	memset(&asc, 0, sizeof(asc));
	st->attach_sc = &asc;
	r = osd__recover_load(st);
	/* file objects on disk (checkpoint version 4) are read when used: no
	 * scan of every file (docs/target-store.md, "Objects with a data file") */
	if (!r)
		r = st->files_counted ? osd__data_open_lazy(st) : osd__data_scan(st);
	st->attach_sc = NULL;
	free(asc.settle);
	if (r)
		return r;
	/* reserved before, maybe given to a file a crash left: a quarantined
	 * name stays unique */
	if (st->gens_reserved > st->next_gen)
		st->next_gen = st->gens_reserved;
	st->gens_logged = st->next_gen; /* the next creation reserves again */
	/* slots named twice are judged among all their claimants: those the
	 * checkpoint's map counted are still on disk */
	if (st->pack_clash && st->pack_counted && (r = osd__table_load_packed(st)) != 0)
		return r;
	if ((r = osd__pack_settle(st)) != 0)
		return r;
	st->pack_counted = 1; /* whatever the checkpoint was, the map counts every slot now */
	if (version < OSD__SB_VERSION) {
		/* Every sidecar (and data/pack) durable before the superblock says they exist. */
		if (syncfs(st->datafd) != 0 || fsync(st->datafd) != 0)
			return -errno;
		if ((r = install_superblock(st, created)) != 0)
			return r;
		osd__store_note(st, OSD_STORE_LOG_NOTICE, "%s: store format upgraded from version "
				"%u to %u:%s%s the checkpoint is indexed (objects load when used) "
				"and holds the slot map (packed objects load when used) and the "
				"state of data files (objects with a data file load when used)",
				dir, version, OSD__SB_VERSION, st->upgrading ? " every data block "
				"now carries a CRC32C checksum;" : "", version < OSD__SB_VERSION_PACK ?
				" small objects are packed into data/" OSD__PACK_NAME ";" : "");
		st->upgrading = 0;
	}
	if (!st->salvage && (st->ckfd < 0 || !st->files_counted)) {
		/* a version 1 checkpoint (or one whose index was damaged) was read
		 * whole, or one before version 4 loaded every file object: an
		 * indexed one of version 4 lets the objects leave memory again */
		if ((r = store_checkpoint(st, 1)) != 0)
			return r;
		osd__store_free_gone(st);
	}
	if (st->salvage) {
		/* A clean checkpoint and log replace what salvage read. */
		osd__recover_keep_damaged(st);
		if ((r = store_checkpoint(st, 0)) != 0)
			return r;
	}
	return 0;
}

int osd_store_open(struct osd_store **out, const char *dir,
		   const struct osd_store_options *opts, char *err, size_t errlen)
{
	struct osd_store_options def = { 0 };
	struct osd_store *st = calloc(1, sizeof(*st));
	*out = NULL;
	if (!st)
		return -ENOMEM;
	int r = store_open(st, dir, opts ? opts : &def);
	if (r) {
		if (err && errlen)
			snprintf(err, errlen, "%s", st->msg[0] ? st->msg : strerror(-r));
		osd_store_close(st);
		return r;
	}
	free(st->gone);
	st->gone = NULL;
	st->ngone = st->gone_cap = 0;
	st->log.event = log_event;
	st->log.event_arg = st;
	st->log.pre_sync = osd__pack_presync;
	st->log.pre_sync_arg = st;
	st->opening = 0;
	*out = st;
	return 0;
}

/* ---- close and format --------------------------------------------------------------- */

/* Close every cached data fd (objects in I/O close theirs when done). */
static void close_all_fds(struct osd_store *st)
{
	for (;;) {
		pthread_mutex_lock(&st->lru_mu);
		struct osd__lru_node *n = st->fds.tail; /* most recently used first */
		while (n && OSD__LRU_ENTRY(n, struct osd__obj_io, fd_node)->fd_users)
			n = n->lprev;
		struct osd__obj *o = n ? OSD__LRU_ENTRY(n, struct osd__obj_io, fd_node)->obj : NULL;
		if (o)
			atomic_fetch_add(&o->refs, 1);
		pthread_mutex_unlock(&st->lru_mu);
		if (!o)
			return;
		osd__data_close_fd(st, o);
		osd__obj_put(st, o);
	}
}

static void drop_unlinks(struct osd_store *st)
{
	while (st->unlinks) {
		struct osd__unlink *u = st->unlinks;
		st->unlinks = u->next;
		free(u);
	}
	st->unlinks_tail = &st->unlinks;
}

void osd_store_close(struct osd_store *st)
{
	if (!st)
		return;
	if (st->log.buf) {
		if (osd_store_flush_all(st) != 0)
			(void)osd__data_flush_dirty(st, 0, 1, 0); /* still drop list references */
		else if (st->log.fd >= 0 && (log_size(st) > CLOSE_COMPACT_LOG ||
					     atomic_load(&st->data_named) > CLOSE_DATA_NAMED))
			(void)osd__store_compact(st);
	}
	osd__data_close_ranges(st, UINT64_MAX); /* every sidecar clean, the references dropped */
	close_all_fds(st);
	osd__ns_free(st);
	osd__pend_clear(st);
	drop_unlinks(st);
	osd__store_free_gone(st);
	osd__pack_close(st);
	free(st->pack_ckpt);
	if (st->log.buf)
		osd__log_destroy(&st->log);
	if (st->datafd >= 0)
		close(st->datafd);
	if (st->lockfd >= 0)
		close(st->lockfd); /* releases the OFD lock */
	if (st->dirfd >= 0)
		close(st->dirfd);
	pthread_rwlock_destroy(&st->ns);
	pthread_rwlock_destroy(&st->gate);
	osd__lru_destroy(&st->fds);
	pthread_mutex_destroy(&st->hash_mu);
	pthread_mutex_destroy(&st->pend_mu);
	pthread_mutex_destroy(&st->lru_mu);
	pthread_mutex_destroy(&st->dirty_mu);
	pthread_mutex_destroy(&st->unlink_mu);
	osd__pool_free(st);
	pthread_mutex_destroy(&st->pool_mu);
	pthread_mutex_destroy(&st->open_mu);
	pthread_mutex_destroy(&st->msg_mu);
	pthread_mutex_destroy(&st->pack_mu);
	pthread_mutex_destroy(&st->pack_sync_mu);
	free(st->gone);
	free(st->carry);
	free(st->stale);
	free(st->path);
	free(st);
}

/* Unlink every data file (FORMAT). */
static void wipe_data(struct osd_store *st)
{
	for (unsigned d = 0; d < OSD__FANOUT; d++) {
		int dfd = osd__data_open_dir(st, d);
		DIR *dh = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (!dh) {
			if (dfd >= 0)
				close(dfd);
			continue;
		}
		struct dirent *de;
		while ((de = readdir(dh)) != NULL)
			if (de->d_name[0] != '.')
				(void)unlinkat(dfd, de->d_name, 0);
		closedir(dh);
	}
}

int osd_store_format(struct osd_store *st, uint64_t capacity)
{
	osd__change_lock(st, 1);
	(void)osd__data_flush_dirty(st, 0, 1, 1); /* drops dirty-list references */
	osd__data_close_ranges(st, UINT64_MAX); /* and the open list's */
	uint64_t next_gen = st->next_gen;
	osd__ns_free(st);
	osd__pend_clear(st);
	close_all_fds(st);
	int r = osd__ns_init(st);
	if (!r) {
		/* Generations are never reused, so late I/O cannot hit a new object's file. */
		st->next_gen = next_gen;
		if (capacity)
			atomic_store(&st->capacity_set, capacity);
		r = store_checkpoint(st, 0);
	}
	if (!r) {
		/* Salvage must not bring back what FORMAT removed. */
		(void)unlinkat(st->dirfd, "checkpoint.prev", 0);
		(void)unlinkat(st->dirfd, "log.prev", 0);
	}
	if (!r) {
		pthread_mutex_lock(&st->unlink_mu);
		drop_unlinks(st);
		pthread_mutex_unlock(&st->unlink_mu);
		wipe_data(st);
		osd__pool_wipe(st);
		osd__pack_reset(st);
		atomic_store(&st->used, 0);
	}
	osd__change_unlock(st);
	return r;
}
