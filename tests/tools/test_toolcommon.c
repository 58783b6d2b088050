/* osd_toolcommon: size parsing and printing, device options. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "toolcommon.h"

START_TEST(parse_sizes)
{
	static const struct { const char *in; uint64_t want; } good[] = {
		{ "0", 0 }, { "4096", 4096 }, { "10G", 10ULL << 30 }, { "1K", 1024 },
		{ "1k", 1024 }, { "64KiB", 65536 }, { "2M", 2ULL << 20 }, { "1.5M", 1572864 },
		{ "3T", 3ULL << 40 }, { "1P", 1ULL << 50 }, { "1E", 1ULL << 60 }, { "512B", 512 },
		{ "0.5K", 512 },
	};
	static const char *bad[] = { "", "G", "-1", "10X", "10GB5", "1.5.5M", " 1", "K1",
				     "10 G", "1Kix" };
	uint64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(tc_parse_size(good[i].in, &v) == 0, "%s", good[i].in);
		ck_assert_msg(v == good[i].want, "%s: %llu", good[i].in, (unsigned long long)v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(tc_parse_size(bad[i], &v) == -EINVAL, "%s accepted", bad[i]);
	ck_assert_int_eq(tc_parse_size("16E", &v), -ERANGE);
	ck_assert_int_eq(tc_parse_size("99999999999999999999", &v), -ERANGE);
}
END_TEST

START_TEST(parse_u64)
{
	uint64_t v;

	ck_assert_int_eq(tc_parse_u64("0x10000", &v), 0);
	ck_assert_uint_eq(v, 0x10000);
	ck_assert_int_eq(tc_parse_u64("65536", &v), 0);
	ck_assert_uint_eq(v, 65536);
	ck_assert_int_eq(tc_parse_u64("-1", &v), -EINVAL);
	ck_assert_int_eq(tc_parse_u64("12z", &v), -EINVAL);
	ck_assert_int_eq(tc_parse_u64("", &v), -EINVAL);
}
END_TEST

START_TEST(format_sizes)
{
	char buf[16];

	tc_format_size(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0");
	tc_format_size(1023, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1023");
	tc_format_size(1536, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1.5K");
	tc_format_size(10ULL << 30, buf, sizeof(buf));
	ck_assert_str_eq(buf, "10G");
	tc_format_size(UINT64_MAX, buf, sizeof(buf));
	ck_assert_str_eq(buf, "16E");
}
END_TEST

START_TEST(device_options)
{
	struct tc_device_opts o = TC_DEVICE_OPTS_INIT;

	ck_assert_int_eq(tc_device_check(&o), -EINVAL); /* no device */
	ck_assert_int_eq(tc_device_option(&o, "target", "/x"), 1);
	ck_assert_str_eq(o.target_dir, "/x");
	ck_assert_int_eq(tc_device_option(&o, "osd-version", "1"), 1);
	ck_assert_int_eq(o.osd_version, OSD_VERSION_1);
	ck_assert_int_eq(tc_device_option(&o, "osd-version", "auto"), 1);
	ck_assert_int_eq(o.osd_version, OSD_VERSION_AUTO);
	ck_assert_int_eq(tc_device_option(&o, "osd-version", "3"), -EINVAL);
	ck_assert_int_eq(tc_device_option(&o, "security", "capkey"), 1);
	ck_assert_int_eq(o.security, OSD_SEC_CAPKEY);
	ck_assert_int_eq(tc_device_check(&o), -EINVAL); /* capkey without a key file */
	ck_assert_int_eq(tc_device_option(&o, "security", "none"), -EINVAL);
	ck_assert_int_eq(tc_device_option(&o, "security", "nosec"), 1);
	ck_assert_int_eq(tc_device_option(&o, "label", "x"), 0);
	ck_assert_int_eq(tc_device_check(&o), 0);
}
END_TEST

