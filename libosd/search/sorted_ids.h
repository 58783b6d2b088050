/*
 * Lower bound in an array sorted by a 64-bit key that starts each element:
 * the target's index entries (object ids), fsck's inodes (inode numbers).
 * Both kinds of key are mostly allocated in order, so they form dense runs;
 * interpolation lands within a few entries where a binary search of 10M
 * entries misses the cache some fifteen times.
 */
#ifndef OSD_SEARCH_SORTED_IDS_H
#define OSD_SEARCH_SORTED_IDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OSD__SORTED_GUESSES 4  /* interpolation guesses before the binary search */
#define OSD__SORTED_WINDOW 8u  /* entries between a guess and its bracketing probe */

static inline uint64_t osd__sorted_key(const void *base, size_t stride, size_t i)
{
	uint64_t k;

	memcpy(&k, (const char *)base + i * stride, sizeof(k));
	return k;
}

/* Narrows [*lo, *hi) around @p key by a probe at @p g: 1 when g holds it. */
static inline int osd__sorted_probe(const void *base, size_t stride, size_t g, uint64_t key,
				    size_t *lo, size_t *hi)
{
	uint64_t kg = osd__sorted_key(base, stride, g);

	if (kg < key)
		*lo = g + 1;
	else if (kg > key)
		*hi = g;
	return kg == key;
}

/* The interpolated position of @p key in [lo, hi) whose first and last keys
 * are @p a < @p key <= @p b. */
static inline size_t osd__sorted_guess(size_t lo, size_t hi, uint64_t a, uint64_t b, uint64_t key)
{
	size_t g = lo + (size_t)((double)(key - a) / (double)(b - a) * (double)(hi - 1 - lo));

	return g >= hi ? hi - 1 : g;
}

/*
 * The first index in [0, n) whose key is >= @p key (n if none); keys are
 * unique. Each round interpolates a guess and brackets it by a probe
 * OSD__SORTED_WINDOW entries away; a round whose bracket misses also halves
 * the range, so a few far keys (ids allocated apart from a dense run) cost a
 * bisection or two rather than defeating the guesses. The binary search
 * finishes whatever range the rounds leave: no spacing of keys costs more
 * than about twice a binary search.
 */
static inline size_t osd__sorted_lower(const void *base, size_t n, size_t stride, uint64_t key)
{
	size_t lo = 0, hi = n;

	for (int k = 0; k < OSD__SORTED_GUESSES && hi - lo > 2 * OSD__SORTED_WINDOW; k++) {
		uint64_t a = osd__sorted_key(base, stride, lo);
		uint64_t b = osd__sorted_key(base, stride, hi - 1);

		if (key <= a)
			return lo;
		if (key > b)
			return hi;
		size_t g = osd__sorted_guess(lo, hi, a, b, key);

		if (osd__sorted_probe(base, stride, g, key, &lo, &hi))
			return g; /* keys are unique: a dense run hits here */
		size_t m = lo == g + 1 ? g + OSD__SORTED_WINDOW : g - OSD__SORTED_WINDOW;

		if (m >= lo && m < hi && osd__sorted_probe(base, stride, m, key, &lo, &hi))
			return m;
		m = lo + (hi - lo) / 2;
		if (hi - lo > 2 * OSD__SORTED_WINDOW && osd__sorted_probe(base, stride, m, key, &lo, &hi))
			return m;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (osd__sorted_key(base, stride, mid) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
