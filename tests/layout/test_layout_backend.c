/*
 * The layout backend over mem devices: every map round-trips random writes,
 * truncates and reads against a model; redundant maps survive a device
 * killed mid-workload, are rebuilt onto a new device, then survive losing a
 * different one; osdfs on top stays fsck-clean through all of it.
 * LAYOUT_TEST_SCALE scales the number of operations.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>
#include <osdfs/fsck.h>
#include <osdfs/osdfs.h>

#include "core/format.h"
#include "layout_fixture.h"

#define OID 0x10123ULL
#define MODEL_MAX (384u * 1024)

struct model {
	uint8_t *data;
	uint64_t size;
	unsigned seed;
};

static const struct osdfs_backend_ops *O(osdfs_backend *be)
{
	return osdfs_backend_ops_of(be);
}

static void *I(osdfs_backend *be)
{
	return osdfs_backend_impl(be);
}

static void create_file(osdfs_backend *be, uint64_t oid)
{
	struct osdfs__dinode di = { .mode = S_IFREG | 0644, .nlink = 1, .generation = 1 };
	uint8_t buf[OSDFS__INODE_MAX_LEN];
	struct osdfs_attr a = { OSDFS__PAGE_INODE, OSDFS__ATTR_INODE, buf, 0 };

	a.len = (uint32_t)osdfs__inode_encode(buf, &di);
	ck_assert_int_eq(O(be)->create_class(I(be), oid, OSDFS_OBJ_DATA, &a, 1), 0);
}

static unsigned rnd(struct model *m, unsigned n)
{
	return (unsigned)(rand_r(&m->seed) % n);
}

static void check_all(osdfs_backend *be, const struct model *m)
{
	uint8_t *buf = malloc(MODEL_MAX + 4096);
	struct iovec iov = { buf, MODEL_MAX + 4096 };
	uint64_t size = 0;
	ssize_t n;

	ck_assert_int_eq(O(be)->size(I(be), OID, &size), 0);
	ck_assert_uint_eq(size, m->size);
	n = O(be)->read(I(be), OID, 0, &iov, 1);
	ck_assert_int_eq(n, (ssize_t)m->size);
	ck_assert(memcmp(buf, m->data, m->size) == 0);
	free(buf);
}

/* One random operation, checked against the model. */
static void step(osdfs_backend *be, struct model *m)
{
	unsigned kind = rnd(m, 10), off = rnd(m, MODEL_MAX - 65536), len = 1 + rnd(m, 65536);
	uint8_t *buf = malloc(65536 * 2);
	struct iovec iov[2];

	if (kind < 6) {
		for (unsigned i = 0; i < len; i++)
			buf[i] = (uint8_t)rand_r(&m->seed);
		iov[0] = (struct iovec){ buf, len / 2 };
		iov[1] = (struct iovec){ buf + len / 2, len - len / 2 };
		ck_assert_int_eq(O(be)->write(I(be), OID, off, iov, 2, NULL, 0), (ssize_t)len);
		memcpy(m->data + off, buf, len);
		if (off + len > m->size)
			m->size = off + len;
	} else if (kind < 8) {
		uint64_t ns = rnd(m, 2) ? off : m->size / 2 + rnd(m, 1000);

		ck_assert_int_eq(O(be)->truncate(I(be), OID, ns), 0);
		if (ns < m->size)
			memset(m->data + ns, 0, m->size - ns);
		m->size = ns;
	} else {
		ssize_t want = off >= m->size ? 0 : (ssize_t)(m->size - off < len ? m->size - off : len);

		iov[0] = (struct iovec){ buf, len };
		ck_assert_int_eq(O(be)->read(I(be), OID, off, iov, 1), want);
		ck_assert(memcmp(buf, m->data + off, (size_t)want) == 0);
	}
	free(buf);
}

static void workload(osdfs_backend *be, struct model *m, unsigned nops)
{
	for (unsigned i = 0; i < nops; i++)
		step(be, m);
	check_all(be, m);
}

struct mapcase {
	const char *map;
	unsigned ndev, kill; /* devices to kill: 0 = not redundant */
};

static const struct mapcase cases[] = {
	{ "raid0,su=4K", 4, 0 },
	{ "raid0,su=64K", 3, 0 },
	{ "raid0,su=4K,width=2,depth=3", 4, 0 },
	{ "raid1,su=4K", 2, 1 },
	{ "raid10,su=4K", 4, 1 },
	{ "raid10,su=4K,width=2,depth=2", 8, 1 },
	{ "raid4,su=4K", 4, 1 },
	{ "raid5,su=4K,width=3", 3, 1 },
	{ "raid5,su=4K,width=4", 5, 1 },
	{ "raid5,su=8K,width=5", 5, 1 },
	{ "raid5,su=4K,width=3,depth=2", 6, 1 },
	{ "raid6,su=4K,width=4", 4, 2 },
	{ "raid6,su=4K,width=6", 6, 2 },
	{ "raid6,su=4K,width=8", 8, 2 },
	{ "raid5,su=4K,width=8,mirrors=0", 8, 1 },
};

