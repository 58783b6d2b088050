/*
 * The inode cache and allocator. Cached inodes are shared by every caller
 * (reference counted); unused ones stay on an LRU list until the cache is
 * over its size, and dirty ones are written before they are dropped.
 * Inode numbers come from a 64-bit counter and are never reused; numbers
 * and generations are reserved on disk in batches so that creating a file
 * does not rewrite the superblock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "core/fs.h"
#include "proto/byteorder.h"

#define ALLOC_BATCH 1024u

static int ieq(const struct osd__lru_node *n, const void *key)
{
	return OSD__LRU_ENTRY(n, struct osdfs__inode, node)->ino == *(const uint64_t *)key;
}

static struct osdfs__inode *inode_of(struct osd__lru_node *n)
{
	return n ? OSD__LRU_ENTRY(n, struct osdfs__inode, node) : NULL;
}

int osdfs__icache_init(osdfs *fs, size_t max)
{
	fs->icache_max = max;
	return osd__lru_init(&fs->inodes, max);
}

static void inode_free_mem(struct osdfs__inode *ip)
{
	free(ip->table);
	pthread_mutex_destroy(&ip->mu);
	free(ip);
}

void osdfs__icache_destroy(osdfs *fs)
{
	struct osd__lru_node *n;

	if (!fs->inodes.tab)
		return;
	while ((n = osd__lru_any(&fs->inodes))) {
		osd__lru_remove(&fs->inodes, n);
		inode_free_mem(inode_of(n));
	}
	osd__lru_destroy(&fs->inodes);
}

/* Referenced inodes are pinned (off the LRU list); only unreferenced ones
 * are ever the oldest. */
static void hash_insert(osdfs *fs, struct osdfs__inode *ip)
{
	osd__lru_insert(&fs->inodes, &ip->node, ip->ino, 1);
}

static void hash_remove(osdfs *fs, struct osdfs__inode *ip)
{
	osd__lru_remove(&fs->inodes, &ip->node);
}

static struct osdfs__inode *inode_new_mem(uint64_t ino)
{
	struct osdfs__inode *ip = calloc(1, sizeof(*ip));

	if (!ip)
		return NULL;
	ip->ino = ino;
	pthread_mutex_init(&ip->mu, NULL);
	return ip;
}

void osdfs__inode_attr(const struct osdfs__inode *ip, struct osdfs_attr *a,
		       uint8_t buf[OSDFS__INODE_MAX_LEN])
{
	a->page = OSDFS__PAGE_INODE;
	a->number = OSDFS__ATTR_INODE;
	a->value = buf;
	a->len = (uint32_t)osdfs__inode_encode(buf, &ip->d);
}

int osdfs__iwrite(osdfs *fs, struct osdfs__inode *ip)
{
	uint8_t buf[OSDFS__INODE_MAX_LEN];
	struct osdfs_attr a;
	int rc;

	osdfs__inode_attr(ip, &a, buf);
	rc = fs->ops->set_attrs(fs->impl, OSDFS__OID_BASE + ip->ino, &a, 1);
	if (rc < 0)
		return osdfs__fail(fs, rc, "writing inode %llu: %s",
				   (unsigned long long)ip->ino, strerror(-rc));
	ip->dirty = 0;
	return 0;
}

/* Keep the allocated bytes @p a read at data change @p seq (8 bytes), or
 * note that the backend does not report them (mem; layout, whose component
 * objects each hold a part). */
static void used_take(osdfs *fs, struct osdfs__inode *ip, const struct osdfs_attr *a,
		      unsigned int seq)
{
	if (a->len != 8) {
		__atomic_store_n(&fs->no_used, 1, __ATOMIC_RELAXED);
		return;
	}
	ip->used = osd__get_be64(a->value);
	ip->used_for = seq + 1;
}

void osdfs__used_stale(struct osdfs__inode *ip)
{
	__atomic_add_fetch(&ip->used_seq, 1, __ATOMIC_RELEASE);
}

