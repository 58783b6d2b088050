/*
 * Resync, not rebuild (docs/layout.md, "Dirty-region log and resync"): RAID 5
 * over 4 and RAID 1 over 2 mem devices hold an 8 MiB file; a device goes
 * away, a few writes touch two regions of it (one in two places), and a new
 * file is created. When the device comes back, the open resyncs it: exactly
 * the two regions' units (counted at the store: writes and bytes) and the
 * new file are written to it, nothing else; it is up with resync events, the
 * log is empty, every byte reads back right with another device gone, and a
 * scrub is clean. Also: the log is durable before the write (a reopen
 * without the device finds the keys), a device that fails during a write
 * has that write's region logged before the write returns, a slot the log
 * does not cover (down
 * from before, or after an overflow) is refused with -ESTALE, and the
 * figure: the bytes a resync writes follow the data written during the
 * outage (one region), not the file or device size. And a device that
 * crashes with a volatile cache (what it acknowledged since its last flush
 * lost) is resynced with those changes too.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <osdfs/osdfs.h>

#include "core/format.h"
#include "layout/layout_int.h"
#include "layout_fixture.h"

#define BIG (8u << 20)
#define SU (64u << 10)
#define REGION OSDFS_LAYOUT_REGION_BYTES

struct shape {
	const char *map;
	unsigned ndev, gone, other; /* devices; the one away; one killed at the end */
	uint64_t region_logical;    /* logical bytes of one region: Wd * REGION */
};

static const struct shape shapes[] = {
	{ "raid5,su=64K", 4, 2, 0, 3ull * REGION },
	{ "raid1,su=64K", 2, 1, 0, 1ull * REGION },
};

static void pattern(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + i / 4093 + seed);
}

static uint64_t make_file(osdfs *fs, const char *name, const uint8_t *data, size_t len)
{
	struct osdfs_stat st;
	osdfs_file *fh;

	ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, name, 0644, O_RDWR, NULL, &st, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, data, len, 0), (ssize_t)len);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	return OSDFS__OID_BASE + st.ino;
}

static void put(osdfs_backend *be, uint64_t oid, uint64_t off, const uint8_t *p, size_t len)
{
	struct iovec iov = { (void *)p, len };

	ck_assert_int_eq(osdfs_backend_ops_of(be)->write(osdfs_backend_impl(be), oid, off, &iov, 1,
							 NULL, 0), (ssize_t)len);
}

static void same(osdfs_backend *be, uint64_t oid, const uint8_t *want, size_t len)
{
	uint8_t *got = malloc(len);
	struct iovec iov = { got, len };

	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(osdfs_backend_ops_of(be)->read(osdfs_backend_impl(be), oid, 0, &iov, 1),
			 (ssize_t)len);
	ck_assert(memcmp(got, want, len) == 0);
	free(got);
}

static int count_events(osdfs_backend *be, enum osdfs_layout_event_kind kind, int slot)
{
	struct osdfs_layout_event ev[64];
	int n = osdfs_layout_events(be, ev, 64), k = 0;

	for (int i = 0; i < n; i++)
		k += ev[i].kind == kind && ev[i].slot == slot;
	return k;
}

/* Open with store @p gone absent (-1) or every store present (@p gone < 0). */
static void open_without(struct fx *f, const struct shape *sh, int gone)
{
	int order[FX_MAX];

	for (unsigned i = 0; i < sh->ndev; i++)
		order[i] = (int)i == gone ? -1 : (int)i;
	ck_assert_int_eq(fx_open(f, order, sh->ndev, NULL), 0);
}

START_TEST(test_resync_copies_only_dirty_regions)
{
	const struct shape *sh = &shapes[_i];
	uint8_t *want = malloc(BIG), *small = malloc(5000), patch[4096];
	struct osdfs_layout_device d;
	struct osdfs_layout_scrub_stats ss = { 0 };
	uint64_t oid, oid2, entries, covered;
	unsigned long w0, b0;
	struct fx f;
	osdfs *fs;

	ck_assert(want && small);
	pattern(want, BIG, 1);
	pattern(small, 5000, 9);
	pattern(patch, sizeof(patch), 77);
	fx_init(&f, sh->ndev);
	ck_assert_int_eq(fx_open_all(&f, sh->map), 0);
	ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
	fs = fx_mount(f.be);
	oid = make_file(fs, "big", want, BIG);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fx_close(&f);

	/* away: writes in region 0 and in region 1 (twice), a new object */
	open_without(&f, sh, (int)sh->gone);
	ck_assert_int_eq(osdfs_layout_device(f.be, sh->gone, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_DOWN);
	put(f.be, oid, 100, patch, sizeof(patch));
	memcpy(want + 100, patch, sizeof(patch));
	put(f.be, oid, sh->region_logical + 5, patch, 1000);
	memcpy(want + sh->region_logical + 5, patch, 1000);
	put(f.be, oid, sh->region_logical + 9000, patch, sizeof(patch));
	memcpy(want + sh->region_logical + 9000, patch, sizeof(patch));
	fs = fx_mount(f.be);
	oid2 = make_file(fs, "new", small, 5000);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	ck_assert_int_eq(osdfs_layout_dirty_log(f.be, &entries, &covered), 0);
	ck_assert_uint_eq(covered, 1ull << sh->gone);
	fx_close(&f);

	/* durable: a reopen, still without it, finds the two regions of the file */
	open_without(&f, sh, (int)sh->gone);
	{
		struct lay *L = osdfs_backend_impl(f.be);
		size_t nfile = 0;

		pthread_mutex_lock(&L->dirty.mu);
		for (size_t i = 0; i < L->dirty.n; i++)
			if (L->dirty.k[i].oid == oid) {
				ck_assert(L->dirty.k[i].region == nfile);
				nfile++;
			}
		pthread_mutex_unlock(&L->dirty.mu);
		ck_assert_uint_eq(nfile, 2);
	}
	fx_close(&f);

	/* back: the open resyncs it */
	f.count_oid = oid;
	w0 = atomic_load(&f.oid_writes[sh->gone]);
	b0 = atomic_load(&f.oid_bytes[sh->gone]);
	open_without(&f, sh, -1);
	ck_assert_int_eq(osdfs_layout_device(f.be, sh->gone, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_UP);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_STARTED, (int)sh->gone), 1);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_FINISHED, (int)sh->gone), 1);
	ck_assert_int_eq(osdfs_layout_dirty_log(f.be, &entries, &covered), 0);
	ck_assert_uint_eq(entries, 0);
	ck_assert_uint_eq(covered, 0);
	/* the file: exactly its two regions, in full units (REGION bytes each:
	 * REGION / SU writes of one unit), nothing else of its 8 MiB */
	ck_assert_uint_eq(atomic_load(&f.oid_writes[sh->gone]) - w0, 2 * (REGION / SU));
	ck_assert_uint_eq(atomic_load(&f.oid_bytes[sh->gone]) - b0, 2ull * REGION);
	ck_assert_int_eq(osdfs_layout_scrub(f.be, OSDFS_LAYOUT_SCRUB_DRY_RUN, &ss, NULL, NULL), 0);
	ck_assert_uint_eq(ss.mismatches, 0);
	ck_assert_uint_eq(ss.unrepaired, 0);
	fx_close(&f);

	/* its data is right: read with another device gone */
	open_without(&f, sh, (int)sh->other);
	same(f.be, oid, want, BIG);
	same(f.be, oid2, small, 5000);
	fx_close(&f);
	fx_fini(&f);
	free(want);
	free(small);
}
END_TEST

