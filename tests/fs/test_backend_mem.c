/* What the mem backend promises beyond the shared conformance suite: shared
 * stores that outlive their backends, exact sparse accounting, computed
 * page-1 attributes, limits. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <osd/attributes.h>
#include <osdfs/backends.h>

#define OID(n) (OSD_FIRST_ID + (uint64_t)(n))
#define APP_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_APP_FIRST)
#define CHUNK 65536u

static osdfs_backend *be;
static const struct osdfs_backend_ops *ops;
static void *impl;

static void setup(void)
{
	ck_assert_int_eq(osdfs_backend_mem_new(&be, 0), 0);
	ops = osdfs_backend_ops_of(be);
	impl = osdfs_backend_impl(be);
}

static void teardown(void)
{
	osdfs_backend_free(be);
}

static ssize_t bwrite(const struct osdfs_backend_ops *o, void *i, uint64_t oid, uint64_t off,
		      const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return o->write(i, oid, off, &iov, 1, NULL, 0);
}

static ssize_t bread(const struct osdfs_backend_ops *o, void *i, uint64_t oid, uint64_t off,
		     void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	return o->read(i, oid, off, &iov, 1);
}

static uint64_t used(void)
{
	struct osdfs_backend_stat st;

	ck_assert_int_eq(ops->statfs(impl, &st), 0);
	return st.used;
}

START_TEST(test_store_outlives_backends)
{
	osdfs_mem_store *store;
	osdfs_backend *b1, *b2, *b3;
	const struct osdfs_backend_ops *o;
	char buf[8];
	struct osdfs_attr a = { APP_PAGE, 1, "kept", 4 };
	struct osdfs_attr g = { APP_PAGE, 1, buf, sizeof(buf) };

	ck_assert_int_eq(osdfs_mem_store_new(&store, 1 << 20), 0);
	ck_assert_int_eq(osdfs_backend_mem_attach(&b1, store), 0);
	ck_assert_str_eq(osdfs_backend_name(b1), "mem");
	o = osdfs_backend_ops_of(b1);
	ck_assert_int_eq(o->create(osdfs_backend_impl(b1), OID(1), &a, 1), 0);
	ck_assert_int_eq(bwrite(o, osdfs_backend_impl(b1), OID(1), 0, "persist", 7), 7);
	/* Two attached backends see the same objects. */
	ck_assert_int_eq(osdfs_backend_mem_attach(&b2, store), 0);
	ck_assert_int_eq(bread(o, osdfs_backend_impl(b2), OID(1), 0, buf, 7), 7);
	ck_assert_mem_eq(buf, "persist", 7);
	/* An "unmount" frees the backend; the store keeps the objects. */
	osdfs_backend_free(b1);
	osdfs_backend_free(b2);
	ck_assert_int_eq(osdfs_backend_mem_attach(&b3, store), 0);
	o = osdfs_backend_ops_of(b3); /* b1's table went with b1 */
	/* The caller may drop its reference while a backend is attached. */
	osdfs_mem_store_free(store);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(bread(o, osdfs_backend_impl(b3), OID(1), 0, buf, 8), 7);
	ck_assert_mem_eq(buf, "persist", 7);
	ck_assert_int_eq(o->get_attrs(osdfs_backend_impl(b3), OID(1), &g, 1), 0);
	ck_assert_uint_eq(g.len, 4);
	ck_assert_mem_eq(buf, "kept", 4);
	osdfs_backend_free(b3); /* last reference: the store goes (ASan checks) */
}
END_TEST

START_TEST(test_store_arguments)
{
	osdfs_backend *b = (osdfs_backend *)1;

	ck_assert_int_eq(osdfs_backend_mem_attach(&b, NULL), -EINVAL);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(osdfs_backend_mem_attach(NULL, NULL), -EINVAL);
	ck_assert_int_eq(osdfs_mem_store_new(NULL, 0), -EINVAL);
	ck_assert_int_eq(osdfs_backend_mem_new(NULL, 0), -EINVAL);
	osdfs_mem_store_free(NULL);
}
END_TEST

