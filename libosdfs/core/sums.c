/*
 * Name summaries of directory blocks: a Bloom filter per block of the names
 * its live records hold, 1/32 of the block, made whenever a validated block
 * passes through (read, read ahead, or written). They are kept for
 * OSDFS__DIRSUMS_FACTOR times as many blocks as the block cache holds, in
 * the same memory, so a lookup of an absent name in a directory far larger
 * than the block cache is answered without reading a block
 * (docs/osdfs-format.md 4.5).
 *
 * They are kept in chunks: the summaries of a run of consecutive blocks of
 * one directory, side by side, with a bit per block saying which are made.
 * A lookup finds its chunk in a small, hot table and then reads one cache
 * line of the filter. Kept one per block, in a table of 130,000 entries for
 * a directory of 10M names, each test walked a bucket chain and a node
 * somewhere in memory first, and a negative lookup there took 3.5 times as
 * long as in a directory of 100k names. A chunk grows (by powers of two) to
 * the highest block it holds, so a small directory costs no more than its
 * own blocks' summaries. Chunks are evicted whole, oldest first, with a
 * second chance for those looked at since they last came round.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/fs.h"
#include "lebytes.h"

#define SUM_PROBES 4u    /* bits set per name, all in one cache line of the filter */
#define SUM_LINE_BITS 512u
#define CHUNK_MAX 256u   /* blocks a chunk may span */
#define CACHE_LINE 64u

struct sum_chunk {
	struct osd__lru_node node;  /* in fs->sums, keyed by (ino, first) */
	uint64_t ino;
	uint32_t first;             /* the chunk's first block */
	uint32_t cap;               /* summaries it has room for (a power of two) */
	uint32_t count;             /* of them made */
	uint32_t used;              /* looked at since it last came round */
	uint64_t made[CHUNK_MAX / 64]; /* bit i: block first + i has its summary */
	/* The filters, at a cache line boundary so that each line of a filter
	 * is one cache line; apart from the headers, which stay few and hot
	 * (headers among the filters cost each lookup a TLB miss more). */
	uint8_t *bits;
};

static uint8_t *chunk_bits(struct sum_chunk *c, uint32_t blk, size_t sum_len)
{
	return c->bits + (size_t)(blk - c->first) * sum_len;
}

static int chunk_made(const struct sum_chunk *c, uint32_t blk)
{
	uint32_t i = blk - c->first;

	return i < c->cap && (c->made[i / 64] >> (i % 64) & 1);
}

struct chunk_key {
	uint64_t ino;
	uint32_t first;
};

static int chunk_eq(const struct osd__lru_node *n, const void *key)
{
	const struct sum_chunk *c = OSD__LRU_ENTRY(n, struct sum_chunk, node);
	const struct chunk_key *k = key;

	return c->ino == k->ino && c->first == k->first;
}

static uint32_t chunk_first(const osdfs *fs, uint32_t blk)
{
	return blk & ~(fs->sum_chunk - 1);
}

/* The chunk spanning block blk of ino, or NULL (cache_lock held). */
static struct sum_chunk *chunk_find(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct chunk_key k = { ino, chunk_first(fs, blk) };
	struct osd__lru_node *n = osd__lru_find(&fs->sums, osdfs__block_hash(k.ino, k.first), chunk_eq,
						&k);

	return n ? OSD__LRU_ENTRY(n, struct sum_chunk, node) : NULL;
}

static void chunk_drop(osdfs *fs, struct sum_chunk *c)
{
	osd__lru_remove(&fs->sums, &c->node);
	fs->sums_used -= c->cap;
	free(c->bits);
	free(c);
}

/* Evicts the oldest chunks until @p cap more summaries fit. */
static void make_room(osdfs *fs, uint32_t cap)
{
	struct osd__lru_node *n;

	while (fs->sums_used + cap > fs->sums_max && (n = osd__lru_oldest(&fs->sums))) {
		struct sum_chunk *c = OSD__LRU_ENTRY(n, struct sum_chunk, node);

		if (c->used) {
			c->used = 0;
			osd__lru_touch(&fs->sums, n);
		} else {
			chunk_drop(fs, c);
		}
	}
}

int osdfs__sums_init(osdfs *fs, size_t blocks)
{
	fs->sums_max = blocks * OSDFS__DIRSUMS_FACTOR;
	fs->sum_len = fs->bsize / OSDFS__DIRSUMS_FACTOR;
	fs->sums_used = 0;
	/* At least eight chunks' worth: a cache of one block (32 summaries)
	 * keeps chunks of 4 blocks. */
	fs->sum_chunk = CHUNK_MAX;
	while (fs->sum_chunk > 1 && fs->sum_chunk > fs->sums_max / 8)
		fs->sum_chunk /= 2;
	return osd__lru_init(&fs->sums, fs->sums_max / fs->sum_chunk) < 0 ? -ENOMEM : 0;
}

