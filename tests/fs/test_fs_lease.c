/*
 * The mount record's lease (docs/osdfs-format.md, 2.3): the record's bytes
 * (versions 1 and 2), how a holder is judged (alive, lease run out, process
 * ended), what forced mounts and fsck may do over each, the renewal, and a
 * taken-over mount noticing it at its next renewal.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <check.h>
#include <osdfs/fsck.h>

#include "fs_fixture.h"
#include "core/format.h"
#include "lebytes.h"

#define BOUND_SEC 15 /* the longest any condition below is waited for */

static void setup(void)
{
	fx_start(0);
}

static void teardown(void)
{
	fx_stop();
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The wall clock's seconds as the library reads them: time() may lag
 * clock_gettime() by a timer tick just after a second begins, which made a
 * record written by the mount look a second in the future. */
static int64_t wall_sec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec;
}

static const struct osdfs_backend_ops *ops(void)
{
	return osdfs_backend_ops_of(fx.inst.be);
}

static void *impl(void)
{
	return osdfs_backend_impl(fx.inst.be);
}

static uint32_t read_record(uint8_t *buf, uint32_t size)
{
	struct osdfs_attr a = { 0x10000, 2, buf, size };

	ck_assert_int_eq(ops()->get_attrs(impl(), 0x10000, &a, 1), 0);
	return a.len;
}

static void write_record(const uint8_t *buf, uint32_t len)
{
	struct osdfs_attr a = { 0x10000, 2, (void *)buf, len };

	ck_assert_int_eq(ops()->set_attrs(impl(), 0x10000, &a, 1), 0);
}

/* Leaves the filesystem unmounted with a record of @p host, @p pid (in pid
 * namespace @p pidns, 0 = unknown) whose lease of @p lease seconds was
 * renewed @p age seconds ago (version 2), or a version 1 record when
 * @p lease is 0. */
static void fake_holder_ns(const char *host, uint32_t pid, uint32_t pidns, uint32_t lease,
			   int64_t age)
{
	struct osdfs__mount_rec m = { 0 };
	uint8_t buf[OSDFS__MOUNT_LEN];

	if (fx.fs) {
		ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
		fx.fs = NULL;
	}
	m.mount_id = 0x1234567890abcdefULL;
	m.time_sec = wall_sec() - age - 60;
	m.pid = pid;
	m.pidns = pidns;
	m.lease_sec = lease;
	m.renewed_sec = wall_sec() - age;
	snprintf(m.host, sizeof(m.host), "%s", host);
	osdfs__mount_encode(buf, &m);
	if (lease == 0)
		buf[0] = 1; /* version 1 has no lease and ends at byte 96 */
	write_record(buf, lease ? OSDFS__MOUNT_LEN : OSDFS__MOUNT_V1_LEN);
}

static void fake_holder(const char *host, uint32_t pid, uint32_t lease, int64_t age)
{
	fake_holder_ns(host, pid, 0, lease, age);
}

static enum osdfs_holder_state holder_state(void)
{
	struct osdfs_holder h;

	ck_assert_int_eq(osdfs_holder_get(fx.inst.be, &h), 0);
	return h.state;
}

static int try_mount(unsigned int flags, char *err, size_t size)
{
	struct osdfs_mount_options o = fx_mount_options();

	o.flags |= flags;
	o.error = err;
	o.error_size = size;
	return osdfs_mount(&fx.fs, fx.inst.be, &o);
}

/* A version 2 record, byte by byte as the format document lays it out, and
 * a version 1 record (96 bytes, no lease) still read. */
