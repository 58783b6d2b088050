/*
 * Self-healing reads and scrub (docs/layout.md "Medium errors"): a unit
 * whose read fails with -EIO while its device still answers is rebuilt from
 * mirrors or parity, returned, rewritten and counted; the device stays up.
 * Scrub finds and repairs the same from every component, tells a mismatch
 * it can attribute (a majority, RAID 6's P and Q) from one it cannot
 * (reported, left alone), and writes nothing in a dry run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <osdfs/fsck.h>
#include <osdfs/osdfs.h>
#include <stdio.h>

#include "core/format.h"
#include "layout/layout_int.h"
#include "layout_fixture.h"

#define NDEV 4
#define FSIZE 200000u
#define SU 8192u

static void pattern(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 13 + i / 511 + 1);
}

/* A fresh filesystem with one file of FSIZE bytes; returns its object id. */
static uint64_t make_fs(struct fx *f, const char *map)
{
	uint8_t *buf = malloc(FSIZE);
	struct osdfs_stat st;
	osdfs_file *fh;
	osdfs *fs;

	ck_assert_ptr_nonnull(buf);
	pattern(buf, FSIZE);
	fx_init(f, NDEV);
	ck_assert_int_eq(fx_open_all(f, map), 0);
	ck_assert_int_eq(osdfs_mkfs(f->be, NULL), 0);
	fs = fx_mount(f->be);
	ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, "f", 0644, O_RDWR, NULL, &st, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, buf, FSIZE, 0), (ssize_t)FSIZE);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	free(buf);
	return OSDFS__OID_BASE + st.ino;
}

/* Read the whole file through the layout and compare with the pattern. */
static ssize_t read_file(struct fx *f, uint64_t oid, int expect_ok)
{
	uint8_t *want = malloc(FSIZE), *got = calloc(1, FSIZE);
	struct iovec iov = { got, FSIZE };
	ssize_t n;

	ck_assert(want && got);
	pattern(want, FSIZE);
	n = osdfs_backend_ops_of(f->be)->read(osdfs_backend_impl(f->be), oid, 0, &iov, 1);
	if (expect_ok) {
		ck_assert_int_eq(n, FSIZE);
		ck_assert(memcmp(got, want, FSIZE) == 0);
	}
	free(want);
	free(got);
	return n;
}

static struct osdfs_layout_device dev(struct fx *f, unsigned s)
{
	struct osdfs_layout_device d;

	ck_assert_int_eq(osdfs_layout_device(f->be, s, &d), 0);
	return d;
}

static int has_event(struct fx *f, enum osdfs_layout_event_kind k, int slot, uint64_t oid)
{
	struct osdfs_layout_event ev[32];
	int n = osdfs_layout_events(f->be, ev, 32);

	for (int i = 0; i < n; i++)
		if (ev[i].kind == k && ev[i].slot == slot && ev[i].oid == oid && ev[i].time > 0 &&
		    ev[i].reason[0])
			return 1;
	return 0;
}

static void scrub_clean(struct fx *f)
{
	struct osdfs_layout_scrub_stats st;

	ck_assert_int_eq(osdfs_layout_scrub(f->be, 0, &st, NULL, NULL), 0);
	ck_assert_uint_gt(st.objects, 1);
	ck_assert_uint_gt(st.rows, FSIZE / SU / NDEV);
	ck_assert_uint_eq(st.medium, 0);
	ck_assert_uint_eq(st.mismatches, 0);
	ck_assert_uint_eq(st.repaired, 0);
	ck_assert_uint_eq(st.unrepaired, 0);
}

/* Damage [off, off + len) of component @p comp (its slot is (oid + comp) % NDEV). */
static unsigned damage(struct fx *f, uint64_t oid, unsigned comp, uint64_t off, uint64_t len,
		       int fail_writes, uint8_t *orig)
{
	unsigned s = (unsigned)((oid + comp) % NDEV);

	ck_assert_int_eq(fx_raw_read(f, s, oid, off, orig, len), (ssize_t)len);
	fx_bad_range(f, s, oid, off, len, fail_writes);
	return s;
}

