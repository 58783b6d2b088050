/*
 * One conformance suite for every object-store backend. The backend under
 * test is chosen by argv[1] (or $OSDFS_TEST_BACKEND): "mem" (default),
 * "osd1" or "osd2" (the osd backend over the loopback transport to a
 * software target in a temporary directory, speaking OSD-1 or OSD-2).
 *
 * Every test gets a freshly formatted backend. A few expectations depend on
 * what the backend promises (exact space accounting, capacity enforcement);
 * the factory states those and the tests consult it.
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <osd/attributes.h>
#include <osdfs/backends.h>

#include "backend_factory.h"

/* ---- fixture ---- */

static const struct be_factory *factory;
static char base_dir[4096];
static struct be_instance inst;
static const struct osdfs_backend_ops *ops;
static void *impl;

#define OID(n) (OSD_FIRST_ID + (uint64_t)(n))
#define APP_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_APP_FIRST)

static void suite_setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base_dir, sizeof(base_dir), "%s/osdfs-conf-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base_dir))
		abort();
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void suite_teardown(void)
{
	nftw(base_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_setup(void)
{
	int rc = factory->open(&inst, base_dir);

	ck_assert_msg(rc == 0, "backend %s: open failed: %d", factory->name, rc);
	ops = osdfs_backend_ops_of(inst.be);
	impl = osdfs_backend_impl(inst.be);
	ck_assert_int_eq(ops->format(impl, 0), 0);
}

static void test_teardown(void)
{
	factory->close(&inst);
}

/* ---- helpers ---- */

static void fill_pattern(unsigned char *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)((i + seed) * 2654435761u >> 13);
}

static ssize_t write_buf(uint64_t oid, uint64_t off, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return ops->write(impl, oid, off, &iov, 1, NULL, 0);
}

static ssize_t read_buf(uint64_t oid, uint64_t off, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	return ops->read(impl, oid, off, &iov, 1);
}

static uint64_t size_of(uint64_t oid)
{
	uint64_t sz = UINT64_MAX;

	ck_assert_int_eq(ops->size(impl, oid, &sz), 0);
	return sz;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int set_one(uint64_t oid, uint32_t number, const void *value, uint32_t len)
{
	struct osdfs_attr a = { APP_PAGE, number, (void *)value, len };

	return ops->set_attrs(impl, oid, &a, 1);
}

/* Get one attribute; returns the reported length (or a negative errno). */
static long get_one(uint64_t oid, uint32_t number, void *buf, uint32_t len)
{
	struct osdfs_attr a = { APP_PAGE, number, buf, len };
	int rc = ops->get_attrs(impl, oid, &a, 1);

	return rc ? rc : (long)a.len;
}

/* ---- objects ---- */

START_TEST(test_create_exists)
{
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), -EEXIST);
	ck_assert_uint_eq(size_of(OID(1)), 0);
	ck_assert_int_eq(ops->create(impl, OID(2), NULL, 0), 0);
	ck_assert_uint_eq(size_of(OID(2)), 0);
}
END_TEST

START_TEST(test_missing_object)
{
	unsigned char buf[16] = { 0 };
	struct iovec iov = { buf, sizeof(buf) };
	struct osdfs_attr a = { APP_PAGE, 1, buf, sizeof(buf) };
	uint64_t sz;

	ck_assert_int_eq(ops->remove(impl, OID(7)), -ENOENT);
	ck_assert_int_eq(ops->read(impl, OID(7), 0, &iov, 1), -ENOENT);
	ck_assert_int_eq(ops->write(impl, OID(7), 0, &iov, 1, NULL, 0), -ENOENT);
	ck_assert_int_eq(ops->truncate(impl, OID(7), 10), -ENOENT);
	ck_assert_int_eq(ops->punch(impl, OID(7), 0, 10), -ENOENT);
	ck_assert_int_eq(ops->get_attrs(impl, OID(7), &a, 1), -ENOENT);
	ck_assert_int_eq(ops->set_attrs(impl, OID(7), &a, 1), -ENOENT);
	ck_assert_int_eq(ops->size(impl, OID(7), &sz), -ENOENT);
	ck_assert_int_eq(ops->flush(impl, OID(7)), -ENOENT);
	/* None of that created it. */
	ck_assert_int_eq(ops->size(impl, OID(7), &sz), -ENOENT);
}
END_TEST

START_TEST(test_reserved_ids)
{
	uint64_t sz;

	ck_assert_int_eq(ops->create(impl, 5, NULL, 0), -EINVAL);
	ck_assert_int_eq(ops->create(impl, OSD_FIRST_ID - 1, NULL, 0), -EINVAL);
	ck_assert_int_eq(ops->size(impl, 0, &sz), -EINVAL);
}
END_TEST

START_TEST(test_remove)
{
	unsigned char buf[100], out[100];
	uint64_t sz;

	fill_pattern(buf, sizeof(buf), 1);
	ck_assert_int_eq(ops->create(impl, OID(3), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(3), 0, buf, sizeof(buf)), 100);
	ck_assert_int_eq(set_one(OID(3), 1, "abc", 3), 0);
	ck_assert_int_eq(ops->remove(impl, OID(3)), 0);
	ck_assert_int_eq(ops->size(impl, OID(3), &sz), -ENOENT);
	ck_assert_int_eq(ops->remove(impl, OID(3)), -ENOENT);
	/* A new object with the same id starts empty. */
	ck_assert_int_eq(ops->create(impl, OID(3), NULL, 0), 0);
	ck_assert_uint_eq(size_of(OID(3)), 0);
	ck_assert_int_eq(read_buf(OID(3), 0, out, sizeof(out)), 0);
	ck_assert_int_eq(get_one(OID(3), 1, out, sizeof(out)), 0);
}
END_TEST