/* The figure: a 64 MiB file, one region written while the device was away;
 * the resync writes one region (1 MiB), not the 64 MiB file's share. */
START_TEST(test_resync_follows_outage_writes)
{
	static const size_t sizes[] = { 16u << 20, 64u << 20 };
	const struct shape *sh = &shapes[0];
	uint8_t patch[4096];

	pattern(patch, sizeof(patch), 3);
	for (size_t z = 0; z < 2; z++) {
		uint8_t *data = calloc(1, sizes[z]);
		struct osdfs_layout_rebuild_stats rs = { 0 };
		unsigned long b0, resynced;
		uint64_t oid;
		struct fx f;
		osdfs *fs;

		ck_assert_ptr_nonnull(data);
		pattern(data, sizes[z], 5);
		fx_init(&f, sh->ndev);
		ck_assert_int_eq(fx_open_all(&f, sh->map), 0);
		ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
		fs = fx_mount(f.be);
		oid = make_file(fs, "f", data, sizes[z]);
		ck_assert_int_eq(osdfs_unmount(fs), 0);
		fx_close(&f);
		open_without(&f, sh, (int)sh->gone);
		put(f.be, oid, sizes[z] / 2, patch, sizeof(patch));
		fx_close(&f);
		b0 = atomic_load(&f.wbytes[sh->gone]);
		open_without(&f, sh, -1);
		/* one region of the slot's component, whatever the size, plus the
		 * superblock's attributes (no data) */
		resynced = atomic_load(&f.wbytes[sh->gone]) - b0;
		ck_assert_uint_eq(resynced, REGION);
		fx_close(&f);
		/* what a rebuild of the same slot writes: the whole share */
		open_without(&f, sh, (int)sh->gone);
		fx_close(&f);
		{
			int order[] = { 0, 1, -1, 3, 4 }; /* empty store 4: a spare */

			ck_assert_int_eq(fx_open(&f, order, 5, NULL), 0);
			ck_assert_int_eq(osdfs_layout_replace(f.be, sh->gone, NULL, NULL), 0);
			ck_assert_int_eq(osdfs_layout_rebuild(f.be, sh->gone, &rs, NULL, NULL), 0);
			ck_assert_uint_ge(rs.bytes, sizes[z] / 3 - REGION);
			fx_close(&f);
		}
		printf("figure: RAID 5 4 devices, su 64K, %zu MiB file, 4 KiB written while a "
		       "device was away: resync wrote %lu bytes to it, a rebuild %llu\n",
		       sizes[z] >> 20, resynced, (unsigned long long)rs.bytes);
		fx_fini(&f);
		free(data);
	}
}
END_TEST

static void attr_is(osdfs_backend *be, uint64_t oid, uint32_t number, const uint8_t *want,
		    uint32_t len)
{
	uint8_t got[64];
	struct osdfs_attr a = { 0x7FEE0001u, number, got, sizeof(got) };

	ck_assert_int_eq(osdfs_backend_ops_of(be)->get_attrs(osdfs_backend_impl(be), oid, &a, 1),
			 0);
	ck_assert_uint_eq(a.len, len);
	if (len)
		ck_assert_mem_eq(got, want, len);
}

/* Attributes osdfs never uses, set through the backend API on a file and a
 * directory while a device is away, reach it at the resync byte for byte;
 * one deleted meanwhile is gone from it too. */
START_TEST(test_resync_copies_new_attrs)
{
	static const uint8_t fv[5] = { 'f', 0, 1, 2, 0xEE }, dv[3] = { 'd', 'i', 'r' };
	const struct shape *sh = &shapes[1]; /* RAID 1: every object on the returning device */
	struct osdfs_attr set[3] = { { 0x7FEE0001u, 42, (void *)fv, sizeof(fv) },
				     { 0x7FEE0001u, 42, (void *)dv, sizeof(dv) },
				     { 0x7FEE0001u, 43, (void *)fv, 2 } };
	struct osdfs_layout_device d;
	struct osdfs_stat dst;
	uint8_t small[100];
	uint64_t foid, doid;
	osdfs_backend *raw;
	struct fx f;
	osdfs *fs;

	pattern(small, sizeof(small), 4);
	fx_init(&f, sh->ndev);
	ck_assert_int_eq(fx_open_all(&f, sh->map), 0);
	ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
	fs = fx_mount(f.be);
	ck_assert_int_eq(osdfs_mkdir(fs, OSDFS_ROOT_INO, "d", 0755, NULL, &dst), 0);
	foid = make_file(fs, "f", small, sizeof(small));
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	doid = OSDFS__OID_BASE + dst.ino;
	/* on both devices: the one to delete while a device is away */
	ck_assert_int_eq(osdfs_backend_ops_of(f.be)->set_attrs(osdfs_backend_impl(f.be), foid,
							       &set[2], 1), 0);
	fx_close(&f);
	open_without(&f, sh, (int)sh->gone);
	ck_assert_int_eq(osdfs_backend_ops_of(f.be)->set_attrs(osdfs_backend_impl(f.be), foid,
							       &set[0], 1), 0);
	ck_assert_int_eq(osdfs_backend_ops_of(f.be)->set_attrs(osdfs_backend_impl(f.be), doid,
							       &set[1], 1), 0);
	set[2].len = 0;
	ck_assert_int_eq(osdfs_backend_ops_of(f.be)->set_attrs(osdfs_backend_impl(f.be), foid,
							       &set[2], 1), 0);
	fx_close(&f);
	open_without(&f, sh, -1); /* resynced at open */
	ck_assert_int_eq(osdfs_layout_device(f.be, sh->gone, &d), 0);
	ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_UP);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_FINISHED, (int)sh->gone), 1);
	raw = fx_device(&f, sh->gone); /* the returned device itself */
	attr_is(raw, foid, 42, fv, sizeof(fv));
	attr_is(raw, foid, 43, NULL, 0);
	attr_is(raw, doid, 42, dv, sizeof(dv));
	osdfs_backend_free(raw);
	/* and through the layout with only that device left */
	fx_kill(&f, sh->other);
	attr_is(f.be, foid, 42, fv, sizeof(fv));
	attr_is(f.be, doid, 42, dv, sizeof(dv));
	same(f.be, foid, small, sizeof(small));
	fx_fini(&f);
}
END_TEST

