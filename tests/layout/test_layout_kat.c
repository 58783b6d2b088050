/*
 * Known answers of the layout engine: data map text and bytes, RFC 5664
 * placement worked by hand, GF(2^8) P/Q (expected bytes computed
 * independently at authoring time), the device table image and its errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "checksum/crc32c.h"
#include "layout/layout_int.h"

static int map_eq(const struct osdfs_data_map *a, const struct osdfs_data_map *b)
{
	return a->stripe_unit == b->stripe_unit && a->num_comps == b->num_comps &&
	       a->group_width == b->group_width && a->group_depth == b->group_depth &&
	       a->mirror_cnt == b->mirror_cnt && a->raid == b->raid;
}

static struct lay_map resolve(const char *spec, unsigned ndev)
{
	struct osdfs_data_map m;
	struct lay_map lm;
	char err[128];

	ck_assert_int_eq(osdfs_data_map_parse(&m, spec, err, sizeof(err)), 0);
	ck_assert_int_eq(lay_map_resolve(&lm, &m, ndev), 0);
	return lm;
}

START_TEST(test_parse_format)
{
	struct osdfs_data_map m, m2;
	char buf[128], err[128];

	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid5,su=64K,width=4", err, sizeof(err)), 0);
	ck_assert_int_eq(m.raid, OSDFS_RAID_5);
	ck_assert_uint_eq(m.stripe_unit, 65536);
	ck_assert_uint_eq(m.group_width, 4);
	ck_assert_int_eq(osdfs_data_map_format(&m, buf, sizeof(buf)), 46);
	ck_assert_str_eq(buf, "raid5,su=64K,width=4,depth=0,comps=0,mirrors=0");
	ck_assert_int_eq(osdfs_data_map_parse(&m2, buf, err, sizeof(err)), 0);
	ck_assert(map_eq(&m, &m2));
	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid1", err, sizeof(err)), 0);
	ck_assert_int_eq(m.raid, OSDFS_RAID_0);
	ck_assert_uint_eq(m.mirror_cnt, 1);
	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid6,su=1M,depth=8,comps=12", err, 128), 0);
	ck_assert_int_eq(m.raid, OSDFS_RAID_PQ);
	ck_assert_uint_eq(m.stripe_unit, 1u << 20);
	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid7", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "raid7"));
	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid0,su=100", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid0,speed=3", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid0,su=4X", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid0,width", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(osdfs_data_map_parse(&m, "raid5,width=99999999999", err, 128), -EINVAL);
}
END_TEST

START_TEST(test_check)
{
	struct osdfs_data_map m;
	char err[128];

	osdfs_data_map_parse(&m, "raid5,width=4", err, sizeof(err));
	ck_assert_int_eq(osdfs_data_map_check(&m, 4, err, sizeof(err)), 0);
	ck_assert_int_eq(osdfs_data_map_check(&m, 3, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "need 4 devices"));
	osdfs_data_map_parse(&m, "raid6", err, sizeof(err));
	ck_assert_int_eq(osdfs_data_map_check(&m, 2, err, sizeof(err)), -EINVAL);
	osdfs_data_map_parse(&m, "raid0,width=2", err, sizeof(err));
	ck_assert_int_eq(osdfs_data_map_check(&m, 4, err, sizeof(err)), 0); /* one group of 2 */
	osdfs_data_map_parse(&m, "raid0,width=2,comps=4", err, sizeof(err));
	ck_assert_int_eq(osdfs_data_map_check(&m, 4, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "group depth"));
	osdfs_data_map_parse(&m, "raid10,comps=3", err, sizeof(err));
	ck_assert_int_eq(osdfs_data_map_check(&m, 4, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_map_bytes)
{
	struct osdfs_data_map m = { 4096, 2, 1, 0, 1, OSDFS_RAID_0 }, d;
	static const uint8_t want[LAY_MAP_LEN] = {
		1, 1, 32, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
		1, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0,
	};
	uint8_t buf[LAY_MAP_LEN];

	lay_map_encode(buf, &m);
	ck_assert(memcmp(buf, want, sizeof(want)) == 0);
	ck_assert_int_eq(lay_map_decode(&d, buf, sizeof(buf)), 0);
	ck_assert(map_eq(&m, &d));
	ck_assert_int_eq(lay_map_decode(&d, buf, 31), -EINVAL);
	buf[1] = 9;
	ck_assert_int_eq(lay_map_decode(&d, buf, sizeof(buf)), -EINVAL);
}
END_TEST

/* Where logical byte @p L lands: component and component offset. */
static void where(const struct lay_map *lm, uint64_t L, unsigned *comp, uint64_t *coff)
{
	uint64_t rowlen = lm->Wd * lm->su, in = L % rowlen;
	struct lay_row r = lay_row_of(lm, L / rowlen);

	*comp = lay_comp(lm, r.g, lay_data_pos(lm, r.row, (unsigned)(in / lm->su)), 0);
	*coff = r.row * lm->su + in % lm->su;
	ck_assert_uint_eq(lay_row_logical(lm, r.g, r.row), L / rowlen);
}

START_TEST(test_placement)
{
	struct lay_map lm;
	unsigned c;
	uint64_t o;

	/* RFC 5664 5.4.1 simple striping: comp = (L % S) / su, off = (L / S) * su + L % su */
	lm = resolve("raid0,su=4K", 4);
	where(&lm, 20480 + 7, &c, &o);
	ck_assert_uint_eq(c, 1);
	ck_assert_uint_eq(o, 4096 + 7);
	/* mirrors are adjacent components: position 1 is components 2 and 3 */
	lm = resolve("raid10,su=4K", 4);
	where(&lm, 4096, &c, &o);
	ck_assert_uint_eq(c, 2);
	ck_assert_uint_eq(lay_comp(&lm, 0, 1, 1), 3);
	/* 5.4.2 nested striping, width 2, depth 3: rows 0-2 on group 0, 3-5 on group 1 */
	lm = resolve("raid0,su=4K,width=2,depth=3", 4);
	ck_assert_uint_eq(lm.G, 2);
	where(&lm, 3 * 8192, &c, &o);
	ck_assert_uint_eq(c, 2);
	ck_assert_uint_eq(o, 0);
	where(&lm, 6 * 8192 + 4096, &c, &o);
	ck_assert_uint_eq(c, 1);
	ck_assert_uint_eq(o, 3 * 4096);
	/* RAID 5, width 3: parity on position 2, 1, 0, 2, ... (rotating left) */
	lm = resolve("raid5,su=4K,width=3", 3);
	ck_assert_uint_eq(lay_parity_pos(&lm, 0, 0), 2);
	ck_assert_uint_eq(lay_parity_pos(&lm, 1, 0), 1);
	ck_assert_uint_eq(lay_parity_pos(&lm, 2, 0), 0);
	ck_assert_uint_eq(lay_parity_pos(&lm, 3, 0), 2);
	where(&lm, 8192 + 4096 + 5, &c, &o);
	ck_assert_uint_eq(c, 2);
	ck_assert_uint_eq(o, 4096 + 5);
	where(&lm, 16384, &c, &o);
	ck_assert_uint_eq(c, 1);
	ck_assert_uint_eq(o, 8192);
	/* RAID 4: parity always last */
	lm = resolve("raid4,su=4K", 4);
	ck_assert_uint_eq(lay_parity_pos(&lm, 5, 0), 3);
	/* RAID 6, width 4: P rotates like RAID 5, Q follows it */
	lm = resolve("raid6,su=4K,width=4", 4);
	ck_assert_uint_eq(lay_parity_pos(&lm, 0, 0), 3);
	ck_assert_uint_eq(lay_parity_pos(&lm, 0, 1), 0);
	ck_assert_uint_eq(lay_data_pos(&lm, 0, 0), 1);
	ck_assert_uint_eq(lay_data_pos(&lm, 0, 1), 2);
	ck_assert_uint_eq(lay_data_pos(&lm, 1, 0), 0);
	ck_assert_uint_eq(lay_data_pos(&lm, 1, 1), 1);
	ck_assert_uint_eq(lm.tol, 2);
}
END_TEST

START_TEST(test_comp_len)
{
	struct lay_map lm = resolve("raid5,su=4K,width=3", 3);

	/* 8192 + 100 bytes: row 1 has parity on position 1, data 0 on position 0 */
	ck_assert_uint_eq(lay_comp_len(&lm, 0, 8292), 4196);
	ck_assert_uint_eq(lay_comp_len(&lm, 1, 8292), 4196);
	ck_assert_uint_eq(lay_comp_len(&lm, 2, 8292), 4096);
	ck_assert_uint_eq(lay_comp_len(&lm, 2, 0), 0);
	lm = resolve("raid0,su=4K,width=2,depth=3", 4);
	/* 4 rows: group 0 has rows 0-2 and row 3 is group 1's first */
	ck_assert_uint_eq(lay_comp_len(&lm, 0, 4 * 8192), 3 * 4096);
	ck_assert_uint_eq(lay_comp_len(&lm, 3, 4 * 8192), 4096);
	ck_assert_uint_eq(lay_comp_len(&lm, 3, 3 * 8192 + 10), 0);
}
END_TEST

START_TEST(test_gf_pq)
{
	uint8_t d0[4] = { 1, 2, 3, 4 }, d1[4] = { 0x10, 0x20, 0x30, 0x40 };
	uint8_t d2[4] = { 0x80, 0xff, 0, 0x55 }, p[4], q[4];
	static const uint8_t wp[4] = { 0x91, 0xdd, 0x33, 0x11 }, wq[4] = { 0x1b, 0x99, 0x63, 0xcd };
	const uint8_t *d[3] = { d0, d1, d2 };

	ck_assert_uint_eq(lay_gf_mul(0x80, 2), 0x1d);
	ck_assert_uint_eq(lay_gf_mul(lay_gf_inv(0x53), 0x53), 1);
	lay_gf_gen(d, 3, 4, p, q);
	ck_assert(memcmp(p, wp, 4) == 0);
	ck_assert(memcmp(q, wq, 4) == 0);
	/* every one or two lost units come back */
	for (unsigned x = 0; x < 5; x++) {
		for (unsigned y = x; y < 5; y++) {
			uint8_t u[5][4];
			uint8_t *up[5] = { u[0], u[1], u[2], u[3], u[4] };
			unsigned lost[2] = { x, y };

			memcpy(u[0], d0, 4);
			memcpy(u[1], d1, 4);
			memcpy(u[2], d2, 4);
			memcpy(u[3], wp, 4);
			memcpy(u[4], wq, 4);
			memset(u[x], 0xEE, 4);
			memset(u[y], 0xEE, 4);
			ck_assert_int_eq(lay_gf_recover(up, 3, 2, 4, lost, x == y ? 1 : 2), 0);
			ck_assert(memcmp(u[0], d0, 4) == 0 && memcmp(u[1], d1, 4) == 0);
			ck_assert(memcmp(u[2], d2, 4) == 0 && memcmp(u[3], wp, 4) == 0);
			ck_assert(memcmp(u[4], wq, 4) == 0);
		}
	}
	{
		unsigned lost[2] = { 0, 1 };
		uint8_t *up[4] = { d0, d1, d2, p };

		ck_assert_int_eq(lay_gf_recover(up, 3, 1, 4, lost, 2), -EIO);
	}
}
END_TEST

static void sample_table(struct lay_table *t)
{
	memset(t, 0, sizeof(*t));
	t->generation = 7;
	t->capacity = 1u << 30;
	for (unsigned i = 0; i < 16; i++) {
		t->fs_uuid[i] = (uint8_t)i;
		t->ent[0].uuid[i] = (uint8_t)(0x10 + i);
		t->ent[1].uuid[i] = (uint8_t)(0x20 + i);
	}
	t->map = (struct osdfs_data_map){ 4096, 2, 1, 0, 1, OSDFS_RAID_0 };
	t->ndev = 2;
	t->ent[1].state = OSDFS_LAYOUT_DEV_DOWN;
	strcpy(t->ent[0].address, "a");
	strcpy(t->ent[1].address, "bc");
}

START_TEST(test_table_bytes)
{
	struct lay_table t, d;
	uint8_t buf[135];
	char err[128];

	ck_assert_uint_eq(osd__crc32c(0, "123456789", 9), 0xe3069283u);
	sample_table(&t);
	ck_assert_uint_eq(lay_table_len(&t), 135);
	lay_table_encode(buf, &t);
	ck_assert(memcmp(buf, "OSDFSLT\0\1\0\x58\0\2\0\0\0\7\0\0\0\0\0\0\0", 24) == 0);
	ck_assert_uint_eq(buf[72], 135);
	ck_assert(memcmp(buf + 80, "\0\0\0\x40\0\0\0\0", 8) == 0); /* capacity */
	ck_assert(memcmp(buf + 88 + 16, "\0\0\1\0a", 5) == 0);
	ck_assert(memcmp(buf + 109 + 16, "\1\0\2\0bc", 6) == 0);
	ck_assert(memcmp(buf + 131, "\x8b\x68\xf3\xd2", 4) == 0); /* CRC32C, little-endian */
	ck_assert_int_eq(lay_table_decode(&d, buf, sizeof(buf), err, sizeof(err)), 0);
	ck_assert(map_eq(&t.map, &d.map));
	ck_assert_uint_eq(d.generation, 7);
	ck_assert_uint_eq(d.capacity, 1u << 30);
	ck_assert_uint_eq(d.ndev, 2);
	ck_assert(memcmp(d.fs_uuid, t.fs_uuid, 16) == 0);
	ck_assert(memcmp(d.ent, t.ent, 2 * sizeof(d.ent[0])) == 0);
}
END_TEST

static void expect_bad(const uint8_t *buf, size_t len, const char *why)
{
	struct lay_table d;
	char err[128] = "";

	ck_assert_int_eq(lay_table_decode(&d, buf, len, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, why), "'%s' lacks '%s'", err, why);
}

START_TEST(test_table_errors)
{
	struct lay_table t;
	uint8_t buf[135], bad[135];

	sample_table(&t);
	lay_table_encode(buf, &t);
	expect_bad(buf, 134, "bad header or length");
	expect_bad(buf, 40, "too short");
	memcpy(bad, buf, sizeof(buf));
	bad[100] ^= 1;
	expect_bad(bad, sizeof(bad), "checksum");
	memcpy(bad, buf, sizeof(buf));
	bad[0] = 'X';
	expect_bad(bad, sizeof(bad), "magic");
	memcpy(bad, buf, sizeof(buf));
	bad[8] = 2;
	expect_bad(bad, sizeof(bad), "version");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("layout_kat");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_format);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_map_bytes);
	tcase_add_test(tc, test_placement);
	tcase_add_test(tc, test_comp_len);
	tcase_add_test(tc, test_gf_pq);
	tcase_add_test(tc, test_table_bytes);
	tcase_add_test(tc, test_table_errors);
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
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
