/*
 * The osdfs on-object format (docs/osdfs-format.md) against byte vectors
 * written by hand from the document, plus the images mkfs leaves on the
 * backend.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <check.h>

#include "fs_fixture.h"
#include "core/format.h"
#include "lebytes.h"

static void setup(void)
{
	fx_start(0);
}

static void teardown(void)
{
	fx_stop();
}

START_TEST(test_le_helpers)
{
	uint8_t b[8];

	osdfs__put_le64(b, 0x0102030405060708ULL);
	ck_assert_int_eq(memcmp(b, "\x08\x07\x06\x05\x04\x03\x02\x01", 8), 0);
	ck_assert_uint_eq(osdfs__get_le64(b), 0x0102030405060708ULL);
	osdfs__put_le32(b, 0xA1B2C3D4u);
	ck_assert_int_eq(memcmp(b, "\xD4\xC3\xB2\xA1", 4), 0);
	ck_assert_uint_eq(osdfs__get_le32(b), 0xA1B2C3D4u);
	osdfs__put_le16(b, 0xBEEF);
	ck_assert_int_eq(memcmp(b, "\xEF\xBE", 2), 0);
	ck_assert_uint_eq(osdfs__get_le16(b), 0xBEEF);
}
END_TEST

START_TEST(test_siphash_vectors)
{
	uint8_t msg[15];
	uint64_t k0 = osdfs__get_le64((const uint8_t *)"\x00\x01\x02\x03\x04\x05\x06\x07");
	uint64_t k1 = osdfs__get_le64((const uint8_t *)"\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f");

	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	/* reference vectors of the SipHash paper (key 00..0f) */
	ck_assert_uint_eq(osdfs__siphash(k0, k1, msg, 0), 0x726fdb47dd0e0e31ULL);
	ck_assert_uint_eq(osdfs__siphash(k0, k1, msg, 15), 0xa129ca6149be45e5ULL);
}
END_TEST