START_TEST(test_record_bytes)
{
	static const uint8_t v2[OSDFS__MOUNT_LEN] = {
		2, 0, 0, 0, 30, 0, 0, 0,                         /* version, lease 30 s */
		0xEF, 0xCD, 0xAB, 0x90, 0x78, 0x56, 0x34, 0x12,  /* mount id */
		0x00, 0xF1, 0x53, 0x65, 0, 0, 0, 0,              /* mount time */
		0x39, 0x30, 0, 0, 0xFC, 0xFF, 0xFF, 0xEF,        /* pid 12345, pid ns */
		'n', 'o', 'd', 'e', '1',                         /* host, NUL padded */
		[96] = 0x1E, 0xF1, 0x53, 0x65, 0, 0, 0, 0,       /* renewed */
	};
	struct osdfs__mount_rec m = { 0 }, d;
	uint8_t buf[OSDFS__MOUNT_LEN];

	m.version = 2;
	m.lease_sec = 30;
	m.mount_id = 0x1234567890abcdefULL;
	m.time_sec = 0x6553F100;
	m.pid = 12345;
	m.pidns = 0xEFFFFFFC;
	m.renewed_sec = 0x6553F11E;
	strcpy(m.host, "node1");
	osdfs__mount_encode(buf, &m);
	ck_assert_int_eq(memcmp(buf, v2, sizeof(v2)), 0);
	ck_assert_int_eq(osdfs__mount_decode(&d, v2, sizeof(v2)), 0);
	ck_assert_uint_eq(d.version, 2);
	ck_assert_uint_eq(d.lease_sec, 30);
	ck_assert_uint_eq(d.pidns, 0xEFFFFFFC);
	ck_assert_uint_eq(d.mount_id, m.mount_id);
	ck_assert_int_eq(d.renewed_sec, 0x6553F11E);
	ck_assert_str_eq(d.host, "node1");
	/* version 1: the first 96 bytes, lease fields reserved (zero) */
	memcpy(buf, v2, sizeof(buf));
	buf[0] = 1;
	buf[4] = 0;
	memset(buf + 28, 0, 4);
	ck_assert_int_eq(osdfs__mount_decode(&d, buf, OSDFS__MOUNT_V1_LEN), 0);
	ck_assert_uint_eq(d.version, 1);
	ck_assert_uint_eq(d.lease_sec, 0);
	ck_assert_uint_eq(d.pidns, 0); /* reserved in version 1 */
	ck_assert_int_eq(d.renewed_sec, 0);
	ck_assert_uint_eq(d.pid, 12345);
	/* a short version 2 record and unknown versions are refused */
	ck_assert_int_eq(osdfs__mount_decode(&d, v2, OSDFS__MOUNT_V1_LEN), -EUCLEAN);
	buf[0] = 3;
	ck_assert_int_eq(osdfs__mount_decode(&d, buf, sizeof(buf)), -EUCLEAN);
}
END_TEST

/* The record a mount writes names this process and carries the lease. */
START_TEST(test_mount_writes_lease)
{
	uint8_t buf[128];
	char me[65] = "";
	struct osdfs_holder h;
	int64_t now = wall_sec();

	ck_assert_uint_eq(read_record(buf, sizeof(buf)), OSDFS__MOUNT_LEN);
	ck_assert_uint_eq(buf[0], 2);
	ck_assert_uint_eq(osdfs__get_le32(buf + 4), OSDFS_LEASE_DEFAULT);
	ck_assert_uint_eq(osdfs__get_le32(buf + 24), (uint32_t)getpid());
	ck_assert_int_eq(gethostname(me, sizeof(me) - 1), 0);
	ck_assert_int_eq(strncmp((char *)buf + 32, me, 64), 0);
	ck_assert_int_le((int64_t)osdfs__get_le64(buf + 96), (int64_t)now);
	ck_assert_int_ge((int64_t)osdfs__get_le64(buf + 96), (int64_t)now - 60);
	ck_assert_int_eq(osdfs_holder_get(fx.inst.be, &h), 0);
	ck_assert_int_eq(h.state, OSDFS_HOLDER_LIVE);
	ck_assert_uint_eq(h.pid, (uint32_t)getpid());
	ck_assert_int_gt(h.expires_in, 0);
	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	fx.fs = NULL;
	ck_assert_int_eq(osdfs_holder_get(fx.inst.be, &h), 0);
	ck_assert_int_eq(h.state, OSDFS_HOLDER_NONE);
}
END_TEST

/* A holder on another host with a current lease: no takeover, no repair;
 * a read-only look and a check are allowed. */