static void model_init(struct model *m, unsigned seed)
{
	m->data = calloc(1, MODEL_MAX);
	m->size = 0;
	m->seed = seed;
}

START_TEST(test_roundtrip)
{
	const struct mapcase *c = &cases[_i];
	struct fx f;
	struct model m;

	fx_init(&f, c->ndev);
	ck_assert_int_eq(fx_open_all(&f, c->map), 0);
	ck_assert_int_eq(O(f.be)->format(I(f.be), 0), 0);
	create_file(f.be, OID);
	model_init(&m, 1234 + (unsigned)_i);
	workload(f.be, &m, fx_scaled(400));
	/* reopened in reverse order: slots are matched by uuid; the map and size persist */
	ck_assert_int_eq(O(f.be)->create(I(f.be), OSDFS_LAYOUT_TABLE_OID, NULL, 0), 0);
	fx_close(&f);
	{
		int order[FX_MAX];

		for (unsigned i = 0; i < c->ndev; i++)
			order[i] = (int)(c->ndev - 1 - i);
		ck_assert_int_eq(fx_open(&f, order, c->ndev, NULL), 0);
	}
	check_all(f.be, &m);
	free(m.data);
	fx_fini(&f);
}
END_TEST

/* Kill devices mid-workload, replace and rebuild the first, then kill another. */
START_TEST(test_degraded_rebuild)
{
	const struct mapcase *c = &cases[_i];
	struct osdfs_layout_rebuild_stats st;
	struct osdfs_layout_device d;
	/* the devices of components 1 and 2 of the file, then of component 0 */
	unsigned victim = (OID + 1) % c->ndev, second = (OID + 2) % c->ndev, third = OID % c->ndev;
	struct fx f;
	struct model m;

	if (c->kill == 0)
		return;
	fx_init(&f, c->ndev);
	ck_assert_int_eq(fx_open_all(&f, c->map), 0);
	ck_assert_int_eq(O(f.be)->format(I(f.be), 0), 0);
	ck_assert_int_eq(O(f.be)->create(I(f.be), OSDFS_LAYOUT_TABLE_OID, NULL, 0), 0);
	create_file(f.be, OID);
	model_init(&m, 99 + (unsigned)_i);
	workload(f.be, &m, fx_scaled(150));
	fx_kill(&f, victim);
	if (c->kill == 2)
		fx_kill(&f, second);
	workload(f.be, &m, fx_scaled(150));
	ck_assert_int_eq(osdfs_layout_device(f.be, victim, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_uint_gt(d.errors, 0);
	/* a replacement, rebuilt while the file is in use */
	ck_assert_int_eq(osdfs_layout_replace(f.be, victim, fx_device(&f, FX_MAX), "mem:new"), 0);
	ck_assert_int_eq(osdfs_layout_replace(f.be, victim, NULL, NULL), -EBUSY);
	workload(f.be, &m, fx_scaled(20));
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, victim, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.unrecoverable, 0);
	ck_assert_uint_ge(st.components, 2);
	ck_assert_int_eq(osdfs_layout_device(f.be, victim, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_UP);
	ck_assert_str_eq(d.address, "mem:new");
	if (c->kill == 2) {
		ck_assert_int_eq(osdfs_layout_replace(f.be, second, fx_device(&f, FX_MAX + 1), NULL), 0);
		ck_assert_int_eq(osdfs_layout_rebuild(f.be, second, &st, NULL, NULL), 0);
	}
	check_all(f.be, &m);
	/* the rebuilt data is real: lose a different device and read everything */
	fx_kill(&f, third);
	check_all(f.be, &m);
	workload(f.be, &m, fx_scaled(20));
	free(m.data);
	fx_fini(&f);
}
END_TEST

/* Too many failures: -EIO, not wrong data. */
START_TEST(test_too_many_failures)
{
	struct fx f;
	struct model m;
	uint8_t buf[100];
	struct iovec iov = { buf, sizeof(buf) };

	fx_init(&f, 3);
	ck_assert_int_eq(fx_open_all(&f, "raid5,su=4K"), 0);
	ck_assert_int_eq(O(f.be)->format(I(f.be), 0), 0);
	create_file(f.be, OID);
	model_init(&m, 7);
	workload(f.be, &m, 20);
	fx_kill(&f, 0);
	fx_kill(&f, 1);
	ck_assert_int_eq(O(f.be)->read(I(f.be), OID, 0, &iov, 1), -EIO);
	free(m.data);
	fx_fini(&f);
}
END_TEST

/* Concurrent partial-stripe writers on one RAID 5 file: thread t writes
 * 1 KiB into units 4k + t at the same in-unit offset as its neighbours, so
 * every row's parity is updated by several threads at once. The data must be
 * exact and the parity consistent (read back with a device dead). */
#define RMW_UNITS 24

struct writer {
	osdfs_backend *be;
	unsigned id, rounds;
};

static uint64_t slice_off(unsigned id, unsigned k)
{
	return (uint64_t)(k * 4 + id) * 4096 + (k % 4) * 1024;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint8_t buf[1024];
	struct iovec iov = { buf, sizeof(buf) };

	for (unsigned r = 0; r < w->rounds; r++) {
		for (unsigned k = 0; k < RMW_UNITS; k++) {
			memset(buf, (int)(w->id * 64 + k + r), sizeof(buf));
			if (O(w->be)->write(I(w->be), OID, slice_off(w->id, k), &iov, 1, NULL, 0) !=
			    (ssize_t)sizeof(buf))
				return (void *)1;
		}
	}
	return NULL;
}

START_TEST(test_concurrent_rmw)
{
	struct writer w[4];
	pthread_t t[4];
	struct model m;
	struct fx f;
	unsigned rounds = fx_scaled(20);

	fx_init(&f, 4);
	ck_assert_int_eq(fx_open_all(&f, "raid5,su=4K"), 0);
	ck_assert_int_eq(O(f.be)->format(I(f.be), 0), 0);
	create_file(f.be, OID);
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct writer){ f.be, i, rounds };
		ck_assert_int_eq(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		void *ret;

		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_ptr_null(ret);
	}
	model_init(&m, 0);
	m.size = slice_off(3, RMW_UNITS - 1) + 1024;
	for (unsigned id = 0; id < 4; id++)
		for (unsigned k = 0; k < RMW_UNITS; k++)
			memset(m.data + slice_off(id, k), (int)(id * 64 + k + rounds - 1), 1024);
	check_all(f.be, &m);
	fx_kill(&f, 2);
	check_all(f.be, &m);
	free(m.data);
	fx_fini(&f);
}
END_TEST

/* Rebuild while a writer keeps changing the file. */
struct busy {
	osdfs_backend *be;
	struct model *m;
	unsigned nops;
};

static void *busy_main(void *arg)
{
	struct busy *b = arg;

	for (unsigned i = 0; i < b->nops; i++)
		step(b->be, b->m);
	return NULL;
}

START_TEST(test_rebuild_in_use)
{
	struct osdfs_layout_rebuild_stats st;
	struct busy b;
	pthread_t t;
	struct model m;
	struct fx f;
	unsigned victim = (OID + 2) % 4;

	fx_init(&f, 4);
	ck_assert_int_eq(fx_open_all(&f, "raid5,su=4K"), 0);
	ck_assert_int_eq(O(f.be)->format(I(f.be), 0), 0);
	ck_assert_int_eq(O(f.be)->create(I(f.be), OSDFS_LAYOUT_TABLE_OID, NULL, 0), 0);
	create_file(f.be, OID);
	model_init(&m, 4242);
	workload(f.be, &m, fx_scaled(100));
	fx_kill(&f, victim);
	workload(f.be, &m, fx_scaled(50));
	ck_assert_int_eq(osdfs_layout_replace(f.be, victim, fx_device(&f, FX_MAX), NULL), 0);
	b = (struct busy){ f.be, &m, fx_scaled(300) };
	ck_assert_int_eq(pthread_create(&t, NULL, busy_main, &b), 0);
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, victim, &st, NULL, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	check_all(f.be, &m);
	fx_kill(&f, (victim + 1) % 4);
	check_all(f.be, &m);
	free(m.data);
	fx_fini(&f);
}
END_TEST

/* An attribute no part of osdfs or the layout knows survives a rebuild of
 * an attribute holder: rebuild copies every attribute, not a known list. */
START_TEST(test_rebuild_copies_unknown_attrs)
{
	static const uint8_t val[5] = { 'n', 'e', 'w', 0, 0xA5 };
	struct osdfs_attr set[2] = { { 0x7FEE0001u, 42, (void *)val, sizeof(val) },
				     { OSDFS__PAGE_INODE, 0xBEEF, (void *)val, 3 } };
	struct osdfs_attr all[64];
	struct osdfs_layout_rebuild_stats st;
	unsigned victim = (unsigned)(OID % 4);
	uint8_t got[16], buf[4096];
	struct osdfs_attr a = { 0x7FEE0001u, 42, got, sizeof(got) };
	osdfs_backend *fresh;
	struct fx f;
	int n, seen = 0;

	fx_init(&f, 4);
	ck_assert_int_eq(fx_open_all(&f, "raid5,su=4K"), 0);
	ck_assert_int_eq(O(f.be)->format(I(f.be), 0), 0);
	ck_assert_int_eq(O(f.be)->create(I(f.be), OSDFS_LAYOUT_TABLE_OID, NULL, 0), 0);
	create_file(f.be, OID);
	ck_assert_int_eq(O(f.be)->set_attrs(I(f.be), OID, set, 2), 0);
	fx_kill(&f, victim);
	/* a write finds the device gone and marks it down */
	ck_assert_int_eq(O(f.be)->set_attrs(I(f.be), OID, set, 1), 0);
	fresh = fx_device(&f, FX_MAX);
	ck_assert_int_eq(osdfs_layout_replace(f.be, victim, fresh, NULL), 0);
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, victim, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.unrecoverable, 0);
	/* on the rebuilt device itself, byte for byte */
	ck_assert_int_eq(O(fresh)->get_attrs(I(fresh), OID, &a, 1), 0);
	ck_assert_uint_eq(a.len, sizeof(val));
	ck_assert(memcmp(got, val, sizeof(val)) == 0);
	n = O(fresh)->get_all_attrs(I(fresh), OID, all, 64, buf, sizeof(buf));
	ck_assert_int_ge(n, 3); /* inode, data map and the two set above at least */
	for (int i = 0; i < n; i++)
		seen += all[i].page == OSDFS__PAGE_INODE && all[i].number == 0xBEEF &&
			all[i].len == 3 && memcmp(all[i].value, val, 3) == 0;
	ck_assert_int_eq(seen, 1);
	/* too little room: refused whole, nothing partial */
	ck_assert_int_eq(O(fresh)->get_all_attrs(I(fresh), OID, all, 1, buf, sizeof(buf)),
			 -ENOSPC);
	ck_assert_int_eq(O(fresh)->get_all_attrs(I(fresh), OID, all, 64, buf, 4),
			 -ENOSPC);
	ck_assert_int_eq(O(fresh)->get_all_attrs(I(fresh), OID + 1, all, 64, buf,
						 sizeof(buf)), -ENOENT);
	fx_fini(&f);
}
END_TEST

