/*
 * mkfs, mount and unmount, whole-filesystem calls (sync, statfs, info) and
 * the per-handle error message.
 *
 * Exclusive mounting: a read-write mount stores a mount record (random id,
 * host, pid, time, lease; lease.c renews it) in the superblock object and
 * clears it at unmount; a mount that finds a record refuses with -EBUSY
 * unless forced and the holder is gone (lease run out, or a process of this
 * host that has ended). The backend
 * API has no compare-and-swap, so two mounts racing within one round trip
 * are not detected (documented in docs/osdfs-format.md).
 *
 * Taking over a filesystem whose holder crashed (a forced read-write mount
 * that finds a record) first runs osdfs_fsck() with repair, so whatever the
 * crash left half done is repaired before anything new is written
 * (docs/crash-model.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <osdfs/fsck.h>

#include "backends/create.h"
#include "core/fs.h"

#define DEFAULT_CACHE 4096u

static __thread int err_recorded;
static __thread int in_takeover_repair; /* fsck's own mount must not recurse */

int osdfs__in_takeover(void)
{
	return in_takeover_repair;
}

int osdfs__fail(osdfs *fs, int rc, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fs->err_lock);
	va_start(ap, fmt);
	vsnprintf(fs->err, sizeof(fs->err), fmt, ap);
	va_end(ap);
	fs->err_op = NULL;
	pthread_mutex_unlock(&fs->err_lock);
	err_recorded = 1;
	return rc;
}

void osdfs__begin(void)
{
	err_recorded = 0;
}

int osdfs__end(osdfs *fs, int rc, const char *op)
{
	if (rc < 0 && !err_recorded) {
		pthread_mutex_lock(&fs->err_lock);
		fs->err_op = op;
		fs->err_rc = rc;
		pthread_mutex_unlock(&fs->err_lock);
	}
	return rc;
}

/* The calling thread's copy of the last message it asked for: the shared
 * buffer is only read under err_lock (see osdfs_error()). */
static __thread char err_copy[sizeof(((osdfs *)0)->err)];

size_t osdfs_error_copy(osdfs *fs, char *buf, size_t len)
{
	size_t n;

	if (!fs)
		return (size_t)snprintf(buf, len, "no filesystem handle");
	pthread_mutex_lock(&fs->err_lock);
	if (fs->err_op)
		n = (size_t)snprintf(buf, len, "%s: %s", fs->err_op, strerror(-fs->err_rc));
	else
		n = (size_t)snprintf(buf, len, "%s", fs->err);
	pthread_mutex_unlock(&fs->err_lock);
	return n;
}

const char *osdfs_error(osdfs *fs)
{
	osdfs_error_copy(fs, err_copy, sizeof(err_copy));
	return err_copy;
}

void osdfs__now(struct osdfs__ts *ts)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	ts->sec = t.tv_sec;
	ts->nsec = (uint32_t)t.tv_nsec;
}

static int random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static osdfs *fs_alloc(osdfs_backend *be, uint32_t bsize, size_t icache, size_t bcache)
{
	osdfs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->be = be;
	fs->ops = osdfs_backend_ops_of(be);
	fs->impl = osdfs_backend_impl(be);
	fs->bsize = bsize;
	pthread_rwlock_init(&fs->lock, NULL);
	pthread_mutex_init(&fs->cache_lock, NULL);
	pthread_mutex_init(&fs->err_lock, NULL);
	pthread_mutex_init(&fs->run_lock, NULL);
	if (osdfs__icache_init(fs, icache) < 0 || osdfs__bcache_init(fs, bcache) < 0) {
		osdfs__icache_destroy(fs);
		free(fs);
		return NULL;
	}
	return fs;
}

static void fs_free(osdfs *fs)
{
	free(fs->orphans);
	osdfs__icache_destroy(fs);
	osdfs__bcache_destroy(fs);
	pthread_rwlock_destroy(&fs->lock);
	pthread_mutex_destroy(&fs->cache_lock);
	pthread_mutex_destroy(&fs->err_lock);
	pthread_mutex_destroy(&fs->run_lock);
	free(fs);
}

