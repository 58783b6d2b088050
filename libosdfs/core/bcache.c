/*
 * Cache of directory blocks. Callers always work on their own copy of a
 * block (read copies out, store copies in), so a block evicted by one
 * thread can never be in use by another; directory changes are written to
 * the backend first and then stored here (write-through).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"

struct bkey {
	uint64_t ino;
	uint32_t blk;
};

static uint64_t bhash(uint64_t ino, uint32_t blk)
{
	return ino * 0x9E3779B97F4A7C15ULL ^ (uint64_t)blk * 0xC2B2AE3D27D4EB4FULL;
}

static int beq(const struct osd__lru_node *n, const void *key)
{
	const struct osdfs__block *b = OSD__LRU_ENTRY(n, struct osdfs__block, node);
	const struct bkey *k = key;

	return b->ino == k->ino && b->blk == k->blk;
}

int osdfs__bcache_init(osdfs *fs, size_t max)
{
	fs->bcache_max = max;
	return osd__lru_init(&fs->blocks, max);
}

void osdfs__bcache_destroy(osdfs *fs)
{
	struct osd__lru_node *n;

	if (!fs->blocks.tab)
		return;
	while ((n = osd__lru_any(&fs->blocks))) {
		osd__lru_remove(&fs->blocks, n);
		free(OSD__LRU_ENTRY(n, struct osdfs__block, node));
	}
	osd__lru_destroy(&fs->blocks);
}

static struct osdfs__block *bfind(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct bkey k = { ino, blk };
	struct osd__lru_node *n = osd__lru_find(&fs->blocks, bhash(ino, blk), beq, &k);

	return n ? OSD__LRU_ENTRY(n, struct osdfs__block, node) : NULL;
}

static void bremove(osdfs *fs, struct osdfs__block *b)
{
	osd__lru_remove(&fs->blocks, &b->node);
	free(b);
}

/* Inserts or refreshes a copy (cache_lock held). */
static void binsert(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf)
{
	struct osdfs__block *b = bfind(fs, ino, blk);

	if (fs->bcache_max == 0)
		return;
	if (b) {
		osd__lru_touch(&fs->blocks, &b->node);
	} else {
		while (fs->blocks.count >= fs->bcache_max && osd__lru_oldest(&fs->blocks))
			bremove(fs, OSD__LRU_ENTRY(osd__lru_oldest(&fs->blocks),
						   struct osdfs__block, node));
		b = malloc(sizeof(*b) + fs->bsize);
		if (!b)
			return; /* caching is optional */
		b->ino = ino;
		b->blk = blk;
		osd__lru_insert(&fs->blocks, &b->node, bhash(ino, blk), 0);
	}
	memcpy(b->data, buf, fs->bsize);
}

/* Returns 1 for a cached copy (validated when it entered the cache), 0 for
 * a block just read from the backend, or an error. Blocks enter the cache
 * only through osdfs__bcache_store() by callers that validated them. */
int osdfs__bcache_read(osdfs *fs, uint64_t ino, uint32_t blk, uint8_t *buf)
{
	struct osdfs__block *b;
	struct iovec iov = { buf, fs->bsize };
	ssize_t n;

	pthread_mutex_lock(&fs->cache_lock);
	b = bfind(fs, ino, blk);
	if (b) {
		memcpy(buf, b->data, fs->bsize);
		osd__lru_touch(&fs->blocks, &b->node);
		pthread_mutex_unlock(&fs->cache_lock);
		return 1;
	}
	pthread_mutex_unlock(&fs->cache_lock);
	n = fs->ops->read(fs->impl, OSDFS__OID_BASE + ino, (uint64_t)blk * fs->bsize, &iov, 1);
	if (n < 0)
		return osdfs__fail(fs, (int)n, "reading block %u of directory %llu: %s", blk,
				   (unsigned long long)ino, strerror((int)-n));
	if ((size_t)n < fs->bsize)
		return osdfs__fail(fs, -EUCLEAN, "directory %llu: block %u is missing",
				   (unsigned long long)ino, blk);
	return 0;
}

void osdfs__bcache_store(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf)
{
	pthread_mutex_lock(&fs->cache_lock);
	binsert(fs, ino, blk, buf);
	pthread_mutex_unlock(&fs->cache_lock);
}

void osdfs__bcache_forget(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct osdfs__block *b;

	pthread_mutex_lock(&fs->cache_lock);
	b = bfind(fs, ino, blk);
	if (b)
		bremove(fs, b);
	pthread_mutex_unlock(&fs->cache_lock);
}
