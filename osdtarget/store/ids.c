/*
 * A partition's member ids, sorted (struct osd__ids): chunks of at most
 * OSD__IDS_CHUNK index entries, found through an array of each chunk's
 * first id (and beside it its last: LIST writes the ids of a dense chunk
 * from those two, namespace.c). An insert or a removal moves the entries
 * of one chunk, and a split or a merge the chunk arrays. Kept in one flat
 * array, the index moved half of itself on every REMOVE, and on every
 * CREATE of an id below the highest: 5.2 ms per REMOVE in a partition of
 * 10M objects (80 MB moved).
 *
 * A chunk that falls below a quarter of OSD__IDS_CHUNK joins a neighbour
 * the two fit in three quarters of, so no two neighbours are both below a
 * quarter: the index costs at most eight times its entries after any mix of
 * removals; an open fills every chunk.
 *
 * The entries before a chunk (a LIST answer's count of the ids after it)
 * come from a Fenwick tree of the chunk sizes: summing the sizes of every
 * chunk before it, 20,000 of them at 10M objects, doubled the time of a
 * LIST walk. Entries added or removed in a chunk update it in O(log chunks),
 * a chunk added at the end too; a split or a merge rebuilds it (O(chunks),
 * once per some hundred inserts or removals).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "search/sorted_ids.h"
#include "store/internal.h"

void osd__ids_free(struct osd__ids *x)
{
	for (size_t i = 0; i < x->nc; i++)
		free(x->c[i]);
	free(x->c);
	free(x->cn);
	free(x->first);
	free(x->last);
	free(x->fen);
	memset(x, 0, sizeof(*x));
}

/* Room for one chunk more in the chunk arrays. */
static int dir_room(struct osd__ids *x)
{
	if (x->nc < x->cap)
		return 0;
	size_t cap = x->cap ? 2 * x->cap : 4;
	struct osd__id **c = realloc(x->c, cap * sizeof(*c));
	if (c)
		x->c = c;
	uint32_t *cn = c ? realloc(x->cn, cap * sizeof(*cn)) : NULL;
	if (cn)
		x->cn = cn;
	uint64_t *first = cn ? realloc(x->first, cap * sizeof(*first)) : NULL;
	if (first)
		x->first = first;
	uint64_t *last = first ? realloc(x->last, cap * sizeof(*last)) : NULL;
	if (last)
		x->last = last;
	size_t *fen = last ? realloc(x->fen, (cap + 1) * sizeof(*fen)) : NULL;
	if (!fen)
		return -ENOMEM;
	x->fen = fen;
	x->cap = cap;
	return 0;
}

/* Chunk @p c's first and last ids, after a change of it. */
static void ends(struct osd__ids *x, size_t c)
{
	x->first[c] = x->c[c][0].id;
	x->last[c] = x->c[c][x->cn[c] - 1].id;
}

/* ---- the Fenwick tree of chunk sizes: fen[i] sums cn[i - lowbit(i), i) ---- */

static size_t lowbit(size_t i)
{
	return i & (~i + 1);
}

/* Entries in chunks [0, c). */
static size_t fen_prefix(const struct osd__ids *x, size_t c)
{
	size_t n = 0;
	for (; c > 0; c -= lowbit(c))
		n += x->fen[c];
	return n;
}

static void fen_add(struct osd__ids *x, size_t c, size_t delta)
{
	for (size_t i = c + 1; i <= x->nc; i += lowbit(i))
		x->fen[i] += delta; /* modular: a removal adds -1 */
}

static void fen_rebuild(struct osd__ids *x)
{
	for (size_t i = 1; i <= x->nc; i++)
		x->fen[i] = x->cn[i - 1];
	for (size_t i = 1; i <= x->nc; i++)
		if (i + lowbit(i) <= x->nc)
			x->fen[i + lowbit(i)] += x->fen[i];
}

/* The chunk just added at the end: its node sums the chunks it covers. */
static void fen_extend(struct osd__ids *x)
{
	size_t i = x->nc;
	x->fen[i] = x->cn[i - 1] + fen_prefix(x, i - 1) - fen_prefix(x, i - lowbit(i));
}

/* A new empty chunk at index @p at of the chunk arrays. */
static int dir_insert(struct osd__ids *x, size_t at)
{
	struct osd__id *chunk = dir_room(x) ? NULL : malloc(OSD__IDS_CHUNK * sizeof(*chunk));
	if (!chunk)
		return -ENOMEM;
	memmove(&x->c[at + 1], &x->c[at], (x->nc - at) * sizeof(*x->c));
	memmove(&x->cn[at + 1], &x->cn[at], (x->nc - at) * sizeof(*x->cn));
	memmove(&x->first[at + 1], &x->first[at], (x->nc - at) * sizeof(*x->first));
	memmove(&x->last[at + 1], &x->last[at], (x->nc - at) * sizeof(*x->last));
	x->c[at] = chunk;
	x->cn[at] = 0;
	x->nc++;
	return 0;
}

static void dir_remove(struct osd__ids *x, size_t at)
{
	free(x->c[at]);
	memmove(&x->c[at], &x->c[at + 1], (x->nc - at - 1) * sizeof(*x->c));
	memmove(&x->cn[at], &x->cn[at + 1], (x->nc - at - 1) * sizeof(*x->cn));
	memmove(&x->first[at], &x->first[at + 1], (x->nc - at - 1) * sizeof(*x->first));
	memmove(&x->last[at], &x->last[at + 1], (x->nc - at - 1) * sizeof(*x->last));
	x->nc--;
}