static int mkfs_check(const struct osdfs_mkfs_options *o)
{
	if (o->version != OSDFS_MKFS_OPTIONS_VERSION)
		return -EINVAL;
	if (o->block_size < 1024 || o->block_size > 32768 ||
	    (o->block_size & (o->block_size - 1)))
		return -EINVAL;
	if (o->label && strlen(o->label) > OSDFS_LABEL_MAX)
		return -EINVAL;
	return 0;
}

static int mkfs_super(osdfs *fs, const struct osdfs_mkfs_options *o, bool punch_zeroes)
{
	uint8_t sbuf[OSDFS__SUPER_LEN], cbuf[OSDFS__COUNTERS_LEN];
	struct osdfs__counters c = { OSDFS__FIRST_INO, 2 };
	struct osdfs__super *sb = &fs->sb;
	struct osdfs__ts now;
	struct osdfs_attr a[2] = {
		{ OSDFS__PAGE_SUPER, OSDFS__ATTR_SUPER, sbuf, sizeof(sbuf) },
		{ OSDFS__PAGE_SUPER, OSDFS__ATTR_COUNTERS, cbuf, sizeof(cbuf) },
	};
	static const uint8_t zero[16];
	int rc;

	memset(sb, 0, sizeof(*sb));
	sb->version = OSDFS__FORMAT_VERSION;
	sb->block_size = o->block_size;
	sb->incompat = OSDFS__INCOMPAT_HASHDIR;
	if (punch_zeroes)
		sb->ro_compat |= OSDFS__RO_COMPAT_PUNCH_ZEROES;
	sb->root_ino = OSDFS_ROOT_INO;
	memcpy(sb->uuid, o->uuid, 16);
	if (memcmp(sb->uuid, zero, 16) == 0) {
		rc = random_bytes(sb->uuid, 16);
		if (rc < 0)
			return rc;
		sb->uuid[6] = (uint8_t)((sb->uuid[6] & 0x0f) | 0x40); /* RFC 4122 v4 */
		sb->uuid[8] = (uint8_t)((sb->uuid[8] & 0x3f) | 0x80);
	}
	rc = random_bytes(&sb->hash_k0, 8);
	if (rc == 0)
		rc = random_bytes(&sb->hash_k1, 8);
	if (rc < 0)
		return rc;
	osdfs__now(&now);
	sb->mkfs_sec = now.sec;
	sb->mkfs_nsec = now.nsec;
	if (o->label)
		snprintf(sb->label, sizeof(sb->label), "%s", o->label);
	osdfs__super_encode(sbuf, sb);
	osdfs__counters_encode(cbuf, &c);
	return osdfs__create(fs->ops, fs->impl, OSDFS__SUPER_OID, OSDFS_OBJ_META, a, 2);
}

static int mkfs_root(osdfs *fs, const struct osdfs_mkfs_options *o)
{
	struct osdfs__inode *root = calloc(1, sizeof(*root));
	int rc;

	if (!root)
		return -ENOMEM;
	pthread_mutex_init(&root->mu, NULL);
	root->ino = OSDFS_ROOT_INO;
	root->d.mode = S_IFDIR | (o->root_mode & 07777);
	root->d.uid = o->root_uid;
	root->d.gid = o->root_gid;
	root->d.nlink = 2;
	root->d.generation = 1;
	root->d.parent = OSDFS_ROOT_INO;
	osdfs__now(&root->d.mtime);
	root->d.atime = root->d.ctime = root->d.crtime = root->d.mtime;
	rc = osdfs__dir_create(fs, root);
	free(root->table);
	pthread_mutex_destroy(&root->mu);
	free(root);
	return rc;
}