START_TEST(test_super_bytes)
{
	struct osdfs__super sb = { 0 }, back;
	uint8_t out[OSDFS__SUPER_LEN], exp[OSDFS__SUPER_LEN] = { 0 };

	sb.version = 1;
	sb.block_size = 4096;
	sb.incompat = 1;
	for (int i = 0; i < 16; i++)
		sb.uuid[i] = (uint8_t)(0xA0 + i);
	sb.hash_k0 = 0x1122334455667788ULL;
	sb.hash_k1 = 0x99AABBCCDDEEFF00ULL;
	sb.root_ino = 1;
	sb.mkfs_sec = -2;
	sb.mkfs_nsec = 5;
	strcpy(sb.label, "lbl");
	memcpy(exp, "OSDFS\x1a\n\0", 8);
	memcpy(exp + 8, "\x01\x00\xA0\x00\x00\x10\x00\x00", 8);
	exp[32] = 1;
	for (int i = 0; i < 16; i++)
		exp[40 + i] = (uint8_t)(0xA0 + i);
	memcpy(exp + 56, "\x88\x77\x66\x55\x44\x33\x22\x11", 8);
	memcpy(exp + 64, "\x00\xFF\xEE\xDD\xCC\xBB\xAA\x99", 8);
	exp[72] = 1;
	memcpy(exp + 80, "\xFE\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 8);
	exp[88] = 5;
	memcpy(exp + 96, "lbl", 3);
	osdfs__super_encode(out, &sb);
	ck_assert_int_eq(memcmp(out, exp, sizeof(exp)), 0);
	ck_assert_int_eq(osdfs__super_decode(&back, exp, sizeof(exp)), 0);
	ck_assert_uint_eq(back.block_size, 4096);
	ck_assert_uint_eq(back.hash_k1, sb.hash_k1);
	ck_assert_int_eq(back.mkfs_sec, -2);
	ck_assert_str_eq(back.label, "lbl");
	/* bad input: rejected, never trusted */
	ck_assert_int_eq(osdfs__super_decode(&back, exp, 100), -EUCLEAN);
	exp[12] = 1; /* block size 4097 */
	ck_assert_int_eq(osdfs__super_decode(&back, exp, sizeof(exp)), -EUCLEAN);
	exp[12] = 0;
	exp[8] = 2;
	ck_assert_int_eq(osdfs__super_decode(&back, exp, sizeof(exp)), -EPROTONOSUPPORT);
	exp[8] = 1;
	exp[0] = 'o';
	ck_assert_int_eq(osdfs__super_decode(&back, exp, sizeof(exp)), -EUCLEAN);
}
END_TEST

START_TEST(test_inode_bytes)
{
	struct osdfs__dinode di = { 0 }, back;
	uint8_t out[OSDFS__INODE_MAX_LEN], exp[OSDFS__INODE_FIXED_LEN + 3] = { 0 };

	di.mode = S_IFLNK | 0777;
	di.uid = 0x01020304;
	di.gid = 0xFFFFFFFE;
	di.nlink = 1;
	di.size = 3;
	di.generation = 0x0102030405060708ULL;
	di.atime = (struct osdfs__ts){ 1, 2 };
	di.mtime = (struct osdfs__ts){ -1, 999999999 };
	di.ctime = (struct osdfs__ts){ 0x100000000LL, 0 };
	di.crtime = (struct osdfs__ts){ 7, 8 };
	di.inline_len = 3;
	memcpy(di.inline_data, "a/b", 3);
	exp[0] = 1;
	exp[2] = OSDFS__INODE_FIXED_LEN;
	memcpy(exp + 4, "\xFF\xA1\x00\x00", 4);            /* 0120777 */
	memcpy(exp + 8, "\x04\x03\x02\x01\xFE\xFF\xFF\xFF\x01", 9);
	exp[24] = 3;
	memcpy(exp + 32, "\x08\x07\x06\x05\x04\x03\x02\x01", 8);
	exp[48] = 1;                                           /* atime sec */
	memset(exp + 56, 0xFF, 8);                             /* mtime sec -1 */
	exp[68] = 1;                                           /* ctime sec 2^32 */
	exp[72] = 7;                                           /* crtime sec */
	exp[80] = 2;                                           /* atime nsec */
	memcpy(exp + 84, "\xFF\xC9\x9A\x3B", 4);               /* 999999999 */
	exp[92] = 8;
	exp[104] = 3;                                          /* inline length */
	memcpy(exp + OSDFS__INODE_FIXED_LEN, "a/b", 3);
	ck_assert_uint_eq(osdfs__inode_encode(out, &di), sizeof(exp));
	ck_assert_int_eq(memcmp(out, exp, sizeof(exp)), 0);
	ck_assert_int_eq(osdfs__inode_decode(&back, exp, sizeof(exp)), 0);
	ck_assert_int_eq(memcmp(&back.mtime, &di.mtime, sizeof(di.mtime)), 0);
	ck_assert_int_eq(memcmp(back.inline_data, "a/b", 3), 0);
	/* a longer fixed part from a future minor version is skipped */
	{
		uint8_t wide[OSDFS__INODE_FIXED_LEN + 8 + 3];

		memcpy(wide, exp, OSDFS__INODE_FIXED_LEN);
		memset(wide + OSDFS__INODE_FIXED_LEN, 0xEE, 8);
		memcpy(wide + OSDFS__INODE_FIXED_LEN + 8, "a/b", 3);
		wide[2] = OSDFS__INODE_FIXED_LEN + 8;
		ck_assert_int_eq(osdfs__inode_decode(&back, wide, sizeof(wide)), 0);
		ck_assert_int_eq(memcmp(back.inline_data, "a/b", 3), 0);
	}
	ck_assert_int_eq(osdfs__inode_decode(&back, exp, sizeof(exp) - 1), -EUCLEAN);
	exp[87] = 0x3C; /* nsec >= 10^9 */
	ck_assert_int_eq(osdfs__inode_decode(&back, exp, sizeof(exp)), -EUCLEAN);
	exp[87] = 0x3B;
	exp[5] = 0xF1; /* file type 0170000 */
	ck_assert_int_eq(osdfs__inode_decode(&back, exp, sizeof(exp)), -EUCLEAN);
	exp[5] = 0xA1;
	exp[0] = 2;
	ck_assert_int_eq(osdfs__inode_decode(&back, exp, sizeof(exp)), -EUCLEAN);
}
END_TEST

START_TEST(test_dirhdr_bytes)
{
	struct osdfs__dirhdr h = { 3, 0x01020304, 0x1122334455667788ULL, 0xA1A2A3A4A5A6A7A8ULL };
	struct osdfs__dirhdr back;
	static const uint8_t exp[OSDFS__DIRHDR_LEN] = {
		1, 3, 24, 0, 0x04, 0x03, 0x02, 0x01,
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
		0xA8, 0xA7, 0xA6, 0xA5, 0xA4, 0xA3, 0xA2, 0xA1,
	};
	uint8_t out[OSDFS__DIRHDR_LEN], bad[OSDFS__DIRHDR_LEN];

	osdfs__dirhdr_encode(out, &h);
	ck_assert_int_eq(memcmp(out, exp, sizeof(exp)), 0);
	ck_assert_int_eq(osdfs__dirhdr_decode(&back, exp, sizeof(exp)), 0);
	ck_assert_uint_eq(back.nentries, h.nentries);
	ck_assert_uint_eq(back.sums_stamp, h.sums_stamp);
	memcpy(bad, exp, sizeof(bad));
	bad[1] = 21; /* depth beyond the maximum */
	ck_assert_int_eq(osdfs__dirhdr_decode(&back, bad, sizeof(bad)), -EUCLEAN);
	memcpy(bad, exp, sizeof(bad));
	memset(bad + 4, 0, 4); /* no blocks */
	ck_assert_int_eq(osdfs__dirhdr_decode(&back, bad, sizeof(bad)), -EUCLEAN);
}
END_TEST

/* The name summary snapshot header (osdfs-format.md 4.6). */
START_TEST(test_dirsums_hdr_bytes)
{
	struct osdfs__dirsums_hdr h = { 0x00012345, 128, 0x0102030405060708ULL, 0xCAFEF00D };
	struct osdfs__dirsums_hdr back;
	static const uint8_t exp[OSDFS__DIRSUMS_HDR_LEN] = {
		0x44, 0x53, 0x55, 0x4D, 1, 0, 32, 0,
		0x45, 0x23, 0x01, 0x00, 0x80, 0, 0, 0,
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x0D, 0xF0, 0xFE, 0xCA, 0, 0, 0, 0,
	};
	uint8_t out[OSDFS__DIRSUMS_HDR_LEN], bad[OSDFS__DIRSUMS_HDR_LEN];

	osdfs__dirsums_hdr_encode(out, &h);
	ck_assert_int_eq(memcmp(out, exp, sizeof(exp)), 0);
	ck_assert_int_eq(osdfs__dirsums_hdr_decode(&back, exp, sizeof(exp)), 0);
	ck_assert_uint_eq(back.nblocks, h.nblocks);
	ck_assert_uint_eq(back.sum_len, h.sum_len);
	ck_assert_uint_eq(back.stamp, h.stamp);
	ck_assert_uint_eq(back.crc, h.crc);
	ck_assert_int_eq(osdfs__dirsums_hdr_decode(&back, exp, sizeof(exp) - 1), -EUCLEAN);
	for (size_t i = 0; i < 8; i++) {
		if (i == 5)
			continue; /* reserved */
		memcpy(bad, exp, sizeof(bad));
		bad[i] ^= 0x10; /* magic, version, length */
		ck_assert_int_eq(osdfs__dirsums_hdr_decode(&back, bad, sizeof(bad)), -EUCLEAN);
	}
}
END_TEST

/*
 * The name summary filter as stored in snapshots (osdfs-format.md 4.6): the
 * four bits of a name in a 1,024-bit (128-byte) filter, worked out by hand
 * from the definition. A filter of exactly those bits may hold the name;
 * without any one of them it does not.
 */
START_TEST(test_summary_bits)
{
	static const struct {
		const char *name;
		unsigned bit[4];
	} v[] = {
		{ "entry-0002", { 736, 825, 914, 1003 } }, /* a word and a tail */
		{ "f000000001", { 432, 507, 70, 145 } },
		{ "a", { 910, 803, 696, 589 } },          /* a tail alone */
	};
	uint8_t f[128];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t len = strlen(v[i].name);

		memset(f, 0, sizeof(f));
		for (int k = 0; k < 4; k++)
			f[v[i].bit[k] / 8] |= (uint8_t)(1u << v[i].bit[k] % 8);
		ck_assert_int_eq(osdfs__sum_may_hold(f, sizeof(f), v[i].name, len), 1);
		for (int k = 0; k < 4; k++) {
			f[v[i].bit[k] / 8] ^= (uint8_t)(1u << v[i].bit[k] % 8);
			ck_assert_int_eq(osdfs__sum_may_hold(f, sizeof(f), v[i].name, len), 0);
			f[v[i].bit[k] / 8] ^= (uint8_t)(1u << v[i].bit[k] % 8);
		}
	}
}
END_TEST