/* ---- data ---- */

START_TEST(test_write_read_iovecs)
{
	unsigned char data[70000], a[10], b[60000], c[9990];
	struct iovec wiov[3] = { { data, 1 }, { data + 1, 49999 }, { data + 50000, 20000 } };
	struct iovec riov[3] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) } };

	fill_pattern(data, sizeof(data), 42);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(ops->write(impl, OID(1), 12345, wiov, 3, NULL, 0), 70000);
	ck_assert_uint_eq(size_of(OID(1)), 12345 + 70000);
	ck_assert_int_eq(ops->read(impl, OID(1), 12345, riov, 3), 70000);
	ck_assert_mem_eq(a, data, sizeof(a));
	ck_assert_mem_eq(b, data + 10, sizeof(b));
	ck_assert_mem_eq(c, data + 60010, sizeof(c));
}
END_TEST

START_TEST(test_sparse_zeros)
{
	static unsigned char out[200000];
	const uint64_t off = (1ULL << 20) + 5;

	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), off, "tail", 4), 4);
	ck_assert_uint_eq(size_of(OID(1)), off + 4);
	memset(out, 0xEE, sizeof(out));
	ck_assert_int_eq(read_buf(OID(1), 0, out, sizeof(out)), (ssize_t)sizeof(out));
	ck_assert(all_zero(out, sizeof(out)));
	memset(out, 0xEE, sizeof(out));
	ck_assert_int_eq(read_buf(OID(1), off - 100, out, 104), 104);
	ck_assert(all_zero(out, 100));
	ck_assert_mem_eq(out + 100, "tail", 4);
}
END_TEST

START_TEST(test_huge_sparse)
{
	const uint64_t off = factory->sparse_offset;
	unsigned char out[16];

	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), off, "x", 1), 1);
	ck_assert_uint_eq(size_of(OID(1)), off + 1);
	memset(out, 0xEE, sizeof(out));
	ck_assert_int_eq(read_buf(OID(1), off - 15, out, sizeof(out)), 16);
	ck_assert(all_zero(out, 15));
	ck_assert_int_eq(out[15], 'x');
	if (factory->exact_accounting) {
		struct osdfs_backend_stat st;

		ck_assert_int_eq(ops->statfs(impl, &st), 0);
		ck_assert_uint_eq(st.used, 1);
	}
}
END_TEST

START_TEST(test_short_read)
{
	unsigned char data[100], out[200];

	fill_pattern(data, sizeof(data), 7);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), 0, data, sizeof(data)), 100);
	ck_assert_int_eq(read_buf(OID(1), 50, out, sizeof(out)), 50);
	ck_assert_mem_eq(out, data + 50, 50);
	ck_assert_int_eq(read_buf(OID(1), 100, out, sizeof(out)), 0);
	ck_assert_int_eq(read_buf(OID(1), 5000, out, sizeof(out)), 0);
	ck_assert_int_eq(read_buf(OID(1), 0, out, 0), 0);
	/* An empty object reads nothing. */
	ck_assert_int_eq(ops->create(impl, OID(2), NULL, 0), 0);
	ck_assert_int_eq(read_buf(OID(2), 0, out, sizeof(out)), 0);
}
END_TEST

START_TEST(test_overwrite_keeps_length)
{
	unsigned char out[10];

	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), 0, "0123456789", 10), 10);
	ck_assert_int_eq(write_buf(OID(1), 2, "abc", 3), 3);
	ck_assert_uint_eq(size_of(OID(1)), 10);
	ck_assert_int_eq(read_buf(OID(1), 0, out, 10), 10);
	ck_assert_mem_eq(out, "01abc56789", 10);
	/* Writing past the end extends, leaving a zero gap. */
	ck_assert_int_eq(write_buf(OID(1), 12, "Z", 1), 1);
	ck_assert_uint_eq(size_of(OID(1)), 13);
	ck_assert_int_eq(read_buf(OID(1), 9, out, 4), 4);
	ck_assert_mem_eq(out, "9\0\0Z", 4);
}
END_TEST

