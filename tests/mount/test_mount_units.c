/*
 * osdfs-mount's parts that need no kernel: the command-line parser (exact
 * values, full 64-bit ranges, every rejection) and the lookup-count table
 * (against a plain array model through growth and deletions).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mount.h"

/* ---- options ---- */

static struct mnt_options o;

#define PARSE(...) parse_argv((char *[]){ "osdfs-mount", __VA_ARGS__, NULL })

static int parse_argv(char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	mnt_options_free(&o);
	return mnt_parse_args(&o, argc, argv);
}

static int fuse_has(const char *arg)
{
	for (int i = 0; i < o.fuse.argc; i++)
		if (strcmp(o.fuse.argv[i], arg) == 0)
			return 1;
	return 0;
}

/* Is @p opt among the -o options handed to libfuse ("-o a,b" or "-oa")? */
static int fuse_has_opt(const char *opt)
{
	size_t len = strlen(opt);

	for (int i = 0; i < o.fuse.argc; i++) {
		const char *list = NULL;

		if (strcmp(o.fuse.argv[i], "-o") == 0 && i + 1 < o.fuse.argc)
			list = o.fuse.argv[++i];
		else if (strncmp(o.fuse.argv[i], "-o", 2) == 0)
			list = o.fuse.argv[i] + 2;
		for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
			if (strncmp(p, opt, len) == 0 && (p[len] == ',' || p[len] == '\0'))
				return 1;
	}
	return 0;
}

static void opt_setup(void)
{
	memset(&o, 0, sizeof(o));
	tc_set_prog("osdfs-mount");
}

static void opt_teardown(void)
{
	mnt_options_free(&o);
}

START_TEST(defaults)
{
	ck_assert_int_eq(PARSE("/srv/osd", "/mnt"), MNT_PARSE_RUN);
	ck_assert_str_eq(o.target, "/srv/osd");
	ck_assert_str_eq(o.mountpoint, "/mnt");
	ck_assert_uint_eq(o.partition, 0x10000);
	ck_assert(o.attr_timeout == 1.0 && o.entry_timeout == 1.0);
	ck_assert_int_eq(o.mkfs | o.readonly | o.force | o.writeback | o.foreground, 0);
	ck_assert_uint_eq(o.capacity, 0);
	ck_assert_int_eq(o.dev.security, OSD_SEC_NOSEC);
	ck_assert_int_eq(o.dev.osd_version, OSD_VERSION_AUTO);
	ck_assert(fuse_has_opt("default_permissions"));
	ck_assert(fuse_has_opt("subtype=osdfs"));
	ck_assert(fuse_has_opt("fsname=/srv/osd"));
	ck_assert(!fuse_has("/srv/osd")); /* the arguments are ours, not libfuse's */
}
END_TEST