START_TEST(test_live_holder_refused)
{
	struct osdfs_fsck_options fo = OSDFS_FSCK_OPTIONS_INIT;
	struct osdfs_fsck_report rep;
	struct osdfs_holder h;
	char err[256] = "", text[256];

	fake_holder("elsewhere", 4242, 30, 1);
	ck_assert_int_eq(osdfs_holder_get(fx.inst.be, &h), 0);
	ck_assert_int_eq(h.state, OSDFS_HOLDER_LIVE);
	ck_assert_str_eq(h.host, "elsewhere");
	ck_assert_int_le(h.expires_in, 29);
	osdfs_holder_format(&h, text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, "mounted by host 'elsewhere' pid 4242"));
	ck_assert_ptr_nonnull(strstr(text, "runs out in"));
	ck_assert_int_eq(try_mount(0, err, sizeof(err)), -EBUSY);
	ck_assert_int_eq(try_mount(OSDFS_MOUNT_FORCE, err, sizeof(err)), -EBUSY);
	ck_assert_ptr_nonnull(strstr(err, "may still write"));
	/* a check runs and does not call the live record damage; a repair is refused */
	ck_assert_int_eq(osdfs_fsck(fx.inst.be, &fo, &rep), 0);
	ck_assert_uint_eq(rep.found[OSDFS_FSCK_MOUNT_RECORD], 0);
	fo.repair = 1;
	ck_assert_int_eq(osdfs_fsck(fx.inst.be, &fo, &rep), -EBUSY);
	ck_assert_uint_eq(read_record((uint8_t[128]){ 0 }, 128), OSDFS__MOUNT_LEN); /* kept */
	/* looking read-only is harmless */
	ck_assert_int_eq(try_mount(OSDFS_MOUNT_FORCE | OSDFS_MOUNT_RDONLY, err, sizeof(err)), 0);
	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	/* the explicit override takes it over */
	ck_assert_int_eq(try_mount(OSDFS_MOUNT_FORCE | OSDFS_MOUNT_FORCE_LIVE, err, sizeof(err)), 0);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_LIVE);
	ck_assert_uint_eq(osdfs_holder_get(fx.inst.be, &h), 0);
	ck_assert_uint_eq(h.pid, (uint32_t)getpid());
}
END_TEST

/* A lease that ran out, and a version 1 record of another host: force
 * takes over (after the repair fsck, which clears the stale record). */
START_TEST(test_expired_holder_taken_over)
{
	struct osdfs_fsck_options fo = OSDFS_FSCK_OPTIONS_INIT;
	struct osdfs_fsck_report rep;
	char err[256] = "";

	fake_holder("elsewhere", 4242, 30, 31);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_EXPIRED);
	ck_assert_int_eq(try_mount(0, err, sizeof(err)), -EBUSY);
	ck_assert_ptr_nonnull(strstr(err, "ran out"));
	ck_assert_int_eq(osdfs_fsck(fx.inst.be, &fo, &rep), -EUCLEAN);
	ck_assert_uint_eq(rep.found[OSDFS_FSCK_MOUNT_RECORD], 1);
	ck_assert_int_eq(try_mount(OSDFS_MOUNT_FORCE, err, sizeof(err)), 0);
	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	fx.fs = NULL;
	fake_holder("elsewhere", 4242, 0, 0);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_EXPIRED);
	ck_assert_int_eq(try_mount(OSDFS_MOUNT_FORCE, err, sizeof(err)), 0);
}
END_TEST

/* A holder of this host: alive while its process runs (even a version 1
 * record), dead once it has ended, whatever the lease says. */
START_TEST(test_local_process_judged)
{
	char me[65] = "", err[256] = "";
	pid_t child;
	int st;

	ck_assert_int_eq(gethostname(me, sizeof(me) - 1), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	fake_holder(me, (uint32_t)child, 30, 0);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_LIVE);
	fake_holder(me, (uint32_t)child, 0, 0);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_LIVE);
	ck_assert_int_eq(try_mount(OSDFS_MOUNT_FORCE, err, sizeof(err)), -EBUSY);
	kill(child, SIGKILL);
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_DEAD);
	fake_holder(me, (uint32_t)child, 30, 0);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_DEAD);
	ck_assert_int_eq(try_mount(0, err, sizeof(err)), -EBUSY);
	ck_assert_ptr_nonnull(strstr(err, "no longer runs"));
	ck_assert_int_eq(try_mount(OSDFS_MOUNT_FORCE, err, sizeof(err)), 0);
	/* this process's own record of a handle it no longer has counts as dead */
	fake_holder(me, (uint32_t)getpid(), 30, 0);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_DEAD);
	/* a pid of another pid namespace (a container of the same host name) says
	 * nothing here: its lease decides */
	fake_holder_ns(me, (uint32_t)child, 1, 30, 0);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_LIVE);
	fake_holder_ns(me, (uint32_t)child, 1, 30, 31);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_EXPIRED);
}
END_TEST