START_TEST(test_truncate)
{
	static unsigned char data[200000], out[200000];

	fill_pattern(data, sizeof(data), 9);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), 0, data, sizeof(data)), (ssize_t)sizeof(data));
	ck_assert_int_eq(ops->truncate(impl, OID(1), 70001), 0);
	ck_assert_uint_eq(size_of(OID(1)), 70001);
	ck_assert_int_eq(read_buf(OID(1), 0, out, sizeof(out)), 70001);
	ck_assert_mem_eq(out, data, 70001);
	/* Extending exposes zeros, not the old bytes. */
	ck_assert_int_eq(ops->truncate(impl, OID(1), 150000), 0);
	ck_assert_uint_eq(size_of(OID(1)), 150000);
	memset(out, 0xEE, sizeof(out));
	ck_assert_int_eq(read_buf(OID(1), 0, out, sizeof(out)), 150000);
	ck_assert_mem_eq(out, data, 70001);
	ck_assert(all_zero(out + 70001, 150000 - 70001));
	ck_assert_int_eq(ops->truncate(impl, OID(1), 0), 0);
	ck_assert_uint_eq(size_of(OID(1)), 0);
	ck_assert_int_eq(read_buf(OID(1), 0, out, 10), 0);
	/* Truncating an empty object up makes a hole. */
	ck_assert_int_eq(ops->truncate(impl, OID(1), 1ULL << 36), 0);
	ck_assert_uint_eq(size_of(OID(1)), 1ULL << 36);
	ck_assert_int_eq(read_buf(OID(1), (1ULL << 36) - 8, out, 100), 8);
	ck_assert(all_zero(out, 8));
}
END_TEST

START_TEST(test_punch)
{
	static unsigned char data[200000], out[200000];

	fill_pattern(data, sizeof(data), 11);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), 0, data, sizeof(data)), (ssize_t)sizeof(data));
	ck_assert_int_eq(ops->punch(impl, OID(1), 1000, 100000), 0);
	ck_assert_uint_eq(size_of(OID(1)), sizeof(data));
	ck_assert_int_eq(read_buf(OID(1), 0, out, sizeof(out)), (ssize_t)sizeof(out));
	ck_assert_mem_eq(out, data, 1000);
	ck_assert(all_zero(out + 1000, 100000));
	ck_assert_mem_eq(out + 101000, data + 101000, sizeof(data) - 101000);
	/* Punching the tail and beyond the end keeps the length. */
	ck_assert_int_eq(ops->punch(impl, OID(1), 190000, 50000), 0);
	ck_assert_uint_eq(size_of(OID(1)), sizeof(data));
	ck_assert_int_eq(read_buf(OID(1), 180000, out, 20000), 20000);
	ck_assert_mem_eq(out, data + 180000, 10000);
	ck_assert(all_zero(out + 10000, 10000));
	/* An empty range is a no-op, but the object must exist. */
	ck_assert_int_eq(ops->punch(impl, OID(1), 10, 0), 0);
	ck_assert_int_eq(ops->punch(impl, OID(9), 10, 0), -ENOENT);
	ck_assert_int_eq(read_buf(OID(1), 0, out, 1000), 1000);
	ck_assert_mem_eq(out, data, 1000);
	/* A hole can be written again. */
	ck_assert_int_eq(write_buf(OID(1), 5000, "back", 4), 4);
	ck_assert_int_eq(read_buf(OID(1), 4998, out, 8), 8);
	ck_assert_mem_eq(out, "\0\0back\0\0", 8);
}
END_TEST

/* ---- attributes ---- */

START_TEST(test_attr_set_get)
{
	char v1[] = "first value", v2[] = "second, longer value", buf[64];
	struct osdfs_attr set[2] = {
		{ APP_PAGE, 1, v1, sizeof(v1) },
		{ APP_PAGE + 1, 7, v2, sizeof(v2) },
	};
	struct osdfs_attr get[3] = {
		{ APP_PAGE + 1, 7, buf, 32 },
		{ APP_PAGE, 1, buf + 32, 32 },
		{ APP_PAGE, 99, NULL, 0 },
	};

	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(ops->set_attrs(impl, OID(1), set, 2), 0);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(ops->get_attrs(impl, OID(1), get, 3), 0);
	ck_assert_uint_eq(get[0].len, sizeof(v2));
	ck_assert_mem_eq(buf, v2, sizeof(v2));
	ck_assert_uint_eq(get[1].len, sizeof(v1));
	ck_assert_mem_eq(buf + 32, v1, sizeof(v1));
	ck_assert_uint_eq(get[2].len, 0); /* undefined */
}
END_TEST

/* get_all_attrs (optional): exactly what was set, none of the backend's own. */
START_TEST(test_attr_get_all)
{
	char v1[] = "first value", v2[] = "second, longer value", buf[256];
	struct osdfs_attr set[2] = {
		{ APP_PAGE, 1, v1, sizeof(v1) },
		{ APP_PAGE + 1, 7, v2, sizeof(v2) },
	};
	struct osdfs_attr all[8];
	int n, seen = 0;

	if (!ops->get_all_attrs)
		return; /* optional member: this backend copies by known attributes */
	ck_assert_int_eq(ops->create(impl, OID(1), set, 2), 0);
	ck_assert_int_eq(write_buf(OID(1), 0, "data", 4), 4);
	n = ops->get_all_attrs(impl, OID(1), all, 8, buf, sizeof(buf));
	ck_assert_int_eq(n, 2);
	for (int i = 0; i < n; i++) {
		const struct osdfs_attr *want = all[i].page == APP_PAGE ? &set[0] : &set[1];

		ck_assert_uint_eq(all[i].number, want->number);
		ck_assert_uint_eq(all[i].len, want->len);
		ck_assert_mem_eq(all[i].value, want->value, want->len);
		seen |= all[i].page == APP_PAGE ? 1 : 2;
	}
	ck_assert_int_eq(seen, 3);
	ck_assert_int_eq(ops->get_all_attrs(impl, OID(1), all, 1, buf, sizeof(buf)), -ENOSPC);
	ck_assert_int_eq(ops->get_all_attrs(impl, OID(1), all, 8, buf, 16), -ENOSPC);
	ck_assert_int_eq(ops->get_all_attrs(impl, OID(2), all, 8, buf, sizeof(buf)), -ENOENT);
}
END_TEST

