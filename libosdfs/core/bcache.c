/*
 * Cache of directory blocks. Callers always work on their own copy of a
 * block (read copies out, store copies in), so a block evicted by one
 * thread can never be in use by another; directory changes are written to
 * the backend first and then stored here (write-through).
 *
 * Every block that passes through also gets its name summary (sums.c),
 * which outlives the block here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/format.h"

struct bkey {
	uint64_t ino;
	uint32_t blk;
};

static int beq(const struct osd__lru_node *n, const void *key)
{
	const struct osdfs__block *b = OSD__LRU_ENTRY(n, struct osdfs__block, node);
	const struct bkey *k = key;

	return b->ino == k->ino && b->blk == k->blk;
}

int osdfs__bcache_init(osdfs *fs, size_t max)
{
	fs->bcache_max = max;
	if (osd__lru_init(&fs->blocks, max) < 0)
		return -ENOMEM;
	if (osdfs__sums_init(fs, max) < 0) {
		osd__lru_destroy(&fs->blocks);
		fs->blocks.tab = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void blocks_free_all(osdfs *fs)
{
	struct osd__lru_node *n;

	if (!fs->blocks.tab)
		return;
	while ((n = osd__lru_any(&fs->blocks))) {
		osd__lru_remove(&fs->blocks, n);
		free(OSD__LRU_ENTRY(n, struct osdfs__block, node));
	}
	osd__lru_destroy(&fs->blocks);
	fs->blocks.tab = NULL;
}

void osdfs__bcache_destroy(osdfs *fs)
{
	blocks_free_all(fs);
	osdfs__sums_destroy(fs);
	free(fs->run_buf);
	fs->run_buf = NULL;
	fs->run_cap = 0;
}

uint8_t *osdfs__bcache_run_buf(osdfs *fs, size_t size, int *kept)
{
	*kept = pthread_mutex_trylock(&fs->run_lock) == 0;
	if (!*kept)
		return malloc(size);
	if (size > fs->run_cap) {
		uint8_t *b = malloc(size);

		if (!b) {
			pthread_mutex_unlock(&fs->run_lock);
			*kept = 0;
			return NULL;
		}
		free(fs->run_buf);
		fs->run_buf = b;
		fs->run_cap = size;
	}
	return fs->run_buf;
}

void osdfs__bcache_run_done(osdfs *fs, uint8_t *buf, int kept)
{
	if (kept)
		pthread_mutex_unlock(&fs->run_lock);
	else
		free(buf);
}

static struct osdfs__block *bfind(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct bkey k = { ino, blk };
	struct osd__lru_node *n = osd__lru_find(&fs->blocks, osdfs__block_hash(ino, blk), beq, &k);

	return n ? OSD__LRU_ENTRY(n, struct osdfs__block, node) : NULL;
}

/* The cache entry of (ino, blk), made if missing: past bcache_max, from
 * the oldest entry's memory (a free and a malloc of a block for each block
 * read cost more than the LRU's work); NULL without memory (cache_lock
 * held). */
static struct osdfs__block *bget(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct osdfs__block *b = bfind(fs, ino, blk);
	struct osd__lru_node *old;

	if (fs->bcache_max == 0)
		return NULL;
	if (b) {
		osd__lru_touch(&fs->blocks, &b->node);
		return b;
	}
	if (fs->blocks.count >= fs->bcache_max && (old = osd__lru_oldest(&fs->blocks))) {
		b = OSD__LRU_ENTRY(old, struct osdfs__block, node);
		osd__lru_remove(&fs->blocks, old);
	} else if (!(b = malloc(sizeof(*b) + fs->bsize))) {
		return NULL; /* caching is optional */
	}
	b->ino = ino;
	b->blk = blk;
	osd__lru_insert(&fs->blocks, &b->node, osdfs__block_hash(ino, blk), 0);
	return b;
}

/* Inserts or refreshes a copy, then its summary: always when the block
 * @p changed, else only when it has none. Changes hold fs->lock
 * exclusive, so no lookup sees the block and its summary disagree. */
static void binsert(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf, int changed)
{
	struct osdfs__block *b;

	pthread_mutex_lock(&fs->cache_lock);
	b = bget(fs, ino, blk);
	if (b)
		memcpy(b->data, buf, fs->bsize);
	pthread_mutex_unlock(&fs->cache_lock);
	osdfs__sums_add(fs, ino, blk, buf, changed);
}

/* Copies a cached block (validated when it entered the cache) to @p buf:
 * 1, or 0 when it is not cached. Blocks enter the cache only through
 * osdfs__bcache_store() and osdfs__bcache_fill() by callers that validated
 * them. */
int osdfs__bcache_get(osdfs *fs, uint64_t ino, uint32_t blk, uint8_t *buf)
{
	struct osdfs__block *b;

	pthread_mutex_lock(&fs->cache_lock);
	b = bfind(fs, ino, blk);
	if (b) {
		memcpy(buf, b->data, fs->bsize);
		osd__lru_touch(&fs->blocks, &b->node);
	}
	pthread_mutex_unlock(&fs->cache_lock);
	return b != NULL;
}

/* A block just read from the backend: the same bytes as when its summary,
 * if it has one, was made (every change passes through store or forget),
 * so only a block without one is summarized. */
void osdfs__bcache_fill(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf)
{
	binsert(fs, ino, blk, buf, 0);
}

int osdfs__bcache_fetch(osdfs *fs, uint64_t ino, uint32_t blk, uint8_t *buf)
{
	struct iovec iov = { buf, fs->bsize };
	ssize_t n = fs->ops->read(fs->impl, OSDFS__OID_BASE + ino, (uint64_t)blk * fs->bsize,
				  &iov, 1);

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
	binsert(fs, ino, blk, buf, 1);
}

void osdfs__bcache_forget(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct osdfs__block *b;

	pthread_mutex_lock(&fs->cache_lock);
	b = bfind(fs, ino, blk);
	if (b) {
		osd__lru_remove(&fs->blocks, &b->node);
		free(b);
	}
	pthread_mutex_unlock(&fs->cache_lock);
	osdfs__sums_forget(fs, ino, blk);
}