/* The component range reads back as it was before the damage. */
static void check_healed(struct fx *f, unsigned s, uint64_t oid, uint64_t off, uint64_t len,
			 const uint8_t *orig)
{
	uint8_t *b = malloc(len);

	ck_assert_ptr_nonnull(b);
	ck_assert(!fx_bad_left(f, s));
	ck_assert_int_eq(fx_raw_read(f, s, oid, off, b, len), (ssize_t)len);
	ck_assert(memcmp(b, orig, len) == 0);
	ck_assert_int_eq(dev(f, s).state, OSDFS_LAYOUT_DEV_UP);
	ck_assert_uint_ge(dev(f, s).repairs, 1);
	ck_assert_uint_ge(dev(f, s).medium_errors, 1);
	ck_assert(has_event(f, OSDFS_LAYOUT_EV_REPAIRED, (int)s, oid));
	free(b);
}

/* One (RAID 1, 5) or two (RAID 6) components of row 3 damaged: the read
 * returns the file, the units are rewritten, counted, kept over a reopen,
 * and scrub finds nothing afterwards. */
static void read_repair(const char *map, unsigned nbad, unsigned c0, unsigned c1)
{
	const unsigned comps[2] = { c0, c1 };
	uint8_t orig[2][3000];
	unsigned slot[2];
	struct fx f;
	uint64_t oid = make_fs(&f, map);

	for (unsigned i = 0; i < nbad; i++)
		slot[i] = damage(&f, oid, comps[i], 3 * SU + 1000, 3000, 0, orig[i]);
	read_file(&f, oid, 1);
	for (unsigned i = 0; i < nbad; i++)
		check_healed(&f, slot[i], oid, 3 * SU + 1000, 3000, orig[i]);
	if (nbad == 1) /* one failed read; the piece read again alone is not counted */
		ck_assert_uint_eq(dev(&f, slot[0]).medium_errors, 1);
	for (unsigned s = 0; s < NDEV; s++)
		ck_assert_uint_eq(dev(&f, s).errors, 0);
	scrub_clean(&f);
	/* the counters and events live on the devices */
	fx_close(&f);
	ck_assert_int_eq(fx_open_all(&f, NULL), 0);
	for (unsigned i = 0; i < nbad; i++) {
		ck_assert_uint_ge(dev(&f, slot[i]).repairs, 1);
		ck_assert(has_event(&f, OSDFS_LAYOUT_EV_REPAIRED, (int)slot[i], oid));
	}
	read_file(&f, oid, 1);
	fx_fini(&f);
}

START_TEST(test_read_repair_raid1)
{
	read_repair("raid1,su=8K", 1, 1, 0); /* row 3 reads copy 1 first */
}
END_TEST

START_TEST(test_read_repair_raid5)
{
	read_repair("raid5,su=8K", 1, 1, 0);
}
END_TEST

START_TEST(test_read_repair_raid6_two)
{
	read_repair("raid6,su=8K", 2, 2, 3); /* row 3: P, Q at 0, 1 */
}
END_TEST

/* RAID 0 has nothing to rebuild from: -EIO, the device stays up, the event says so. */
START_TEST(test_raid0_medium_error_is_eio)
{
	uint8_t orig[512];
	struct fx f;
	uint64_t oid = make_fs(&f, "raid0,su=8K");
	unsigned s = damage(&f, oid, 2, SU, 512, 0, orig);

	ck_assert_int_eq(read_file(&f, oid, 0), -EIO);
	ck_assert_int_eq(dev(&f, s).state, OSDFS_LAYOUT_DEV_UP);
	ck_assert_uint_eq(dev(&f, s).repairs, 0);
	ck_assert(has_event(&f, OSDFS_LAYOUT_EV_UNRECOVERABLE, -1, oid));
	ck_assert(fx_bad_left(&f, s));
	fx_fini(&f);
}
END_TEST

/* A rewrite that fails: the read is still right; the device failed a write,
 * so it is marked down (as md does) and the failure is counted. */
