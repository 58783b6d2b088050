/*
 * The crash test: a child process creates objects, writes data, sets
 * attributes and removes objects in a loop, from two threads at once, and
 * reports through a pipe each step it was promised is durable. Iterations
 * rotate through the three ways of asking for durability: FLUSH after each
 * step, OSD_STORE_FUA on every call, and the sync_writes option. The parent
 * SIGKILLs the child at a random point (a seeded PRNG picks how many
 * acknowledgements to wait for and a short extra delay), reopens the store
 * and checks that every acknowledged byte and attribute is there. The store
 * is reused, so each iteration also recovers from all earlier kills.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store_helpers.h"

#define ITERATIONS 21
#define THREADS 2
#define MAX_STEPS 100000
#define MAX_LEN 70000
#define JOURNAL 0x1000ULL /* per-partition object every step appends to */

enum mode { MODE_FLUSH, MODE_FUA, MODE_SYNC_WRITES };

struct ack {
	int32_t thread;
	int32_t step;
};

static uint64_t part_of(int it, int t)
{
	return 0x10000ULL + (uint64_t)it * THREADS + (uint64_t)t;
}

static uint64_t oid_of(int step)
{
	return 0x10000ULL + (uint64_t)step;
}

static size_t len_of(uint64_t p, int step)
{
	return 1 + (size_t)(((unsigned)step * 7919u + (unsigned)p * 131u) % MAX_LEN);
}

/* Step k removes the object of step k-2 when k % 4 == 3. */
static int removed_by(int step)
{
	return (step + 2) % 4 == 3 ? step + 2 : -1;
}

static int child_step(struct osd_store *st, uint64_t p, int k, unsigned fl, uint8_t *buf)
{
	uint64_t o = oid_of(k);
	size_t len = len_of(p, k);
	struct iovec iov = { buf, len };
	uint8_t rec[16];
	th_fill(buf, len, p * 1000003 + o, 0);
	if (osd_store_object_create(st, p, o, OSD_OBJ_USER, fl) ||
	    osd_store_write(st, p, o, 0, &iov, 1, fl) ||
	    osd_store_attr_set(st, p, o, 0x10000, 1, &o, 8, fl) ||
	    osd_store_attr_set(st, p, 0, 0x10001, (uint32_t)k, &len, sizeof(len), fl))
		return -1;
	th_fill(rec, 16, p, (uint64_t)k * 16);
	iov = (struct iovec){ rec, 16 };
	uint64_t off;
	if (osd_store_append(st, p, JOURNAL, &iov, 1, fl, &off) || off != (uint64_t)k * 16)
		return -1;
	if (k % 4 == 3 && osd_store_object_remove(st, p, oid_of(k - 2), fl))
		return -1;
	return 0;
}

struct child_ctx {
	struct osd_store *st;
	enum mode mode;
	int it, thread, wfd;
	pthread_mutex_t *wmu;
};

static void *child_thread(void *arg)
{
	struct child_ctx *c = arg;
	uint64_t p = part_of(c->it, c->thread);
	unsigned fl = c->mode == MODE_FUA ? OSD_STORE_FUA : 0;
	uint8_t *buf = malloc(MAX_LEN + 1);
	if (!buf || osd_store_partition_create(c->st, p, fl) ||
	    osd_store_object_create(c->st, p, JOURNAL, OSD_OBJ_USER, fl))
		_exit(2);
	for (int k = 0; k < MAX_STEPS; k++) {
		if (child_step(c->st, p, k, fl, buf))
			_exit(3);
		if (c->mode == MODE_FLUSH && osd_store_flush_all(c->st))
			_exit(3);
		struct ack a = { c->thread, k };
		pthread_mutex_lock(c->wmu);
		ssize_t n = write(c->wfd, &a, sizeof(a));
		pthread_mutex_unlock(c->wmu);
		if (n != sizeof(a))
			_exit(4);
	}
	_exit(5); /* not reached in practice: the parent kills us */
}

static void child(const char *dir, int it, int wfd)
{
	struct osd_store *st = NULL;
	enum mode mode = (enum mode)(it % 3);
	struct osd_store_options o = { .create = 1, .sync_writes = mode == MODE_SYNC_WRITES };
	pthread_mutex_t wmu = PTHREAD_MUTEX_INITIALIZER;
	struct child_ctx ctx[THREADS];
	pthread_t th[THREADS];
	if (osd_store_open(&st, dir, &o, NULL, 0))
		_exit(2);
	for (int t = 0; t < THREADS; t++) {
		ctx[t] = (struct child_ctx){ st, mode, it, t, wfd, &wmu };
		if (pthread_create(&th[t], NULL, child_thread, &ctx[t]))
			_exit(2);
	}
	pthread_join(th[0], NULL);
	_exit(6);
}