static uint32_t get_attr(uint64_t oid, uint32_t page, uint32_t number, uint8_t *buf, uint32_t size)
{
	const struct osdfs_backend_ops *ops = osdfs_backend_ops_of(fx.inst.be);
	struct osdfs_attr a = { page, number, buf, size };

	ck_assert_int_eq(ops->get_attrs(osdfs_backend_impl(fx.inst.be), oid, &a, 1), 0);
	return a.len;
}

/* What mkfs leaves on the backend, read back raw. */
START_TEST(test_mkfs_image)
{
	const struct osdfs_backend_ops *ops = osdfs_backend_ops_of(fx.inst.be);
	uint8_t buf[4096];
	struct iovec iov = { buf, sizeof(buf) };

	ck_assert_uint_eq(get_attr(0x10000, 0x10000, 1, buf, sizeof(buf)), 160);
	ck_assert_int_eq(memcmp(buf, "OSDFS\x1a\n\0\x01\x00\xA0\x00\x00\x10\x00\x00", 16), 0);
	ck_assert_int_eq(memcmp(buf + 32, "\x01\0\0\0\0\0\0\0", 8), 0); /* HASHDIR */
	ck_assert_int_eq(memcmp(buf + 72, "\x01\0\0\0\0\0\0\0", 8), 0); /* root inode 1 */
	ck_assert_int_eq(memcmp(buf + 96, "test\0", 5), 0);
	ck_assert_uint_eq(buf[46] >> 4, 4); /* random uuid, version 4 */
	/* mounted: the record is present */
	ck_assert_uint_eq(get_attr(0x10000, 0x10000, 2, buf, sizeof(buf)), 104);
	ck_assert_uint_eq(buf[0], 2); /* with a lease (test_fs_lease) */
	ck_assert_uint_eq(get_attr(0x10000, 0x10000, 3, buf, sizeof(buf)), 24);
	ck_assert_uint_eq(buf[0], 1);
	ck_assert_uint_eq(osdfs__get_le64(buf + 8), 2);
	/* root inode (object 0x10001) */
	ck_assert_uint_eq(get_attr(0x10001, 0x10001, 1, buf, sizeof(buf)), 112);
	ck_assert_int_eq(memcmp(buf, "\x01\x00\x70\x00\xED\x41\x00\x00", 8), 0);
	ck_assert_int_eq(memcmp(buf + 16, "\x02\0\0\0", 4), 0);           /* nlink */
	ck_assert_int_eq(memcmp(buf + 24, "\x00\x10\0\0\0\0\0\0", 8), 0); /* size */
	ck_assert_int_eq(memcmp(buf + 96, "\x01\0\0\0\0\0\0\0", 8), 0);   /* parent */
	ck_assert_uint_eq(get_attr(0x10001, 0x10002, 1, buf, sizeof(buf)), 24);
	ck_assert_int_eq(memcmp(buf, "\x01\x00\x18\x00\x01\0\0\0\0\0\0\0\0\0\0\0", 16), 0);
	ck_assert_uint_eq(get_attr(0x10001, 0x10002, 2, buf, sizeof(buf)), 4);
	ck_assert_int_eq(memcmp(buf, "\0\0\0\0", 4), 0);
	/* root block 0: header and one free record covering the rest */
	ck_assert_int_eq(ops->read(osdfs_backend_impl(fx.inst.be), 0x10001, 0, &iov, 1), 4096);
	ck_assert_int_eq(memcmp(buf, "DBLK\x01\0\0\0\x01\0\0\0\0\0\0\0", 16), 0);
	ck_assert_int_eq(memcmp(buf + 16, "\0\0\0\0\0\0\0\0\xF0\x0F\0\0\0\0\0\0", 16), 0);
	/* after a clean unmount the record is gone */
	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	fx.fs = NULL;
	ck_assert_uint_eq(get_attr(0x10000, 0x10000, 2, buf, sizeof(buf)), 0);
}
END_TEST