/* A device that fails during a write: the write's regions are logged after
 * it, before it returns, and the device comes back by resync with them. */
START_TEST(test_resync_after_failure_during_write)
{
	const struct shape *sh = &shapes[0];
	uint8_t *want = malloc(BIG), patch[8192];
	uint64_t oid, entries, covered;
	unsigned long b0;
	struct fx f;
	osdfs *fs;

	ck_assert_ptr_nonnull(want);
	pattern(want, BIG, 4);
	pattern(patch, sizeof(patch), 99);
	fx_init(&f, sh->ndev);
	ck_assert_int_eq(fx_open_all(&f, sh->map), 0);
	ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
	fs = fx_mount(f.be);
	oid = make_file(fs, "f", want, BIG);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fx_kill(&f, sh->gone); /* fails from now on, while open */
	put(f.be, oid, sh->region_logical + 77, patch, sizeof(patch));
	memcpy(want + sh->region_logical + 77, patch, sizeof(patch));
	ck_assert_int_eq(osdfs_layout_dirty_log(f.be, &entries, &covered), 0);
	ck_assert_uint_eq(entries, 1);
	ck_assert_uint_eq(covered, 1ull << sh->gone);
	fx_close(&f);
	b0 = atomic_load(&f.wbytes[sh->gone]);
	open_without(&f, sh, -1); /* back (a new, working connection) */
	ck_assert_uint_eq(atomic_load(&f.wbytes[sh->gone]) - b0, REGION);
	fx_close(&f);
	open_without(&f, sh, (int)sh->other);
	same(f.be, oid, want, BIG);
	fx_close(&f);
	fx_fini(&f);
	free(want);
}
END_TEST

/* Not covered: down since before the log (no covering bit), or overflowed. */
START_TEST(test_resync_refused_when_not_covered)
{
	const struct shape *sh = &shapes[0];
	uint8_t *data = malloc(BIG), b[512];
	uint64_t oid, entries, covered;
	struct fx f;
	struct lay *L;
	osdfs *fs;

	ck_assert_ptr_nonnull(data);
	pattern(data, BIG, 2);
	memset(b, 0x11, sizeof(b));
	fx_init(&f, sh->ndev);
	ck_assert_int_eq(fx_open_all(&f, sh->map), 0);
	ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
	fs = fx_mount(f.be);
	oid = make_file(fs, "f", data, BIG);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	ck_assert_int_eq(osdfs_layout_resync(f.be, sh->gone, NULL), -EINVAL); /* up */
	fx_close(&f);

	/* overflow: more distinct regions than the log holds */
	open_without(&f, sh, (int)sh->gone);
	L = osdfs_backend_impl(f.be);
	for (uint64_t k = 0; k <= OSDFS_LAYOUT_DIRTY_MAX; k++)
		ck_assert_int_eq(lay_dirty_note(L, oid + 1 + k, 0, 0), 0);
	ck_assert_int_eq(osdfs_layout_dirty_log(f.be, &entries, &covered), 1);
	ck_assert_uint_eq(entries, 0);
	ck_assert_uint_eq(covered, 0);
	put(f.be, oid, 0, b, sizeof(b));
	memset(data, 0x11, sizeof(b));
	fx_close(&f);
	/* back, but not covered: stays down (a rebuild is needed), data right */
	open_without(&f, sh, -1);
	{
		struct osdfs_layout_device d;

		ck_assert_int_eq(osdfs_layout_device(f.be, sh->gone, &d), 0);
		ck_assert_int_eq(d.state, OSDFS_LAYOUT_DEV_DOWN);
	}
	ck_assert_int_eq(osdfs_layout_resync(f.be, sh->gone, NULL), -ESTALE);
	same(f.be, oid, data, BIG);
	ck_assert_int_eq(osdfs_layout_replace(f.be, sh->gone, NULL, NULL), 0);
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, sh->gone, NULL, NULL, NULL), 0);
	ck_assert_int_eq(osdfs_layout_dirty_log(f.be, &entries, &covered), 0); /* cleared */
	fx_close(&f);
	open_without(&f, sh, (int)sh->other);
	same(f.be, oid, data, BIG);
	fx_close(&f);
	fx_fini(&f);
	free(data);
}
END_TEST

/* The log's byte image: header, sorted keys, CRC32C; bad input refused. */
START_TEST(test_dirty_log_format)
{
	struct lay_dkey k[2] = { { 0x10001, 0 }, { 0x10001, LAY_DIRTY_ALL } };
	struct lay_dirty d = { .generation = 7, .covered = 4, .n = 2, .k = k }, back = { 0 };
	uint8_t img[LAY_DIRTY_HDR + 2 * LAY_DIRTY_ENT + 4];
	static const uint8_t hdr[LAY_DIRTY_HDR] = {
		'O', 'S', 'D', 'F', 'S', 'D', 'L', 0, 1, 0, 40, 0, 2, 0, 0, 0,
		4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0,
		7, 0, 0, 0, 0, 0, 0, 0,
	};

	ck_assert_uint_eq(lay_dirty_len(2), sizeof(img));
	lay_dirty_encode(img, &d);
	ck_assert(memcmp(img, hdr, sizeof(hdr)) == 0);
	ck_assert_int_eq(lay_dirty_decode(&back, img, sizeof(img), NULL, 0), 0);
	ck_assert_uint_eq(back.n, 2);
	ck_assert_uint_eq(back.covered, 4);
	ck_assert_uint_eq(back.generation, 7);
	ck_assert(back.k[1].region == LAY_DIRTY_ALL);
	free(back.k);
	img[LAY_DIRTY_HDR + 3] ^= 1; /* a flipped bit: checksum */
	ck_assert_int_eq(lay_dirty_decode(&back, img, sizeof(img), NULL, 0), -EINVAL);
	ck_assert_int_eq(lay_dirty_decode(&back, img, 20, NULL, 0), -EINVAL);
}
END_TEST

/* ---- devices that come back while the layout is open (watch.c) ---- */

/* The owner's reopen: a new connection to store @p store (-1: still away). */
struct reopen_ctx {
	struct fx *f;
	int store;
	atomic_int calls;
	uint64_t bad_oid, bad_off; /* bad_oid: the new device fails writes there */
};

static int reopen_store(unsigned slot, const char *address, osdfs_backend **out, void *payload)
{
	struct reopen_ctx *c = payload;

	(void)slot;
	(void)address;
	atomic_fetch_add(&c->calls, 1);
	if (c->store < 0)
		return -ECONNREFUSED;
	*out = fx_device(c->f, (unsigned)c->store);
	if (c->bad_oid)
		fx_bad_range(c->f, (unsigned)c->store, c->bad_oid, c->bad_off, 100, 1);
	return 0;
}

