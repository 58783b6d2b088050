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

#define OSD__SORTED_GUESSES 3  /* interpolation guesses before the binary search */
#define OSD__SORTED_WINDOW 8u  /* entries between a guess and its bracketing probe */

static inline uint64_t osd__sorted_key(const void *base, size_t stride, size_t i)
{
	uint64_t k;

	memcpy(&k, (const char *)base + i * stride, sizeof(k));
	return k;
}

/*
 * The first index in [0, n) whose key is >= @p key (n if none); keys are
 * unique. Each guess is
 * bracketed by a probe OSD__SORTED_WINDOW entries away; the binary search
 * finishes whatever range the guesses leave, so no spacing of keys costs
 * more than a binary search and three guesses.
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
		size_t g = lo + (size_t)((double)(key - a) / (double)(b - a) * (double)(hi - 1 - lo));
		if (g >= hi)
			g = hi - 1;
		uint64_t kg = osd__sorted_key(base, stride, g);

		if (kg == key)
			return g; /* keys are unique: a dense run hits here */
		if (kg < key) {
			lo = g + 1;
			if (g + OSD__SORTED_WINDOW < hi &&
			    osd__sorted_key(base, stride, g + OSD__SORTED_WINDOW) >= key)
				hi = g + OSD__SORTED_WINDOW;
		} else {
			hi = g;
			if (g >= lo + OSD__SORTED_WINDOW &&
			    osd__sorted_key(base, stride, g - OSD__SORTED_WINDOW) < key)
				lo = g - OSD__SORTED_WINDOW + 1;
		}
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