START_TEST(test_sparse_accounting)
{
	static unsigned char data[3 * CHUNK];

	memset(data, 0x5A, sizeof(data));
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	/* Holes cost nothing: two bytes far apart. */
	ck_assert_int_eq(bwrite(ops, impl, OID(1), 1ULL << 40, "a", 1), 1);
	ck_assert_int_eq(bwrite(ops, impl, OID(1), 1ULL << 41, "b", 1), 1);
	ck_assert_uint_eq(used(), 2);
	/* A chunk is accounted up to its highest written byte. */
	ck_assert_int_eq(bwrite(ops, impl, OID(1), 100, "c", 1), 1);
	ck_assert_uint_eq(used(), 2 + 101);
	/* Punch over the whole huge range walks the chunk table, not 2^26 indexes. */
	ck_assert_int_eq(ops->punch(impl, OID(1), 0, 1ULL << 62), 0);
	ck_assert_uint_eq(used(), 0);
	ck_assert_int_eq(ops->remove(impl, OID(1)), 0);

	ck_assert_int_eq(ops->create(impl, OID(2), NULL, 0), 0);
	ck_assert_int_eq(bwrite(ops, impl, OID(2), 0, data, sizeof(data)), (ssize_t)sizeof(data));
	ck_assert_uint_eq(used(), 3 * CHUNK);
	/* Punching the middle of a chunk zeroes it but keeps the space. */
	ck_assert_int_eq(ops->punch(impl, OID(2), 10, 100), 0);
	ck_assert_uint_eq(used(), 3 * CHUNK);
	/* Punching a chunk's tail returns the tail; a whole chunk returns it all. */
	ck_assert_int_eq(ops->punch(impl, OID(2), 3 * CHUNK - 1000, 1000), 0);
	ck_assert_uint_eq(used(), 3 * CHUNK - 1000);
	ck_assert_int_eq(ops->punch(impl, OID(2), CHUNK, CHUNK), 0);
	ck_assert_uint_eq(used(), 2 * CHUNK - 1000);
	/* Truncating into the first chunk. */
	ck_assert_int_eq(ops->truncate(impl, OID(2), 5000), 0);
	ck_assert_uint_eq(used(), 5000);
}
END_TEST

START_TEST(test_attr_accounting)
{
	static unsigned char big[0xFFFE];
	struct osdfs_attr a = { APP_PAGE, 1, big, 100 };

	ck_assert_int_eq(ops->format(impl, 1000), 0);
	ck_assert_int_eq(ops->create(impl, OID(1), &a, 1), 0);
	ck_assert_uint_eq(used(), 100);
	a.len = 40;
	ck_assert_int_eq(ops->set_attrs(impl, OID(1), &a, 1), 0);
	ck_assert_uint_eq(used(), 40);
	a.number = 2;
	a.len = 961;
	ck_assert_int_eq(ops->set_attrs(impl, OID(1), &a, 1), -ENOSPC);
	ck_assert_int_eq(ops->create(impl, OID(2), &a, 1), -ENOSPC);
	ck_assert_int_eq(ops->remove(impl, OID(2)), -ENOENT); /* not half-created */
	a.len = 960;
	ck_assert_int_eq(ops->set_attrs(impl, OID(1), &a, 1), 0);
	ck_assert_uint_eq(used(), 1000);
	ck_assert_int_eq(bwrite(ops, impl, OID(1), 0, "x", 1), -ENOSPC);
	/* Duplicates in one list: the last value counts. */
	{
		struct osdfs_attr dup[2] = { { APP_PAGE, 2, big, 0 }, { APP_PAGE, 2, big, 10 } };

		ck_assert_int_eq(ops->set_attrs(impl, OID(1), dup, 2), 0);
		ck_assert_uint_eq(used(), 50);
	}
	ck_assert_int_eq(ops->remove(impl, OID(1)), 0);
	ck_assert_uint_eq(used(), 0);
	/* The OSD length limit. */
	ck_assert_int_eq(ops->format(impl, 0), 0);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	a.len = 0xFFFE;
	ck_assert_int_eq(ops->set_attrs(impl, OID(1), &a, 1), 0);
	a.len = 0xFFFF;
	ck_assert_int_eq(ops->set_attrs(impl, OID(1), &a, 1), -EINVAL);
}
END_TEST