/* Whether an event of @p kind for @p slot says @p text. */
static int said(osdfs_backend *be, enum osdfs_layout_event_kind kind, int slot, const char *text)
{
	struct osdfs_layout_event ev[64];
	int n = osdfs_layout_events(be, ev, 64), found = 0;

	for (int i = 0; i < n; i++)
		found |= ev[i].kind == kind && ev[i].slot == slot && strstr(ev[i].reason, text);
	return found;
}

static enum osdfs_layout_dev_state state_of(osdfs_backend *be, unsigned slot)
{
	struct osdfs_layout_device d;

	ck_assert_int_eq(osdfs_layout_device(be, slot, &d), 0);
	return d.state;
}

/* Formatted, an 8 MiB file; then the device of slot gone fails during a
 * write (a region of the file logged) and a new file is made without it. */
static void outage(struct fx *f, const struct shape *sh, uint8_t *want, uint8_t *small,
		   unsigned nstores, uint64_t *oid, uint64_t *oid2)
{
	uint8_t patch[4096];
	osdfs *fs;

	pattern(want, BIG, 6);
	pattern(small, 5000, 8);
	pattern(patch, sizeof(patch), 21);
	fx_init(f, nstores);
	{
		int order[FX_MAX];

		for (unsigned i = 0; i < sh->ndev; i++)
			order[i] = (int)i;
		ck_assert_int_eq(fx_open(f, order, sh->ndev, sh->map), 0);
	}
	ck_assert_int_eq(osdfs_mkfs(f->be, NULL), 0);
	fs = fx_mount(f->be);
	*oid = make_file(fs, "big", want, BIG);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fx_kill(f, sh->gone);
	put(f->be, *oid, sh->region_logical + 5, patch, sizeof(patch));
	memcpy(want + sh->region_logical + 5, patch, sizeof(patch));
	ck_assert_int_eq(state_of(f->be, sh->gone), OSDFS_LAYOUT_DEV_DOWN);
	fs = fx_mount(f->be);
	*oid2 = make_file(fs, "new", small, 5000);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
}

/* Back while open: a probe that finds it away changes nothing; once it
 * answers with its identity it is resynced (one region of the big file,
 * counted at the store) and up, with returned / started / finished events;
 * then every byte reads back with another device gone. */
START_TEST(test_watch_resyncs_returned_device)
{
	const struct shape *sh = &shapes[_i];
	struct osdfs_layout_watch w = OSDFS_LAYOUT_WATCH_INIT;
	uint8_t *want = malloc(BIG), *small = malloc(5000);
	struct reopen_ctx rc = { .store = -1 };
	uint64_t oid, oid2, entries, covered;
	unsigned long b0;
	struct fx f;

	ck_assert(want && small);
	outage(&f, sh, want, small, sh->ndev, &oid, &oid2);
	rc.f = &f;
	w.reopen = reopen_store;
	w.payload = &rc;
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(atomic_load(&rc.calls), 1);
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone), 0);

	rc.store = (int)sh->gone;
	f.count_oid = oid;
	b0 = atomic_load(&f.oid_bytes[sh->gone]);
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 1);
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_UP);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone), 1);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_STARTED, (int)sh->gone), 1);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_FINISHED, (int)sh->gone), 1);
	ck_assert_uint_eq(atomic_load(&f.oid_bytes[sh->gone]) - b0, REGION);
	ck_assert_int_eq(osdfs_layout_dirty_log(f.be, &entries, &covered), 0);
	ck_assert_uint_eq(entries, 0);
	ck_assert_uint_eq(covered, 0);
	/* nothing down: no probe at all */
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(atomic_load(&rc.calls), 2);

	fx_kill(&f, sh->other);
	same(f.be, oid, want, BIG);
	same(f.be, oid2, small, 5000);
	fx_close(&f);
	fx_fini(&f);
	free(want);
	free(small);
}
END_TEST

/* Another device answers at the address (an empty store: wiped, or a
 * replacement): reported once, left down, never written. */
START_TEST(test_watch_leaves_foreign_device_down)
{
	const struct shape *sh = &shapes[0];
	struct osdfs_layout_watch w = OSDFS_LAYOUT_WATCH_INIT;
	uint8_t *want = malloc(BIG), *small = malloc(5000);
	struct reopen_ctx rc = { .store = -1 };
	uint64_t oid, oid2;
	struct fx f;

	ck_assert(want && small);
	outage(&f, sh, want, small, sh->ndev + 1, &oid, &oid2);
	rc.f = &f;
	rc.store = (int)sh->ndev; /* never formatted */
	w.reopen = reopen_store;
	w.payload = &rc;
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(atomic_load(&rc.calls), 3);
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone), 1);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_STARTED, (int)sh->gone), 0);
	ck_assert(said(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone, "another device"));
	ck_assert_uint_eq(atomic_load(&f.writes[sh->ndev]), 0);
	same(f.be, oid, want, BIG);
	fx_close(&f);
	fx_fini(&f);
	free(want);
	free(small);
}
END_TEST

/* The same device back, but with auto-resync off it is only reported; and
 * when the log does not cover its outage (overflowed) it stays down for a
 * rebuild, reported once. */
START_TEST(test_watch_report_only_and_uncovered)
{
	const struct shape *sh = &shapes[0];
	struct osdfs_layout_watch w = OSDFS_LAYOUT_WATCH_INIT;
	uint8_t *want = malloc(BIG), *small = malloc(5000);
	struct reopen_ctx rc = { .store = -1 };
	uint64_t oid, oid2;
	unsigned long w0;
	struct fx f;

	ck_assert(want && small);
	outage(&f, sh, want, small, sh->ndev, &oid, &oid2);
	rc.f = &f;
	rc.store = (int)sh->gone;
	w.reopen = reopen_store;
	w.payload = &rc;
	w.report_only = 1;
	w0 = atomic_load(&f.writes[sh->gone]);
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone), 1);
	ck_assert(said(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone, "auto-resync off"));
	ck_assert_uint_eq(atomic_load(&f.writes[sh->gone]), w0);

	for (uint64_t k = 0; k <= OSDFS_LAYOUT_DIRTY_MAX; k++)
		ck_assert_int_eq(lay_dirty_note(osdfs_backend_impl(f.be), oid + 1 + k, 0, 0), 0);
	w.report_only = 0;
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_DOWN);
	ck_assert(said(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone, "stale"));
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone), 2);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_STARTED, (int)sh->gone), 0);
	ck_assert_uint_eq(atomic_load(&f.writes[sh->gone]), w0);
	same(f.be, oid, want, BIG);
	fx_close(&f);
	fx_fini(&f);
	free(want);
	free(small);
}
END_TEST

/* A resync that fails (the returned device refuses a write of the replay):
 * the slot is down again with a "resync failed" down event and the log
 * intact; while it keeps answering it is tried again after 1, 3, 7 and 15
 * skipped passes, 5 times in all, then only once it has been away and comes
 * back (a working connection), when it is resynced and every byte reads back
 * with another device gone. */