int osdfs_mkfs(osdfs_backend *be, const struct osdfs_mkfs_options *opts)
{
	struct osdfs_mkfs_options defaults = OSDFS_MKFS_OPTIONS_INIT;
	const struct osdfs_mkfs_options *o = opts ? opts : &defaults;
	struct osdfs_backend_stat bst;
	uint64_t capacity = o->capacity;
	bool punch_zeroes = false;
	osdfs *fs;
	int rc;

	if (!be)
		return -EINVAL;
	rc = mkfs_check(o);
	if (rc < 0)
		return rc;
	fs = fs_alloc(be, o->block_size, 16, 16);
	if (!fs)
		return -ENOMEM;
	if (capacity == 0) {
		rc = fs->ops->statfs(fs->impl, &bst);
		capacity = rc == 0 ? bst.capacity : 0;
	}
	rc = fs->ops->format(fs->impl, capacity);
	if (rc == 0) {
		/* the root's object does not exist yet: the probe's scratch */
		rc = osdfs__punch_probe(fs, OSDFS__OID_BASE + OSDFS_ROOT_INO);
		punch_zeroes = rc == 0;
	}
	if (rc >= 0)
		rc = mkfs_super(fs, o, punch_zeroes);
	if (rc == 0)
		rc = mkfs_root(fs, o);
	if (rc == 0)
		rc = fs->ops->flush(fs->impl, 0);
	fs_free(fs);
	return rc;
}

static int read_super(osdfs *fs, struct osdfs__counters *c, struct osdfs_holder *h)
{
	uint8_t sbuf[512], cbuf[64], mbuf[128];
	struct osdfs_attr a[3] = {
		{ OSDFS__PAGE_SUPER, OSDFS__ATTR_SUPER, sbuf, sizeof(sbuf) },
		{ OSDFS__PAGE_SUPER, OSDFS__ATTR_COUNTERS, cbuf, sizeof(cbuf) },
		{ OSDFS__PAGE_SUPER, OSDFS__ATTR_MOUNT, mbuf, sizeof(mbuf) },
	};
	int rc = fs->ops->get_attrs(fs->impl, OSDFS__SUPER_OID, a, 3);

	if (rc == -ENOENT)
		return osdfs__fail(fs, -EUCLEAN, "not an osdfs filesystem (no superblock object)");
	if (rc < 0)
		return osdfs__fail(fs, rc, "reading the superblock: %s", strerror(-rc));
	if (a[0].len == 0 || a[0].len > sizeof(sbuf))
		return osdfs__fail(fs, -EUCLEAN, "not an osdfs filesystem (no superblock)");
	rc = osdfs__super_decode(&fs->sb, sbuf, a[0].len);
	if (rc == -EPROTONOSUPPORT)
		return osdfs__fail(fs, rc, "unsupported osdfs format version %u", fs->sb.version);
	if (rc < 0)
		return osdfs__fail(fs, rc, "corrupt or foreign superblock");
	if (fs->sb.incompat & ~OSDFS__INCOMPAT_KNOWN)
		return osdfs__fail(fs, -EPROTONOSUPPORT, "unsupported incompatible features 0x%llx",
				   (unsigned long long)(fs->sb.incompat & ~OSDFS__INCOMPAT_KNOWN));
	if (a[1].len > sizeof(cbuf) || osdfs__counters_decode(c, cbuf, a[1].len) < 0)
		return osdfs__fail(fs, -EUCLEAN, "corrupt superblock counters");
	memset(h, 0, sizeof(*h));
	if (a[2].len != 0) { /* an unreadable record still means "in use" */
		struct osdfs__mount_rec m;

		osdfs__holder_judge(&m, a[2].len <= sizeof(mbuf) &&
				    osdfs__mount_decode(&m, mbuf, a[2].len) == 0, h);
	}
	return 0;
}

static int check_root(osdfs *fs)
{
	struct osdfs__inode *root = NULL;
	int rc = osdfs__iget(fs, OSDFS_ROOT_INO, &root);

	if (rc == -ENOENT || rc == -EUCLEAN)
		rc = osdfs__fail(fs, -EUCLEAN, "root directory missing or corrupt");
	else if (rc == 0 && !OSDFS__IS_DIR(root))
		rc = osdfs__fail(fs, -EUCLEAN, "root inode is not a directory");
	osdfs__iput(fs, root);
	return rc;
}

/* Repairs a filesystem a crashed mount left behind; damage fsck cannot
 * repair does not stop the mount (fsck reports it). */