static void fs_check(osdfs *fs, const char *path, const char *payload, size_t len);

/* Length of the layout's data map attribute of @p oid: 32 for a striped
 * file, 0 for mirrored metadata. */
static uint32_t map_len(osdfs_backend *be, uint64_t oid)
{
	uint8_t m[64];
	struct osdfs_attr a = { OSDFS_LAYOUT_PAGE, 1, m, sizeof(m) };

	ck_assert_int_eq(O(be)->get_attrs(I(be), oid, &a, 1), 0);
	return a.len;
}

static void op_done(struct osdfs_op *op)
{
	(void)op;
}

/* What an object is comes from the caller's class hint at create, never
 * from decoding its attributes, and persists as the layout's own map
 * attribute (so it survives a reopen, as on filesystems made before hints). */
START_TEST(test_create_class)
{
	struct osdfs__dinode di = { .mode = S_IFREG | 0644, .nlink = 1, .generation = 1 };
	uint8_t ibuf[OSDFS__INODE_MAX_LEN], mbuf[64], data[20000], got[20000];
	struct osdfs_attr inode = { OSDFS__PAGE_INODE, OSDFS__ATTR_INODE, ibuf, 0 };
	struct osdfs_attr map = { OSDFS_LAYOUT_PAGE, 1, mbuf, sizeof(mbuf) };
	struct iovec iov = { data, sizeof(data) }, giov = { got, sizeof(got) };
	uint64_t size;
	struct fx f;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + i / 251);
	inode.len = (uint32_t)osdfs__inode_encode(ibuf, &di);
	fx_init(&f, 4);
	ck_assert_int_eq(fx_open_all(&f, "raid5,su=4K"), 0);
	ck_assert_int_eq(O(f.be)->format(I(f.be), 0), 0);
	ck_assert_int_eq(O(f.be)->create(I(f.be), OSDFS_LAYOUT_TABLE_OID, NULL, 0), 0);
	ck_assert_int_eq(O(f.be)->create_class(I(f.be), OID, OSDFS_OBJ_DATA, NULL, 0), 0);
	/* a regular file's inode on an object said to be metadata: mirrored */
	ck_assert_int_eq(O(f.be)->create_class(I(f.be), OID + 1, OSDFS_OBJ_META, &inode, 1), 0);
	/* no hint (create()): the inode is not decoded... */
	ck_assert_int_eq(O(f.be)->create(I(f.be), OID + 2, &inode, 1), 0);
	/* ...but a data map in the create makes a file */
	ck_assert_int_eq(O(f.be)->get_attrs(I(f.be), OID, &map, 1), 0);
	ck_assert_uint_eq(map.len, 32);
	ck_assert_int_eq(O(f.be)->create(I(f.be), OID + 3, &map, 1), 0);
	/* a data map on metadata is refused, and nothing is created */
	ck_assert_int_eq(O(f.be)->create_class(I(f.be), OID + 4, OSDFS_OBJ_META, &map, 1),
			 -EINVAL);
	ck_assert_int_eq(O(f.be)->size(I(f.be), OID + 4, &size), -ENOENT);
	/* a class this layout does not know counts as no hint */
	ck_assert_int_eq(O(f.be)->create_class(I(f.be), OID + 5, (enum osdfs_obj_class)77, NULL,
					       0), 0);
	/* through submit(): the op's class, and none from an older, shorter op */
	{
		struct osdfs_op op;

		osdfs_op_init(&op);
		op.kind = OSDFS_OP_CREATE;
		op.oid = OID + 6;
		op.obj_class = OSDFS_OBJ_DATA;
		op.done = op_done;
		ck_assert_int_eq(O(f.be)->submit(I(f.be), &op), 0);
		ck_assert_int_eq(op.result, 0);
		op.oid = OID + 7;
		op.size = OSDFS_OP_BASE_SIZE;
		ck_assert_int_eq(O(f.be)->submit(I(f.be), &op), 0);
		ck_assert_int_eq(op.result, 0);
		ck_assert_uint_eq(map_len(f.be, OID + 6), 32);
		ck_assert_uint_eq(map_len(f.be, OID + 7), 0);
	}
	ck_assert_uint_eq(map_len(f.be, OID), 32);
	ck_assert_uint_eq(map_len(f.be, OID + 1), 0);
	ck_assert_uint_eq(map_len(f.be, OID + 2), 0);
	ck_assert_uint_eq(map_len(f.be, OID + 3), 32);
	ck_assert_uint_eq(map_len(f.be, OID + 5), 0);
	ck_assert_int_eq(O(f.be)->write(I(f.be), OID, 0, &iov, 1, NULL, 0), (ssize_t)sizeof(data));
	ck_assert_int_eq(O(f.be)->write(I(f.be), OID + 1, 0, &iov, 1, NULL, 0),
			 (ssize_t)sizeof(data));
	/* on the devices: the metadata whole on each of its two copies, the
	 * file striped (its first component holds two 4 KiB units; the flush
	 * writes the partial row a sequential write holds back) */
	ck_assert_int_eq(O(f.be)->flush(I(f.be), OID), 0);
	for (unsigned j = 0; j < 2; j++)
		ck_assert_int_eq(fx_raw_read(&f, (unsigned)((OID + 1 + j) % 4), OID + 1, 0, got,
					     sizeof(got)), (ssize_t)sizeof(data));
	ck_assert_int_eq(fx_raw_read(&f, (unsigned)(OID % 4), OID, 0, got, sizeof(got)), 8192);
	fx_close(&f);
	ck_assert_int_eq(fx_open_all(&f, NULL), 0);
	ck_assert_uint_eq(map_len(f.be, OID), 32);
	ck_assert_uint_eq(map_len(f.be, OID + 1), 0);
	for (uint64_t oid = OID; oid <= OID + 1; oid++) {
		memset(got, 0, sizeof(got));
		ck_assert_int_eq(O(f.be)->read(I(f.be), oid, 0, &giov, 1), (ssize_t)sizeof(data));
		ck_assert(memcmp(got, data, sizeof(data)) == 0);
	}
	fx_fini(&f);
}
END_TEST