START_TEST(test_watch_failed_resync_retried_after_return)
{
	const struct shape *sh = &shapes[0];
	struct osdfs_layout_watch w = OSDFS_LAYOUT_WATCH_INIT;
	uint8_t *want = malloc(BIG), *small = malloc(5000);
	struct reopen_ctx rc = { .store = -1 };
	uint64_t oid, oid2, entries, covered;
	struct fx f;

	ck_assert(want && small);
	outage(&f, sh, want, small, sh->ndev, &oid, &oid2);
	rc.f = &f;
	rc.store = (int)sh->gone;
	rc.bad_oid = oid; /* in the band the log names: component row 16, region 1 */
	rc.bad_off = REGION + 100;
	w.reopen = reopen_store;
	w.payload = &rc;
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_STARTED, (int)sh->gone), 1);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_FINISHED, (int)sh->gone), 0);
	ck_assert(said(f.be, OSDFS_LAYOUT_EV_DOWN, (int)sh->gone, "resync failed"));
	ck_assert_int_eq(osdfs_layout_dirty_log(f.be, &entries, &covered), 0);
	ck_assert_uint_gt(entries, 0);
	ck_assert_uint_eq(covered, 1ull << sh->gone);
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0); /* not at the next pass */
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_STARTED, (int)sh->gone), 1);
	/* then after 1, 3, 7 and 15 skipped passes, 5 tries in all */
	for (unsigned pass = 0; pass < 40; pass++)
		ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_STARTED, (int)sh->gone), 5);
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_DOWN);

	fx_kill(&f, sh->gone); /* away */
	rc.store = -1;
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	rc.store = (int)sh->gone; /* back, working */
	rc.bad_oid = 0;
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 1);
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_UP);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_FINISHED, (int)sh->gone), 1);
	fx_kill(&f, sh->other);
	same(f.be, oid, want, BIG);
	same(f.be, oid2, small, 5000);
	fx_close(&f);
	fx_fini(&f);
	free(want);
	free(small);
}
END_TEST

/* Read-only: the device back is reported, not resynced; nothing written. */
START_TEST(test_watch_readonly_only_reports)
{
	const struct shape *sh = &shapes[0];
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	struct osdfs_layout_watch w = OSDFS_LAYOUT_WATCH_INIT;
	uint8_t *want = malloc(BIG), *small = malloc(5000);
	struct reopen_ctx rc = { .store = -1 };
	osdfs_backend *dev[FX_MAX];
	unsigned long w0 = 0, w1 = 0;
	uint64_t oid, oid2;
	char err[256] = "";
	struct fx f;

	ck_assert(want && small);
	outage(&f, sh, want, small, sh->ndev, &oid, &oid2);
	fx_close(&f);
	for (unsigned i = 0; i < sh->ndev; i++) {
		dev[i] = i == sh->gone ? NULL : fx_device(&f, i);
		w0 += atomic_load(&f.writes[i]);
	}
	cfg.version = OSDFS_LAYOUT_CONFIG_VERSION;
	cfg.readonly = 1;
	cfg.ndevices = sh->ndev;
	cfg.devices = dev;
	ck_assert_int_eq(osdfs_backend_layout_new(&f.be, &cfg, err, sizeof(err)), 0);
	rc.f = &f;
	rc.store = (int)sh->gone;
	w.reopen = reopen_store;
	w.payload = &rc;
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone), 1);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_STARTED, (int)sh->gone), 0);
	ck_assert(said(f.be, OSDFS_LAYOUT_EV_RETURNED, (int)sh->gone, "read-only"));
	same(f.be, oid2, small, 5000);
	fx_close(&f);
	for (unsigned i = 0; i < sh->ndev; i++)
		w1 += atomic_load(&f.writes[i]);
	ck_assert_uint_eq(w1, w0);
	fx_fini(&f);
	free(want);
	free(small);
}
END_TEST

/* Writes that go on during the background resync are not lost: a writer
 * keeps patching the big file (its expected bytes kept alongside) while the
 * watch thread brings the device back, and for a while after; then every
 * byte reads back with another device gone. */
struct writer {
	osdfs_backend *be;
	uint64_t oid;
	uint8_t *want;
	atomic_int stop;
	unsigned writes, during; /* all, and those while the slot was rebuilding */
	unsigned slot;
};

static void *writer_main(void *arg)
{
	struct writer *wr = arg;
	uint8_t patch[3000];
	uint64_t x = 12345;

	while (!atomic_load(&wr->stop) || wr->writes < 20) {
		uint64_t off;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		off = (x >> 20) % (BIG - sizeof(patch));
		pattern(patch, sizeof(patch), (unsigned)wr->writes);
		wr->during += state_of(wr->be, wr->slot) == OSDFS_LAYOUT_DEV_REBUILDING;
		put(wr->be, wr->oid, off, patch, sizeof(patch));
		memcpy(wr->want + off, patch, sizeof(patch));
		wr->writes++;
	}
	return NULL;
}

START_TEST(test_watch_resync_keeps_concurrent_writes)
{
	const struct shape *sh = &shapes[_i];
	struct osdfs_layout_watch w = OSDFS_LAYOUT_WATCH_INIT;
	uint8_t *want = malloc(BIG), *small = malloc(5000), patch[512];
	struct reopen_ctx rc = { .store = -1 };
	struct writer wr = { 0 };
	uint64_t oid, oid2;
	pthread_t th;
	struct fx f;

	ck_assert(want && small);
	outage(&f, sh, want, small, sh->ndev, &oid, &oid2);
	/* dirty regions all over the file: the resync takes a while */
	pattern(patch, sizeof(patch), 55);
	for (uint64_t off = 0; off + sizeof(patch) < BIG; off += REGION / 2) {
		put(f.be, oid, off, patch, sizeof(patch));
		memcpy(want + off, patch, sizeof(patch));
	}
	rc.f = &f;
	rc.store = (int)sh->gone;
	w.reopen = reopen_store;
	w.payload = &rc;
	w.interval_ms = 100;
	wr.be = f.be;
	wr.oid = oid;
	wr.want = want;
	wr.slot = sh->gone;
	{
		struct osdfs_layout_watch bad = w;

		bad.interval_ms = 99; /* below the floor */
		ck_assert_int_eq(osdfs_layout_watch_start(f.be, &bad), -EINVAL);
		bad = w;
		bad.version = 2;
		ck_assert_int_eq(osdfs_layout_watch_start(f.be, &bad), -EINVAL);
		ck_assert_int_eq(osdfs_layout_watch_once(NULL, &w), -EINVAL);
	}
	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &wr), 0);
	ck_assert_int_eq(osdfs_layout_watch_start(f.be, &w), 0);
	ck_assert_int_eq(osdfs_layout_watch_start(f.be, &w), -EBUSY);
	for (int k = 0; k < 6000 && state_of(f.be, sh->gone) != OSDFS_LAYOUT_DEV_UP; k++) {
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL); /* polled, bounded: 60 s */
	}
	ck_assert_int_eq(state_of(f.be, sh->gone), OSDFS_LAYOUT_DEV_UP);
	atomic_store(&wr.stop, 1);
	pthread_join(th, NULL);
	osdfs_layout_watch_stop(f.be);
	printf("watch: %s: %u writes beside the return, %u while resyncing\n", sh->map, wr.writes,
	       wr.during);
	ck_assert_int_eq(count_events(f.be, OSDFS_LAYOUT_EV_RESYNC_FINISHED, (int)sh->gone), 1);
	fx_kill(&f, sh->other);
	same(f.be, oid, want, BIG);
	same(f.be, oid2, small, 5000);
	fx_close(&f);
	fx_fini(&f);
	free(want);
	free(small);
}
END_TEST