/* The mount renews its lease; a mount taken over notices at a renewal and
 * stops writing without a sync. */
START_TEST(test_renewal_and_takeover_noticed)
{
	struct osdfs_mount_options o = fx_mount_options();
	struct osdfs_info info;
	uint8_t buf[128];
	int64_t first;
	osdfs *second;
	int i;

	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	o.lease_sec = 2;
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), -EINVAL); /* below 3 s */
	o.lease_sec = 3;
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), 0);
	ck_assert_uint_eq(read_record(buf, sizeof(buf)), OSDFS__MOUNT_LEN);
	ck_assert_uint_eq(osdfs__get_le32(buf + 4), 3);
	first = (int64_t)osdfs__get_le64(buf + 96);
	for (i = 0; i < BOUND_SEC * 20; i++) {
		read_record(buf, sizeof(buf));
		if ((int64_t)osdfs__get_le64(buf + 96) > first)
			break;
		sleep_ms(50);
	}
	ck_assert_msg(i < BOUND_SEC * 20, "the lease was not renewed within %d s", BOUND_SEC);
	o.flags |= OSDFS_MOUNT_FORCE | OSDFS_MOUNT_FORCE_LIVE;
	o.lease_sec = 0;
	ck_assert_int_eq(osdfs_mount(&second, fx.inst.be, &o), 0);
	for (i = 0; i < BOUND_SEC * 20; i++) {
		osdfs_get_info(fx.fs, &info);
		if (info.readonly)
			break;
		sleep_ms(50);
	}
	ck_assert_msg(i < BOUND_SEC * 20, "the taken-over mount kept writing");
	ck_assert_ptr_nonnull(strstr(osdfs_error(fx.fs), "took this filesystem over"));
	ck_assert_int_eq(osdfs_mkdir(fx.fs, OSDFS_ROOT_INO, "x", 0755, NULL, NULL), -EROFS);
	ck_assert_int_eq(osdfs_unmount(fx.fs), -ESTALE);
	fx.fs = second;
	/* the renewal of the old mount did not bring its record back */
	ck_assert_uint_eq(read_record(buf, sizeof(buf)), OSDFS__MOUNT_LEN);
	ck_assert_uint_eq(osdfs__get_le32(buf + 24), (uint32_t)getpid());
	ck_assert_uint_eq(osdfs__get_le32(buf + 4), OSDFS_LEASE_DEFAULT);
}
END_TEST

/* Callers built against version 1 of the options still mount. */
START_TEST(test_options_version_1)
{
	struct osdfs_mount_options o = fx_mount_options();

	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	fx.fs = NULL;
	o.version = 1;
	o.lease_sec = 1; /* not part of version 1: ignored */
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), 0);
	ck_assert_int_eq(holder_state(), OSDFS_HOLDER_LIVE);
	o.version = 3;
	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	fx.fs = NULL;
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), -EINVAL);
}
END_TEST

static Suite *lease_suite(void)
{
	Suite *s = suite_create("fs_lease");
	TCase *pure = tcase_create("codec"), *img = tcase_create("holder");

	tcase_add_test(pure, test_record_bytes);
	tcase_add_checked_fixture(img, setup, teardown);
	tcase_set_timeout(img, 60);
	tcase_add_test(img, test_mount_writes_lease);
	tcase_add_test(img, test_live_holder_refused);
	tcase_add_test(img, test_expired_holder_taken_over);
	tcase_add_test(img, test_local_process_judged);
	tcase_add_test(img, test_renewal_and_takeover_noticed);
	tcase_add_test(img, test_options_version_1);
	suite_add_tcase(s, pure);
	suite_add_tcase(s, img);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	fx_require_backend();
	sr = srunner_create(lease_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