void osdfs__sums_destroy(osdfs *fs)
{
	struct osd__lru_node *n;

	if (!fs->sums.tab)
		return;
	while ((n = osd__lru_any(&fs->sums)))
		chunk_drop(fs, OSD__LRU_ENTRY(n, struct sum_chunk, node));
	osd__lru_destroy(&fs->sums);
	fs->sums.tab = NULL;
}

int osdfs__sums_fit(const osdfs *fs, uint32_t nblocks)
{
	/* in size_t: a damaged header's count near 2^32 must not wrap */
	size_t need = ((size_t)nblocks + fs->sum_chunk - 1) / fs->sum_chunk * fs->sum_chunk;

	return fs->sum_len && need <= fs->sums_max;
}

/*
 * The chunk to hold block blk of ino, with room up to block @p last of its
 * span: @p c (what chunk_find() gave for blk, or NULL), or one made, or @p c
 * grown into a new allocation (evicting others for room); NULL without
 * memory or room (cache_lock held). Summaries are optional: a block without
 * one is read.
 */
static struct sum_chunk *chunk_for(osdfs *fs, struct sum_chunk *c, uint64_t ino, uint32_t blk,
				   uint32_t last)
{
	uint32_t first = chunk_first(fs, blk), need = last - first + 1, cap = 1;
	uint8_t *bits;

	if (c && need <= c->cap) {
		osd__lru_touch(&fs->sums, &c->node);
		return c;
	}
	while (cap < need)
		cap *= 2;
	if (c && cap < 2 * c->cap)
		cap = 2 * c->cap < fs->sum_chunk ? 2 * c->cap : fs->sum_chunk;
	if (cap > fs->sums_max || posix_memalign((void **)&bits, CACHE_LINE, cap * fs->sum_len))
		return NULL;
	if (c) {
		/* out of the list while room is made, so it is not evicted */
		memcpy(bits, c->bits, c->cap * fs->sum_len);
		free(c->bits);
		osd__lru_remove(&fs->sums, &c->node);
		fs->sums_used -= c->cap;
	} else if ((c = calloc(1, sizeof(*c)))) {
		c->ino = ino;
		c->first = first;
	} else {
		free(bits);
		return NULL;
	}
	c->bits = bits;
	c->cap = cap;
	c->used = 0;
	make_room(fs, cap);
	osd__lru_insert(&fs->sums, &c->node, osdfs__block_hash(ino, first), 0);
	fs->sums_used += cap;
	return c;
}