/* ---- a device that crashes with a volatile cache ---- */

#define NFILES 12
#define DURABLE 4 /* files f0..f3 synced before the crash; the rest are not */

static void file_is(osdfs *fs, uint64_t ino, const uint8_t *want, size_t len, const char *what)
{
	uint8_t *got = malloc(len + 1);
	osdfs_file *fh;
	ssize_t n;
	size_t bad = 0, first = 0;

	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(osdfs_open(fs, ino, O_RDONLY, &fh), 0);
	n = osdfs_read(fs, fh, got, len + 1, 0);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	for (size_t i = 0; n == (ssize_t)len && i < len; i++)
		if (got[i] != want[i] && bad++ == 0)
			first = i;
	ck_assert_msg(n == (ssize_t)len && bad == 0,
		      "%s: ino %llu (oid %% 4 = %llu): %zd bytes read of %zu, %zu differ from %zu",
		      what, (unsigned long long)ino,
		      (unsigned long long)((OSDFS__OID_BASE + ino) % 4), n, len, bad, first);
	free(got);
}

/* Write @p len bytes of @p data at @p off of file @p ino, then its first
 * byte again (with write gathering, what is held goes out: acknowledged by
 * the devices, but not flushed). */
static void write_at(osdfs *fs, uint64_t ino, const uint8_t *data, uint64_t off, size_t len)
{
	osdfs_file *fh;

	ck_assert_int_eq(osdfs_open(fs, ino, O_RDWR, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, data, len, off), (ssize_t)len);
	ck_assert_int_eq(osdfs_write(fs, fh, data, 1, off), 1);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
}

/* What the crash cases below share: RAID 5 over 4 mem devices, mounted,
 * with a return watch that reopens device @p reopen_at (-1: none yet). */
struct crash_case {
	struct fx f;
	osdfs *fs;
	struct osdfs_layout_watch w;
	struct reopen_ctx rc;
	uint8_t data[NFILES + 1][70000];
	uint64_t ino[NFILES + 1];
	size_t len[NFILES + 1];
	int idle; /* restart case: the watch's pass notices the reset */
	int hold; /* f4..f11 written once: with gathering, held until a flush */
};

static void crash_open(struct crash_case *c, int gather, int reopen_at)
{
	struct osdfs_layout_watch w = OSDFS_LAYOUT_WATCH_INIT;

	setenv("OSDFS_LAYOUT_GATHER", gather ? "1" : "0", 1);
	fx_init(&c->f, 4);
	ck_assert_int_eq(fx_open_all(&c->f, "raid5,su=64K"), 0);
	ck_assert_int_eq(osdfs_mkfs(c->f.be, NULL), 0);
	c->fs = fx_mount(c->f.be);
	c->rc.f = &c->f;
	c->rc.store = reopen_at;
	atomic_store(&c->rc.calls, 0);
	c->w = w;
	c->w.reopen = reopen_store;
	c->w.payload = &c->rc;
}

/* f0..f3 written and synced (device 2's snapshot is taken then), f4..f11
 * written, f1 patched and f0 removed, none of it flushed; then @p lose
 * (device 2 loses what it had not made durable) and f12 is created. */
static void crash_write(struct crash_case *c, void (*lose)(struct crash_case *))
{
	struct osdfs_stat st;
	osdfs_file *fh;

	for (unsigned i = 0; i <= NFILES; i++) {
		char name[16];

		if (i == DURABLE) { /* what device 2 has made durable */
			ck_assert_int_eq(osdfs_sync(c->fs), 0);
			fx_snapshot(&c->f, 2);
		}
		if (i == NFILES) {
			uint8_t patch[4096];

			pattern(patch, sizeof(patch), 77);
			write_at(c->fs, c->ino[1], patch, 100, sizeof(patch));
			memcpy(c->data[1] + 100, patch, sizeof(patch));
			ck_assert_int_eq(osdfs_unlink(c->fs, OSDFS_ROOT_INO, "f0"), 0);
			lose(c);
		}
		c->len[i] = i < DURABLE ? (i + 1) * 7001 : (i - DURABLE + 1) * 5003;
		pattern(c->data[i], c->len[i], 100 + i);
		snprintf(name, sizeof(name), "f%u", i);
		ck_assert_int_eq(osdfs_create(c->fs, OSDFS_ROOT_INO, name, 0644, O_RDWR, NULL, &st,
					      &fh),
				 0);
		ck_assert_int_eq(osdfs_release(c->fs, fh), 0);
		c->ino[i] = st.ino;
		if (c->hold && i >= DURABLE && i < NFILES) {
			ck_assert_int_eq(osdfs_open(c->fs, c->ino[i], O_RDWR, &fh), 0);
			ck_assert_int_eq(osdfs_write(c->fs, fh, c->data[i], c->len[i], 0),
					 (ssize_t)c->len[i]);
			ck_assert_int_eq(osdfs_release(c->fs, fh), 0);
		} else {
			write_at(c->fs, c->ino[i], c->data[i], 0, c->len[i]);
		}
	}
}

/* Device 0 killed: every file reads back exactly, through the mount and
 * after a reopen without device 0, and f0 stays removed; then closed. */
static void crash_check_and_close(struct crash_case *c)
{
	int order[4] = { -1, 1, 2, 3 };
	struct osdfs_stat st;

	fx_kill(&c->f, 0);
	for (unsigned i = 1; i <= NFILES; i++)
		file_is(c->fs, c->ino[i], c->data[i], c->len[i], "mounted, device 0 killed");
	ck_assert_int_eq(osdfs_lookup(c->fs, OSDFS_ROOT_INO, "f0", &st), -ENOENT);
	ck_assert_int_eq(osdfs_unmount(c->fs), 0);
	fx_close(&c->f);
	ck_assert_int_eq(fx_open(&c->f, order, 4, NULL), 0);
	c->fs = fx_mount(c->f.be);
	for (unsigned i = 1; i <= NFILES; i++)
		file_is(c->fs, c->ino[i], c->data[i], c->len[i], "reopened without device 0");
	ck_assert_int_eq(osdfs_lookup(c->fs, OSDFS_ROOT_INO, "f0", &st), -ENOENT);
	ck_assert_int_eq(osdfs_unmount(c->fs), 0);
	fx_close(&c->f);
	fx_fini(&c->f);
	unsetenv("OSDFS_LAYOUT_GATHER");
}

