/*
 * Access times are lazy (docs/target-store.md "Access times"): GET
 * ATTRIBUTES and READ update the timestamps page's attributes/data accessed
 * times (osd2r01 §7.1.2.15-§7.1.2.18, docs/protocol.md) in memory only, so
 * they never change a byte of the store; the object's next logged change
 * (a WRITE stamps data modified) persists them. Loop index 0 = OSD-1,
 * 1 = OSD-2.
 */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "proto/byteorder.h"

#define P1 0x10000ULL
#define O1 0x10000ULL
#define UTS (OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS)
#define UINFO (OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION)
#define APP_PAGE 0x10010u /* an application page of user objects */
#define NREADS 50

static struct h_target ht;

static enum osd_version ver(int i)
{
	return i ? OSD_V2 : OSD_V1;
}

static void setup(void)
{
	h_target_open(&ht);
}

static void teardown(void)
{
	h_target_close(&ht);
}

/*
 * Every file of the store directory: "path\0size\0bytes" in nftw order
 * (without the metadata log when snap_no_log is set).
 */
static char *snap;
static size_t snap_len;
static int snap_no_log;

static int snap_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (flag != FTW_F || (snap_no_log && ftw->level == 1 && strcmp(path + ftw->base, "log") == 0))
		return 0;
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	size_t add = strlen(path) + 32 + (size_t)sb->st_size;
	snap = realloc(snap, snap_len + add);
	ck_assert_ptr_nonnull(snap);
	snap_len += (size_t)sprintf(snap + snap_len, "%s", path) + 1;
	snap_len += (size_t)sprintf(snap + snap_len, "%lld", (long long)sb->st_size) + 1;
	ck_assert_uint_eq(fread(snap + snap_len, 1, (size_t)sb->st_size, f), (size_t)sb->st_size);
	snap_len += (size_t)sb->st_size;
	fclose(f);
	return 0;
}

static char *snapshot(size_t *len, int no_log)
{
	snap_no_log = no_log;
	snap = NULL;
	snap_len = 0;
	ck_assert_int_eq(nftw(ht.dir, snap_cb, 16, FTW_PHYS), 0);
	*len = snap_len;
	return snap;
}

static uint8_t *read_log(size_t *len)
{
	char p[300];
	struct stat sb;
	uint8_t *b;
	FILE *f;

	snprintf(p, sizeof(p), "%s/log", ht.dir);
	ck_assert_int_eq(stat(p, &sb), 0);
	b = malloc((size_t)sb.st_size + 1);
	ck_assert_ptr_nonnull(b);
	f = fopen(p, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(b, 1, (size_t)sb.st_size, f), (size_t)sb.st_size);
	fclose(f);
	*len = (size_t)sb.st_size;
	return b;
}

/*
 * Opening a target records its boot epoch (capabilities name it, osd2r03
 * §4.11.2.2; docs/target.md): one FUA attribute record, 9 B header + 24 B
 * (pid 0, oid 0, private root page BFFFFFF0h, number 2) + the 2-byte epoch.
 * @return the epoch recorded.
 */
static unsigned boot_epoch_record(const uint8_t *rec, size_t len)
{
	static const uint8_t key[24] = { [16] = 0xBF, 0xFF, 0xFF, 0xF0, 0, 0, 0, 2 };

	ck_assert_uint_eq(len, 9 + 24 + 2);
	ck_assert_uint_eq(osd__get_be32(rec + 4), 24 + 2);
	ck_assert_mem_eq(rec + 9, key, 24);
	return osd__get_be16(rec + 9 + 24);
}

/* A timestamp without touching any (TIMESTAMPS CONTROL bypass). */
static uint64_t ts(enum osd_version v, uint32_t num)
{
	struct h_req r;
	uint64_t t;

	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	r.cdb.timestamps_control = OSD_TIMESTAMPS_BYPASS;
	h_get(&r, UTS, num);
	h_run(&ht, &r);
	h_expect_good(&r);
	t = h_attr_u64(&r, UTS, num);
	h_req_free(&r);
	return t;
}