void osdfs__used_refresh(osdfs *fs, struct osdfs__inode *ip)
{
	unsigned int seq = __atomic_load_n(&ip->used_seq, __ATOMIC_ACQUIRE);
	uint8_t v[8];
	struct osdfs_attr a = { OSDFS__PAGE_USER_INFO, OSDFS__ATTR_USED_CAPACITY, v, sizeof(v) };

	if (ip->used_for == seq + 1 || __atomic_load_n(&fs->no_used, __ATOMIC_RELAXED) ||
	    fs->ops->get_attrs(fs->impl, OSDFS__OID_BASE + ip->ino, &a, 1) < 0)
		return; /* a failure leaves st_blocks from the size */
	if (__atomic_load_n(&ip->used_seq, __ATOMIC_ACQUIRE) == seq)
		used_take(fs, ip, &a, seq);
}

static int inode_load(osdfs *fs, uint64_t ino, struct osdfs__inode **out)
{
	uint8_t buf[OSDFS__INODE_MAX_LEN], used[8];
	struct osdfs_attr ga[2] = {
		{ OSDFS__PAGE_INODE, OSDFS__ATTR_INODE, buf, sizeof(buf) },
		{ OSDFS__PAGE_USER_INFO, OSDFS__ATTR_USED_CAPACITY, used, sizeof(used) },
	}, a = ga[0];
	struct osdfs__inode *ip;
	int want_used = !__atomic_load_n(&fs->no_used, __ATOMIC_RELAXED);
	int rc;

	/* the allocated bytes in the same call: st_blocks at no extra cost */
	rc = fs->ops->get_attrs(fs->impl, OSDFS__OID_BASE + ino, ga, want_used ? 2 : 1);
	a = ga[0];
	if (rc == -ENOENT)
		return -ENOENT;
	if (rc < 0)
		return osdfs__fail(fs, rc, "reading inode %llu: %s",
				   (unsigned long long)ino, strerror(-rc));
	ip = inode_new_mem(ino);
	if (!ip)
		return -ENOMEM;
	if (a.len == 0 || a.len > sizeof(buf) ||
	    osdfs__inode_decode(&ip->d, buf, a.len) < 0) {
		inode_free_mem(ip);
		return osdfs__fail(fs, -EUCLEAN, "inode %llu: missing or corrupt inode attribute",
				   (unsigned long long)ino);
	}
	if (want_used)
		used_take(fs, ip, &ga[1], 0);
	*out = ip;
	return 0;
}

/* The cached inode ino, referenced, or NULL (cache_lock held). */
static struct osdfs__inode *icache_find(osdfs *fs, uint64_t ino, int *deleted)
{
	struct osdfs__inode *ip;

	ip = inode_of(osd__lru_find(&fs->inodes, ino, ieq, &ino));
	*deleted = ip && ip->deleted;
	if (!ip || ip->deleted)
		return NULL;
	if (ip->refs++ == 0)
		osd__lru_pin(&fs->inodes, &ip->node);
	return ip;
}

/*
 * Every caller holds fs->lock (shared or exclusive), so no writer changes
 * the backend meanwhile: an inode missing from the cache is loaded without
 * holding cache_lock, letting other threads use the cache during the round
 * trip; if two threads load the same inode, the first to insert wins.
 */
int osdfs__iget(osdfs *fs, uint64_t ino, struct osdfs__inode **out)
{
	struct osdfs__inode *ip, *loaded;
	int deleted, rc;

	if (ino < 1 || ino > OSDFS__MAX_INO)
		return -ENOENT;
	pthread_mutex_lock(&fs->cache_lock);
	ip = icache_find(fs, ino, &deleted);
	pthread_mutex_unlock(&fs->cache_lock);
	if (ip || deleted) {
		*out = ip;
		return ip ? 0 : -ENOENT;
	}
	rc = inode_load(fs, ino, &loaded);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&fs->cache_lock);
	ip = icache_find(fs, ino, &deleted);
	if (!ip && !deleted) {
		ip = loaded;
		loaded = NULL;
		ip->refs = 1;
		hash_insert(fs, ip);
	}
	pthread_mutex_unlock(&fs->cache_lock);
	if (loaded)
		inode_free_mem(loaded);
	if (!ip)
		return -ENOENT;
	*out = ip;
	return 0;
}