START_TEST(iscsi_options)
{
	struct tc_device_opts o = TC_DEVICE_OPTS_INIT;
	size_t n = 0;

	while (tc_device_iscsi_options[n])
		n++;
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(o.header_digest, OSD_ISCSI_DIGEST_PREFER_NONE);
	ck_assert_int_eq(o.data_digest, OSD_ISCSI_DIGEST_PREFER_NONE);
	/* URLs: anything with "://" is one, checked at once; a path is not */
	ck_assert_int_eq(tc_device_option(&o, "target", "iscsi://h/iqn.2026-12.org.x:t"), -EINVAL);
	ck_assert_int_eq(tc_device_option(&o, "target", "nfs://h/iqn.2026-12.org.x:t/0"), -EINVAL);
	ck_assert_int_eq(tc_device_option(&o, "target", "iscsi://h:65536/iqn.2026-12.org.x:t/0"),
			 -EINVAL);
	ck_assert_ptr_null(o.target_dir);
	ck_assert_int_eq(tc_device_option(&o, "target", "/srv/iscsi:/0"), 1);
	ck_assert(!o.remote);
	/* an iSCSI option with a directory is inconsistent */
	ck_assert_int_eq(tc_device_option(&o, "header-digest", "crc32c"), 1);
	ck_assert_int_eq(o.header_digest, OSD_ISCSI_DIGEST_CRC32C);
	ck_assert_int_eq(tc_device_check(&o), -EINVAL);
	ck_assert_int_eq(tc_device_option(&o, "target", "iscsi://[::1]:3261/iqn.2026-12.org.x:t/7"), 1);
	ck_assert(o.remote);
	ck_assert_int_eq(tc_device_check(&o), 0);
	ck_assert_int_eq(tc_device_option(&o, "data-digest", "none"), 1);
	ck_assert_int_eq(o.data_digest, OSD_ISCSI_DIGEST_NONE);
	ck_assert_int_eq(tc_device_option(&o, "data-digest", "CRC32C"), -EINVAL);
	ck_assert_int_eq(o.data_digest, OSD_ISCSI_DIGEST_NONE);
	ck_assert_int_eq(tc_device_option(&o, "initiator-name", ""), -EINVAL);
	ck_assert_int_eq(tc_device_option(&o, "initiator-name", "iqn.2026-12.org.x:i"), 1);
	ck_assert_str_eq(o.initiator_name, "iqn.2026-12.org.x:i");
	/* CHAP needs both halves */
	ck_assert_int_eq(tc_device_option(&o, "chap-user", "u"), 1);
	ck_assert_int_eq(tc_device_check(&o), -EINVAL);
	ck_assert_int_eq(tc_device_option(&o, "chap-secret-file", "/s"), 1);
	ck_assert_int_eq(tc_device_check(&o), 0);
	ck_assert_str_eq(o.chap_user, "u");
	ck_assert_str_eq(o.chap_secret_file, "/s");
}
END_TEST

/* The progress line: done of total, share, rate, time left. */
START_TEST(progress_lines)
{
	struct tc_progress p;
	char line[256];

	tc_progress_init(&p, "copying in", 0, 0);
	tc_progress_set_total(&p, 10, 4ULL << 20);
	p.files = 3;
	p.bytes = 3ULL << 19; /* 1.5M of 4M: 37%, 0.75M/s, 2 s * 0.625 / 0.375 left */
	tc_progress_format(&p, 2.0, line, sizeof(line));
	ck_assert_str_eq(line, "copying in: 3 of 10 files, 1.5M of 4.0M (37%), 768K/s, 0:03 left");
	/* unknown totals: no share, no time left */
	tc_progress_set_total(&p, 0, 0);
	tc_progress_format(&p, 2.0, line, sizeof(line));
	ck_assert_str_eq(line, "copying in: 3 files, 1.5M, 768K/s");
	/* items only (fsck), an hour and more to go */
	tc_progress_init(&p, "fsck: reading inodes", 0, 0);
	p.unit = "inodes";
	tc_progress_set_total(&p, 100000, 0);
	p.files = 1000;
	tc_progress_format(&p, 40.0, line, sizeof(line));
	ck_assert_str_eq(line, "fsck: reading inodes: 1000 of 100000 inodes (1%), 25 inodes/s, "
			       "1:06:00 left");
	/* done: 100%, nothing left to show */
	p.files = 100000;
	tc_progress_format(&p, 40.0, line, sizeof(line));
	ck_assert_str_eq(line, "fsck: reading inodes: 100000 of 100000 inodes (100%), "
			       "2500 inodes/s");
}
END_TEST

/* A root key file others may read or write is refused (like ssh's private keys). */
START_TEST(key_file_modes)
{
	static const unsigned refused[] = { 0644, 0640, 0604, 0620, 0602 };
	char dir[] = "/tmp/tc-key-XXXXXX", path[64];
	uint8_t key[OSD_HMAC_LEN];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("00112233445566778899aabbccddeeff00112233\n", f);
	fclose(f);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ck_assert_int_eq(chmod(path, refused[i]), 0);
		memset(key, 0, sizeof(key));
		ck_assert_int_eq(osd_keyring_read_key_file(path, key, NULL, 0), -EPERM);
		ck_assert_uint_eq(key[0], 0);
	}
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(osd_keyring_read_key_file(path, key, NULL, 0), 0);
	ck_assert_uint_eq(key[1], 0x11);
	ck_assert_uint_eq(key[19], 0x33);
	ck_assert_int_eq(chmod(path, 0400), 0);
	ck_assert_int_eq(osd_keyring_read_key_file(path, key, NULL, 0), 0);
	unlink(path);
	rmdir(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toolcommon");
	TCase *tc = tcase_create("toolcommon");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, parse_sizes);
	tcase_add_test(tc, parse_u64);
	tcase_add_test(tc, format_sizes);
	tcase_add_test(tc, device_options);
	tcase_add_test(tc, iscsi_options);
	tcase_add_test(tc, key_file_modes);
	tcase_add_test(tc, progress_lines);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