START_TEST(test_info_page)
{
	unsigned char v[3][8], len3[8] = { 0, 0, 0, 0, 0, 0, 0, 3 };
	struct osdfs_attr g[3] = {
		{ OSD_APAGE_INFORMATION, OSD_ATTR_UI_OBJECT_ID, v[0], 8 },
		{ OSD_APAGE_INFORMATION, OSD_ATTR_UI_USED_CAPACITY, v[1], 8 },
		{ OSD_APAGE_INFORMATION, OSD_ATTR_UI_LOGICAL_LENGTH, v[2], 8 },
	};
	struct osdfs_attr s = { OSD_APAGE_INFORMATION, OSD_ATTR_UI_LOGICAL_LENGTH, len3, 8 };
	struct osdfs_attr ro = { OSD_APAGE_INFORMATION, OSD_ATTR_UI_USED_CAPACITY, len3, 8 };
	struct osdfs_attr all = { APP_PAGE, 0xFFFFFFFFu, v[0], 8 };
	char out[8];
	uint64_t sz;

	ck_assert_int_eq(ops->create(impl, OID(0x1234), NULL, 0), 0);
	ck_assert_int_eq(bwrite(ops, impl, OID(0x1234), 0, "abcdef", 6), 6);
	ck_assert_int_eq(ops->get_attrs(impl, OID(0x1234), g, 3), 0);
	ck_assert_mem_eq(v[0], "\0\0\0\0\0\1\x12\x34", 8);
	ck_assert_mem_eq(v[1], "\0\0\0\0\0\0\0\6", 8);
	ck_assert_mem_eq(v[2], "\0\0\0\0\0\0\0\6", 8);
	/* Setting the logical length truncates, as on an OSD. */
	ck_assert_int_eq(ops->set_attrs(impl, OID(0x1234), &s, 1), 0);
	ck_assert_int_eq(ops->size(impl, OID(0x1234), &sz), 0);
	ck_assert_uint_eq(sz, 3);
	ck_assert_int_eq(bread(ops, impl, OID(0x1234), 0, out, 8), 3);
	ck_assert_mem_eq(out, "abc", 3);
	/* The other computed attributes are read-only; wildcards are refused. */
	ck_assert_int_eq(ops->set_attrs(impl, OID(0x1234), &ro, 1), -EINVAL);
	ck_assert_int_eq(ops->get_attrs(impl, OID(0x1234), &all, 1), -EINVAL);
	ck_assert_int_eq(ops->set_attrs(impl, OID(0x1234), &all, 1), -EINVAL);
}
END_TEST

START_TEST(test_limits)
{
	uint64_t big = (uint64_t)INT64_MAX;

	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(bwrite(ops, impl, OID(1), big, "x", 1), -EFBIG);
	ck_assert_int_eq(bwrite(ops, impl, OID(1), big - 1, "x", 1), 1);
	ck_assert_int_eq(ops->truncate(impl, OID(1), big + 1), -EFBIG);
	ck_assert_int_eq(ops->truncate(impl, OID(1), big), 0);
	/* A chunk is accounted from its start to its highest written byte. */
	ck_assert_uint_eq(used(), (big - 1) % CHUNK + 1);
	ck_assert_int_eq(ops->flush(impl, 5), -EINVAL);
}
END_TEST

static int inline_done;

static void count_done(struct osdfs_op *op)
{
	(void)op;
	inline_done++;
}

START_TEST(test_submit_inline)
{
	struct osdfs_op op = { .kind = OSDFS_OP_CREATE, .oid = OID(9), .done = count_done };

	ck_assert_ptr_null(ops->poll);
	inline_done = 0;
	ck_assert_int_eq(ops->submit(impl, &op), 0);
	ck_assert_int_eq(inline_done, 1); /* before submit returned */
	ck_assert_int_eq(op.result, 0);
	op.done = NULL;
	ck_assert_int_eq(ops->submit(impl, &op), -EINVAL);
	ck_assert_int_eq(inline_done, 1);
}
END_TEST

START_TEST(test_list_one_by_one)
{
	uint64_t id, next = 0;
	size_t n, seen = 0;

	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(ops->create(impl, OID(100 - i), NULL, 0), 0);
	do {
		ck_assert_int_eq(ops->list(impl, next, &id, 1, &n, &next), 0);
		ck_assert_uint_eq(n, 1);
		ck_assert_uint_eq(id, OID(51 + seen));
		seen++;
	} while (next);
	ck_assert_uint_eq(seen, 50);
}
END_TEST