START_TEST(test_attr_overwrite_delete)
{
	char buf[32];

	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(set_one(OID(1), 5, "a longer first value", 20), 0);
	ck_assert_int_eq(set_one(OID(1), 5, "short", 5), 0);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(get_one(OID(1), 5, buf, sizeof(buf)), 5);
	ck_assert_mem_eq(buf, "short", 5);
	ck_assert_int_eq(set_one(OID(1), 5, NULL, 0), 0);
	ck_assert_int_eq(get_one(OID(1), 5, buf, sizeof(buf)), 0);
	/* Deleting an undefined attribute is not an error. */
	ck_assert_int_eq(set_one(OID(1), 6, NULL, 0), 0);
}
END_TEST

START_TEST(test_attr_longer_than_buffer)
{
	static unsigned char big[3000], buf[3000];
	struct osdfs_attr get[2] = {
		{ APP_PAGE, 1, buf, 4 },
		{ APP_PAGE, 2, buf + 4, 8 },
	};

	fill_pattern(big, sizeof(big), 3);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(set_one(OID(1), 1, big, sizeof(big)), 0);
	ck_assert_int_eq(set_one(OID(1), 2, "12345678", 8), 0);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(ops->get_attrs(impl, OID(1), get, 2), 0);
	ck_assert_uint_eq(get[0].len, sizeof(big));
	ck_assert_mem_eq(buf, big, 4);
	ck_assert_uint_eq(get[1].len, 8);
	ck_assert_mem_eq(buf + 4, "12345678", 8);
	/* Length probe without a buffer, then the whole value. */
	ck_assert_int_eq(get_one(OID(1), 1, NULL, 0), (long)sizeof(big));
	ck_assert_int_eq(get_one(OID(1), 1, buf, sizeof(buf)), (long)sizeof(big));
	ck_assert_mem_eq(buf, big, sizeof(big));
}
END_TEST

START_TEST(test_attr_piggyback)
{
	unsigned char len_be[8] = { 0 }, buf[16];
	struct osdfs_attr cattr[2] = {
		{ APP_PAGE, 1, "mode", 4 },
		{ APP_PAGE, 2, "uid0", 4 },
	};
	struct osdfs_attr wattr[1] = { { APP_PAGE, 2, "uid1", 4 } };
	struct osdfs_attr info[1] = { { OSD_APAGE_INFORMATION, OSD_ATTR_UI_LOGICAL_LENGTH,
					len_be, sizeof(len_be) } };
	struct iovec iov = { "data", 4 };

	ck_assert_int_eq(ops->create(impl, OID(1), cattr, 2), 0);
	ck_assert_int_eq(get_one(OID(1), 1, buf, sizeof(buf)), 4);
	ck_assert_mem_eq(buf, "mode", 4);
	ck_assert_int_eq(get_one(OID(1), 2, buf, sizeof(buf)), 4);
	ck_assert_mem_eq(buf, "uid0", 4);
	ck_assert_int_eq(ops->write(impl, OID(1), 0, &iov, 1, wattr, 1), 4);
	ck_assert_int_eq(get_one(OID(1), 2, buf, sizeof(buf)), 4);
	ck_assert_mem_eq(buf, "uid1", 4);
	/* The standard logical-length attribute matches size(). */
	ck_assert_int_eq(ops->get_attrs(impl, OID(1), info, 1), 0);
	ck_assert_uint_eq(info[0].len, 8);
	ck_assert_mem_eq(len_be, "\0\0\0\0\0\0\0\4", 8);
	/* A failed create leaves the existing object's attributes alone. */
	ck_assert_int_eq(ops->create(impl, OID(1), wattr, 1), -EEXIST);
	ck_assert_int_eq(get_one(OID(1), 1, buf, sizeof(buf)), 4);
}
END_TEST

/* ---- list ---- */

#define LIST_COUNT 2500

