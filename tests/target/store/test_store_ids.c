/*
 * A partition's sorted member ids (osdtarget/store/ids.c): chunks of at most
 * OSD__IDS_CHUNK entries. Random inserts and removals are checked against a
 * plain sorted array every 97 steps and at the end of each phase:
 * order, chunk bounds, first and last ids, counts, each chunk's rank (the
 * Fenwick tree), no two neighbouring chunks both below a quarter (the
 * memory bound), lower bounds and ranks. Through
 * the store: objects made in descending order and removed at random list,
 * count and reopen as the ids that are left.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store_helpers.h"
#include "store/internal.h"

#define P1 0x10000ull

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The reference: the same ids in a sorted array. */
struct model {
	uint64_t *v;
	size_t n;
};

static size_t model_lower(const struct model *m, uint64_t id)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Every structural rule, and every entry equal to the model's. One
 * assertion per call: check sends each one down a pipe. */
static void check_all(const struct osd__ids *x, const struct model *m)
{
	size_t total = 0;
	const char *bad = x->n == m->n ? NULL : "the counts differ";
	for (size_t c = 0; c < x->nc && !bad; c++) {
		if (x->cn[c] < 1 || x->cn[c] > OSD__IDS_CHUNK)
			bad = "a chunk size is out of bounds";
		else if (x->first[c] != x->c[c][0].id)
			bad = "a first id differs";
		else if (x->last[c] != x->c[c][x->cn[c] - 1].id)
			bad = "a last id differs";
		else if (c && x->cn[c] < OSD__IDS_CHUNK / 4 && x->cn[c - 1] < OSD__IDS_CHUNK / 4)
			bad = "two neighbouring chunks below a quarter";
		else if (osd__ids_rank(x, (struct osd__ids_pos){ c, 0 }) != total)
			bad = "a chunk's rank differs";
		for (size_t k = 0; k < x->cn[c] && !bad; k++, total++)
			if (total >= m->n || x->c[c][k].id != m->v[total])
				bad = "an entry differs";
	}
	if (!bad && total != m->n)
		bad = "the entries in chunks differ";
	ck_assert_msg(!bad, "%s (%zu entries, %zu chunks)", bad, m->n, x->nc);
}

/* Lower bound, find and rank of @p id agree with the model. */
static void check_lookup(const struct osd__ids *x, const struct model *m, uint64_t id)
{
	struct osd__ids_pos p = osd__ids_lower(x, id), q;
	size_t i = model_lower(m, id);
	const struct osd__id *e = osd__ids_at(x, p);
	ck_assert_uint_eq(osd__ids_rank(x, p), i);
	if (i == m->n) {
		ck_assert_ptr_null(e);
		return;
	}
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->id, m->v[i]);
	struct osd__id *f = osd__ids_find(x, id, &q);
	ck_assert(f ? m->v[i] == id && f == e : m->v[i] != id);
}

static void insert(struct osd__ids *x, struct model *m, uint64_t id)
{
	size_t i = model_lower(m, id);
	if (i < m->n && m->v[i] == id)
		return;
	struct osd__id e = { .id = id, .off = id & 0xFFFF, .type = OSD_OBJ_USER };
	ck_assert_int_eq(osd__ids_insert(x, osd__ids_lower(x, id), &e), 0);
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
	m->v[i] = id;
	m->n++;
}

static void remove_at(struct osd__ids *x, struct model *m, size_t i)
{
	struct osd__ids_pos p;
	ck_assert_ptr_nonnull(osd__ids_find(x, m->v[i], &p));
	osd__ids_remove(x, p);
	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
}

#define SPACE (1u << 16)

/* Growth by random inserts, a mix, then shrinking to nothing: the shape is
 * checked every 97 steps and at each end of a phase. */
START_TEST(t_random_mix)
{
	struct osd__ids x = { 0 };
	struct model m = { calloc(SPACE + 1, sizeof(uint64_t)), 0 };
	ck_assert_ptr_nonnull(m.v);
	for (unsigned phase = 0; phase < 3; phase++) {
		for (unsigned step = 0; step < 40000; step++) {
			int add = phase == 0 ? next_rand() % 8 != 0 :
				  phase == 1 ? next_rand() % 2 : next_rand() % 8 == 0;
			if (add || !m.n)
				insert(&x, &m, 1 + next_rand() % SPACE);
			else
				remove_at(&x, &m, next_rand() % m.n);
			if (step % 97 == 0) {
				check_all(&x, &m);
				check_lookup(&x, &m, next_rand() % (SPACE + 2));
			}
		}
		check_all(&x, &m);
	}
	while (m.n)
		remove_at(&x, &m, next_rand() % m.n);
	check_all(&x, &m);
	ck_assert_uint_eq(x.nc, 0);
	ck_assert_ptr_null(osd__ids_at(&x, osd__ids_lower(&x, 1)));
	ck_assert_ptr_null(osd__ids_last(&x));
	osd__ids_free(&x);
	free(m.v);
}
END_TEST

