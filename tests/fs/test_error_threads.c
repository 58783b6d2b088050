/*
 * osd_dev_error() and osdfs_error() with several threads (run under
 * ThreadSanitizer in CI): threads keep failing calls on one handle, each
 * with its own message, while others read the message. Every message read
 * is one of the messages written, whole, and the copy-out calls cut like
 * snprintf().
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <osd/osd.h>
#include <osdfs/backends.h>
#include <osdfs/osdfs.h>
#include "../initiator/fake_transport.h"

#define ROUNDS 2000
#define READERS 2

static const struct osd_obj_id OBJ = { 0x10000, 0x10003 };

struct shared {
	osd_dev *dev;
	osdfs *fs;
	const char *msgs[2]; /* what the two writers' failures say */
	int stop;            /* the writers are done */
	unsigned bad;        /* messages read that were none of them */
	unsigned reads;
	pthread_mutex_t lock;
};

static int stopped(struct shared *s)
{
	int v;

	pthread_mutex_lock(&s->lock);
	v = s->stop;
	pthread_mutex_unlock(&s->lock);
	return v;
}

static void tally(struct shared *s, const char *m)
{
	int ok = !m[0] || !strcmp(m, s->msgs[0]) || !strcmp(m, s->msgs[1]);

	pthread_mutex_lock(&s->lock);
	s->reads++;
	s->bad += !ok;
	pthread_mutex_unlock(&s->lock);
}

/* ---- osd_dev_error ---- */

static int dev_fail(osd_dev *dev, int which)
{
	osd_req *req = NULL;
	int rc = which ? osd_req_clear(&req, dev, &OBJ, 0, 8)
		       : osd_req_punch(&req, dev, &OBJ, 0, 8);

	osd_req_free(req);
	return rc;
}

struct writer {
	struct shared *s;
	int which;
};

static void *dev_writer(void *p)
{
	struct writer *w = p;

	for (int i = 0; i < ROUNDS; i++)
		dev_fail(w->s->dev, w->which);
	return NULL;
}

static void *dev_reader(void *p)
{
	struct shared *s = p;

	do
		tally(s, osd_dev_error(s->dev));
	while (!stopped(s));
	return NULL;
}

static void run_threads(struct shared *s, void *(*wfn)(void *), void *(*rfn)(void *))
{
	pthread_t wt[2], rt[READERS];
	struct writer w[2] = { { s, 0 }, { s, 1 } };

	pthread_mutex_init(&s->lock, NULL);
	for (int i = 0; i < READERS; i++)
		ck_assert_int_eq(pthread_create(&rt[i], NULL, rfn, s), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&wt[i], NULL, wfn, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(wt[i], NULL);
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < READERS; i++)
		pthread_join(rt[i], NULL);
	pthread_mutex_destroy(&s->lock);
	ck_assert_uint_eq(s->bad, 0);
	ck_assert_uint_ge(s->reads, READERS);
}

START_TEST(dev_error_threads)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	static struct fake fk;
	struct shared s = { 0 };
	char m0[128], m1[128], small[8];

	fake_transport(&fk, &tp);
	o.osd_version = OSD_VERSION_1; /* PUNCH and CLEAR are OSD-2 only */
	ck_assert_int_eq(osd_dev_open(&s.dev, &tp, &o), 0);
	ck_assert_int_eq(dev_fail(s.dev, 0), -ENOTSUP);
	ck_assert_uint_eq(osd_dev_error_copy(s.dev, m0, sizeof(m0)), strlen(m0));
	ck_assert_int_eq(dev_fail(s.dev, 1), -ENOTSUP);
	osd_dev_error_copy(s.dev, m1, sizeof(m1));
	ck_assert_str_eq(m0, "PUNCH is not an OSD-1 command");
	ck_assert_str_eq(m1, "CLEAR is not an OSD-1 command");
	ck_assert_str_eq(osd_dev_error(s.dev), m1);
	/* cut like snprintf: the whole length back, a NUL-terminated prefix */
	ck_assert_uint_eq(osd_dev_error_copy(s.dev, small, sizeof(small)), strlen(m1));
	ck_assert_str_eq(small, "CLEAR i");
	ck_assert_uint_eq(osd_dev_error_copy(s.dev, NULL, 0), strlen(m1));
	ck_assert_uint_eq(osd_dev_error_copy(NULL, small, sizeof(small)), strlen("no device"));
	s.msgs[0] = m0;
	s.msgs[1] = m1;
	run_threads(&s, dev_writer, dev_reader);
	osd_dev_close(s.dev);
}
END_TEST

/* ---- osdfs_error ---- */

static int fs_fail(osdfs *fs, int which)
{
	struct osdfs_stat st;

	return which ? osdfs_unlink(fs, OSDFS_ROOT_INO, "missing-b")
		     : osdfs_lookup(fs, OSDFS_ROOT_INO, "missing-a", &st);
}

static void *fs_writer(void *p)
{
	struct writer *w = p;

	for (int i = 0; i < ROUNDS; i++)
		fs_fail(w->s->fs, w->which);
	return NULL;
}

static void *fs_reader(void *p)
{
	struct shared *s = p;
	char buf[256];

	do {
		tally(s, osdfs_error(s->fs));
		osdfs_error_copy(s->fs, buf, sizeof(buf));
		tally(s, buf);
	} while (!stopped(s));
	return NULL;
}

START_TEST(fs_error_threads)
{
	struct osdfs_mkfs_options mo = OSDFS_MKFS_OPTIONS_INIT;
	osdfs_backend *be;
	struct shared s = { 0 };
	char m0[256], m1[256];

	ck_assert_int_eq(osdfs_backend_mem_new(&be, 0), 0);
	ck_assert_int_eq(osdfs_mkfs(be, &mo), 0);
	ck_assert_int_eq(osdfs_mount(&s.fs, be, NULL), 0);
	ck_assert_int_eq(fs_fail(s.fs, 0), -ENOENT);
	osdfs_error_copy(s.fs, m0, sizeof(m0));
	ck_assert_int_eq(fs_fail(s.fs, 1), -ENOENT);
	osdfs_error_copy(s.fs, m1, sizeof(m1));
	ck_assert_str_ne(m0, m1);
	/* the generic message, made from the call and its errno when read */
	ck_assert_str_eq(m0, "lookup: No such file or directory");
	ck_assert_str_eq(osdfs_error(s.fs), m1);
	ck_assert_str_eq(osdfs_error(NULL), "no filesystem handle");
	s.msgs[0] = m0;
	s.msgs[1] = m1;
	run_threads(&s, fs_writer, fs_reader);
	ck_assert_int_eq(osdfs_unmount(s.fs), 0);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("error_threads");
	TCase *tc = tcase_create("errors");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, dev_error_threads);
	tcase_add_test(tc, fs_error_threads);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