int osd__ids_append(struct osd__ids *x, const struct osd__id *e)
{
	if (!x->nc || x->cn[x->nc - 1] == OSD__IDS_CHUNK) {
		if (dir_insert(x, x->nc))
			return -ENOMEM;
		fen_extend(x);
	}
	size_t c = x->nc - 1;
	x->c[c][x->cn[c]++] = *e;
	ends(x, c);
	fen_add(x, c, 1);
	x->n++;
	return 0;
}

struct osd__ids_pos osd__ids_lower(const struct osd__ids *x, uint64_t id)
{
	struct osd__ids_pos p = { 0, 0 };
	if (!x->nc)
		return p;
	/* the last chunk whose first id is <= id (the common "create max + 1"
	 * lands in the last one straight away); both levels interpolate, as
	 * ids allocated in order make dense runs (search/sorted_ids.h) */
	size_t lo = x->nc - 1;
	if (x->first[lo] > id) {
		lo = osd__sorted_lower(x->first, x->nc, sizeof(*x->first), id);
		if (lo == x->nc || x->first[lo] > id)
			lo = lo ? lo - 1 : 0;
	}
	p.c = lo;
	p.k = osd__sorted_lower(x->c[lo], x->cn[lo], sizeof(**x->c), id);
	if (p.k == x->cn[lo]) { /* past this chunk: the next one's first entry */
		p.c++;
		p.k = 0;
	}
	return p;
}

struct osd__id *osd__ids_find(const struct osd__ids *x, uint64_t id, struct osd__ids_pos *pos)
{
	struct osd__ids_pos p = osd__ids_lower(x, id);
	struct osd__id *e = osd__ids_at(x, p);
	if (!e || e->id != id)
		return NULL;
	if (pos)
		*pos = p;
	return e;
}

size_t osd__ids_rank(const struct osd__ids *x, struct osd__ids_pos p)
{
	return p.c >= x->nc ? x->n : fen_prefix(x, p.c) + p.k;
}

const struct osd__id *osd__ids_last(const struct osd__ids *x)
{
	return x->nc ? &x->c[x->nc - 1][x->cn[x->nc - 1] - 1] : NULL;
}

/* Split full chunk @p c in two halves. */
static int split(struct osd__ids *x, size_t c)
{
	if (dir_insert(x, c + 1))
		return -ENOMEM;
	uint32_t half = x->cn[c] / 2;
	memcpy(x->c[c + 1], x->c[c] + half, (x->cn[c] - half) * sizeof(**x->c));
	x->cn[c + 1] = x->cn[c] - half;
	x->cn[c] = half;
	ends(x, c);
	ends(x, c + 1);
	fen_rebuild(x);
	return 0;
}

int osd__ids_insert(struct osd__ids *x, struct osd__ids_pos p, const struct osd__id *e)
{
	if (p.c == x->nc) { /* past the last entry: into the last chunk */
		if (!x->nc || x->cn[x->nc - 1] == OSD__IDS_CHUNK)
			return osd__ids_append(x, e);
		p.c = x->nc - 1;
		p.k = x->cn[p.c];
	}
	if (x->cn[p.c] == OSD__IDS_CHUNK) {
		if (split(x, p.c))
			return -ENOMEM;
		if (p.k > x->cn[p.c]) {
			p.k -= x->cn[p.c];
			p.c++;
		}
	}
	struct osd__id *v = x->c[p.c];
	memmove(&v[p.k + 1], &v[p.k], (x->cn[p.c] - p.k) * sizeof(*v));
	v[p.k] = *e;
	x->cn[p.c]++;
	ends(x, p.c);
	fen_add(x, p.c, 1);
	x->n++;
	return 0;
}

/* Chunk @p c fell below a quarter: it joins the next chunk, or the previous
 * one, where the two fill no more than three quarters (no split soon). */
static void merge(struct osd__ids *x, size_t c)
{
	const uint32_t most = OSD__IDS_CHUNK * 3 / 4;
	if (c + 1 < x->nc && x->cn[c] + x->cn[c + 1] <= most) {
		memmove(&x->c[c][x->cn[c]], x->c[c + 1], x->cn[c + 1] * sizeof(**x->c));
		x->cn[c] += x->cn[c + 1];
		dir_remove(x, c + 1);
		ends(x, c);
		fen_rebuild(x);
	} else if (c > 0 && x->cn[c - 1] + x->cn[c] <= most) {
		memcpy(&x->c[c - 1][x->cn[c - 1]], x->c[c], x->cn[c] * sizeof(**x->c));
		x->cn[c - 1] += x->cn[c];
		dir_remove(x, c);
		ends(x, c - 1);
		fen_rebuild(x);
	}
}

void osd__ids_remove(struct osd__ids *x, struct osd__ids_pos p)
{
	struct osd__id *v = x->c[p.c];
	memmove(&v[p.k], &v[p.k + 1], (x->cn[p.c] - p.k - 1) * sizeof(*v));
	x->cn[p.c]--;
	x->n--;
	if (!x->cn[p.c]) {
		dir_remove(x, p.c);
		fen_rebuild(x);
		return;
	}
	fen_add(x, p.c, (size_t)-1);
	ends(x, p.c);
	if (x->cn[p.c] < OSD__IDS_CHUNK / 4)
		merge(x, p.c);
}
