/* The backend handle (libosdfs/backends/backend.c): vtable validation,
 * ownership of the implementation, accessors. */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <osdfs/sys/backend.h>

static int destroyed;
static void *destroyed_impl;

static int f_create(void *i, uint64_t o, const struct osdfs_attr *a, int n)
{
	(void)i; (void)o; (void)a; (void)n;
	return -ENOSYS;
}

static int f_remove(void *i, uint64_t o)
{
	(void)i; (void)o;
	return -ENOSYS;
}

static ssize_t f_read(void *i, uint64_t o, uint64_t off, const struct iovec *v, int c)
{
	(void)i; (void)o; (void)off; (void)v; (void)c;
	return -ENOSYS;
}

static ssize_t f_write(void *i, uint64_t o, uint64_t off, const struct iovec *v, int c,
		       const struct osdfs_attr *a, int n)
{
	(void)i; (void)o; (void)off; (void)v; (void)c; (void)a; (void)n;
	return -ENOSYS;
}

static int f_truncate(void *i, uint64_t o, uint64_t s)
{
	(void)i; (void)o; (void)s;
	return -ENOSYS;
}

static int f_punch(void *i, uint64_t o, uint64_t off, uint64_t len)
{
	(void)i; (void)o; (void)off; (void)len;
	return -ENOSYS;
}

static int f_get(void *i, uint64_t o, struct osdfs_attr *a, int n)
{
	(void)i; (void)o; (void)a; (void)n;
	return -ENOSYS;
}

static int f_get_all(void *i, uint64_t o, struct osdfs_attr *a, int max, void *buf, size_t len)
{
	(void)i; (void)o; (void)a; (void)max; (void)buf; (void)len;
	return -ENOSYS;
}

static int f_set(void *i, uint64_t o, const struct osdfs_attr *a, int n)
{
	(void)i; (void)o; (void)a; (void)n;
	return -ENOSYS;
}

static int f_size(void *i, uint64_t o, uint64_t *s)
{
	(void)i; (void)o; (void)s;
	return -ENOSYS;
}

static int f_list(void *i, uint64_t s, uint64_t *ids, size_t m, size_t *n, uint64_t *nx)
{
	(void)i; (void)s; (void)ids; (void)m; (void)n; (void)nx;
	return -ENOSYS;
}

static int f_flush(void *i, uint64_t o)
{
	(void)i; (void)o;
	return -ENOSYS;
}

static int f_format(void *i, uint64_t c)
{
	(void)i; (void)c;
	return -ENOSYS;
}

static int f_statfs(void *i, struct osdfs_backend_stat *st)
{
	(void)i; (void)st;
	return -ENOSYS;
}

static void f_destroy(void *i)
{
	destroyed++;
	destroyed_impl = i;
}

static const struct osdfs_backend_ops full = {
	.version = OSDFS_BACKEND_VERSION,
	.create = f_create, .remove = f_remove, .read = f_read, .write = f_write,
	.truncate = f_truncate, .punch = f_punch, .get_attrs = f_get, .set_attrs = f_set,
	.size = f_size, .list = f_list, .flush = f_flush, .format = f_format,
	.statfs = f_statfs, .submit = NULL, .poll = NULL, .destroy = f_destroy,
};

START_TEST(test_new_free)
{
	osdfs_backend *be = (osdfs_backend *)1;
	int impl_storage;
	char name[8] = "custom";

	destroyed = 0;
	ck_assert_int_eq(osdfs_backend_new(&be, &full, &impl_storage, name), 0);
	ck_assert_ptr_nonnull(be);
	strcpy(name, "changed"); /* the name was copied */
	ck_assert_str_eq(osdfs_backend_name(be), "custom");
	ck_assert_ptr_eq(osdfs_backend_impl(be), &impl_storage);
	ck_assert_ptr_eq(osdfs_backend_ops_of(be)->read, f_read);
	ck_assert_ptr_null(osdfs_backend_ops_of(be)->submit);
	ck_assert_int_eq(destroyed, 0);
	osdfs_backend_free(be);
	ck_assert_int_eq(destroyed, 1);
	ck_assert_ptr_eq(destroyed_impl, &impl_storage);
	osdfs_backend_free(NULL);
	ck_assert_int_eq(destroyed, 1);
}
END_TEST

START_TEST(test_ops_copied)
{
	struct osdfs_backend_ops ops = full;
	osdfs_backend *be;

	ck_assert_int_eq(osdfs_backend_new(&be, &ops, NULL, "x"), 0);
	memset(&ops, 0, sizeof(ops)); /* the caller's table may go away */
	ck_assert_int_eq(osdfs_backend_ops_of(be)->version, OSDFS_BACKEND_VERSION);
	ck_assert_ptr_eq(osdfs_backend_ops_of(be)->destroy, f_destroy);
	osdfs_backend_free(be);
}
END_TEST

START_TEST(test_bad_version)
{
	struct osdfs_backend_ops ops = full;
	osdfs_backend *be = (osdfs_backend *)1;

	destroyed = 0;
	ops.version = OSDFS_BACKEND_VERSION + 1;
	ck_assert_int_eq(osdfs_backend_new(&be, &ops, NULL, "x"), -EINVAL);
	ck_assert_ptr_null(be);
	ops.version = 0;
	ck_assert_int_eq(osdfs_backend_new(&be, &ops, NULL, "x"), -EINVAL);
	ck_assert_int_eq(destroyed, 0); /* the caller still owns impl */
}
END_TEST