static int takeover_repair(osdfs *fs, osdfs_backend *be)
{
	struct osdfs_fsck_options fo = OSDFS_FSCK_OPTIONS_INIT;
	int rc;

	fo.repair = 1;
	in_takeover_repair = 1;
	rc = osdfs_fsck(be, &fo, NULL);
	in_takeover_repair = 0;
	if (rc < 0 && rc != -EUCLEAN)
		return osdfs__fail(fs, rc, "repairing after the crash of the previous mount: %s",
				   strerror(-rc));
	return 0;
}

/* May this mount go ahead over the holder @p h? 0, or -EBUSY with the reason. */
static int holder_check(osdfs *fs, const struct osdfs_holder *h, unsigned int flags)
{
	char who[256];

	if (h->state == OSDFS_HOLDER_NONE || in_takeover_repair)
		return 0;
	osdfs_holder_format(h, who, sizeof(who));
	if (!(flags & OSDFS_MOUNT_FORCE))
		return osdfs__fail(fs, -EBUSY, "filesystem is %s", who);
	if (h->state == OSDFS_HOLDER_LIVE && !fs->readonly && !(flags & OSDFS_MOUNT_FORCE_LIVE))
		return osdfs__fail(fs, -EBUSY, "filesystem is %s: not taken over while its "
				   "holder may still write", who);
	return 0;
}

static uint32_t lease_of(const struct osdfs_mount_options *o)
{
	if (o->version < 2 || o->lease_sec == 0)
		return OSDFS_LEASE_DEFAULT;
	return o->lease_sec;
}

int osdfs_mount(osdfs **out, osdfs_backend *be, const struct osdfs_mount_options *opts)
{
	struct osdfs_mount_options defaults = OSDFS_MOUNT_OPTIONS_INIT;
	const struct osdfs_mount_options *o = opts ? opts : &defaults;
	struct osdfs__counters c;
	struct osdfs_holder h;
	int rc;
	osdfs *fs;

	if (!out || !be || o->version < 1 || o->version > OSDFS_MOUNT_OPTIONS_VERSION)
		return -EINVAL;
	if (o->version >= 2 && o->lease_sec && (o->lease_sec < 3 || o->lease_sec > 86400))
		return -EINVAL;
	*out = NULL;
	fs = fs_alloc(be, 4096, o->inode_cache ? o->inode_cache : DEFAULT_CACHE,
		      o->dir_cache ? o->dir_cache : DEFAULT_CACHE);
	if (!fs)
		return -ENOMEM;
	fs->flags = o->flags;
	fs->readonly = !!(o->flags & OSDFS_MOUNT_RDONLY);
	rc = read_super(fs, &c, &h);
	if (rc == 0)
		rc = holder_check(fs, &h, o->flags);
	if (rc == 0 && h.state != OSDFS_HOLDER_NONE && !fs->readonly && !in_takeover_repair) {
		rc = takeover_repair(fs, be);
		if (rc == 0)
			rc = read_super(fs, &c, &h);
	}
	if (rc == 0 && (fs->sb.ro_compat & ~OSDFS__RO_COMPAT_KNOWN) && !fs->readonly)
		rc = osdfs__fail(fs, -EROFS, "unknown read-only-compatible features: mount read-only");
	if (rc == 0) {
		fs->bsize = fs->sb.block_size;
		osdfs__bcache_destroy(fs);
		rc = osdfs__bcache_init(fs, o->dir_cache ? o->dir_cache : DEFAULT_CACHE);
	}
	if (rc == 0 && !fs->readonly) {
		rc = osdfs__lease_write(fs, o->host, lease_of(o));
		if (rc < 0)
			osdfs__fail(fs, rc, "writing the mount record: %s", strerror(-rc));
	}
	if (rc == 0) {
		fs->next_ino = fs->ino_limit = c.next_ino;
		fs->next_gen = fs->gen_limit = c.next_gen;
		rc = check_root(fs);
	}
	if (rc == 0 && !fs->readonly && osdfs__orphan_recover(fs) < 0)
		rc = osdfs__fail(fs, -EIO, "freeing orphaned inodes failed");
	if (rc == 0 && !fs->readonly) {
		rc = osdfs__lease_start(fs);
		if (rc < 0)
			osdfs__fail(fs, rc, "starting the lease renewal: %s", strerror(-rc));
	}
	if (rc < 0) {
		if (o->error && o->error_size)
			osdfs_error_copy(fs, o->error, o->error_size);
		osdfs__lease_stop(fs);
		if (fs->mount_id) {
			struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_MOUNT, NULL, 0 };

			fs->ops->set_attrs(fs->impl, OSDFS__SUPER_OID, &a, 1);
		}
		fs_free(fs);
		return rc;
	}
	*out = fs;
	return 0;
}

