/*
 * Cache of directory blocks. Callers always work on their own copy of a
 * block (read copies out, store copies in), so a block evicted by one
 * thread can never be in use by another; directory changes are written to
 * the backend first and then stored here (write-through).
 *
 * Beside it, a name summary per block: a Bloom filter of the names its live
 * records hold, 1/32 of the block, made whenever a validated block passes
 * through (read, read ahead, or written) and dropped with it. Summaries are
 * kept for SUM_FACTOR times as many blocks as whole blocks are, in the same
 * memory, so a lookup of an absent name in a directory far larger than the
 * block cache is answered without reading a block (docs/osdfs-format.md 4.5).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/format.h"
#include "lebytes.h"

#define SUM_FACTOR OSDFS__DIRSUMS_FACTOR /* summaries per cached block, too */
#define SUM_PROBES 4u    /* bits set per name, all in one cache line of the filter */
#define SUM_LINE_BITS 512u

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
	fs->sums_max = max * SUM_FACTOR;
	fs->sum_len = fs->bsize / SUM_FACTOR;
	if (osd__lru_init(&fs->blocks, max) < 0)
		return -ENOMEM;
	if (osd__lru_init(&fs->sums, fs->sums_max) < 0) {
		osd__lru_destroy(&fs->blocks);
		fs->blocks.tab = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void lru_free_all(struct osd__lru *l)
{
	struct osd__lru_node *n;

	if (!l->tab)
		return;
	while ((n = osd__lru_any(l))) {
		osd__lru_remove(l, n);
		free(OSD__LRU_ENTRY(n, struct osdfs__block, node));
	}
	osd__lru_destroy(l);
	l->tab = NULL;
}

void osdfs__bcache_destroy(osdfs *fs)
{
	lru_free_all(&fs->blocks);
	lru_free_all(&fs->sums);
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

static struct osdfs__block *lfind(struct osd__lru *l, uint64_t ino, uint32_t blk)
{
	struct bkey k = { ino, blk };
	struct osd__lru_node *n = osd__lru_find(l, bhash(ino, blk), beq, &k);

	return n ? OSD__LRU_ENTRY(n, struct osdfs__block, node) : NULL;
}

static struct osdfs__block *bfind(osdfs *fs, uint64_t ino, uint32_t blk)
{
	return lfind(&fs->blocks, ino, blk);
}

static void lremove(struct osd__lru *l, struct osdfs__block *b)
{
	osd__lru_remove(l, &b->node);
	free(b);
}

/*
 * The entry of (ino, blk) in @p l, made (evicting the oldest past @p max)
 * with @p len data bytes if missing; NULL if it cannot be (cache_lock held).
 * An entry marked used (a summary looked at: lookups mark rather than move
 * it, which would touch two more cache lines each) gets a second chance.
 */
static struct osdfs__block *lget(struct osd__lru *l, size_t max, size_t len, uint64_t ino,
				 uint32_t blk)
{
	struct osdfs__block *b = lfind(l, ino, blk);

	if (max == 0)
		return NULL;
	if (b) {
		osd__lru_touch(l, &b->node);
		return b;
	}
	while (l->count >= max && osd__lru_oldest(l)) {
		b = OSD__LRU_ENTRY(osd__lru_oldest(l), struct osdfs__block, node);
		if (b->used) {
			b->used = 0;
			osd__lru_touch(l, &b->node);
		} else {
			lremove(l, b);
		}
	}
	b = malloc(sizeof(*b) + len);
	if (!b)
		return NULL; /* caching is optional */
	b->ino = ino;
	b->blk = blk;
	b->used = 0;
	osd__lru_insert(l, &b->node, bhash(ino, blk), 0);
	return b;
}

/* A name as little-endian 8-byte words, each mixed in with one multiply:
 * summarizing a block hashes its hundred-odd names, and a multiply per byte
 * (FNV) made that most of a directory block read. Snapshots store the
 * filters, so the words are read the same on every host. */
static uint64_t sum_words(const char *name, size_t len)
{
	uint64_t h = 0xCBF29CE484222325ULL ^ len, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		w = osdfs__get_le64((const uint8_t *)name + i);
		h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 29;
	}
	if (i < len) {
		w = 0;
		for (unsigned k = 0; i < len; i++, k += 8)
			w |= (uint64_t)(uint8_t)name[i] << k;
		h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
	}
	return h;
}

/* The filter's bits for a name: sum_words(), then a 64-bit finalizer; its
 * top bits pick a cache line of the filter, its halves the bits in it
 * (double hashing, Kirsch-Mitzenmacher), so a test reads one line. */
static void sum_probes(const char *name, size_t len, size_t nbits, size_t bit[SUM_PROBES])
{
	size_t line = nbits < SUM_LINE_BITS ? nbits : SUM_LINE_BITS;
	uint64_t h = sum_words(name, len);

	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDULL;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ULL;
	h ^= h >> 33;
	uint32_t a = (uint32_t)h, b = (uint32_t)(h >> 32) | 1u;
	size_t base = (size_t)(h >> 48) % (nbits / line) * line;
	for (unsigned i = 0; i < SUM_PROBES; i++)
		bit[i] = base + ((size_t)(a + i * b) & (line - 1));
}

/* A summary's filter: at a 64-byte boundary of its data (SUM_PAD more bytes
 * allocated), so each line of it is one cache line. */
#define SUM_PAD 63u
static uint8_t *sum_bits(struct osdfs__block *s)
{
	return (uint8_t *)(((uintptr_t)s->data + SUM_PAD) & ~(uintptr_t)SUM_PAD);
}

/* Summarize a validated block (cache_lock held). */
static void sum_insert(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf)
{
	struct osdfs__block *s = lget(&fs->sums, fs->sums_max, fs->sum_len + SUM_PAD, ino, blk);
	size_t off = OSDFS__BLOCK_HDR_LEN, bit[SUM_PROBES];
	uint8_t *bits;

	if (!s)
		return;
	bits = sum_bits(s);
	memset(bits, 0, fs->sum_len);
	while (off < fs->bsize) {
		struct osdfs__rec r;

		osdfs__rec_get(&r, buf + off);
		if (r.ino) {
			sum_probes(r.name, r.name_len, fs->sum_len * 8, bit);
			for (unsigned i = 0; i < SUM_PROBES; i++)
				bits[bit[i] / 8] |= (uint8_t)(1u << (bit[i] % 8));
		}
		off += r.rec_len;
	}
}

/* Inserts or refreshes a copy, and its summary: always when the block
 * @p changed, else only when it has none (cache_lock held). */
static void binsert(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf, int changed)
{
	struct osdfs__block *b = lget(&fs->blocks, fs->bcache_max, fs->bsize, ino, blk);

	if (b)
		memcpy(b->data, buf, fs->bsize);
	if (changed || !lfind(&fs->sums, ino, blk))
		sum_insert(fs, ino, blk, buf);
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
	pthread_mutex_lock(&fs->cache_lock);
	binsert(fs, ino, blk, buf, 0);
	pthread_mutex_unlock(&fs->cache_lock);
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
	pthread_mutex_lock(&fs->cache_lock);
	binsert(fs, ino, blk, buf, 1);
	pthread_mutex_unlock(&fs->cache_lock);
}

void osdfs__bcache_forget(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct osdfs__block *b;

	pthread_mutex_lock(&fs->cache_lock);
	b = bfind(fs, ino, blk);
	if (b)
		lremove(&fs->blocks, b);
	b = lfind(&fs->sums, ino, blk);
	if (b)
		lremove(&fs->sums, b);
	pthread_mutex_unlock(&fs->cache_lock);
}

void osdfs__bcache_summarize(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf)
{
	pthread_mutex_lock(&fs->cache_lock);
	sum_insert(fs, ino, blk, buf);
	pthread_mutex_unlock(&fs->cache_lock);
}

int osdfs__bcache_summarized(osdfs *fs, uint64_t ino, uint32_t blk)
{
	pthread_mutex_lock(&fs->cache_lock);
	int r = lfind(&fs->sums, ino, blk) != NULL;
	pthread_mutex_unlock(&fs->cache_lock);
	return r;
}

/* Are all of a name's bits set in a filter? */
static int sum_test(const uint8_t *bits, const size_t bit[SUM_PROBES])
{
	for (unsigned i = 0; i < SUM_PROBES; i++)
		if (!(bits[bit[i] / 8] & (1u << (bit[i] % 8))))
			return 0;
	return 1;
}

int osdfs__sum_may_hold(const uint8_t *bits, size_t sum_len, const char *name, size_t len)
{
	size_t bit[SUM_PROBES];

	sum_probes(name, len, sum_len * 8, bit);
	return sum_test(bits, bit);
}

int osdfs__bcache_absent(osdfs *fs, uint64_t ino, uint32_t blk, const char *name, size_t len)
{
	size_t bit[SUM_PROBES];
	int absent = 0;

	if (fs->sum_len == 0)
		return 0;
	sum_probes(name, len, fs->sum_len * 8, bit);
	pthread_mutex_lock(&fs->cache_lock);
	struct osdfs__block *s = lfind(&fs->sums, ino, blk);
	if (s) {
		s->used = 1;
		absent = !sum_test(sum_bits(s), bit);
	}
	pthread_mutex_unlock(&fs->cache_lock);
	return absent;
}

uint32_t osdfs__bcache_sums_export(osdfs *fs, uint64_t ino, uint32_t nblocks, uint8_t *out)
{
	uint32_t missing = 0;

	pthread_mutex_lock(&fs->cache_lock);
	for (uint32_t b = 0; b < nblocks; b++) {
		struct osdfs__block *s = lfind(&fs->sums, ino, b);

		if (s && out)
			memcpy(out + (size_t)b * fs->sum_len, sum_bits(s), fs->sum_len);
		missing += !s;
	}
	pthread_mutex_unlock(&fs->cache_lock);
	return missing;
}

void osdfs__bcache_sums_import(osdfs *fs, uint64_t ino, uint32_t nblocks, const uint8_t *in)
{
	pthread_mutex_lock(&fs->cache_lock);
	for (uint32_t b = 0; b < nblocks; b++) {
		/* A summary made from the block since has the same bits: the
		 * block has not changed, or the snapshot would be void. */
		struct osdfs__block *s = lget(&fs->sums, fs->sums_max, fs->sum_len + SUM_PAD,
					      ino, b);

		if (!s)
			break;
		memcpy(sum_bits(s), in + (size_t)b * fs->sum_len, fs->sum_len);
	}
	pthread_mutex_unlock(&fs->cache_lock);
}

struct owners {
	uint64_t *ino;
	size_t n;
};

static void owner_add(struct osd__lru_node *n, void *arg)
{
	struct owners *o = arg;

	o->ino[o->n++] = OSD__LRU_ENTRY(n, struct osdfs__block, node)->ino;
}

static int ino_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t osdfs__bcache_sum_dirs(osdfs *fs, uint32_t min, uint64_t **out)
{
	struct owners o = { NULL, 0 };
	size_t k = 0;

	pthread_mutex_lock(&fs->cache_lock);
	o.ino = malloc((fs->sums.count + 1) * sizeof(*o.ino));
	if (o.ino)
		osd__lru_foreach(&fs->sums, owner_add, &o);
	pthread_mutex_unlock(&fs->cache_lock);
	if (!o.ino)
		return 0;
	qsort(o.ino, o.n, sizeof(*o.ino), ino_cmp);
	for (size_t i = 0, j; i < o.n; i = j) {
		for (j = i; j < o.n && o.ino[j] == o.ino[i]; j++)
			;
		if (j - i >= min)
			o.ino[k++] = o.ino[i];
	}
	*out = o.ino;
	return k;
}