START_TEST(test_failed_rewrite_marks_down)
{
	uint8_t orig[4096];
	struct fx f;
	uint64_t oid = make_fs(&f, "raid5,su=8K");
	unsigned s = damage(&f, oid, 0, 0, 4096, 1, orig);

	read_file(&f, oid, 1);
	ck_assert_int_eq(dev(&f, s).state, OSDFS_LAYOUT_DEV_DOWN);
	ck_assert_uint_eq(dev(&f, s).repairs, 0);
	ck_assert_uint_ge(dev(&f, s).unrepaired, 1);
	ck_assert(has_event(&f, OSDFS_LAYOUT_EV_REPAIR_FAILED, (int)s, oid));
	read_file(&f, oid, 1); /* degraded now */
	fx_fini(&f);
}
END_TEST

/* Read-only: the right bytes, nothing written, the device up, counted unrepaired. */
START_TEST(test_readonly_reads_without_rewrite)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	osdfs_backend *devs[NDEV];
	uint8_t orig[2048];
	char err[256];
	struct fx f;
	uint64_t oid = make_fs(&f, "raid6,su=8K");
	unsigned s;

	fx_close(&f);
	for (unsigned i = 0; i < NDEV; i++)
		devs[i] = fx_device(&f, i);
	cfg.ndevices = NDEV;
	cfg.devices = devs;
	cfg.readonly = 1;
	ck_assert_int_eq(osdfs_backend_layout_new(&f.be, &cfg, err, sizeof(err)), 0);
	s = damage(&f, oid, 0, 5 * SU, 2048, 0, orig); /* row 5: data */
	read_file(&f, oid, 1);
	ck_assert(fx_bad_left(&f, s));
	ck_assert_int_eq(dev(&f, s).state, OSDFS_LAYOUT_DEV_UP);
	ck_assert_uint_ge(dev(&f, s).unrepaired, 1);
	ck_assert(has_event(&f, OSDFS_LAYOUT_EV_REPAIR_FAILED, (int)s, oid));
	fx_fini(&f);
}
END_TEST

/* Scrub finds a medium error nobody read: a dry run reports it and writes
 * nothing, a real run repairs it, the next is clean. */