START_TEST(test_list_order_continuation)
{
	static uint64_t ids[LIST_COUNT], got[LIST_COUNT + 1], batch[97];
	uint64_t start = 0, next;
	size_t total = 0, n;

	/* Ids inserted in a scrambled order, with gaps. */
	for (size_t i = 0; i < LIST_COUNT; i++)
		ids[i] = OID(((i * 7919) % LIST_COUNT) * 3 + 1);
	for (size_t i = 0; i < LIST_COUNT; i++)
		ck_assert_int_eq(ops->create(impl, ids[i], NULL, 0), 0);
	do {
		ck_assert_int_eq(ops->list(impl, start, batch, 97, &n, &next), 0);
		ck_assert_uint_le(n, 97);
		ck_assert_uint_le(total + n, LIST_COUNT);
		memcpy(got + total, batch, n * sizeof(*batch));
		total += n;
		ck_assert(next == 0 || next > batch[n - 1]);
		start = next;
	} while (next);
	ck_assert_uint_eq(total, LIST_COUNT);
	for (size_t i = 0; i < LIST_COUNT; i++)
		ck_assert_uint_eq(got[i], OID(i * 3 + 1));
	/* Starting in the middle, between two ids. */
	ck_assert_int_eq(ops->list(impl, OID(3 * 1000 + 2), batch, 5, &n, &next), 0);
	ck_assert_uint_eq(n, 5);
	for (size_t i = 0; i < 5; i++)
		ck_assert_uint_eq(batch[i], OID((1001 + i) * 3 + 1));
	ck_assert_uint_ne(next, 0);
	/* Past the last id: nothing, done. */
	ck_assert_int_eq(ops->list(impl, OID(LIST_COUNT * 3 + 10), batch, 5, &n, &next), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(next, 0);
}
END_TEST

START_TEST(test_list_empty_and_exact)
{
	uint64_t batch[4], next = 1;
	size_t n = 99;

	ck_assert_int_eq(ops->list(impl, 0, batch, 4, &n, &next), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(next, 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(ops->create(impl, OID(10 + i), NULL, 0), 0);
	ck_assert_int_eq(ops->list(impl, 0, batch, 4, &n, &next), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(next, 0);
	ck_assert_uint_eq(batch[0], OID(10));
	ck_assert_uint_eq(batch[2], OID(12));
	ck_assert_int_eq(ops->remove(impl, OID(11)), 0);
	ck_assert_int_eq(ops->list(impl, 0, batch, 4, &n, &next), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(batch[1], OID(12));
}
END_TEST

/* ---- flush, format, statfs ---- */

START_TEST(test_flush)
{
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), 0, "abc", 3), 3);
	ck_assert_int_eq(ops->flush(impl, OID(1)), 0);
	ck_assert_int_eq(ops->flush(impl, 0), 0);
	ck_assert_int_eq(ops->flush(impl, OID(2)), -ENOENT);
}
END_TEST

START_TEST(test_format_empties)
{
	struct osdfs_backend_stat st;
	uint64_t batch[4], next, sz;
	size_t n;

	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(ops->create(impl, OID(i), NULL, 0), 0);
		ck_assert_int_eq(write_buf(OID(i), 0, "payload", 7), 7);
	}
	ck_assert_int_eq(ops->format(impl, 0), 0);
	ck_assert_int_eq(ops->list(impl, 0, batch, 4, &n, &next), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(ops->size(impl, OID(3), &sz), -ENOENT);
	ck_assert_int_eq(ops->statfs(impl, &st), 0);
	ck_assert_uint_eq(st.objects, 0);
	/* Usable again after the format. */
	ck_assert_int_eq(ops->create(impl, OID(3), NULL, 0), 0);
	ck_assert_uint_eq(size_of(OID(3)), 0);
}
END_TEST

START_TEST(test_statfs)
{
	static unsigned char data[100000];
	struct osdfs_backend_stat st0, st1, st2;

	ck_assert_int_eq(ops->format(impl, 64ULL << 20), 0);
	ck_assert_int_eq(ops->statfs(impl, &st0), 0);
	ck_assert_uint_eq(st0.capacity, 64ULL << 20);
	ck_assert_uint_eq(st0.objects, 0);
	ck_assert_uint_gt(st0.device_free, 0);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(ops->create(impl, OID(i), NULL, 0), 0);
	fill_pattern(data, sizeof(data), 5);
	ck_assert_int_eq(write_buf(OID(0), 0, data, sizeof(data)), (ssize_t)sizeof(data));
	ck_assert_int_eq(ops->flush(impl, 0), 0);
	ck_assert_int_eq(ops->statfs(impl, &st1), 0);
	ck_assert_uint_eq(st1.objects, 5);
	ck_assert_uint_eq(st1.capacity, 64ULL << 20);
	ck_assert_uint_ge(st1.used, st0.used + (factory->exact_accounting ? sizeof(data) : 0));
	if (factory->exact_accounting)
		ck_assert_uint_eq(st1.used, sizeof(data));
	ck_assert_int_eq(ops->remove(impl, OID(0)), 0);
	ck_assert_int_eq(ops->statfs(impl, &st2), 0);
	ck_assert_uint_eq(st2.objects, 4);
	if (factory->exact_accounting)
		ck_assert_uint_eq(st2.used, 0);
}
END_TEST

START_TEST(test_enospc)
{
	static unsigned char data[60000];
	struct osdfs_backend_stat st;
	unsigned char out[8];

	if (!factory->enforces_capacity)
		return;
	fill_pattern(data, sizeof(data), 13);
	ck_assert_int_eq(ops->format(impl, 100000), 0);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(ops->create(impl, OID(2), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), 0, data, sizeof(data)), (ssize_t)sizeof(data));
	ck_assert_int_eq(write_buf(OID(2), 0, data, sizeof(data)), -ENOSPC);
	/* The refused write changed nothing. */
	ck_assert_uint_eq(size_of(OID(2)), 0);
	ck_assert_int_eq(read_buf(OID(2), 0, out, sizeof(out)), 0);
	/* Overwriting allocated bytes needs no space. */
	ck_assert_int_eq(write_buf(OID(1), 100, data, 1000), 1000);
	/* Space comes back on truncate, then on remove. */
	ck_assert_int_eq(ops->truncate(impl, OID(1), 30000), 0);
	ck_assert_int_eq(ops->statfs(impl, &st), 0);
	if (factory->exact_accounting)
		ck_assert_uint_eq(st.used, 30000);
	ck_assert_int_eq(write_buf(OID(2), 0, data, 40000), 40000);
	ck_assert_int_eq(write_buf(OID(2), 40000, data, 40000), -ENOSPC);
	ck_assert_int_eq(ops->remove(impl, OID(1)), 0);
	ck_assert_int_eq(write_buf(OID(2), 40000, data, 40000), 40000);
	ck_assert_uint_eq(size_of(OID(2)), 80000);
}
END_TEST

START_TEST(test_enospc_punch)
{
	static unsigned char data[90000];

	if (!factory->enforces_capacity || !factory->punch_frees)
		return;
	ck_assert_int_eq(ops->format(impl, 100000), 0);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(ops->create(impl, OID(2), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), 0, data, sizeof(data)), (ssize_t)sizeof(data));
	ck_assert_int_eq(write_buf(OID(2), 0, data, 20000), -ENOSPC);
	/* Punching whole allocation units gives their space back. */
	ck_assert_int_eq(ops->punch(impl, OID(1), 0, 65536), 0);
	ck_assert_int_eq(write_buf(OID(2), 0, data, 20000), 20000);
}
END_TEST