/* get_all_attrs of the layout: exactly the caller's attributes, from the
 * copy get_attrs reads, none of the layout's own (map, length, device
 * table, per-device records); from the next copy when the first is gone. */
static void expect_attrs(osdfs_backend *be, uint64_t oid, const struct osdfs_attr *want, int n)
{
	struct osdfs_attr all[8];
	uint8_t buf[256];
	int got = O(be)->get_all_attrs(I(be), oid, all, 8, buf, sizeof(buf)), seen = 0;

	ck_assert_int_eq(got, n);
	for (int i = 0; i < got; i++)
		for (int k = 0; k < n; k++)
			if (all[i].page == want[k].page && all[i].number == want[k].number) {
				ck_assert_uint_eq(all[i].len, want[k].len);
				ck_assert_mem_eq(all[i].value, want[k].value, want[k].len);
				seen |= 1 << k;
			}
	ck_assert_int_eq(seen, (1 << n) - 1);
}

START_TEST(test_get_all_attrs)
{
	static const uint8_t v1[7] = "seven!", v2[3] = { 0, 1, 2 };
	struct osdfs_attr set[2] = { { 0x7FEE0001u, 42, (void *)v1, sizeof(v1) },
				     { 0x7FEE0002u, 1, (void *)v2, sizeof(v2) } };
	struct osdfs_attr all[8];
	uint8_t buf[256];
	struct fx f;

	fx_init(&f, 4);
	ck_assert_int_eq(fx_open_all(&f, "raid5,su=4K"), 0);
	ck_assert_int_eq(O(f.be)->format(I(f.be), 0), 0);
	ck_assert_int_eq(O(f.be)->create(I(f.be), OSDFS_LAYOUT_TABLE_OID, set, 1), 0);
	ck_assert_int_eq(O(f.be)->create_class(I(f.be), OID, OSDFS_OBJ_DATA, set, 1), 0);
	ck_assert_int_eq(O(f.be)->set_attrs(I(f.be), OID, &set[1], 1), 0);
	/* metadata on the same first slot as the file */
	ck_assert_int_eq(O(f.be)->create_class(I(f.be), OID + 4, OSDFS_OBJ_META, set, 2), 0);
	expect_attrs(f.be, OSDFS_LAYOUT_TABLE_OID, set, 1);
	expect_attrs(f.be, OID, set, 2);
	expect_attrs(f.be, OID + 4, set, 2);
	ck_assert_int_eq(O(f.be)->get_all_attrs(I(f.be), OID, all, 1, buf, sizeof(buf)), -ENOSPC);
	ck_assert_int_eq(O(f.be)->get_all_attrs(I(f.be), OID, all, 8, buf, 9), -ENOSPC);
	ck_assert_int_eq(O(f.be)->get_all_attrs(I(f.be), OID + 9, all, 8, buf, sizeof(buf)),
			 -ENOENT);
	fx_kill(&f, (unsigned)(OID % 4));
	expect_attrs(f.be, OID, set, 2);
	expect_attrs(f.be, OID + 4, set, 2);
	fx_fini(&f);
}
END_TEST