/* A directory entry as docs/osdfs-format.md lays it out. */
START_TEST(test_dir_record_bytes)
{
	const struct osdfs_backend_ops *ops = osdfs_backend_ops_of(fx.inst.be);
	struct osdfs_stat st;
	uint8_t buf[4096];
	struct iovec iov = { buf, sizeof(buf) };

	ck_assert_int_eq(osdfs_mknod(fx.fs, OSDFS_ROOT_INO, "abc", S_IFIFO | 0600, 0, NULL, &st), 0);
	ck_assert_int_eq(ops->read(osdfs_backend_impl(fx.inst.be), 0x10001, 0, &iov, 1), 4096);
	ck_assert_uint_eq(osdfs__get_le64(buf + 16), st.ino);
	ck_assert_uint_eq(osdfs__get_le16(buf + 24), 4080); /* the only entry spans the block */
	ck_assert_uint_eq(buf[26], 3);                      /* name length */
	ck_assert_uint_eq(buf[27], 5);                      /* FIFO */
	ck_assert_uint_eq(buf[28], 0);                      /* collision byte */
	ck_assert_int_eq(memcmp(buf + 29, "\0\0\0abc", 6), 0);
	ck_assert_uint_eq(get_attr(0x10001, 0x10002, 1, buf, sizeof(buf)), 24);
	ck_assert_uint_eq(osdfs__get_le64(buf + 8), 1);     /* nentries */
}
END_TEST