/* ---- async ---- */

#define ASYNC_OPS 64

struct async_state {
	pthread_mutex_t lock;
	int done;
	int calls[ASYNC_OPS];
};

struct async_op {
	struct osdfs_op op; /* first: done() gets &op */
	struct async_state *st;
	int index;
};

static void async_op_done(struct osdfs_op *op)
{
	struct async_op *ao = (struct async_op *)op;

	pthread_mutex_lock(&ao->st->lock);
	ao->st->calls[ao->index]++;
	ao->st->done++;
	pthread_mutex_unlock(&ao->st->lock);
}

static void async_wait(struct async_state *st, int want)
{
	for (;;) {
		int done;

		pthread_mutex_lock(&st->lock);
		done = st->done;
		pthread_mutex_unlock(&st->lock);
		if (done >= want)
			return;
		ck_assert_ptr_nonnull(ops->poll);
		ck_assert_int_ge(ops->poll(impl), 0);
	}
}

static void async_run(struct async_op *aos, int n, struct async_state *st)
{
	st->done = 0;
	memset(st->calls, 0, sizeof(st->calls));
	for (int i = 0; i < n; i++) {
		aos[i].st = st;
		aos[i].index = i;
		aos[i].op.done = async_op_done;
		aos[i].op.result = -12345;
		ck_assert_int_eq(ops->submit(impl, &aos[i].op), 0);
	}
	if (factory->deferred) /* all of them in flight at once */
		ck_assert_int_eq(st->done, 0);
	async_wait(st, n);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(st->calls[i], 1);
}