/* Copying objects needs every device to list attributes: a device whose
 * backend cannot (ops version 1) is refused with -EOPNOTSUPP before
 * anything changes, rather than rebuilt by a list that would drop some. */
START_TEST(test_rebuild_needs_attr_listing)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	struct osdfs_layout_device d;
	osdfs_backend *old, *dev[2], *spare[3];
	uint8_t data[5000], got[5000];
	struct iovec iov = { data, sizeof(data) }, giov = { got, sizeof(got) };
	char err[256];
	struct fx f;

	memset(data, 0x5A, sizeof(data));
	fx_init(&f, 2);
	ck_assert_int_eq(fx_open_all(&f, "raid1"), 0);
	ck_assert_int_eq(O(f.be)->format(I(f.be), 0), 0);
	ck_assert_int_eq(O(f.be)->create(I(f.be), OSDFS_LAYOUT_TABLE_OID, NULL, 0), 0);
	ck_assert_int_eq(O(f.be)->create_class(I(f.be), OID, OSDFS_OBJ_DATA, NULL, 0), 0);
	fx_kill(&f, 0);
	ck_assert_int_eq(O(f.be)->write(I(f.be), OID, 0, &iov, 1, NULL, 0), (ssize_t)sizeof(data));
	old = fx_device_v1(&f, FX_MAX);
	ck_assert_int_eq(osdfs_layout_replace(f.be, 0, old, NULL), -EOPNOTSUPP);
	osdfs_backend_free(old); /* still the caller's */
	ck_assert_int_eq(osdfs_layout_device(f.be, 0, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_DOWN);
	fx_close(&f);
	/* the device in service is the old kind: no resync at open, no rebuild */
	dev[0] = fx_device(&f, 0);
	dev[1] = fx_device_v1(&f, 1);
	cfg.ndevices = 2;
	cfg.devices = dev;
	ck_assert_int_eq(osdfs_backend_layout_new(&f.be, &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(osdfs_layout_device(f.be, 0, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_int_eq(osdfs_layout_resync(f.be, 0, NULL), -EOPNOTSUPP);
	ck_assert_int_eq(osdfs_layout_replace(f.be, 0, NULL, NULL), -EOPNOTSUPP);
	ck_assert_int_eq(osdfs_layout_device(f.be, 0, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_int_eq(O(f.be)->read(I(f.be), OID, 0, &giov, 1), (ssize_t)sizeof(got));
	ck_assert(memcmp(got, data, sizeof(data)) == 0);
	fx_close(&f);
	/* a spare of the old kind is refused and kept; a new device is rebuilt */
	spare[0] = NULL;
	spare[1] = fx_device(&f, 1);
	spare[2] = fx_device_v1(&f, FX_MAX);
	cfg.ndevices = 3;
	cfg.devices = spare;
	ck_assert_int_eq(osdfs_backend_layout_new(&f.be, &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(osdfs_layout_replace(f.be, 0, NULL, NULL), -EOPNOTSUPP);
	ck_assert_int_eq(osdfs_layout_replace(f.be, 0, NULL, NULL), -EOPNOTSUPP); /* still there */
	ck_assert_int_eq(osdfs_layout_replace(f.be, 0, fx_device(&f, FX_MAX + 1), NULL), 0);
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, 0, NULL, NULL, NULL), 0);
	fx_kill(&f, 1);
	memset(got, 0, sizeof(got));
	ck_assert_int_eq(O(f.be)->read(I(f.be), OID, 0, &giov, 1), (ssize_t)sizeof(got));
	ck_assert(memcmp(got, data, sizeof(data)) == 0);
	fx_fini(&f);
}
END_TEST

/* osdfs on a layout: an attribute osdfs never uses (set through the backend
 * API) on a file and on a directory survives a rebuild with exact bytes,
 * read back on the rebuilt device and, with the other device gone, through
 * the layout. */
START_TEST(test_rebuild_keeps_new_attrs_of_fs)
{
	static const uint8_t fv[6] = { 'f', 'i', 'l', 'e', 0, 0xC3 }, dv[4] = { 'd', 0xFF, 0, 'r' };
	struct osdfs_layout_rebuild_stats st;
	struct osdfs_stat fst, dst;
	uint64_t foid, doid;
	osdfs_backend *fresh;
	osdfs_file *fh;
	uint8_t got[16];
	struct fx f;
	osdfs *fs;

	fx_init(&f, 2);
	ck_assert_int_eq(fx_open_all(&f, "raid1"), 0);
	ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
	fs = fx_mount(f.be);
	ck_assert_int_eq(osdfs_mkdir(fs, OSDFS_ROOT_INO, "d", 0755, NULL, &dst), 0);
	ck_assert_int_eq(osdfs_create(fs, dst.ino, "f", 0644, O_RDWR, NULL, &fst, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, "payload", 7, 0), 7);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	foid = OSDFS__OID_BASE + fst.ino;
	doid = OSDFS__OID_BASE + dst.ino;
	/* osdfs said which is which at create: the file striped, the directory mirrored */
	ck_assert_uint_eq(map_len(f.be, foid), 32);
	ck_assert_uint_eq(map_len(f.be, doid), 0);
	{
		struct osdfs_attr a = { 0x7FEE0001u, 42, (void *)fv, sizeof(fv) };

		ck_assert_int_eq(O(f.be)->set_attrs(I(f.be), foid, &a, 1), 0);
		a = (struct osdfs_attr){ 0x7FEE0001u, 42, (void *)dv, sizeof(dv) };
		ck_assert_int_eq(O(f.be)->set_attrs(I(f.be), doid, &a, 1), 0);
	}
	fx_kill(&f, 0);
	ck_assert_int_eq(O(f.be)->flush(I(f.be), 0), 0); /* finds it gone */
	fresh = fx_device(&f, FX_MAX);
	ck_assert_int_eq(osdfs_layout_replace(f.be, 0, fresh, NULL), 0);
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, 0, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.unrecoverable, 0);
	for (int pass = 0; pass < 2; pass++) {
		osdfs_backend *be = pass ? f.be : fresh;
		struct osdfs_attr a = { 0x7FEE0001u, 42, got, sizeof(got) };

		ck_assert_int_eq(O(be)->get_attrs(I(be), foid, &a, 1), 0);
		ck_assert_uint_eq(a.len, sizeof(fv));
		ck_assert_mem_eq(got, fv, sizeof(fv));
		a = (struct osdfs_attr){ 0x7FEE0001u, 42, got, sizeof(got) };
		ck_assert_int_eq(O(be)->get_attrs(I(be), doid, &a, 1), 0);
		ck_assert_uint_eq(a.len, sizeof(dv));
		ck_assert_mem_eq(got, dv, sizeof(dv));
		fx_kill(&f, 1); /* second pass: only the rebuilt device is left */
	}
	fs = fx_mount(f.be);
	fs_check(fs, "/d/f", "payload", 7);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fx_fini(&f);
}
END_TEST

static void fs_add(osdfs *fs, const char *name, const char *payload, size_t len)
{
	osdfs_file *fh;

	ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, name, 0644, O_RDWR, NULL, NULL, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, payload, len, 0), (ssize_t)len);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
}

static void fs_tree(osdfs_backend *be, const char *payload, size_t len)
{
	osdfs *fs = fx_mount(be);
	struct osdfs_stat st;

	ck_assert_int_eq(osdfs_mkdir(fs, OSDFS_ROOT_INO, "dir", 0755, NULL, &st), 0);
	ck_assert_int_eq(osdfs_symlink(fs, st.ino, "link", "../f", NULL, NULL), 0);
	fs_add(fs, "f", payload, len);
	/* a big extended attribute: rebuild must copy values past its first guess */
	ck_assert_int_eq(osdfs_setxattr(fs, st.ino, "user.big", payload, 30000, 0), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
}

static void fs_check(osdfs *fs, const char *path, const char *payload, size_t len)
{
	char *buf = malloc(len + 10);
	osdfs_file *fh;
	uint64_t ino;

	ck_assert_int_eq(osdfs_resolve(fs, path, 1, &ino), 0);
	ck_assert_int_eq(osdfs_open(fs, ino, O_RDONLY, &fh), 0);
	ck_assert_int_eq(osdfs_read(fs, fh, buf, len + 10, 0), (ssize_t)len);
	ck_assert(memcmp(buf, payload, len) == 0);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	free(buf);
}

static void fs_verify(osdfs_backend *be, const char *payload, size_t len, int with_g)
{
	osdfs *fs = fx_mount(be);

	char *x = malloc(30000);
	uint64_t d;

	fs_check(fs, "/dir/link", payload, len);
	ck_assert_int_eq(osdfs_resolve(fs, "/dir", 1, &d), 0);
	ck_assert_int_eq(osdfs_getxattr(fs, d, "user.big", x, 30000), 30000);
	ck_assert(memcmp(x, payload, 30000) == 0);
	free(x);
	if (with_g)
		fs_check(fs, "/g", payload + 5, 70000);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
}

static void fsck_clean(osdfs_backend *be)
{
	struct osdfs_fsck_report r;

	ck_assert_int_eq(osdfs_fsck(be, NULL, &r), 0);
	ck_assert_uint_eq(r.total, 0);
}

START_TEST(test_osdfs_on_layout)
{
	struct osdfs_layout_rebuild_stats st;
	size_t len = 300000;
	char *payload = malloc(len);
	int order[5] = { 4, 2, 0, 3, 1 }, degraded[5] = { 0, 1, -1, 3, 4 };
	int with_spare[6] = { 0, 1, -1, 3, 4, 6 }, lose_other[5] = { 0, 1, 6, -1, 4 };
	int back[5] = { 0, 1, 6, 3, 4 }, lose_first[5] = { -1, 1, 6, 3, 4 };
	int dead_at_open[5] = { -2 - 0, 1, 6, 3, 4 }, two_down[5] = { -1, 1, -1, 3, 4 };
	struct osdfs_layout_device d;
	struct fx f;
	osdfs *fs;

	for (size_t i = 0; i < len; i++)
		payload[i] = (char)(i * 7 + i / 4099);
	fx_init(&f, 5);
	ck_assert_int_eq(fx_open_all(&f, "raid5,su=16K"), 0);
	ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
	fs_tree(f.be, payload, len);
	fsck_clean(f.be);
	fx_close(&f);
	/* any order: devices are matched to slots by uuid */
	ck_assert_int_eq(fx_open(&f, order, 5, NULL), 0);
	fsck_clean(f.be);
	fs_verify(f.be, payload, len, 0);
	fx_close(&f);
	/* a device missing: degraded reads, and writes go on */
	ck_assert_int_eq(fx_open(&f, degraded, 5, NULL), 0);
	fs = fx_mount(f.be);
	fs_check(fs, "/dir/link", payload, len);
	fs_add(fs, "g", payload + 5, 70000);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fx_close(&f);
	/* a spare replaces it and is rebuilt */
	ck_assert_int_eq(fx_open(&f, with_spare, 6, NULL), 0);
	ck_assert_int_eq(osdfs_layout_replace(f.be, 2, NULL, NULL), 0);
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, 2, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.unrecoverable, 0);
	fsck_clean(f.be);
	fx_close(&f);
	/* the rebuilt device carries real data: lose another one */
	ck_assert_int_eq(fx_open(&f, lose_other, 5, NULL), 0);
	fs_verify(f.be, payload, len, 1);
	fsck_clean(f.be);
	fx_close(&f);
	/* the missing device comes back: the dirty-region log covers its outage,
	 * so the open resyncs it (only what changed meanwhile) and it is up */
	ck_assert_int_eq(fx_open(&f, back, 5, NULL), 0);
	ck_assert_int_eq(osdfs_layout_device(f.be, 3, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_UP);
	ck_assert_int_eq(osdfs_layout_resync(f.be, 3, NULL), -EINVAL); /* up */
	fsck_clean(f.be);
	fx_close(&f);
	ck_assert_int_eq(fx_open(&f, lose_first, 5, NULL), 0);
	fs_verify(f.be, payload, len, 1);
	fx_close(&f);
	/* a device that fails while the table is read counts as missing */
	ck_assert_int_eq(fx_open(&f, dead_at_open, 5, NULL), 0);
	ck_assert_int_eq(osdfs_layout_device(f.be, 0, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_DOWN);
	fs_verify(f.be, payload, len, 1);
	fx_close(&f);
	/* two of five down is more than RAID 5 tolerates */
	ck_assert_int_eq(fx_open(&f, two_down, 5, NULL), -ENODEV);
	free(payload);
	fx_fini(&f);
}
END_TEST

START_TEST(test_foreign_device)
{
	struct fx a, b;
	char err[256];
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	osdfs_backend *dev[3], *be;

	fx_init(&a, 2);
	fx_init(&b, 2);
	ck_assert_int_eq(fx_open_all(&a, "raid1"), 0);
	ck_assert_int_eq(osdfs_mkfs(a.be, NULL), 0);
	ck_assert_int_eq(fx_open_all(&b, "raid1"), 0);
	ck_assert_int_eq(osdfs_mkfs(b.be, NULL), 0);
	dev[0] = fx_device(&a, 0);
	dev[1] = fx_device(&a, 1);
	dev[2] = fx_device(&b, 0);
	cfg.ndevices = 3;
	cfg.devices = dev;
	ck_assert_int_eq(osdfs_backend_layout_new(&be, &cfg, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "another filesystem"));
	fx_fini(&a);
	fx_fini(&b);
}
END_TEST

static TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *suite(void)
{
	Suite *s = suite_create("layout_backend");
	int n = (int)(sizeof(cases) / sizeof(cases[0]));

	tcase_add_loop_test(tcase(s, "roundtrip"), test_roundtrip, 0, n);
	tcase_add_loop_test(tcase(s, "degraded"), test_degraded_rebuild, 0, n);
	tcase_add_test(tcase(s, "failures"), test_too_many_failures);
	tcase_add_test(tcase(s, "concurrent"), test_concurrent_rmw);
	tcase_add_test(tcase(s, "concurrent"), test_rebuild_in_use);
	tcase_add_test(tcase(s, "attrs"), test_rebuild_copies_unknown_attrs);
	tcase_add_test(tcase(s, "attrs"), test_create_class);
	tcase_add_test(tcase(s, "attrs"), test_get_all_attrs);
	tcase_add_test(tcase(s, "attrs"), test_rebuild_needs_attr_listing);
	tcase_add_test(tcase(s, "attrs"), test_rebuild_keeps_new_attrs_of_fs);
	tcase_add_test(tcase(s, "osdfs"), test_osdfs_on_layout);
	tcase_add_test(tcase(s, "foreign"), test_foreign_device);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