static int f_create_class(void *impl, uint64_t oid, enum osdfs_obj_class cls,
			  const struct osdfs_attr *a, int n)
{
	(void)impl, (void)oid, (void)cls, (void)a, (void)n;
	return 0;
}

static int f_reset_count(void *impl, uint64_t *count)
{
	(void)impl, (void)count;
	return -EOPNOTSUPP;
}

/* The tables of the older versions: each ends where the next version's
 * first member begins. */
static const struct {
	int version;
	size_t end;  /* the table's size */
	size_t last; /* its last member */
} old_tables[] = {
	{ OSDFS_BACKEND_VERSION_1, offsetof(struct osdfs_backend_ops, get_all_attrs),
	  offsetof(struct osdfs_backend_ops, destroy) },
	{ OSDFS_BACKEND_VERSION_2, offsetof(struct osdfs_backend_ops, create_class),
	  offsetof(struct osdfs_backend_ops, get_all_attrs) },
	{ OSDFS_BACKEND_VERSION_3, offsetof(struct osdfs_backend_ops, reset_count),
	  offsetof(struct osdfs_backend_ops, create_class) },
};

/* Whether every member of @p ops from offset @p off on is NULL. */
static int null_from(const struct osdfs_backend_ops *ops, size_t off)
{
	for (; off < sizeof(*ops); off++)
		if (((const char *)ops)[off])
			return 0;
	return 1;
}

/* A backend built against an older version hands a table that ends at that
 * version's last member: accepted, read no further (ASan sees an over-read
 * of the exact-size block), the last member kept and every newer one NULL
 * (version 1: no get_all_attrs, 2: no create_class, 3: no reset_count),
 * although the caller's full table had them. */
START_TEST(test_old_version_table)
{
	const size_t end = old_tables[_i].end, last = old_tables[_i].last;
	struct osdfs_backend_ops tmp = full;
	const struct osdfs_backend_ops *got;
	void *blk = malloc(end);
	osdfs_backend *be;

	ck_assert_ptr_nonnull(blk);
	tmp.version = old_tables[_i].version;
	tmp.get_all_attrs = f_get_all;
	tmp.create_class = f_create_class;
	tmp.reset_count = f_reset_count;
	memcpy(blk, &tmp, end);
	ck_assert_int_eq(osdfs_backend_new(&be, blk, NULL, "x"), 0);
	free(blk);
	got = osdfs_backend_ops_of(be);
	ck_assert_ptr_eq(got->destroy, f_destroy);
	ck_assert_mem_eq((const char *)got + last, (const char *)&tmp + last,
			 sizeof(void (*)(void)));
	ck_assert(null_from(got, end));
	osdfs_backend_free(be);
}
END_TEST

/* Each required member, by offset. */
static const size_t required[] = {
	offsetof(struct osdfs_backend_ops, create),
	offsetof(struct osdfs_backend_ops, remove),
	offsetof(struct osdfs_backend_ops, read),
	offsetof(struct osdfs_backend_ops, write),
	offsetof(struct osdfs_backend_ops, truncate),
	offsetof(struct osdfs_backend_ops, punch),
	offsetof(struct osdfs_backend_ops, get_attrs),
	offsetof(struct osdfs_backend_ops, set_attrs),
	offsetof(struct osdfs_backend_ops, size),
	offsetof(struct osdfs_backend_ops, list),
	offsetof(struct osdfs_backend_ops, flush),
	offsetof(struct osdfs_backend_ops, format),
	offsetof(struct osdfs_backend_ops, statfs),
	offsetof(struct osdfs_backend_ops, destroy),
};

START_TEST(test_missing_member)
{
	struct osdfs_backend_ops ops = full;
	osdfs_backend *be = (osdfs_backend *)1;

	/* Clearing the member's bytes makes it a null function pointer. */
	memset((char *)&ops + required[_i], 0, sizeof(void (*)(void)));
	ck_assert_int_eq(osdfs_backend_new(&be, &ops, NULL, "x"), -EINVAL);
	ck_assert_ptr_null(be);
}
END_TEST

START_TEST(test_bad_arguments)
{
	osdfs_backend *be;

	ck_assert_int_eq(osdfs_backend_new(NULL, &full, NULL, "x"), -EINVAL);
	ck_assert_int_eq(osdfs_backend_new(&be, NULL, NULL, "x"), -EINVAL);
	ck_assert_ptr_null(be);
	ck_assert_int_eq(osdfs_backend_new(&be, &full, NULL, NULL), -EINVAL);
	ck_assert_ptr_null(be);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("backend_api");
	TCase *tc = tcase_create("api");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_new_free);
	tcase_add_test(tc, test_ops_copied);
	tcase_add_test(tc, test_bad_version);
	tcase_add_loop_test(tc, test_old_version_table, 0,
			    (int)(sizeof(old_tables) / sizeof(old_tables[0])));
	tcase_add_loop_test(tc, test_missing_member, 0, (int)(sizeof(required) / sizeof(required[0])));
	tcase_add_test(tc, test_bad_arguments);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