START_TEST(test_scrub_repairs_medium_error)
{
	struct osdfs_layout_scrub_stats st;
	uint8_t orig[SU];
	struct fx f;
	uint64_t oid = make_fs(&f, "raid5,su=8K");
	unsigned s = damage(&f, oid, 2, 2 * SU, SU, 0, orig);

	ck_assert_int_eq(osdfs_layout_scrub(f.be, OSDFS_LAYOUT_SCRUB_DRY_RUN, &st, NULL, NULL),
			 -EIO);
	ck_assert_uint_eq(st.medium, 1);
	ck_assert_uint_eq(st.repaired, 0);
	ck_assert_uint_eq(st.unrepaired, 1);
	ck_assert(fx_bad_left(&f, s));
	ck_assert_int_eq(osdfs_layout_scrub(f.be, 0, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.medium, 1);
	ck_assert_uint_eq(st.repaired, 1);
	ck_assert_uint_eq(st.unrepaired, 0);
	check_healed(&f, s, oid, 2 * SU, SU, orig);
	scrub_clean(&f);
	read_file(&f, oid, 1);
	fx_fini(&f);
}
END_TEST

/* Silent corruption (no read error): 64 bytes of component @p comp flipped. */
static unsigned corrupt(struct fx *f, uint64_t oid, unsigned comp, uint64_t off, uint8_t *orig)
{
	unsigned s = (unsigned)((oid + comp) % NDEV);
	uint8_t b[64];

	ck_assert_int_eq(fx_raw_read(f, s, oid, off, orig, 64), 64);
	for (unsigned i = 0; i < 64; i++)
		b[i] = (uint8_t)(orig[i] ^ 0xFF);
	fx_raw_write(f, s, oid, off, b, 64);
	return s;
}

/* RAID 6: P and Q tell which unit is wrong: scrub repairs it. */
START_TEST(test_scrub_raid6_locates_mismatch)
{
	struct osdfs_layout_scrub_stats st;
	uint8_t orig[64], now[64];
	struct fx f;
	uint64_t oid = make_fs(&f, "raid6,su=8K");
	unsigned s = corrupt(&f, oid, 1, 4 * SU + 100, orig);

	ck_assert_int_eq(osdfs_layout_scrub(f.be, 0, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.mismatches, 1);
	ck_assert_uint_eq(st.repaired, 1);
	ck_assert_int_eq(fx_raw_read(&f, s, oid, 4 * SU + 100, now, 64), 64);
	ck_assert(memcmp(now, orig, 64) == 0);
	scrub_clean(&f);
	fx_fini(&f);
}
END_TEST

/* RAID 5 parity and two mirror copies cannot say which side is wrong:
 * reported, nothing written. */
static void undeterminable(const char *map)
{
	struct osdfs_layout_scrub_stats st;
	uint8_t orig[64], now[64];
	struct fx f;
	uint64_t oid = make_fs(&f, map);
	unsigned s = corrupt(&f, oid, 1, 4 * SU + 100, orig);

	ck_assert_int_eq(osdfs_layout_scrub(f.be, 0, &st, NULL, NULL), -EIO);
	ck_assert_uint_eq(st.mismatches, 1);
	ck_assert_uint_eq(st.repaired, 0);
	ck_assert_uint_eq(st.unrepaired, 1);
	ck_assert_int_eq(fx_raw_read(&f, s, oid, 4 * SU + 100, now, 64), 64);
	ck_assert(memcmp(now, orig, 64) != 0); /* left as found */
	ck_assert(has_event(&f, OSDFS_LAYOUT_EV_MISMATCH, -1, oid));
	fx_fini(&f);
}

START_TEST(test_scrub_raid5_mismatch_reported)
{
	undeterminable("raid5,su=8K");
}
END_TEST

START_TEST(test_scrub_raid1_mismatch_reported)
{
	undeterminable("raid1,su=8K");
}
END_TEST

static int count_events(struct fx *f, enum osdfs_layout_event_kind k, int slot)
{
	struct osdfs_layout_event ev[32];
	int n = osdfs_layout_events(f->be, ev, 32), c = 0;

	for (int i = 0; i < n; i++)
		c += ev[i].kind == k && ev[i].slot == slot;
	return c;
}

static struct {
	int calls, last_kind, last_severity;
} seen;

static void on_event(const struct osdfs_layout_event *e, void *payload)
{
	ck_assert_ptr_eq(payload, &seen);
	seen.calls++;
	seen.last_kind = e->kind;
	seen.last_severity = e->severity;
}

/* Device events over opens: missing (down), present again (returned and
 * resynced, once), failing while open (down, to the handler too), replaced
 * and rebuilt (up). */
START_TEST(test_device_events)
{
	const int without2[NDEV] = { 0, 1, -1, 3 };
	struct fx f;
	uint64_t oid = make_fs(&f, "raid5,su=8K");
	struct osdfs_layout_rebuild_stats rs;

	fx_close(&f);
	ck_assert_int_eq(fx_open(&f, without2, NDEV, NULL), 0);
	ck_assert_int_eq(count_events(&f, OSDFS_LAYOUT_EV_DOWN, 2), 1);
	fx_close(&f);
	/* back: returned, resynced (started, finished), up; once */
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(fx_open_all(&f, NULL), 0);
		ck_assert_int_eq(dev(&f, 2).state, OSDFS_LAYOUT_DEV_UP);
		ck_assert_int_eq(count_events(&f, OSDFS_LAYOUT_EV_RETURNED, 2), 1);
		ck_assert_int_eq(count_events(&f, OSDFS_LAYOUT_EV_RESYNC_STARTED, 2), 1);
		ck_assert_int_eq(count_events(&f, OSDFS_LAYOUT_EV_RESYNC_FINISHED, 2), 1);
		fx_close(&f);
	}
	ck_assert_str_eq(osdfs_layout_event_name(OSDFS_LAYOUT_EV_RESYNC_FINISHED),
			 "resync-finished");
	/* a new device in its place: rebuilt, up */
	ck_assert_int_eq(fx_open(&f, without2, NDEV, NULL), 0);
	fx_close(&f);
	ck_assert_int_eq(fx_open(&f, (const int[]){ 0, 1, -1, 3, 4 }, NDEV + 1, NULL), 0);
	ck_assert_int_eq(osdfs_layout_replace(f.be, 2, NULL, NULL), 0);
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, 2, &rs, NULL, NULL), 0);
	ck_assert_int_eq(count_events(&f, OSDFS_LAYOUT_EV_UP, 2), 1);
	ck_assert_int_eq(osdfs_layout_set_event_handler(f.be, on_event, &seen), 0);
	memset(&seen, 0, sizeof(seen));
	fx_kill(&f, 3);
	read_file(&f, oid, 1); /* degraded */
	ck_assert_int_eq(seen.calls, 1);
	ck_assert_int_eq(seen.last_kind, OSDFS_LAYOUT_EV_DOWN);
	ck_assert_int_eq(seen.last_severity, 3); /* LOG_ERR */
	ck_assert_int_eq(count_events(&f, OSDFS_LAYOUT_EV_DOWN, 3), 1);
	ck_assert_str_eq(osdfs_layout_event_name(OSDFS_LAYOUT_EV_RETURNED), "returned");
	ck_assert_str_eq(osdfs_layout_event_name(0), "?");
	fx_fini(&f);
}
END_TEST

