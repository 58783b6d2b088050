/*
 * The lower bound of sorted ids (libosd/search/sorted_ids.h) behind the
 * target's object index and fsck's inode table: for key sets of every shape
 * (dense runs, runs with far ids after or before them, growing gaps, random
 * gaps, sizes around the probe window), every key, its neighbours and the
 * extremes give exactly what a linear scan gives.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "search/sorted_ids.h"

#define MAXN 2000

/* An entry as the target keeps it: the key first, then other fields. */
struct ent {
	uint64_t id;
	uint64_t other;
};

static struct ent ents[MAXN];

static size_t linear(size_t n, uint64_t key)
{
	size_t i = 0;

	while (i < n && ents[i].id < key)
		i++;
	return i;
}

static void check_key(size_t n, uint64_t key)
{
	size_t got = osd__sorted_lower(ents, n, sizeof(ents[0]), key);

	ck_assert_msg(got == linear(n, key), "n %zu key %llu: got %zu, want %zu", n,
		      (unsigned long long)key, got, linear(n, key));
}

static void check_all(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ck_assert(i == 0 || ents[i].id > ents[i - 1].id);
		check_key(n, ents[i].id);
		check_key(n, ents[i].id - 1);
		check_key(n, ents[i].id + 1);
	}
	check_key(n, 0);
	check_key(n, UINT64_MAX);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* shape 0: dense; 1: dense then a few far ids; 2: a few near ids then a far
 * dense run; 3: doubling gaps; 4: random gaps; 5: two dense runs apart */
static void fill(int shape, size_t n, uint64_t seed)
{
	uint64_t id = 0x10000, x = seed | 1;

	for (size_t i = 0; i < n; i++) {
		uint64_t gap = 1;

		switch (shape) {
		case 1: gap = i + 8 >= n ? 1ULL << 40 : 1; break;
		case 2: gap = i == 8 ? 1ULL << 44 : 1; break;
		case 3: gap = 1ULL << (i % 40); break;
		case 4: gap = 1 + rnd(&x) % 1000; break;
		case 5: gap = i == n / 2 ? 1ULL << 30 : 1; break;
		}
		id += gap;
		ents[i].id = id;
		ents[i].other = ~id;
	}
}

START_TEST(every_shape_and_size)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 15, 16, 17, 18, 33, 100, 1000, MAXN };

	for (int shape = 0; shape < 6; shape++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			fill(shape, sizes[s], 0x9e3779b97f4a7c15ULL + s);
			check_all(sizes[s]);
		}
}
END_TEST

/* Random sizes and gaps mixing dense runs and jumps of every magnitude. */
START_TEST(random_mixtures)
{
	uint64_t x = 0x2545f4914f6cdd1dULL;

	for (int round = 0; round < 60; round++) {
		size_t n = rnd(&x) % MAXN;
		uint64_t id = rnd(&x) % 1000 + 1;

		for (size_t i = 0; i < n; i++) {
			uint64_t r = rnd(&x) % 100;

			id += r < 90 ? 1 : r < 98 ? 1 + rnd(&x) % 64 : 1ULL << (rnd(&x) % 36);
			ents[i].id = id;
		}
		check_all(n);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sorted_ids");
	TCase *tc = tcase_create("sorted_ids");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, every_shape_and_size);
	tcase_add_test(tc, random_mixtures);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