/* An index read in order fills its chunks; inserting below everything,
 * between chunks and above everything keeps the order; the last entry. */
START_TEST(t_append_and_edges)
{
	struct osd__ids x = { 0 };
	struct model m = { calloc(8 * OSD__IDS_CHUNK, sizeof(uint64_t)), 0 };
	for (uint64_t id = 100; id < 100 + 4 * OSD__IDS_CHUNK; id++) {
		struct osd__id e = { .id = 2 * id };
		ck_assert_int_eq(osd__ids_append(&x, &e), 0);
		m.v[m.n++] = 2 * id;
	}
	ck_assert_uint_eq(x.nc, 4);
	check_all(&x, &m);
	insert(&x, &m, 1);                              /* below all: a split */
	insert(&x, &m, 2 * (100 + OSD__IDS_CHUNK) - 1); /* between two chunks */
	insert(&x, &m, UINT64_MAX);                     /* above all */
	check_all(&x, &m);
	for (uint64_t id = 0; id < 2 * (100 + 4 * OSD__IDS_CHUNK) + 2; id += 7)
		check_lookup(&x, &m, id);
	check_lookup(&x, &m, UINT64_MAX);
	ck_assert_uint_eq(osd__ids_last(&x)->id, UINT64_MAX);
	osd__ids_free(&x);
	free(m.v);
}
END_TEST

static int in_set(const uint8_t *gone, uint64_t i)
{
	return !gone[i];
}

/* Through the store: 3000 objects created from the highest id down (every
 * insert below all others), 1000 removed at random; LIST in batches, counts
 * from a start, the highest id; the same after a checkpoint and reopen. */
#define NOBJ 3000u
START_TEST(t_store_descending)
{
	char *dir = th_mkdtemp();
	struct osd_store *st = th_open(dir);
	uint8_t gone[NOBJ] = { 0 };
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	for (unsigned i = NOBJ; i-- > 0;)
		ck_assert_int_eq(osd_store_object_create(st, P1, 0x20000 + 3 * i, OSD_OBJ_USER, 0),
				 0);
	for (unsigned k = 0; k < 1000;) {
		unsigned i = (unsigned)(next_rand() % NOBJ);
		if (gone[i])
			continue;
		ck_assert_int_eq(osd_store_object_remove(st, P1, 0x20000 + 3 * i, 0), 0);
		gone[i] = 1;
		k++;
	}
	for (int round = 0; round < 2; round++) {
		uint64_t ids[64], start = 0, next, count = 0, max_id = 0;
		size_t n, seen = 0;
		unsigned i = 0;
		do {
			ck_assert_int_eq(osd_store_object_list(st, P1, start, 0, ids, 64, &n, &next), 0);
			for (size_t j = 0; j < n; j++, i++, seen++) {
				while (!in_set(gone, i))
					i++;
				ck_assert_uint_eq(ids[j], 0x20000 + 3 * (uint64_t)i);
			}
			start = next;
		} while (next);
		ck_assert_uint_eq(seen, NOBJ - 1000);
		unsigned from = 1234, left = 0;
		for (unsigned j = from; j < NOBJ; j++)
			left += in_set(gone, j);
		ck_assert_int_eq(osd_store_object_count(st, P1, 0x20000 + 3 * (uint64_t)from - 1,
							0, &count), 0);
		ck_assert_uint_eq(count, left);
		ck_assert_int_eq(osd_store_object_stats(st, P1, &count, &max_id), 0);
		ck_assert_uint_eq(count, NOBJ - 1000);
		unsigned top = NOBJ - 1;
		while (gone[top])
			top--;
		ck_assert_uint_eq(max_id, 0x20000 + 3 * (uint64_t)top);
		ck_assert_int_eq(osd__store_compact(st), 0);
		osd_store_close(st);
		st = th_open(dir);
	}
	osd_store_close(st);
	th_rmtree(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ids");
	TCase *tc = tcase_create("ids");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_random_mix);
	tcase_add_test(tc, t_append_and_edges);
	tcase_add_test(tc, t_store_descending);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