/* The same unrecoverable read again and again is one event, so that the
 * other events stay in the 32 kept. */
START_TEST(test_repeated_event_once)
{
	uint8_t orig[512];
	struct fx f;
	uint64_t oid = make_fs(&f, "raid0,su=8K");

	damage(&f, oid, 2, SU, 512, 0, orig);
	for (int i = 0; i < 40; i++)
		ck_assert_int_eq(read_file(&f, oid, 0), -EIO);
	ck_assert_int_eq(count_events(&f, OSDFS_LAYOUT_EV_UNRECOVERABLE, -1), 1);
	fx_fini(&f);
}
END_TEST

/* Metadata (mirrored whole): a medium error on the root directory's first
 * copy is read from the next and rewritten; scrub repairs one found on a
 * copy nobody read; silently differing copies: a majority (RAID 6: 3 copies)
 * repairs, 2 copies (RAID 5) are reported and left. */
START_TEST(test_metadata_heal)
{
	uint64_t root = OSDFS__OID_BASE + OSDFS_ROOT_INO, size;
	const struct osdfs_backend_ops *ops;
	struct osdfs_layout_scrub_stats st;
	uint8_t want[4096], got[4096], orig[512];
	struct iovec iov = { got, sizeof(got) };
	unsigned first = (unsigned)(root % NDEV);
	struct fx f;

	make_fs(&f, "raid5,su=8K");
	ops = osdfs_backend_ops_of(f.be);
	ck_assert_int_eq(ops->size(osdfs_backend_impl(f.be), root, &size), 0);
	ck_assert_uint_ge(size, sizeof(want));
	ck_assert_int_eq(fx_raw_read(&f, first, root, 0, want, sizeof(want)), sizeof(want));
	fx_bad_range(&f, first, root, 0, 4096, 0);
	ck_assert_int_eq(ops->read(osdfs_backend_impl(f.be), root, 0, &iov, 1), sizeof(got));
	ck_assert(memcmp(got, want, sizeof(got)) == 0);
	ck_assert(!fx_bad_left(&f, first));
	ck_assert_int_eq(fx_raw_read(&f, first, root, 0, got, sizeof(got)), sizeof(got));
	ck_assert(memcmp(got, want, sizeof(got)) == 0);
	ck_assert_uint_eq(dev(&f, first).repairs, 1);
	ck_assert_int_eq(dev(&f, first).state, OSDFS_LAYOUT_DEV_UP);
	/* the second copy, which reads never reach while the first is good */
	fx_bad_range(&f, (first + 1) % NDEV, root, 512, 512, 0);
	ck_assert_int_eq(osdfs_layout_scrub(f.be, 0, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.medium, 1);
	ck_assert_uint_eq(st.repaired, 1);
	ck_assert(!fx_bad_left(&f, (first + 1) % NDEV));
	scrub_clean(&f);
	/* two copies that differ: reported, left */
	corrupt(&f, root, 1, 100, orig);
	ck_assert_int_eq(osdfs_layout_scrub(f.be, 0, &st, NULL, NULL), -EIO);
	ck_assert_uint_eq(st.mismatches, 1);
	ck_assert_uint_eq(st.repaired, 0);
	ck_assert(has_event(&f, OSDFS_LAYOUT_EV_MISMATCH, -1, root));
	fx_fini(&f);

	make_fs(&f, "raid6,su=8K"); /* 3 copies of metadata: a majority */
	corrupt(&f, root, 2, 100, orig);
	ck_assert_int_eq(osdfs_layout_scrub(f.be, 0, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.mismatches, 1);
	ck_assert_uint_eq(st.repaired, 1);
	ck_assert_int_eq(fx_raw_read(&f, (first + 2) % NDEV, root, 100, got, 64), 64);
	ck_assert(memcmp(got, orig, 64) == 0);
	scrub_clean(&f);
	fx_fini(&f);
}
END_TEST

static char fsck_msg[768];
static unsigned fsck_data_io;

static void on_finding(enum osdfs_fsck_kind kind, const char *msg, void *payload)
{
	(void)payload;
	if (kind != OSDFS_FSCK_DATA_IO)
		return;
	fsck_data_io++;
	snprintf(fsck_msg, sizeof(fsck_msg), "%s", msg);
}

/* fsck --verify-data: an unreadable range is reported by path; what the
 * layout rebuilds from redundancy is not (and gets repaired). */
START_TEST(test_fsck_verify_data)
{
	struct osdfs_fsck_options fo = OSDFS_FSCK_OPTIONS_INIT;
	struct osdfs_fsck_report rep;
	uint8_t orig[512];
	struct fx f;
	uint64_t oid = make_fs(&f, "raid0,su=8K");
	unsigned s = damage(&f, oid, 1, 4 * SU, 512, 0, orig);

	fo.cb = on_finding;
	fo.verify_data = 1;
	fsck_data_io = 0;
	ck_assert_int_eq(osdfs_fsck(f.be, &fo, &rep), -EUCLEAN);
	ck_assert_uint_eq(fsck_data_io, 1);
	ck_assert_uint_eq(rep.found[OSDFS_FSCK_DATA_IO], 1);
	ck_assert_uint_eq(rep.unrepaired, 1);
	ck_assert_uint_eq(rep.data_bytes, 0); /* the file is one 1 MiB chunk */
	ck_assert_msg(strncmp(fsck_msg, "/f (inode ", 10) == 0 &&
		      strstr(fsck_msg, "Input/output error reading bytes 0-199999"), "%s", fsck_msg);
	fo.verify_data = 0; /* without the option the data is not read */
	ck_assert_int_eq(osdfs_fsck(f.be, &fo, &rep), 0);
	ck_assert(fx_bad_left(&f, s)); /* RAID 0: nothing to rebuild it from */
	fx_fini(&f);

	oid = make_fs(&f, "raid5,su=8K");
	s = damage(&f, oid, 1, 4 * SU, 512, 0, orig);
	fo.verify_data = 1;
	fsck_data_io = 0;
	ck_assert_int_eq(osdfs_fsck(f.be, &fo, &rep), 0);
	ck_assert_uint_eq(fsck_data_io, 0);
	ck_assert_uint_eq(rep.data_bytes, FSIZE);
	ck_assert(!fx_bad_left(&f, s)); /* read, rebuilt and rewritten */
	fx_fini(&f);
}
END_TEST

/* Other shapes: mirrored parity groups (2 copies that differ are settled by
 * parity), and two groups (depth 2) with a medium error in the second. */
START_TEST(test_scrub_shapes)
{
	struct osdfs_layout_scrub_stats st;
	uint8_t orig[SU], now[64];
	struct fx f;
	uint64_t oid = make_fs(&f, "raid5,su=8K,width=2,mirrors=1");
	unsigned s = corrupt(&f, oid, 1, 4 * SU + 100, orig); /* row 4: data, copy 1 */

	ck_assert_int_eq(osdfs_layout_scrub(f.be, 0, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.mismatches, 1);
	ck_assert_uint_eq(st.repaired, 1);
	ck_assert_int_eq(fx_raw_read(&f, s, oid, 4 * SU + 100, now, 64), 64);
	ck_assert(memcmp(now, orig, 64) == 0);
	scrub_clean(&f);
	read_file(&f, oid, 1);
	fx_fini(&f);

	oid = make_fs(&f, "raid5,su=8K,width=2,depth=2");
	s = damage(&f, oid, 3, SU, SU, 0, orig); /* group 1, its first row */
	read_file(&f, oid, 1);
	check_healed(&f, s, oid, SU, SU, orig);
	scrub_clean(&f);
	s = damage(&f, oid, 2, 2 * SU, 4096, 0, orig);
	ck_assert_int_eq(osdfs_layout_scrub(f.be, 0, &st, NULL, NULL), 0);
	ck_assert_uint_eq(st.repaired, 1);
	check_healed(&f, s, oid, 2 * SU, 4096, orig);
	fx_fini(&f);
}
END_TEST

/* The health record: encode/decode round trip, known bytes, bad input refused. */
START_TEST(test_health_record)
{
	struct lay_health h = { .generation = 7, .ndev = 2, .nev = 1 }, d;
	uint8_t buf[LAY_HEALTH_HDR + 2 * LAY_HEALTH_SLOT + LAY_HEALTH_EVENT + 4];
	static const uint8_t head[24] = { 'O', 'S', 'D', 'F', 'S', 'H', 'L', 0, 1, 0, 32, 0,
					  2, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0 };
	char err[128];

	h.repairs[1] = 3;
	h.ev[0] = (struct osdfs_layout_event){ 1700000000, OSDFS_LAYOUT_EV_REPAIRED, 4, 1,
					       0x10005, 8192, "x" };
	ck_assert_uint_eq(lay_health_len(&h), sizeof(buf));
	lay_health_encode(buf, &h);
	ck_assert(memcmp(buf, head, sizeof(head)) == 0);
	ck_assert_uint_eq(buf[24], 1);                               /* events */
	ck_assert_uint_eq(buf[LAY_HEALTH_HDR + LAY_HEALTH_SLOT + 8], 3); /* slot 1 repairs */
	ck_assert_uint_eq(buf[LAY_HEALTH_HDR + 2 * LAY_HEALTH_SLOT + 26], 3); /* kind */
	ck_assert_int_eq(lay_health_decode(&d, buf, sizeof(buf), err, sizeof(err)), 0);
	ck_assert_uint_eq(d.repairs[1], 3);
	ck_assert_int_eq(d.ev[0].slot, 1);
	ck_assert_str_eq(d.ev[0].reason, "x");
	buf[40] ^= 1;
	ck_assert_int_eq(lay_health_decode(&d, buf, sizeof(buf), err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "health record: checksum mismatch");
	ck_assert_int_eq(lay_health_decode(&d, buf, sizeof(buf) - 1, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(lay_health_decode(&d, buf, 10, err, sizeof(err)), -EINVAL);
}
END_TEST

/* Write @p len bytes of @p byte at @p off of @p oid through layout @p be. */
static void put_bytes(osdfs_backend *be, uint64_t oid, uint64_t off, uint8_t byte, size_t len)
{
	uint8_t *b = malloc(len);
	struct iovec iov = { b, len };

	ck_assert_ptr_nonnull(b);
	memset(b, byte, len);
	ck_assert_int_eq(osdfs_backend_ops_of(be)->write(osdfs_backend_impl(be), oid, off, &iov,
							 1, NULL, 0), (ssize_t)len);
	free(b);
}

/*
 * Rebuild and mount agree (issue 22 item 6): handle A (a mount) loses slot 2
 * and goes on writing; meanwhile handle B (a rebuild run elsewhere) puts
 * spare store 4 in slot 2 and rebuilds it. When A next stores the device
 * table it merges B's instead of undoing it: slot 2 is store 4's device,
 * REBUILDING (A wrote without it), never back to the old one down. A rebuild
 * then finishes it and every byte, A's write included, reads back right
 * with another device gone.
 */
START_TEST(test_table_merge_after_foreign_rebuild)
{
	static const int all[] = { 0, 1, 2, 3 }, with_spare[] = { 0, 1, -1, 3, 4 },
			 after[] = { 0, 1, 4, 3 };
	uint8_t *want = malloc(FSIZE), *got = malloc(FSIZE);
	struct iovec iov = { got, FSIZE };
	struct osdfs_stat st;
	osdfs_backend *a;
	osdfs_file *fh;
	struct fx f;
	uint64_t oid;
	osdfs *fs;

	ck_assert(want && got);
	pattern(want, FSIZE);
	fx_init(&f, NDEV + 1);
	ck_assert_int_eq(fx_open(&f, all, NDEV, "raid5,su=8K"), 0);
	ck_assert_int_eq(osdfs_mkfs(f.be, NULL), 0);
	fs = fx_mount(f.be);
	ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, "f", 0644, O_RDWR, NULL, &st, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, want, FSIZE, 0), (ssize_t)FSIZE);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fx_close(&f);
	oid = OSDFS__OID_BASE + st.ino;

	ck_assert_int_eq(fx_open(&f, all, NDEV, NULL), 0); /* A */
	a = f.be;
	f.be = NULL;
	fx_kill(&f, 2);
	put_bytes(a, oid, 0, 0xAB, SU); /* slot 2 fails: down in A, not yet stored */
	memset(want, 0xAB, SU);

	ck_assert_int_eq(fx_open(&f, with_spare, NDEV + 1, NULL), 0); /* B */
	ck_assert_int_eq(osdfs_layout_replace(f.be, 2, NULL, NULL), 0);
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, 2, NULL, NULL, NULL), 0);
	ck_assert_int_eq(dev(&f, 2).state, OSDFS_LAYOUT_DEV_UP);
	fx_close(&f);

	put_bytes(a, oid, SU, 0xCD, SU); /* A writes on without the new device */
	memset(want + SU, 0xCD, SU);
	f.be = a;
	fx_close(&f); /* stores A's table */

	ck_assert_int_eq(fx_open(&f, after, NDEV, NULL), 0);
	ck_assert_int_eq(dev(&f, 2).state, OSDFS_LAYOUT_DEV_REBUILDING);
	ck_assert_int_eq(osdfs_layout_rebuild(f.be, 2, NULL, NULL, NULL), 0);
	ck_assert_int_eq(dev(&f, 2).state, OSDFS_LAYOUT_DEV_UP);
	fx_close(&f);
	ck_assert_int_eq(fx_open(&f, (const int[]){ -1, 1, 4, 3 }, NDEV, NULL), 0);
	ck_assert_int_eq(osdfs_backend_ops_of(f.be)->read(osdfs_backend_impl(f.be), oid, 0, &iov,
							  1), (ssize_t)FSIZE);
	ck_assert(memcmp(got, want, FSIZE) == 0);
	fx_close(&f);
	fx_fini(&f);
	free(want);
	free(got);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("layout_heal");
	TCase *tc = tcase_create("heal");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_read_repair_raid1);
	tcase_add_test(tc, test_read_repair_raid5);
	tcase_add_test(tc, test_read_repair_raid6_two);
	tcase_add_test(tc, test_raid0_medium_error_is_eio);
	tcase_add_test(tc, test_failed_rewrite_marks_down);
	tcase_add_test(tc, test_readonly_reads_without_rewrite);
	tcase_add_test(tc, test_scrub_repairs_medium_error);
	tcase_add_test(tc, test_scrub_raid6_locates_mismatch);
	tcase_add_test(tc, test_scrub_raid5_mismatch_reported);
	tcase_add_test(tc, test_scrub_raid1_mismatch_reported);
	tcase_add_test(tc, test_fsck_verify_data);
	tcase_add_test(tc, test_device_events);
	tcase_add_test(tc, test_metadata_heal);
	tcase_add_test(tc, test_scrub_shapes);
	tcase_add_test(tc, test_repeated_event_once);
	tcase_add_test(tc, test_health_record);
	tcase_add_test(tc, test_table_merge_after_foreign_rebuild);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