void osdfs__iref(osdfs *fs, struct osdfs__inode *ip)
{
	pthread_mutex_lock(&fs->cache_lock);
	ip->refs++;
	pthread_mutex_unlock(&fs->cache_lock);
}

static void icache_shrink(osdfs *fs)
{
	while (fs->inodes.count > fs->icache_max && osd__lru_oldest(&fs->inodes)) {
		struct osdfs__inode *ip = inode_of(osd__lru_oldest(&fs->inodes));

		if (ip->dirty && !fs->readonly && osdfs__iwrite(fs, ip) < 0)
			break; /* keep it; sync reports the error */
		hash_remove(fs, ip);
		inode_free_mem(ip);
	}
}

void osdfs__iput(osdfs *fs, struct osdfs__inode *ip)
{
	if (!ip)
		return;
	pthread_mutex_lock(&fs->cache_lock);
	if (--ip->refs == 0) {
		if (ip->deleted) {
			hash_remove(fs, ip);
			inode_free_mem(ip);
		} else {
			osd__lru_touch(&fs->inodes, &ip->node);
			icache_shrink(fs);
		}
	}
	pthread_mutex_unlock(&fs->cache_lock);
}

int osdfs__counters_write(osdfs *fs, uint64_t next_ino, uint64_t next_gen)
{
	uint8_t buf[OSDFS__COUNTERS_LEN];
	struct osdfs__counters c = { next_ino, next_gen };
	struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_COUNTERS, buf, sizeof(buf) };

	osdfs__counters_encode(buf, &c);
	return fs->ops->set_attrs(fs->impl, OSDFS__SUPER_OID, &a, 1);
}

/* Reserves the next inode number and generation (cache_lock held). */
static int ino_reserve(osdfs *fs, uint64_t *ino, uint64_t *gen)
{
	if (fs->next_ino >= fs->ino_limit || fs->next_gen >= fs->gen_limit) {
		uint64_t il, gl;
		int rc;

		if (fs->next_ino >= OSDFS__MAX_INO)
			return osdfs__fail(fs, -ENOSPC, "inode numbers exhausted");
		il = fs->next_ino + (OSDFS__MAX_INO - fs->next_ino < ALLOC_BATCH ?
				     OSDFS__MAX_INO - fs->next_ino : ALLOC_BATCH);
		gl = fs->next_gen + ALLOC_BATCH;
		rc = osdfs__counters_write(fs, il, gl);
		if (rc < 0)
			return osdfs__fail(fs, rc, "reserving inode numbers: %s", strerror(-rc));
		fs->ino_limit = il;
		fs->gen_limit = gl;
	}
	*ino = fs->next_ino++;
	*gen = fs->next_gen++;
	return 0;
}

int osdfs__ialloc(osdfs *fs, uint32_t mode, const struct osdfs_cred *cred,
		  const struct osdfs__inode *parent, struct osdfs__inode **out)
{
	struct osdfs__inode *ip = NULL;
	uint64_t ino = 0, gen = 0;
	int rc;

	pthread_mutex_lock(&fs->cache_lock);
	rc = ino_reserve(fs, &ino, &gen);
	if (rc == 0 && !(ip = inode_new_mem(ino)))
		rc = -ENOMEM;
	if (rc < 0) {
		pthread_mutex_unlock(&fs->cache_lock);
		return rc;
	}
	ip->d.mode = mode;
	ip->d.uid = cred ? cred->uid : 0;
	ip->d.gid = cred ? cred->gid : 0;
	if (parent && (parent->d.mode & S_ISGID)) {
		ip->d.gid = parent->d.gid;
		if (S_ISDIR(mode))
			ip->d.mode |= S_ISGID;
	}
	ip->d.nlink = S_ISDIR(mode) ? 2 : 1;
	ip->d.generation = gen;
	osdfs__now(&ip->d.mtime);
	ip->d.atime = ip->d.ctime = ip->d.crtime = ip->d.mtime;
	ip->d.parent = S_ISDIR(mode) && parent ? parent->ino : 0;
	ip->refs = 1;
	hash_insert(fs, ip);
	pthread_mutex_unlock(&fs->cache_lock);
	*out = ip;
	return 0;
}