START_TEST(test_async_many)
{
	static struct async_op aos[ASYNC_OPS];
	static unsigned char data[ASYNC_OPS][4096], out[ASYNC_OPS][4096];
	static struct iovec iov[ASYNC_OPS];
	static char tags[ASYNC_OPS][8], tagout[ASYNC_OPS][8];
	static struct osdfs_attr attrs[ASYNC_OPS];
	struct async_state st = { .lock = PTHREAD_MUTEX_INITIALIZER };
	const int n = ASYNC_OPS / 2;

	if (!ops->submit)
		return;
	/* Create n objects with a piggy-backed tag. */
	for (int i = 0; i < n; i++) {
		snprintf(tags[i], sizeof(tags[i]), "tag%04u", (unsigned)i % 10000u);
		attrs[i] = (struct osdfs_attr){ APP_PAGE, 1, tags[i], 7 };
		memset(&aos[i].op, 0, sizeof(aos[i].op));
		aos[i].op.kind = OSDFS_OP_CREATE;
		aos[i].op.oid = OID(100 + i);
		aos[i].op.attrs = &attrs[i];
		aos[i].op.nattrs = 1;
	}
	async_run(aos, n, &st);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(aos[i].op.result, 0);
	/* Write them all, and create one that already exists. */
	for (int i = 0; i < n; i++) {
		fill_pattern(data[i], sizeof(data[i]), (uint64_t)i);
		iov[i] = (struct iovec){ data[i], sizeof(data[i]) };
		memset(&aos[i].op, 0, sizeof(aos[i].op));
		aos[i].op.kind = OSDFS_OP_WRITE;
		aos[i].op.oid = OID(100 + i);
		aos[i].op.offset = (uint64_t)i * 1000;
		aos[i].op.iov = &iov[i];
		aos[i].op.iovcnt = 1;
	}
	memset(&aos[n].op, 0, sizeof(aos[n].op));
	aos[n].op.kind = OSDFS_OP_CREATE;
	aos[n].op.oid = OID(100);
	async_run(aos, n + 1, &st);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(aos[i].op.result, 4096);
	ck_assert_int_eq(aos[n].op.result, -EEXIST);
	/* Read them back with the tag piggy-backed, plus a flush and a get. */
	for (int i = 0; i < n; i++) {
		iov[i] = (struct iovec){ out[i], sizeof(out[i]) };
		attrs[i] = (struct osdfs_attr){ APP_PAGE, 1, tagout[i], sizeof(tagout[i]) };
		memset(&aos[i].op, 0, sizeof(aos[i].op));
		aos[i].op.kind = OSDFS_OP_READ;
		aos[i].op.oid = OID(100 + i);
		aos[i].op.offset = (uint64_t)i * 1000;
		aos[i].op.iov = &iov[i];
		aos[i].op.iovcnt = 1;
		aos[i].op.attrs = &attrs[i];
		aos[i].op.nattrs = 1;
	}
	memset(&aos[n].op, 0, sizeof(aos[n].op));
	aos[n].op.kind = OSDFS_OP_FLUSH;
	aos[n].op.oid = OID(101);
	attrs[n] = (struct osdfs_attr){ APP_PAGE, 1, tagout[n], sizeof(tagout[n]) };
	memset(&aos[n + 1].op, 0, sizeof(aos[n + 1].op));
	aos[n + 1].op.kind = OSDFS_OP_GET_ATTRS;
	aos[n + 1].op.oid = OID(102);
	aos[n + 1].op.attrs = &attrs[n];
	aos[n + 1].op.nattrs = 1;
	async_run(aos, n + 2, &st);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(aos[i].op.result, 4096);
		ck_assert_mem_eq(out[i], data[i], 4096);
		ck_assert_uint_eq(attrs[i].len, 7);
		ck_assert_mem_eq(tagout[i], tags[i], 7);
	}
	ck_assert_int_eq(aos[n].op.result, 0);
	ck_assert_int_eq(aos[n + 1].op.result, 0);
	ck_assert_uint_eq(attrs[n].len, 7);
	ck_assert_mem_eq(tagout[n], "tag0002", 7);
	/* Set attributes and remove everything; one remove of a missing id. */
	for (int i = 0; i < n; i++) {
		memset(&aos[i].op, 0, sizeof(aos[i].op));
		aos[i].op.kind = OSDFS_OP_REMOVE;
		aos[i].op.oid = OID(100 + i);
	}
	memset(&aos[n].op, 0, sizeof(aos[n].op));
	aos[n].op.kind = OSDFS_OP_REMOVE;
	aos[n].op.oid = OID(99);
	async_run(aos, n + 1, &st);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(aos[i].op.result, 0);
	ck_assert_int_eq(aos[n].op.result, -ENOENT);
	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	memset(&aos[0].op, 0, sizeof(aos[0].op));
	aos[0].op.kind = OSDFS_OP_SET_ATTRS;
	aos[0].op.oid = OID(1);
	attrs[0] = (struct osdfs_attr){ APP_PAGE, 3, "async", 5 };
	aos[0].op.attrs = &attrs[0];
	aos[0].op.nattrs = 1;
	async_run(aos, 1, &st);
	ck_assert_int_eq(aos[0].op.result, 0);
	ck_assert_int_eq(get_one(OID(1), 3, tagout[0], 8), 5);
	ck_assert_mem_eq(tagout[0], "async", 5);
}
END_TEST

START_TEST(test_async_refused)
{
	struct async_state st = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct async_op ao;

	if (!ops->submit)
		return;
	memset(&ao, 0, sizeof(ao));
	ao.st = &st;
	ao.op.kind = (enum osdfs_op_kind)99;
	ao.op.oid = OID(1);
	ao.op.done = async_op_done;
	ck_assert_int_eq(ops->submit(impl, &ao.op), -EINVAL);
	ck_assert_int_eq(st.done, 0);
	/* a size below the first layout (struct osdfs_op's extension rule),
	 * for the kind each backend handles itself (READ) and the others */
	for (int k = OSDFS_OP_READ; k <= OSDFS_OP_FLUSH; k++) {
		ao.op.kind = (enum osdfs_op_kind)k;
		ao.op.size = OSDFS_OP_BASE_SIZE - 1;
		ck_assert_int_eq(ops->submit(impl, &ao.op), -EINVAL);
	}
	ck_assert_int_eq(st.done, 0);
}
END_TEST

/* An op made with osdfs_op_init() declares its size and runs. */
START_TEST(test_async_sized)
{
	struct async_state st = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct async_op ao;

	if (!ops->submit)
		return;
	memset(&ao, 0, sizeof(ao));
	osdfs_op_init(&ao.op);
	ck_assert_uint_eq(ao.op.size, sizeof(struct osdfs_op));
	ck_assert(OSDFS_OP_HAS(&ao.op, priv));
	ao.st = &st;
	ao.op.kind = OSDFS_OP_CREATE;
	ao.op.oid = OID(1);
	ao.op.done = async_op_done;
	ck_assert_int_eq(ops->submit(impl, &ao.op), 0);
	async_wait(&st, 1);
	ck_assert_int_eq(ao.op.result, 0);
}
END_TEST

/* ---- threads ---- */

#define THREADS 4
#define THREAD_ROUNDS 40

struct worker {
	pthread_t tid;
	int index;
	int failures;
	char what[128];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned char data[5000], out[5000];