/* ---- allocation failures (the binary links with --wrap for these) ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
#define WRAPPER __attribute__((visibility("default")))
WRAPPER void *__wrap_malloc(size_t n);
WRAPPER void *__wrap_calloc(size_t n, size_t m);
WRAPPER void *__wrap_realloc(void *p, size_t n);

static int fail_countdown = -1; /* allocations left before one fails; -1 = never */

static bool alloc_fails(void)
{
	if (fail_countdown < 0)
		return false;
	return fail_countdown-- == 0;
}

void *__wrap_malloc(size_t n)
{
	return alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	return alloc_fails() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : __real_realloc(p, n);
}

/* Snapshot of what an operation must not change when it fails. */
struct snapshot {
	uint64_t size, used, objects;
	unsigned char data[3 * CHUNK];
	ssize_t data_len;
	char attr[16];
	uint32_t attr_len;
};

static void take(uint64_t oid, struct snapshot *sn)
{
	struct osdfs_backend_stat st;
	struct osdfs_attr g = { APP_PAGE, 1, sn->attr, sizeof(sn->attr) };

	memset(sn, 0, sizeof(*sn));
	ck_assert_int_eq(ops->statfs(impl, &st), 0);
	sn->used = st.used;
	sn->objects = st.objects;
	if (ops->size(impl, oid, &sn->size))
		return;
	sn->data_len = bread(ops, impl, oid, 0, sn->data, sizeof(sn->data));
	ck_assert_int_eq(ops->get_attrs(impl, oid, &g, 1), 0);
	sn->attr_len = g.len;
}

/* Run @op with the n-th allocation failing, for every n until it succeeds;
 * each failure must be -ENOMEM and leave the snapshot unchanged. */
static void each_failure(uint64_t oid, int (*op)(uint64_t oid))
{
	static struct snapshot before, after;

	for (int n = 0;; n++) {
		int rc;

		take(oid, &before);
		fail_countdown = n;
		rc = op(oid);
		fail_countdown = -1;
		if (rc == 0) {
			ck_assert_msg(n > 0, "the operation allocated nothing");
			return;
		}
		ck_assert_int_eq(rc, -ENOMEM);
		take(oid, &after);
		ck_assert_msg(memcmp(&before, &after, sizeof(before)) == 0,
			      "allocation %d failed and changed the store", n);
		ck_assert_int_lt(n, 1000);
	}
}

static int op_create(uint64_t oid)
{
	struct osdfs_attr a = { APP_PAGE, 1, "created", 7 };

	return ops->create(impl, oid, &a, 1);
}

static int op_write(uint64_t oid)
{
	static unsigned char data[2 * CHUNK + 10];
	struct osdfs_attr a = { APP_PAGE, 1, "written", 7 };
	struct iovec iov = { data, sizeof(data) };
	ssize_t rc;

	memset(data, 0x77, sizeof(data));
	rc = ops->write(impl, oid, CHUNK / 2, &iov, 1, &a, 1);
	return rc < 0 ? (int)rc : 0;
}

static int op_set(uint64_t oid)
{
	struct osdfs_attr a[2] = { { APP_PAGE, 1, "set", 3 }, { APP_PAGE, 2, "other", 5 } };

	return ops->set_attrs(impl, oid, a, 2);
}

START_TEST(test_allocation_failures)
{
	each_failure(OID(1), op_create);
	ck_assert_int_eq(bwrite(ops, impl, OID(1), 0, "head", 4), 4);
	each_failure(OID(1), op_write);
	each_failure(OID(1), op_set);
	/* Many objects: the object table grows (best effort) under failures. */
	for (int i = 2; i < 40; i++)
		each_failure(OID(i), op_create);
	ck_assert_uint_eq(used(), 2 * CHUNK + 10 + CHUNK / 2 + 3 + 5 + 38 * 7);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("backend_mem");
	TCase *tc = tcase_create("mem");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_store_outlives_backends);
	tcase_add_test(tc, test_store_arguments);
	tcase_add_test(tc, test_sparse_accounting);
	tcase_add_test(tc, test_attr_accounting);
	tcase_add_test(tc, test_info_page);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_submit_inline);
	tcase_add_test(tc, test_list_one_by_one);
	tcase_add_test(tc, test_allocation_failures);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
