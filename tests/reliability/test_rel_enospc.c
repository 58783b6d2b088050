/*
 * A full host filesystem heals (docs/target-store.md, "Quotas and ENOSPC").
 * The target's store sits on a 4 MiB tmpfs mounted in a private mount
 * namespace (root only; exit 77 otherwise). A file fills the tmpfs; SET
 * ATTRIBUTES keep answering GOOD (their records stay buffered), while WRITE
 * and FLUSH fail with DATA PROTECT, SPACE ALLOCATION FAILED WRITE PROTECT
 * (27h/07h), not QUOTA ERROR. The store logs the full filesystem once. Once
 * the file is deleted, CREATE, SET ATTRIBUTES, WRITE and FLUSH succeed
 * again within 1 s, the store logs that, and after a reopen every
 * acknowledged byte and value is there.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "../target/harness.h"

#define P1 0x10000ull
#define O1 0x10000ull
#define V OSD_V2
#define APAGE (OSD_APAGE_USER_BASE + 0x10000u)
#define NATTR 3
#define ALEN 2000

static char g_mnt[200];

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_full_warnings, g_room_notices;

static void on_event(void *arg, int severity, const char *msg)
{
	(void)arg;
	pthread_mutex_lock(&g_mu);
	if (severity == OSD_TARGET_LOG_WARNING && strstr(msg, "filesystem is full"))
		g_full_warnings++;
	if (severity == OSD_TARGET_LOG_NOTICE && strstr(msg, "room again"))
		g_room_notices++;
	pthread_mutex_unlock(&g_mu);
}

static void open_target(struct h_target *ht)
{
	struct osd_target_options o = OSD_TARGET_OPTIONS_INIT;
	o.log_event = on_event;
	ck_assert_int_eq(osd_target_open(&ht->tgt, ht->dir, &o), 0);
}

/* Fill the tmpfs with @p path; @return bytes written. */
static long long fill(const char *path)
{
	static uint8_t blk[65536];
	long long total = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	memset(blk, 0x5A, sizeof(blk));
	for (size_t chunk = sizeof(blk); chunk >= 4096; chunk /= 2) {
		ssize_t n;
		while ((n = write(fd, blk, chunk)) > 0)
			total += n;
		ck_assert_int_eq(errno, ENOSPC);
	}
	close(fd);
	return total;
}

static int run_status(struct h_target *ht, struct h_req *r)
{
	h_run(ht, r);
	return r->x.status;
}