START_TEST(test_unknown_features)
{
	const struct osdfs_backend_ops *ops = osdfs_backend_ops_of(fx.inst.be);
	struct osdfs_mount_options o = fx_mount_options();
	uint8_t buf[160];
	struct osdfs_attr a = { 0x10000, 1, buf, sizeof(buf) };
	char err[256];

	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	fx.fs = NULL;
	ck_assert_uint_eq(get_attr(0x10000, 0x10000, 1, buf, sizeof(buf)), 160);
	buf[33] = 0x80; /* an incompatible feature from the future */
	ck_assert_int_eq(ops->set_attrs(osdfs_backend_impl(fx.inst.be), 0x10000, &a, 1), 0);
	o.error = err;
	o.error_size = sizeof(err);
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), -EPROTONOSUPPORT);
	ck_assert_ptr_nonnull(strstr(err, "incompatible"));
	buf[33] = 0;
	buf[8] = 9; /* format version 9 */
	ck_assert_int_eq(ops->set_attrs(osdfs_backend_impl(fx.inst.be), 0x10000, &a, 1), 0);
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), -EPROTONOSUPPORT);
	buf[8] = 1;
	ck_assert_int_eq(ops->set_attrs(osdfs_backend_impl(fx.inst.be), 0x10000, &a, 1), 0);
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), 0);
}
END_TEST

static Suite *format_suite(void)
{
	Suite *s = suite_create("fs_format");
	TCase *pure = tcase_create("codec"), *img = tcase_create("image");

	tcase_add_test(pure, test_le_helpers);
	tcase_add_test(pure, test_siphash_vectors);
	tcase_add_test(pure, test_super_bytes);
	tcase_add_test(pure, test_inode_bytes);
	tcase_add_test(pure, test_dirhdr_bytes);
	tcase_add_test(pure, test_dirsums_hdr_bytes);
	tcase_add_test(pure, test_summary_bits);
	tcase_add_checked_fixture(img, setup, teardown);
	tcase_add_test(img, test_mkfs_image);
	tcase_add_test(img, test_dir_record_bytes);
	tcase_add_test(img, test_unknown_features);
	suite_add_tcase(s, pure);
	suite_add_tcase(s, img);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	fx_require_backend();
	sr = srunner_create(format_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
