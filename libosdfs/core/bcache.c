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

static size_t bhash(const osdfs *fs, uint64_t ino, uint32_t blk)
{
	uint64_t k = ino * 0x9E3779B97F4A7C15ULL ^ (uint64_t)blk * 0xC2B2AE3D27D4EB4FULL;

	return (size_t)(k >> 20) & fs->btab_mask;
}

int osdfs__bcache_init(osdfs *fs, size_t max)
{
	size_t n = 1024;

	while (n < max && n < ((size_t)1 << 20))
		n <<= 1;
	fs->btab = calloc(n, sizeof(*fs->btab));
	if (!fs->btab)
		return -ENOMEM;
	fs->btab_mask = n - 1;
	fs->bcache_max = max;
	return 0;
}

void osdfs__bcache_destroy(osdfs *fs)
{
	struct osdfs__block *b, *next;

	for (b = fs->blru_head; b; b = next) {
		next = b->lnext;
		free(b);
	}
	free(fs->btab);
	fs->btab = NULL;
	fs->blru_head = fs->blru_tail = NULL;
}

static struct osdfs__block **bfind(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct osdfs__block **pp = &fs->btab[bhash(fs, ino, blk)];

	while (*pp && ((*pp)->ino != ino || (*pp)->blk != blk))
		pp = &(*pp)->hnext;
	return pp;
}

static void blru_unlink(osdfs *fs, struct osdfs__block *b)
{
	if (b->lprev)
		b->lprev->lnext = b->lnext;
	else
		fs->blru_head = b->lnext;
	if (b->lnext)
		b->lnext->lprev = b->lprev;
	else
		fs->blru_tail = b->lprev;
}

static void blru_append(osdfs *fs, struct osdfs__block *b)
{
	b->lnext = NULL;
	b->lprev = fs->blru_tail;
	if (fs->blru_tail)
		fs->blru_tail->lnext = b;
	else
		fs->blru_head = b;
	fs->blru_tail = b;
}

static void bremove(osdfs *fs, struct osdfs__block **pp)
{
	struct osdfs__block *b = *pp;

	*pp = b->hnext;
	blru_unlink(fs, b);
	fs->bcount--;
	free(b);
}

/* Inserts or refreshes a copy (cache_lock held). */
static void binsert(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf)
{
	struct osdfs__block **pp = bfind(fs, ino, blk), *b = *pp;

	if (fs->bcache_max == 0)
		return;
	if (b) {
		blru_unlink(fs, b);
	} else {
		while (fs->bcount >= fs->bcache_max && fs->blru_head) {
			struct osdfs__block *old = fs->blru_head;

			bremove(fs, bfind(fs, old->ino, old->blk));
		}
		b = malloc(sizeof(*b) + fs->bsize);
		if (!b)
			return; /* caching is optional */
		b->ino = ino;
		b->blk = blk;
		pp = bfind(fs, ino, blk);
		b->hnext = NULL;
		*pp = b;
		fs->bcount++;
	}
	memcpy(b->data, buf, fs->bsize);
	blru_append(fs, b);
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
	b = *bfind(fs, ino, blk);
	if (b) {
		memcpy(buf, b->data, fs->bsize);
		blru_unlink(fs, b);
		blru_append(fs, b);
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
	struct osdfs__block **pp;

	pthread_mutex_lock(&fs->cache_lock);
	pp = bfind(fs, ino, blk);
	if (*pp)
		bremove(fs, pp);
	pthread_mutex_unlock(&fs->cache_lock);
}