static void crash_device_2(struct crash_case *c)
{
	fx_crash(&c->f, 2); /* back to its snapshot: the rest is lost */
}

/*
 * A device that crashes loses what it acknowledged since it last completed
 * a flush (a volatile cache: osd-targetd keeps its metadata log in memory
 * until a FLUSH, a disk its write cache), so the log must also name what
 * was written since the last flush when a device goes down. RAID 5 over 4
 * devices, mounted; _i: write gathering off (0) or on (1). Files f0..f3
 * are written and synced; then f4..f11 (small: every oid % 4) are made, f1
 * is patched and f0 removed, all acknowledged by every device, none
 * flushed. Device 2 crashes back to what it had made durable; the next
 * create finds it down; it comes back and the return watch resyncs it while
 * mounted; device 0 is killed: every file reads back exactly through the
 * mount and after a reopen without device 0, and f0 stays removed.
 */
START_TEST(test_watch_resync_after_volatile_crash)
{
	static struct crash_case c;

	crash_open(&c, _i, -1);
	crash_write(&c, crash_device_2);
	ck_assert_int_eq(state_of(c.f.be, 2), OSDFS_LAYOUT_DEV_DOWN);
	c.rc.store = 2;
	ck_assert_int_eq(osdfs_layout_watch_once(c.f.be, &c.w), 1);
	ck_assert_int_eq(state_of(c.f.be, 2), OSDFS_LAYOUT_DEV_UP);
	crash_check_and_close(&c);
}
END_TEST

static void restart_device_2(struct crash_case *c)
{
	fx_restart(&c->f, 2); /* back to its snapshot, still answering */
	ck_assert_int_eq(state_of(c->f.be, 2), OSDFS_LAYOUT_DEV_UP);
	if (c->idle) { /* the watch's pass notices, takes it down, resyncs */
		ck_assert_int_eq(osdfs_layout_watch_once(c->f.be, &c->w), 1);
		ck_assert_int_eq(state_of(c->f.be, 2), OSDFS_LAYOUT_DEV_UP);
	}
}

/*
 * A device that restarts within the initiator's failover window never fails
 * a command: the transport reconnects, and only the unit attention of its
 * new session (29h/00h or 01h, counted by osd_dev_reset_count()) says it may have
 * lost its volatile cache. The layout must take the changed reset count for
 * a crash. As test_watch_resync_after_volatile_crash, but device 2 restarts
 * back to what it had made durable without being killed; _i bit 0: write
 * gathering, bit 1: the reset is noticed by the return watch's pass while
 * the filesystem is idle (else by the commands of the next create). Either
 * way the slot goes down with the unflushed keys logged, the watch resyncs
 * it, and with device 0 killed every file reads back exactly.
 */
/* Device 2 restarts while gathering holds the rows of f4..f11, whose
 * creates it lost; the sync that writes them is the first to reach it. */
static void restart_then_sync(struct crash_case *c)
{
	fx_restart(&c->f, 2);
	ck_assert_int_eq(osdfs_sync(c->fs), 0);
}

/*
 * The first command a restarted device sees is a write (or set attributes)
 * to an object it lost the create of: its "no such object" is the answer of
 * a reset device, not of a removed file. It once failed the write on the
 * live devices' side too: gathering dropped the held bytes as those of a
 * removed file and the size stayed 0, so the resync rebuilt an empty
 * component (found by scaleout_resync_mounted_restart, f4 read back wrong).
 * Now the answer counts as the device's failure: the bytes stand on the
 * others and are resynced.
 */
START_TEST(test_reset_met_by_held_write)
{
	static struct crash_case c;

	setenv("OSDFS_LAYOUT_GATHER_AGE_MS", "600000", 1); /* held until the sync */
	crash_open(&c, 1, 2);
	c.hold = 1;
	crash_write(&c, restart_then_sync);
	ck_assert(said(c.f.be, OSDFS_LAYOUT_EV_DOWN, 2, "was reset (1 resets, 0 before)"));
	ck_assert_int_eq(state_of(c.f.be, 2), OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_int_eq(osdfs_layout_watch_once(c.f.be, &c.w), 1);
	ck_assert_int_eq(state_of(c.f.be, 2), OSDFS_LAYOUT_DEV_UP);
	crash_check_and_close(&c);
	unsetenv("OSDFS_LAYOUT_GATHER_AGE_MS");
}
END_TEST

START_TEST(test_reset_count_resyncs_restarted_device)
{
	static struct crash_case c;

	crash_open(&c, _i & 1, 2);
	c.idle = _i & 2;
	crash_write(&c, restart_device_2);
	ck_assert(said(c.f.be, OSDFS_LAYOUT_EV_DOWN, 2, "was reset (1 resets, 0 before)"));
	if (!c.idle) {
		ck_assert_int_eq(state_of(c.f.be, 2), OSDFS_LAYOUT_DEV_DOWN);
		ck_assert_int_eq(osdfs_layout_watch_once(c.f.be, &c.w), 1);
		ck_assert_int_eq(state_of(c.f.be, 2), OSDFS_LAYOUT_DEV_UP);
	}
	ck_assert_int_eq(atomic_load(&c.rc.calls), 0); /* resynced through its own backend */
	ck_assert_int_eq(osdfs_layout_watch_once(c.f.be, &c.w), 0); /* one reset, one resync */
	crash_check_and_close(&c);
}
END_TEST

/*
 * A component command reads its device's reset count twice, before and
 * after it runs: the count after is both what tells a reset during the
 * command and what is compared with the layout's last look, not read a
 * third time. RAID 1 on two devices: a write is one command on each, a
 * read one command on one of them.
 */
START_TEST(test_command_reads_reset_count_twice)
{
	static const uint64_t oid = 0x10123;
	uint8_t data[4096], got[4096];
	struct iovec iov = { data, sizeof(data) }, giov = { got, sizeof(got) };
	const struct osdfs_backend_ops *ops;
	unsigned long r0[2], w0[2], reads = 0, resets = 0;
	void *impl;
	struct fx f;

	memset(data, 0xA5, sizeof(data));
	fx_init(&f, 2);
	ck_assert_int_eq(fx_open_all(&f, "raid1"), 0);
	ops = osdfs_backend_ops_of(f.be);
	impl = osdfs_backend_impl(f.be);
	ck_assert_int_eq(ops->format(impl, 0), 0);
	ck_assert_int_eq(ops->create_class(impl, oid, OSDFS_OBJ_DATA, NULL, 0), 0);
	f.count_oid = oid;
	for (unsigned i = 0; i < 2; i++) {
		r0[i] = atomic_load(&f.reset_reads[i]);
		w0[i] = atomic_load(&f.oid_writes[i]);
	}
	ck_assert_int_eq(ops->write(impl, oid, 0, &iov, 1, NULL, 0), (ssize_t)sizeof(data));
	for (unsigned i = 0; i < 2; i++) {
		unsigned long w = atomic_load(&f.oid_writes[i]), r = atomic_load(&f.reset_reads[i]);

		ck_assert_uint_eq(w - w0[i], 1);
		ck_assert_uint_eq(r - r0[i], 2);
		r0[i] = r;
	}
	ck_assert_int_eq(ops->read(impl, oid, 0, &giov, 1), (ssize_t)sizeof(got));
	ck_assert(memcmp(got, data, sizeof(data)) == 0);
	for (unsigned i = 0; i < 2; i++) {
		reads += atomic_load(&f.oid_reads[i]);
		resets += atomic_load(&f.reset_reads[i]) - r0[i];
	}
	ck_assert_uint_eq(reads, 1);
	ck_assert_uint_eq(resets, 2);
	fx_close(&f);
	fx_fini(&f);
}
END_TEST

/* The return watch's pass reads each up device that counts resets once:
 * one that no longer answers (killed, nothing sent to it since) goes down
 * there as failed and, back, is resynced in a later pass; no reset event. */
START_TEST(test_watch_pass_finds_idle_device_gone)
{
	struct osdfs_layout_watch w = OSDFS_LAYOUT_WATCH_INIT;
	struct reopen_ctx rc = { .store = -1 };
	struct fx f;

	fx_init(&f, 4);
	ck_assert_int_eq(fx_open_all(&f, "raid5,su=64K"), 0);
	ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
	rc.f = &f;
	w.reopen = reopen_store;
	w.payload = &rc;
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(state_of(f.be, 1), OSDFS_LAYOUT_DEV_UP);
	fx_kill(&f, 1);
	ck_assert_int_eq(state_of(f.be, 1), OSDFS_LAYOUT_DEV_UP); /* nothing sent to it yet */
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 0);
	ck_assert_int_eq(state_of(f.be, 1), OSDFS_LAYOUT_DEV_DOWN);
	ck_assert(said(f.be, OSDFS_LAYOUT_EV_DOWN, 1, "failed"));
	ck_assert(!said(f.be, OSDFS_LAYOUT_EV_DOWN, 1, "was reset"));
	rc.store = 1; /* back: the same store through a new backend */
	ck_assert_int_eq(osdfs_layout_watch_once(f.be, &w), 1);
	ck_assert_int_eq(state_of(f.be, 1), OSDFS_LAYOUT_DEV_UP);
	fx_close(&f);
	fx_fini(&f);
}
END_TEST