void osdfs__iabandon(osdfs *fs, struct osdfs__inode *ip)
{
	ip->deleted = 1;
	ip->dirty = 0;
	osdfs__iput(fs, ip);
}

int osdfs__ifree(osdfs *fs, struct osdfs__inode *ip)
{
	int rc;

	if (OSDFS__IS_DIR(ip))
		osdfs__dir_unload(fs, ip);
	rc = fs->ops->remove(fs->impl, OSDFS__OID_BASE + ip->ino);
	ip->deleted = 1;
	ip->dirty = 0;
	if (rc < 0 && rc != -ENOENT)
		return osdfs__fail(fs, rc, "removing object of inode %llu: %s",
				   (unsigned long long)ip->ino, strerror(-rc));
	return 0;
}

int osdfs__idrop_link(osdfs *fs, struct osdfs__inode *ip)
{
	if (OSDFS__IS_DIR(ip))
		ip->d.nlink = 0;
	else if (ip->d.nlink > 0)
		ip->d.nlink--;
	osdfs__now(&ip->d.ctime);
	if (ip->d.nlink == 0 && (ip->opens == 0 || OSDFS__IS_DIR(ip)))
		return osdfs__ifree(fs, ip);
	if (ip->d.nlink == 0)
		osdfs__orphan_add(fs, ip->ino); /* freed at last release */
	return osdfs__iwrite(fs, ip);
}

void osdfs__stat_fill(const osdfs *fs, const struct osdfs__inode *ip, struct osdfs_stat *st)
{
	const struct osdfs__dinode *d = &ip->d;

	memset(st, 0, sizeof(*st));
	st->ino = ip->ino;
	st->mode = d->mode;
	st->nlink = d->nlink;
	st->uid = d->uid;
	st->gid = d->gid;
	st->size = d->size;
	/* allocated bytes where the backend reports them (a sparse file shows
	 * what it uses), else the size */
	if (ip->used_for && ip->used_for == __atomic_load_n(&ip->used_seq, __ATOMIC_ACQUIRE) + 1)
		st->blocks = (ip->used + 511) / 512;
	else if (!(S_ISLNK(d->mode) && d->inline_len))
		st->blocks = (d->size + 511) / 512;
	st->rdev = makedev(d->rdev_major, d->rdev_minor);
	st->blksize = fs->bsize;
	st->atime.sec = d->atime.sec;
	st->atime.nsec = d->atime.nsec;
	st->mtime.sec = d->mtime.sec;
	st->mtime.nsec = d->mtime.nsec;
	st->ctime.sec = d->ctime.sec;
	st->ctime.nsec = d->ctime.nsec;
	st->crtime.sec = d->crtime.sec;
	st->crtime.nsec = d->crtime.nsec;
	st->generation = d->generation;
}

void osdfs__stat_fill_locked(const osdfs *fs, struct osdfs__inode *ip, struct osdfs_stat *st)
{
	pthread_mutex_lock(&ip->mu);
	osdfs__stat_fill(fs, ip, st);
	pthread_mutex_unlock(&ip->mu);
}

struct sync_state {
	osdfs *fs;
	int first;
};

static void sync_one(struct osd__lru_node *n, void *arg)
{
	struct sync_state *ss = arg;
	struct osdfs__inode *ip = inode_of(n);

	if (ip->dirty && !ip->deleted) {
		int rc = osdfs__iwrite(ss->fs, ip);

		if (rc < 0 && ss->first == 0)
			ss->first = rc;
	}
}

int osdfs__sync_inodes(osdfs *fs)
{
	struct sync_state ss = { fs, 0 };

	pthread_mutex_lock(&fs->cache_lock);
	osd__lru_foreach(&fs->inodes, sync_one, &ss);
	pthread_mutex_unlock(&fs->cache_lock);
	return ss.first;
}