int osdfs_unmount(osdfs *fs)
{
	int rc = 0;

	if (!fs)
		return 0;
	osdfs__lease_stop(fs); /* before the record goes: a renewal must not bring it back */
	if (fs->taken_over) {
		rc = -ESTALE;
	} else if (!fs->readonly) {
		if (!osdfs__lease_owner(fs)) {
			rc = -ESTALE;
		} else {
			struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_MOUNT, NULL, 0 };
			int r;

			rc = osdfs__dirsums_save_all(fs);
			r = osdfs__sync_inodes(fs);
			if (rc == 0)
				rc = r;
			r = fs->ops->flush(fs->impl, 0);
			if (rc == 0)
				rc = r;
			r = fs->ops->set_attrs(fs->impl, OSDFS__SUPER_OID, &a, 1);
			if (rc == 0)
				rc = r;
			r = fs->ops->flush(fs->impl, OSDFS__SUPER_OID);
			if (rc == 0)
				rc = r;
		}
	}
	if (!(fs->flags & OSDFS_MOUNT_KEEP_BACKEND))
		osdfs_backend_free(fs->be);
	fs_free(fs);
	return rc;
}

int osdfs_sync(osdfs *fs)
{
	int rc, r;

	if (fs->readonly)
		return 0;
	osdfs__begin();
	pthread_rwlock_wrlock(&fs->lock);
	if (!osdfs__lease_owner(fs)) {
		/* taken over by a forced mount: stop writing at once */
		fs->readonly = 1;
		fs->taken_over = 1;
		pthread_rwlock_unlock(&fs->lock);
		return osdfs__end(fs, osdfs__fail(fs, -ESTALE, "another mount took this "
						  "filesystem over; now read-only"), "sync");
	}
	rc = osdfs__sync_inodes(fs);
	r = fs->ops->flush(fs->impl, 0);
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc ? rc : r, "sync");
}

int osdfs_statfs(osdfs *fs, struct osdfs_statfs *st)
{
	struct osdfs_backend_stat b;
	uint64_t cap, freeb;
	int rc;

	osdfs__begin();
	rc = fs->ops->statfs(fs->impl, &b);
	if (rc < 0)
		return osdfs__end(fs, rc, "statfs");
	cap = b.capacity ? b.capacity : b.used + b.device_free;
	freeb = cap > b.used ? cap - b.used : 0;
	memset(st, 0, sizeof(*st));
	st->bsize = st->frsize = fs->bsize;
	st->blocks = cap / fs->bsize;
	st->bfree = st->bavail = freeb / fs->bsize;
	/* every inode is one object; the superblock object is not an inode */
	st->ffree = st->favail = st->bfree;
	st->files = (b.objects > 0 ? b.objects - 1 : 0) + st->ffree;
	for (int i = 0; i < 8; i++)
		st->fsid = st->fsid << 8 | (uint64_t)(fs->sb.uuid[i] ^ fs->sb.uuid[i + 8]);
	st->namemax = OSDFS_NAME_MAX;
	return 0;
}

int osdfs_get_info(osdfs *fs, struct osdfs_info *info)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->uuid, fs->sb.uuid, 16);
	snprintf(info->label, sizeof(info->label), "%s", fs->sb.label);
	info->block_size = fs->bsize;
	info->format_version = fs->sb.version;
	info->readonly = fs->readonly;
	return 0;
}