/* Check partition @p p given steps 0..@p acked were acknowledged. */
static uint64_t verify(struct osd_store *st, uint64_t p, int acked, uint8_t *buf, uint8_t *exp)
{
	uint64_t bytes = 0;
	size_t n;
	if (acked < 0)
		return 0; /* nothing promised; the partition may or may not exist */
	ck_assert_int_eq(osd_store_partition_exists(st, p), 1);
	for (int k = 0; k <= acked; k++) {
		uint64_t o = oid_of(k), v = 0;
		size_t len = len_of(p, k);
		int rm = removed_by(k);
		int r = osd_store_object_type(st, p, o, NULL);
		if (rm >= 0 && rm <= acked) {
			ck_assert_msg(r == -ENOENT, "p %#llx step %d: removed object exists",
				      (unsigned long long)p, k);
			continue;
		}
		if (r == -ENOENT && rm >= 0)
			continue; /* removed by an unacknowledged step that still became durable */
		ck_assert_msg(r == 0, "p %#llx step %d: object missing", (unsigned long long)p, k);
		struct iovec iov = { buf, MAX_LEN + 1 };
		ck_assert_int_eq(osd_store_read(st, p, o, 0, &iov, 1, &n), 0);
		ck_assert_msg(n == len, "p %#llx step %d: length %zu, want %zu",
			      (unsigned long long)p, k, n, len);
		th_fill(exp, len, p * 1000003 + o, 0);
		ck_assert_msg(memcmp(buf, exp, len) == 0, "p %#llx step %d: data differs",
			      (unsigned long long)p, k);
		ck_assert_int_eq(osd_store_attr_get(st, p, o, 0x10000, 1, &v, 8, &n), 0);
		ck_assert_uint_eq(v, o);
		bytes += len + 8;
	}
	for (int k = 0; k <= acked; k++) {
		size_t lv = 0;
		ck_assert_int_eq(osd_store_attr_get(st, p, 0, 0x10001, (uint32_t)k, &lv, sizeof(lv), &n), 0);
		ck_assert_uint_eq(lv, len_of(p, k));
		bytes += sizeof(lv);
	}
	size_t jlen = (size_t)(acked + 1) * 16;
	struct iovec iov = { buf, jlen };
	ck_assert_int_eq(osd_store_read(st, p, JOURNAL, 0, &iov, 1, &n), 0);
	ck_assert_uint_eq(n, jlen);
	ck_assert(th_check(buf, jlen, p, 0));
	return bytes + jlen;
}

START_TEST(t_crash)
{
	char *dir = th_mkdtemp();
	const char *seed_env = getenv("OSD_CRASH_SEED");
	unsigned seed = seed_env ? (unsigned)strtoul(seed_env, NULL, 0) : 20261203u;
	uint8_t *buf = malloc(MAX_LEN + 1), *exp = malloc(MAX_LEN + 1);
	int acked[ITERATIONS][THREADS];
	uint64_t verified = 0, total_acks = 0;
	srand(seed);
	for (int it = 0; it < ITERATIONS; it++) {
		int pfd[2];
		ck_assert_int_eq(pipe(pfd), 0);
		int wait_for = 1 + rand() % 60;
		long extra_us = rand() % 3000;
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(pfd[0]);
			child(dir, it, pfd[1]);
		}
		close(pfd[1]);
		struct ack a;
		for (int t = 0; t < THREADS; t++)
			acked[it][t] = -1;
		for (int got = 0; got < wait_for && read(pfd[0], &a, sizeof(a)) == sizeof(a); got++)
			acked[it][a.thread] = a.step;
		/* Random extra delay so the kill lands anywhere in the following steps. */
		struct timespec ts = { 0, extra_us * 1000 };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		ck_assert_msg(WIFSIGNALED(status), "child exited early (status %d)", status);
		/* Acknowledgements still in the pipe were made before the kill too. */
		while (read(pfd[0], &a, sizeof(a)) == sizeof(a))
			acked[it][a.thread] = a.step;
		close(pfd[0]);
		/* at least one step of one thread (the other may not have acked yet) */
		ck_assert(acked[it][0] >= 0 || acked[it][1] >= 0);

		struct osd_store *st = th_open(dir);
		for (int j = 0; j <= it; j++)
			for (int t = 0; t < THREADS; t++)
				verified += verify(st, part_of(j, t), acked[j][t], buf, exp);
		osd_store_close(st);
		total_acks += (uint64_t)(acked[it][0] + acked[it][1] + 2);
	}
	printf("crash test: seed %u, %d iterations (flush/FUA/sync_writes), %llu acknowledged "
	       "steps, %llu bytes verified\n", seed, ITERATIONS, (unsigned long long)total_acks,
	       (unsigned long long)verified);
	free(buf);
	free(exp);
	th_rmtree(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store_crash");
	TCase *tc = tcase_create("crash");
	tcase_set_timeout(tc, 110);
	tcase_add_test(tc, t_crash);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