/* Block blk (within the chunk's room) has its summary now. */
static void chunk_mark(struct sum_chunk *c, uint32_t blk)
{
	uint32_t i = blk - c->first;

	if (!chunk_made(c, blk)) {
		c->made[i / 64] |= 1ULL << (i % 64);
		c->count++;
	}
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

/* The filter of a validated block into bits (sum_len bytes). */
static void sum_make(const osdfs *fs, const uint8_t *buf, uint8_t *bits)
{
	size_t off = OSDFS__BLOCK_HDR_LEN, bit[SUM_PROBES];

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

void osdfs__sums_add(osdfs *fs, uint64_t ino, uint32_t blk, const uint8_t *buf, int changed)
{
	struct sum_chunk *c;

	if (fs->sum_len == 0)
		return;
	pthread_mutex_lock(&fs->cache_lock);
	c = chunk_find(fs, ino, blk);
	if (changed || !c || !chunk_made(c, blk)) {
		c = chunk_for(fs, c, ino, blk, blk);
		if (c) {
			sum_make(fs, buf, chunk_bits(c, blk, fs->sum_len));
			chunk_mark(c, blk);
		}
	}
	pthread_mutex_unlock(&fs->cache_lock);
}

void osdfs__sums_forget(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct sum_chunk *c;

	pthread_mutex_lock(&fs->cache_lock);
	c = chunk_find(fs, ino, blk);
	if (c && chunk_made(c, blk)) {
		uint32_t i = blk - c->first;

		c->made[i / 64] &= ~(1ULL << (i % 64));
		if (--c->count == 0)
			chunk_drop(fs, c);
	}
	pthread_mutex_unlock(&fs->cache_lock);
}

int osdfs__sums_has(osdfs *fs, uint64_t ino, uint32_t blk)
{
	struct sum_chunk *c;
	int r;

	pthread_mutex_lock(&fs->cache_lock);
	c = chunk_find(fs, ino, blk);
	r = c && chunk_made(c, blk);
	pthread_mutex_unlock(&fs->cache_lock);
	return r;
}

int osdfs__sums_absent(osdfs *fs, uint64_t ino, uint32_t blk, const char *name, size_t len)
{
	size_t bit[SUM_PROBES];
	struct sum_chunk *c;
	int absent = 0;

	if (fs->sum_len == 0)
		return 0;
	sum_probes(name, len, fs->sum_len * 8, bit);
	pthread_mutex_lock(&fs->cache_lock);
	c = chunk_find(fs, ino, blk);
	if (c && chunk_made(c, blk)) {
		/* marked, not moved: a move would touch two more cache lines */
		c->used = 1;
		absent = !sum_test(chunk_bits(c, blk, fs->sum_len), bit);
	}
	pthread_mutex_unlock(&fs->cache_lock);
	return absent;
}

uint32_t osdfs__sums_export(osdfs *fs, uint64_t ino, uint32_t nblocks, uint8_t *out)
{
	uint32_t missing = 0;

	pthread_mutex_lock(&fs->cache_lock);
	for (uint32_t b = 0; b < nblocks; b += fs->sum_chunk) {
		struct sum_chunk *c = chunk_find(fs, ino, b);
		uint32_t end = nblocks - b < fs->sum_chunk ? nblocks : b + fs->sum_chunk;

		for (uint32_t k = b; k < end; k++) {
			int made = c && chunk_made(c, k);

			if (made && out)
				memcpy(out + (size_t)k * fs->sum_len, chunk_bits(c, k, fs->sum_len),
				       fs->sum_len);
			missing += !made;
		}
	}
	pthread_mutex_unlock(&fs->cache_lock);
	return missing;
}

void osdfs__sums_import(osdfs *fs, uint64_t ino, uint32_t nblocks, const uint8_t *in)
{
	if (fs->sum_len == 0)
		return;
	pthread_mutex_lock(&fs->cache_lock);
	for (uint32_t b = 0; b < nblocks; b += fs->sum_chunk) {
		uint32_t end = nblocks - b < fs->sum_chunk ? nblocks : b + fs->sum_chunk;
		struct sum_chunk *c = chunk_for(fs, chunk_find(fs, ino, b), ino, b, end - 1);

		if (!c)
			break;
		/* A summary made from the block since has the same bits: the
		 * block has not changed, or the snapshot would be void. */
		memcpy(chunk_bits(c, b, fs->sum_len), in + (size_t)b * fs->sum_len,
		       (size_t)(end - b) * fs->sum_len);
		for (uint32_t k = b; k < end; k++)
			chunk_mark(c, k);
	}
	pthread_mutex_unlock(&fs->cache_lock);
}

struct owners {
	struct owner {
		uint64_t ino;
		uint32_t count;
	} *o;
	size_t n;
};

static void owner_add(struct osd__lru_node *n, void *arg)
{
	const struct sum_chunk *c = OSD__LRU_ENTRY(n, struct sum_chunk, node);
	struct owners *w = arg;

	w->o[w->n].ino = c->ino;
	w->o[w->n++].count = c->count;
}

static int owner_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct owner *)a)->ino, y = ((const struct owner *)b)->ino;

	return x < y ? -1 : x > y;
}

size_t osdfs__sums_dirs(osdfs *fs, uint32_t min, uint64_t **out)
{
	struct owners w = { NULL, 0 };
	uint64_t *ino;
	size_t k = 0;

	pthread_mutex_lock(&fs->cache_lock);
	w.o = malloc((fs->sums.count + 1) * sizeof(*w.o));
	if (w.o)
		osd__lru_foreach(&fs->sums, owner_add, &w);
	pthread_mutex_unlock(&fs->cache_lock);
	ino = malloc((w.n + 1) * sizeof(*ino));
	if (!w.o || !ino) {
		free(w.o);
		free(ino);
		return 0;
	}
	qsort(w.o, w.n, sizeof(*w.o), owner_cmp);
	for (size_t i = 0, j; i < w.n; i = j) {
		uint64_t made = 0;

		for (j = i; j < w.n && w.o[j].ino == w.o[i].ino; j++)
			made += w.o[j].count;
		if (made >= min)
			ino[k++] = w.o[i].ino;
	}
	free(w.o);
	*out = ino;
	return k;
}