static void flush_osd(enum osd_version v)
{
	struct h_req r;

	h_req(&r, v, OSD_ACT_FLUSH_OSD, 0, 0);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

/* Busy wait (no sleep) until the target clock is past @p t. */
static void tick_past(uint64_t t)
{
	while (osd_now_ms() <= t + 1)
		;
}

/* N GET ATTRIBUTES and READs with normal timestamps handling. */
static void reads(enum osd_version v, int n)
{
	char buf[4];

	for (int i = 0; i < n; i++) {
		struct h_req r;

		h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
		h_get(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH);
		h_run(&ht, &r);
		h_expect_good(&r);
		ck_assert_uint_eq(h_attr_u64(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH), 4);
		h_req_free(&r);
		ck_assert_uint_eq(h_read(&ht, v, P1, O1, 0, buf, 4), 4);
		ck_assert_mem_eq(buf, "abcd", 4);
	}
}

START_TEST(reads_do_not_write)
{
	enum osd_version v = ver(_i);
	uint64_t da0, aa0, da1, aa1;
	size_t l0, l1, lg0, lg1;
	char *s0, *s1;
	uint8_t *g0, *g1;
	unsigned epoch;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_write(&ht, v, P1, O1, 0, "abcd", 4);
	reads(v, 1);
	h_write(&ht, v, P1, O1, 0, "abcd", 4); /* persists the first access times */
	h_target_reopen(&ht); /* everything logged is in the files now */
	da0 = ts(v, OSD_ATTR_TS_DATA_ACCESSED);
	aa0 = ts(v, OSD_ATTR_TS_ATTR_ACCESSED);
	s0 = snapshot(&l0, 0);
	tick_past(da0 > aa0 ? da0 : aa0);
	reads(v, NREADS);
	flush_osd(v); /* the log file now holds whatever the reads logged */
	s1 = snapshot(&l1, 0);
	ck_assert_uint_eq(l1, l0);
	ck_assert_int_eq(memcmp(s0, s1, l0), 0);
	free(s0);
	free(s1);
	/* GET ATTRIBUTES reports the in-memory (current) access times. */
	da1 = ts(v, OSD_ATTR_TS_DATA_ACCESSED);
	aa1 = ts(v, OSD_ATTR_TS_ATTR_ACCESSED);
	ck_assert_uint_gt(da1, da0);
	ck_assert_uint_gt(aa1, aa0);
	ck_assert_uint_le(da1, osd_now_ms());
	/*
	 * Close persists nothing for the reads; the reopen appends only its
	 * boot epoch record. The access times read back are the persisted ones.
	 */
	s0 = snapshot(&l0, 1);
	g0 = read_log(&lg0);
	h_target_reopen(&ht);
	s1 = snapshot(&l1, 1);
	g1 = read_log(&lg1);
	ck_assert_uint_eq(l1, l0);
	ck_assert_int_eq(memcmp(s0, s1, l0), 0);
	ck_assert_uint_gt(lg1, lg0);
	ck_assert_int_eq(memcmp(g0, g1, lg0), 0);
	epoch = boot_epoch_record(g1 + lg0, lg1 - lg0);
	ck_assert_uint_eq(epoch, 3); /* opens: create, reopen, reopen */
	free(s0);
	free(s1);
	free(g0);
	free(g1);
	ck_assert_uint_eq(ts(v, OSD_ATTR_TS_DATA_ACCESSED), da0);
	ck_assert_uint_eq(ts(v, OSD_ATTR_TS_ATTR_ACCESSED), aa0);
}
END_TEST

START_TEST(write_persists_access_times)
{
	enum osd_version v = ver(_i);
	uint64_t da0, da1, aa1;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_write(&ht, v, P1, O1, 0, "abcd", 4);
	reads(v, 1);
	h_write(&ht, v, P1, O1, 0, "abcd", 4); /* persists the first access times */
	h_target_reopen(&ht);
	da0 = ts(v, OSD_ATTR_TS_DATA_ACCESSED);
	tick_past(da0);
	reads(v, NREADS);
	da1 = ts(v, OSD_ATTR_TS_DATA_ACCESSED);
	aa1 = ts(v, OSD_ATTR_TS_ATTR_ACCESSED);
	ck_assert_uint_gt(da1, da0);
	tick_past(da1);
	h_write(&ht, v, P1, O1, 0, "abcd", 4);
	flush_osd(v);
	h_target_reopen(&ht);
	/* The write logged the access times of the reads before it. */
	ck_assert_uint_eq(ts(v, OSD_ATTR_TS_DATA_ACCESSED), da1);
	ck_assert_uint_ge(ts(v, OSD_ATTR_TS_ATTR_ACCESSED), aa1);
	ck_assert_uint_gt(ts(v, OSD_ATTR_TS_DATA_MODIFIED), da1);
}
END_TEST

/*
 * A SET ATTRIBUTES of one value appends one record: an ATTRS record of the
 * value and the attributes-modified timestamp (9 B header, pid and oid,
 * two entries of 10 B and their values), where each was a record of its own.
 */
START_TEST(set_attributes_one_record)
{
	enum osd_version v = ver(_i);
	uint8_t *b;
	size_t len, before;
	struct h_req r;
	const uint8_t *rec;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	flush_osd(v);
	free(read_log(&before));
	tick_past(ts(v, OSD_ATTR_TS_ATTR_MODIFIED)); /* a stamp that changes */
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set(&r, APP_PAGE, 1, "value-16-bytes!!", 16);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	flush_osd(v);
	b = read_log(&len);
	ck_assert_uint_eq(len - before, 9 + 16 + 10 + 16 + 10 + 6);
	rec = b + before; /* CRC(4) | payload length(4) | type(1) = ATTRS (10) */
	ck_assert_uint_eq(osd__get_be32(rec + 4), 16 + 10 + 16 + 10 + 6);
	ck_assert_uint_eq(rec[8], 10);
	ck_assert_uint_eq(osd__get_be32(rec + 9 + 16), APP_PAGE);
	ck_assert_mem_eq(rec + 9 + 16 + 10, "value-16-bytes!!", 16);
	ck_assert_uint_eq(osd__get_be32(rec + 9 + 16 + 26), UTS);
	ck_assert_uint_eq(osd__get_be32(rec + 9 + 16 + 26 + 4), OSD_ATTR_TS_ATTR_MODIFIED);
	free(b);
	h_target_reopen(&ht);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, APP_PAGE, 1);
	h_run(&ht, &r);
	h_expect_good(&r);
	const uint8_t *val;
	uint16_t vlen;
	ck_assert_int_eq(h_attr(&r, APP_PAGE, 1, &val, &vlen), 1);
	ck_assert_uint_eq(vlen, 16);
	ck_assert_mem_eq(val, "value-16-bytes!!", 16);
	h_req_free(&r);
}
END_TEST

static Suite *atime_suite(void)
{
	Suite *s = suite_create("target_atime");
	TCase *tc = tcase_create("atime");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, reads_do_not_write, 0, 2);
	tcase_add_loop_test(tc, write_persists_access_times, 0, 2);
	tcase_add_loop_test(tc, set_attributes_one_record, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(atime_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