static int create_meta(osdfs_backend *be, uint64_t oid)
{
	return osdfs_backend_ops_of(be)->create_class(osdfs_backend_impl(be), oid, OSDFS_OBJ_META,
						      NULL, 0);
}

/* The unflushed keys stay bounded without any flush from the caller: the
 * change that brings them to LAY_UNFLUSHED_FLUSH flushes every device, which
 * drops those noted before (its own key is noted again after it); a flush of
 * everything drops them all. */
START_TEST(test_unflushed_keys_bounded)
{
	struct fx f;
	struct lay *L;
	const struct osdfs_backend_ops *ops;
	unsigned long before[4];
	uint64_t base = OSDFS__OID_BASE + 100000;

	fx_init(&f, 4);
	ck_assert_int_eq(fx_open_all(&f, "raid5,su=64K"), 0);
	ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
	ops = osdfs_backend_ops_of(f.be);
	L = osdfs_backend_impl(f.be);
	ck_assert_int_eq(ops->flush(osdfs_backend_impl(f.be), 0), 0);
	ck_assert_uint_eq(L->dirty.un, 0);
	for (unsigned i = 0; i < 4; i++)
		before[i] = atomic_load(&f.flushes[i]);
	for (unsigned k = 0; k < LAY_UNFLUSHED_FLUSH - 1; k++)
		ck_assert_int_eq(create_meta(f.be, base + k),
				 0);
	ck_assert_uint_eq(L->dirty.un, LAY_UNFLUSHED_FLUSH - 1); /* one key each */
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(atomic_load(&f.flushes[i]), before[i]);
	/* the key that reaches the bound: every device flushed, the keys dropped */
	ck_assert_int_eq(create_meta(f.be, base + LAY_UNFLUSHED_FLUSH), 0);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(atomic_load(&f.flushes[i]), before[i] + 1);
	ck_assert_uint_eq(L->dirty.un, 1); /* that create's own key, noted again after it */
	ck_assert_int_eq(create_meta(f.be, base + LAY_UNFLUSHED_FLUSH + 1), 0);
	ck_assert_uint_eq(L->dirty.un, 2);
	ck_assert_int_eq(ops->flush(osdfs_backend_impl(f.be), 0), 0);
	ck_assert_uint_eq(L->dirty.un, 0);
	fx_close(&f);
	fx_fini(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("layout_resync");
	TCase *tc = tcase_create("resync");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_resync_copies_only_dirty_regions, 0,
			    (int)(sizeof(shapes) / sizeof(shapes[0])));
	tcase_add_test(tc, test_resync_follows_outage_writes);
	tcase_add_test(tc, test_resync_after_failure_during_write);
	tcase_add_test(tc, test_resync_copies_new_attrs);
	tcase_add_test(tc, test_resync_refused_when_not_covered);
	tcase_add_test(tc, test_dirty_log_format);
	tcase_add_test(tc, test_unflushed_keys_bounded);
	suite_add_tcase(s, tc);
	tc = tcase_create("watch");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_watch_resyncs_returned_device, 0,
			    (int)(sizeof(shapes) / sizeof(shapes[0])));
	tcase_add_test(tc, test_watch_leaves_foreign_device_down);
	tcase_add_test(tc, test_watch_report_only_and_uncovered);
	tcase_add_test(tc, test_watch_failed_resync_retried_after_return);
	tcase_add_test(tc, test_watch_readonly_only_reports);
	tcase_add_loop_test(tc, test_watch_resync_keeps_concurrent_writes, 0,
			    (int)(sizeof(shapes) / sizeof(shapes[0])));
	tcase_add_loop_test(tc, test_watch_resync_after_volatile_crash, 0, 2);
	tcase_add_loop_test(tc, test_reset_count_resyncs_restarted_device, 0, 4);
	tcase_add_test(tc, test_reset_met_by_held_write);
	tcase_add_test(tc, test_watch_pass_finds_idle_device_gone);
	tcase_add_test(tc, test_command_reads_reset_count_twice);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