static void set_attrs(struct h_target *ht, uint64_t oid, uint8_t tag)
{
	static uint8_t val[ALEN];
	struct h_req r;
	h_req(&r, V, OSD_ACT_SET_ATTRIBUTES, P1, oid);
	memset(val, tag, sizeof(val));
	for (uint32_t n = 1; n <= NATTR; n++)
		h_set(&r, APAGE, n, val, ALEN);
	h_run(ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

static void expect_attrs(struct h_target *ht, uint64_t oid, uint8_t tag)
{
	struct h_req r;
	h_req(&r, V, OSD_ACT_GET_ATTRIBUTES, P1, oid);
	for (uint32_t n = 1; n <= NATTR; n++)
		h_get(&r, APAGE, n);
	r.get_alloc = 4 * (ALEN + 64);
	h_run(ht, &r);
	h_expect_good(&r);
	for (uint32_t n = 1; n <= NATTR; n++) {
		const uint8_t *v;
		uint16_t len;
		ck_assert_int_eq(h_attr(&r, APAGE, n, &v, &len), 1);
		ck_assert_uint_eq(len, ALEN);
		for (size_t i = 0; i < ALEN; i++)
			ck_assert_uint_eq(v[i], tag);
	}
	h_req_free(&r);
}

static void expect_full(struct h_req *r)
{
	ck_assert_uint_eq(r->sense.key, OSD_SK_DATA_PROTECT);
	ck_assert_uint_eq(r->sense.asc, OSD_ASC_SPACE_ALLOC_FAILED);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

START_TEST(t_full_heals)
{
	static uint8_t a[200000], b[100000], back[200000];
	struct h_target ht;
	struct h_req r;
	char filler[300];

	snprintf(ht.dir, sizeof(ht.dir), "%s/store", g_mnt);
	snprintf(filler, sizeof(filler), "%s/filler", g_mnt);
	open_target(&ht);
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 13 + 5);
	h_create_partition(&ht, V, P1);
	h_create_object(&ht, V, P1, O1);
	h_write(&ht, V, P1, O1, 0, a, sizeof(a));
	h_req(&r, V, OSD_ACT_FLUSH_OSD, 0, 0);
	ck_assert_int_eq(run_status(&ht, &r), OSD_STATUS_GOOD);
	h_req_free(&r);

	long long filled = fill(filler);
	/* Metadata changes are buffered: GOOD, not yet durable. */
	set_attrs(&ht, O1, 0xA5);
	/* New data and FLUSH need room: the full-device sense, not QUOTA ERROR. */
	h_req(&r, V, OSD_ACT_WRITE, P1, O1);
	r.payload = b;
	r.payload_len = sizeof(b);
	r.cdb.start = sizeof(a);
	ck_assert_int_eq(run_status(&ht, &r), OSD_STATUS_CHECK_CONDITION);
	expect_full(&r);
	h_req_free(&r);
	h_req(&r, V, OSD_ACT_FLUSH_OSD, 0, 0);
	ck_assert_int_eq(run_status(&ht, &r), OSD_STATUS_CHECK_CONDITION);
	expect_full(&r);
	h_req_free(&r);
	pthread_mutex_lock(&g_mu);
	ck_assert_int_eq(g_full_warnings, 1);
	ck_assert_int_eq(g_room_notices, 0);
	pthread_mutex_unlock(&g_mu);

	/* Free the space: everything works again at once, no restart ("at
	 * once": within 3 s on a loaded ASan run; it stuck for 10 s and more). */
	ck_assert_int_eq(unlink(filler), 0);
	double t0 = now_s(), took;
	int st;
	do {
		h_req(&r, V, OSD_ACT_WRITE, P1, O1);
		r.payload = b;
		r.payload_len = sizeof(b);
		r.cdb.start = sizeof(a);
		st = run_status(&ht, &r);
		h_req_free(&r);
		took = now_s() - t0;
	} while (st != OSD_STATUS_GOOD && took < 3.0);
	ck_assert_msg(st == OSD_STATUS_GOOD, "WRITE still failing %.3f s after freeing space",
		      took);
	h_create_object(&ht, V, P1, O1 + 1);
	set_attrs(&ht, O1 + 1, 0x3C);
	h_write(&ht, V, P1, O1 + 1, 0, b, sizeof(b));
	h_req(&r, V, OSD_ACT_FLUSH_OSD, 0, 0);
	ck_assert_int_eq(run_status(&ht, &r), OSD_STATUS_GOOD);
	h_req_free(&r);
	took = now_s() - t0;
	ck_assert_double_lt(took, 3.0);
	pthread_mutex_lock(&g_mu);
	ck_assert_int_eq(g_full_warnings, 1);
	ck_assert_int_ge(g_room_notices, 1);
	pthread_mutex_unlock(&g_mu);

	/* Every acknowledged byte and value, after a reopen. */
	osd_target_close(ht.tgt);
	open_target(&ht);
	ck_assert_uint_eq(h_read(&ht, V, P1, O1, 0, back, sizeof(a)), sizeof(a));
	ck_assert_mem_eq(back, a, sizeof(a));
	ck_assert_uint_eq(h_read(&ht, V, P1, O1, sizeof(a), back, sizeof(b)), sizeof(b));
	ck_assert_mem_eq(back, b, sizeof(b));
	ck_assert_uint_eq(h_read(&ht, V, P1, O1 + 1, 0, back, sizeof(b)), sizeof(b));
	ck_assert_mem_eq(back, b, sizeof(b));
	expect_attrs(&ht, O1, 0xA5);
	expect_attrs(&ht, O1 + 1, 0x3C);
	osd_target_close(ht.tgt);
	printf("REL enospc: filled %lld bytes; WRITE and FLUSH gave 27h/07h while full; "
	       "healed in %.3f s; %zu data bytes and %d attribute values verified\n", filled,
	       took, sizeof(a) + 2 * sizeof(b), 2 * NATTR);
}
END_TEST

/* A 4 MiB tmpfs in a mount namespace of this process: 0, or 77 to skip. */
static int mount_small_fs(void)
{
	const char *tmp = getenv("TMPDIR");
	if (geteuid() != 0) {
		printf("test_rel_enospc: not root, cannot mount a small filesystem: skipped\n");
		return 77;
	}
	snprintf(g_mnt, sizeof(g_mnt), "%s/osdenospc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(g_mnt))
		return 1;
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("tmpfs", g_mnt, "tmpfs", 0, "size=4m,mode=0700") != 0) {
		printf("test_rel_enospc: cannot mount a tmpfs (%s): skipped\n", strerror(errno));
		rmdir(g_mnt);
		return 77;
	}
	return 0;
}

int main(void)
{
	int r = mount_small_fs();
	if (r)
		return r;
	Suite *s = suite_create("rel_enospc");
	TCase *tc = tcase_create("enospc");
	tcase_add_test(tc, t_full_heals);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	umount2(g_mnt, MNT_DETACH);
	rmdir(g_mnt);
	return failed ? 1 : 0;
}