	for (int r = 0; r < THREAD_ROUNDS && !w->failures; r++) {
		uint64_t oid = OID(1000 + w->index * 1000 + r);
		char tag[4] = { 't', (char)('0' + w->index), (char)r, 0 }, tagout[4];
		struct osdfs_attr a = { APP_PAGE, 1, tag, 4 };
		struct osdfs_attr g = { APP_PAGE, 1, tagout, 4 };
		struct iovec iov = { data, sizeof(data) }, riov = { out, sizeof(out) };
		uint64_t ids[8], next;
		size_t n;
		ssize_t rc;

		fill_pattern(data, sizeof(data), oid);
		if ((rc = ops->create(impl, oid, &a, 1)) != 0)
			snprintf(w->what, sizeof(w->what), "create: %zd", rc);
		else if ((rc = ops->write(impl, oid, (uint64_t)r * 100, &iov, 1, NULL, 0)) != 5000)
			snprintf(w->what, sizeof(w->what), "write: %zd", rc);
		else if ((rc = ops->read(impl, oid, (uint64_t)r * 100, &riov, 1)) != 5000 ||
			 memcmp(out, data, sizeof(out)))
			snprintf(w->what, sizeof(w->what), "read: %zd", rc);
		else if ((rc = ops->get_attrs(impl, oid, &g, 1)) != 0 || g.len != 4 ||
			 memcmp(tagout, tag, 4))
			snprintf(w->what, sizeof(w->what), "get_attrs: %zd", rc);
		else if ((rc = ops->list(impl, 0, ids, 8, &n, &next)) != 0)
			snprintf(w->what, sizeof(w->what), "list: %zd", rc);
		else if (r % 2 && (rc = ops->remove(impl, oid)) != 0)
			snprintf(w->what, sizeof(w->what), "remove: %zd", rc);
		else
			continue;
		w->failures++;
	}
	return NULL;
}

START_TEST(test_threads)
{
	struct worker w[THREADS];
	struct osdfs_backend_stat st;

	for (int i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].index = i;
		ck_assert_int_eq(pthread_create(&w[i].tid, NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(w[i].tid, NULL);
		ck_assert_msg(w[i].failures == 0, "thread %d: %s", i, w[i].what);
	}
	ck_assert_int_eq(ops->statfs(impl, &st), 0);
	ck_assert_uint_eq(st.objects, THREADS * THREAD_ROUNDS / 2);
}
END_TEST

/* ---- bad input ---- */

START_TEST(test_bad_arguments)
{
	unsigned char buf[8];
	struct iovec iov = { buf, sizeof(buf) };
	struct osdfs_attr bad = { APP_PAGE, 1, NULL, 4 };
	uint64_t ids[2], next;
	size_t n;

	ck_assert_int_eq(ops->create(impl, OID(1), NULL, 0), 0);
	ck_assert_int_eq(write_buf(OID(1), 0, "keep", 4), 4);
	ck_assert_int_eq(ops->read(impl, OID(1), 0, &iov, -1), -EINVAL);
	ck_assert_int_eq(ops->write(impl, OID(1), 0, &iov, -1, NULL, 0), -EINVAL);
	ck_assert_int_eq(ops->set_attrs(impl, OID(1), &bad, 1), -EINVAL);
	ck_assert_int_eq(ops->list(impl, 0, ids, 0, &n, &next), -EINVAL);
	/* Nothing was lost. */
	ck_assert_int_eq(read_buf(OID(1), 0, buf, sizeof(buf)), 4);
	ck_assert_mem_eq(buf, "keep", 4);
}
END_TEST

static Suite *conformance_suite(void)
{
	Suite *s = suite_create(factory->name);
	struct {
		const char *name;
		const TTest *test;
	} cases[] = {
		{ "objects", test_create_exists },
		{ "objects", test_missing_object },
		{ "objects", test_reserved_ids },
		{ "objects", test_remove },
		{ "data", test_write_read_iovecs },
		{ "data", test_sparse_zeros },
		{ "data", test_huge_sparse },
		{ "data", test_short_read },
		{ "data", test_overwrite_keeps_length },
		{ "data", test_truncate },
		{ "data", test_punch },
		{ "attrs", test_attr_set_get },
		{ "attrs", test_attr_get_all },
		{ "attrs", test_attr_overwrite_delete },
		{ "attrs", test_attr_longer_than_buffer },
		{ "attrs", test_attr_piggyback },
		{ "list", test_list_order_continuation },
		{ "list", test_list_empty_and_exact },
		{ "partition", test_flush },
		{ "partition", test_format_empties },
		{ "partition", test_statfs },
		{ "partition", test_enospc },
		{ "partition", test_enospc_punch },
		{ "async", test_async_many },
		{ "async", test_async_refused },
		{ "async", test_async_sized },
		{ "threads", test_threads },
		{ "input", test_bad_arguments },
	};
	TCase *tc = NULL;
	const char *cur = NULL;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!cur || strcmp(cur, cases[i].name)) {
			cur = cases[i].name;
			tc = tcase_create(cur);
			tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
			tcase_add_checked_fixture(tc, test_setup, test_teardown);
			tcase_set_timeout(tc, 120);
			suite_add_tcase(s, tc);
		}
		tcase_add_test(tc, cases[i].test);
	}
	return s;
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : getenv("OSDFS_TEST_BACKEND");
	SRunner *sr;
	int failed;

	factory = be_factory_find(which && *which ? which : "mem");
	if (!factory) {
		fprintf(stderr, "unknown backend '%s'\n", which);
		return 2;
	}
	if (factory->available && !factory->available()) {
		fprintf(stderr, "backend %s not available here\n", factory->name);
		return 77;
	}
	sr = srunner_create(conformance_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