START_TEST(pid_full_range)
{
	ck_assert_int_eq(PARSE("-o", "pid=0xffffffffffffffff", "t", "m"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.partition, UINT64_MAX);
	ck_assert_int_eq(PARSE("-o", "pid=18446744073709551615", "t", "m"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.partition, UINT64_MAX);
	ck_assert_int_eq(PARSE("-o", "pid=0x100000000", "t", "m"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.partition, 0x100000000ULL);
	ck_assert_int_eq(PARSE("-opid=4294967297", "t", "m"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.partition, 4294967297ULL);
	ck_assert_int_eq(PARSE("-o", "pid=65536", "t", "m"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.partition, 0x10000);
}
END_TEST

START_TEST(pid_rejected)
{
	static const char *const bad[] = {
		"pid=18446744073709551616", "pid=0x1ffffffffffffffff", "pid=0x10000000000000000",
		"pid=4294967296x", "pid=", "pid=0x", "pid=-1", "pid=+65536", "pid= 65536",
		"pid=010", "pid=0xffff", "pid=0", "pid=65535", "pid=1e6",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(PARSE("-o", (char *)bad[i], "t", "m") == -TC_EXIT_USAGE,
			      "%s accepted", bad[i]);
}
END_TEST

START_TEST(timeouts)
{
	ck_assert_int_eq(PARSE("-o", "attr_timeout=0.25,entry_timeout=0", "t", "m"),
			 MNT_PARSE_RUN);
	ck_assert(o.attr_timeout == 0.25 && o.entry_timeout == 0.0);
	ck_assert_int_eq(PARSE("-o", "entry_timeout=1e9", "t", "m"), MNT_PARSE_RUN);
	ck_assert(o.entry_timeout == 1e9);
	static const char *const bad[] = {
		"attr_timeout=-1", "attr_timeout=nan", "attr_timeout=inf", "attr_timeout=1.5e9",
		"attr_timeout=", "entry_timeout=1s", "entry_timeout=abc", "entry_timeout=1e999",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(PARSE("-o", (char *)bad[i], "t", "m") == -TC_EXIT_USAGE,
			      "%s accepted", bad[i]);
}
END_TEST

/* probe_interval=, no_auto_resync and no_write_gathering: layout mounts */
START_TEST(probe_interval)
{
	ck_assert_int_eq(PARSE("t", "m"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.probe_ms, 5000);
	ck_assert_int_eq(o.no_auto_resync, 0);
	ck_assert_int_eq(o.dev.no_gather, 0);
	ck_assert_int_eq(PARSE("-o", "probe_interval=0.2,no_auto_resync,no_write_gathering", "t",
			       "m"),
			 MNT_PARSE_RUN);
	ck_assert_uint_eq(o.probe_ms, 200);
	ck_assert_int_eq(o.no_auto_resync, 1);
	ck_assert_int_eq(o.dev.no_gather, 1);
	ck_assert(!fuse_has_opt("no_auto_resync")); /* ours, not the kernel's */
	ck_assert(!fuse_has_opt("no_write_gathering"));
	ck_assert_int_eq(PARSE("-o", "probe_interval=0", "t", "m"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.probe_ms, 0);
	ck_assert_int_eq(PARSE("-o", "probe_interval=86400", "t", "m"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.probe_ms, 86400000u);
	static const char *const bad[] = {
		"probe_interval=0.05", "probe_interval=-1", "probe_interval=86401",
		"probe_interval=", "probe_interval=5s", "probe_interval=nan",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(PARSE("-o", (char *)bad[i], "t", "m") == -TC_EXIT_USAGE,
			      "%s accepted", bad[i]);
}
END_TEST

START_TEST(mkfs_format_ro)
{
	ck_assert_int_eq(PARSE("-o", "mkfs,format=10G", "t", "m"), MNT_PARSE_RUN);
	ck_assert_int_eq(o.mkfs, 1);
	ck_assert_uint_eq(o.capacity, 10ULL << 30);
	ck_assert_int_eq(PARSE("-o", "mkfs,format=1.5T", "t", "m"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.capacity, 3ULL << 39);
	ck_assert_int_eq(PARSE("-o", "ro", "t", "m"), MNT_PARSE_RUN);
	ck_assert_int_eq(o.readonly, 1);
	ck_assert(fuse_has_opt("ro")); /* also the kernel's read-only flag */
	ck_assert_int_eq(PARSE("-o", "format=10G", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "mkfs,format=0", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "mkfs,format=16E", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "mkfs,format=10Q", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "mkfs,ro", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "force,ro", "t", "m"), MNT_PARSE_RUN); /* look, no takeover */
	ck_assert_int_eq(o.force & o.readonly, 1);
	ck_assert_int_eq(PARSE("-o", "writeback_cache,ro", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "force,writeback_cache", "t", "m"), MNT_PARSE_RUN);
	ck_assert_int_eq(o.force & o.writeback, 1);
}
END_TEST

START_TEST(device_options)
{
	char keyfile[] = "/etc/osd.key";

	ck_assert_int_eq(PARSE("-o", "security=capkey,keyfile=/etc/osd.key,osd_version=1",
			       "t", "m"), MNT_PARSE_RUN);
	ck_assert_int_eq(o.dev.security, OSD_SEC_CAPKEY);
	ck_assert_int_eq(o.dev.osd_version, OSD_VERSION_1);
	ck_assert_str_eq(o.dev.key_file, keyfile); /* outlives libfuse's -o copy */
	ck_assert_int_eq(PARSE("-o", "osd_version=2,security=alldata", "t", "m"), MNT_PARSE_RUN);
	ck_assert_int_eq(o.dev.osd_version, OSD_VERSION_2);
	ck_assert_int_eq(o.dev.security, OSD_SEC_ALLDATA);
	ck_assert_int_eq(PARSE("-o", "osd_version=3", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "security=none", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "keyfile=", "t", "m"), -TC_EXIT_USAGE);
	/* mkfs keys the partition itself (examples/common/security.c) */
	ck_assert_int_eq(PARSE("-o", "mkfs,security=cmdrsp,keyfile=/k", "t", "m"),
			 MNT_PARSE_RUN);
	ck_assert_int_eq(o.mkfs, 1);
	ck_assert_int_eq(o.dev.security, OSD_SEC_CMDRSP);
}
END_TEST

START_TEST(loop_and_flags)
{
	ck_assert_int_eq(PARSE("-f", "-s", "-o", "max_threads=4,clone_fd", "t", "m"),
			 MNT_PARSE_RUN);
	ck_assert_int_eq(o.foreground & o.single_thread & o.clone_fd, 1);
	ck_assert_uint_eq(o.max_threads, 4);
	ck_assert_int_eq(PARSE("-d", "t", "m"), MNT_PARSE_RUN);
	ck_assert_int_eq(o.debug & o.foreground, 1);
	ck_assert(fuse_has("-d")); /* libfuse prints the requests */
	ck_assert_int_eq(PARSE("-o", "max_threads=0", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "max_threads=10001", "t", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("--help"), MNT_PARSE_HELP);
	ck_assert_int_eq(PARSE("-V"), MNT_PARSE_VERSION);
}
END_TEST

START_TEST(arguments)
{
	ck_assert_int_eq(PARSE("t"), -TC_EXIT_USAGE);
	/* several TARGETs before MOUNTPOINT: the devices of a layout */
	ck_assert_int_eq(PARSE("t", "m", "x"), MNT_PARSE_RUN);
	ck_assert_uint_eq(o.targets.n, 2);
	ck_assert_str_eq(o.targets.v[1], "m");
	ck_assert_str_eq(o.mountpoint, "x");
	ck_assert_int_eq(PARSE("-o", "layout=raid5:width=3", "a", "b", "c", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "mkfs,layout=raid5:width=4", "a", "b", "c", "m"),
			 -TC_EXIT_USAGE); /* 4 wide on 3 devices */
	ck_assert_int_eq(PARSE("-o", "mkfs,layout=raid9", "a", "b", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("-o", "mkfs,layout=raid5:su=16K:width=3", "a", "b", "c", "m"),
			 MNT_PARSE_RUN);
	ck_assert_int_eq(o.map.raid, OSDFS_RAID_5);
	ck_assert_uint_eq(o.map.stripe_unit, 16384);
	ck_assert_uint_eq(o.map.group_width, 3);
	ck_assert_int_eq(PARSE("iscsi://host/iqn.2026-12.x", "m"), -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("http://host/", "m"), -TC_EXIT_USAGE);
	/* an iSCSI URL with its options (names as osdctl's and osdfs's) */
	ck_assert_int_eq(PARSE("-o", "initiator-name=iqn.2026-12.org.test:i,header-digest=crc32c,"
			       "data-digest=none,chap-user=u,chap-secret-file=/nonexistent",
			       "iscsi://127.0.0.1:3261/iqn.2026-12.org.osd:target/0", "m"),
			 MNT_PARSE_RUN);
	ck_assert(o.dev.remote);
	ck_assert_str_eq(o.dev.initiator_name, "iqn.2026-12.org.test:i");
	ck_assert_int_eq(o.dev.header_digest, OSD_ISCSI_DIGEST_CRC32C);
	ck_assert_int_eq(o.dev.data_digest, OSD_ISCSI_DIGEST_NONE);
	ck_assert_str_eq(o.dev.chap_user, "u");
	ck_assert_str_eq(o.dev.chap_secret_file, "/nonexistent");
	ck_assert(!fuse_has_opt("chap-user=u"));
	ck_assert_int_eq(PARSE("-o", "header-digest=md5", "iscsi://h/iqn.2026-12.x:t/0", "m"),
			 -TC_EXIT_USAGE);
	ck_assert_int_eq(PARSE("iscsi://h:0/iqn.2026-12.x:t/0", "m"), -TC_EXIT_USAGE);
	/* not ours: libfuse judges it when the session is created */
	ck_assert_int_eq(PARSE("-o", "allow_other,pid=65536,no_such_thing,mkfs", "t", "m"),
			 MNT_PARSE_RUN);
	ck_assert(fuse_has_opt("allow_other") && fuse_has_opt("no_such_thing"));
	ck_assert(!fuse_has_opt("pid=65536") && !fuse_has_opt("mkfs"));
	/* a TARGET that -o would split on is not used as the source name */
	ck_assert_int_eq(PARSE("/srv/a,b", "m"), MNT_PARSE_RUN);
	ck_assert(fuse_has_opt("fsname=osdfs"));
}
END_TEST

/* ---- lookup counts ---- */

START_TEST(lookups_basic)
{
	struct mnt_lookups *t;

	ck_assert_int_eq(mnt_lookups_new(&t), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(mnt_lookups_add(t, 5), 0);
	ck_assert_int_eq(mnt_lookups_drop(t, 5, 2), 1);
	ck_assert_int_eq(mnt_lookups_drop(t, 5, 1), 0);
	ck_assert_int_eq(mnt_lookups_drop(t, 5, 1), -ENOENT);
	ck_assert_int_eq(mnt_lookups_add(t, UINT64_MAX), 0);
	ck_assert_int_eq(mnt_lookups_drop(t, UINT64_MAX, 2), -ENOENT); /* more than held */
	ck_assert_int_eq(mnt_lookups_drop(t, UINT64_MAX, 1), -ENOENT); /* and it is gone */
	mnt_lookups_free(t);
}
END_TEST

/* Random adds and drops over clustered inode numbers, checked against an
 * array: exercises growth and backward-shift deletion across wrap-around. */
START_TEST(lookups_model)
{
	enum { N = 6000, OPS = 300000 };
	static uint64_t model[N];
	struct mnt_lookups *t;
	uint64_t rng = 0x9e3779b97f4a7c15ULL;

	memset(model, 0, sizeof(model));
	ck_assert_int_eq(mnt_lookups_new(&t), 0);
	for (int i = 0; i < OPS; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		size_t k = (size_t)(rng % N);
		uint64_t ino = (k % 3 == 0) ? (uint64_t)k << 40 | 1 : (uint64_t)k + 1;

		if ((rng >> 32) % 3 != 0) {
			ck_assert_int_eq(mnt_lookups_add(t, ino), 0);
			model[k]++;
		} else {
			uint64_t n = 1 + (rng >> 40) % 3;
			int64_t left = mnt_lookups_drop(t, ino, n);

			if (model[k] < n) {
				ck_assert_int_eq(left, -ENOENT);
				model[k] = 0;
			} else {
				model[k] -= n;
				ck_assert_int_eq(left, (int64_t)model[k]);
			}
		}
	}
	for (size_t k = 0; k < N; k++) {
		uint64_t ino = (k % 3 == 0) ? (uint64_t)k << 40 | 1 : (uint64_t)k + 1;

		if (model[k])
			ck_assert_int_eq(mnt_lookups_drop(t, ino, model[k]), 0);
		ck_assert_int_eq(mnt_lookups_drop(t, ino, 1), -ENOENT);
	}
	mnt_lookups_free(t);
}
END_TEST

static Suite *mount_units_suite(void)
{
	Suite *s = suite_create("osdfs-mount units");
	TCase *opts = tcase_create("options");
	TCase *lk = tcase_create("lookups");

	tcase_add_checked_fixture(opts, opt_setup, opt_teardown);
	tcase_add_test(opts, defaults);
	tcase_add_test(opts, pid_full_range);
	tcase_add_test(opts, pid_rejected);
	tcase_add_test(opts, timeouts);
	tcase_add_test(opts, probe_interval);
	tcase_add_test(opts, mkfs_format_ro);
	tcase_add_test(opts, device_options);
	tcase_add_test(opts, loop_and_flags);
	tcase_add_test(opts, arguments);
	suite_add_tcase(s, opts);
	tcase_add_test(lk, lookups_basic);
	tcase_add_test(lk, lookups_model);
	suite_add_tcase(s, lk);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mount_units_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
