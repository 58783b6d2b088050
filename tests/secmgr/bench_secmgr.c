/*
 * Not a test: the credential round trip (p50, p99) over one TLS connection,
 * and osd-secd's throughput in credentials/s with several clients asking at
 * once, on the secmgr_env test bed (127.0.0.1). Usage:
 *   bench_secmgr [ROUND_TRIPS [THREADS [SECONDS]]]   (default 5000 4 5)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "daemon_wait.h"
#include "secmgr_env.h"

static struct secenv env;
static unsigned seconds = 5;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct osd_cred_request want(uint64_t id)
{
	struct osd_cred_request w;

	memset(&w, 0, sizeof(w));
	w.version = OSD_V2;
	w.obj.partition = PART_A;
	w.obj.id = id;
	w.permissions = OSD_PERM_READ | OSD_PERM_WRITE;
	w.method = OSD_SEC_CAPKEY;
	return w;
}

static void *worker(void *arg)
{
	uint64_t *count = arg, end;
	struct osd_credential c;
	osd_secmgr *m;

	if (secenv_open_mgr(&env, "writer", &m) < 0)
		return NULL;
	end = now_ns() + (uint64_t)seconds * 1000000000u;
	while (now_ns() < end) {
		struct osd_cred_request w = want(0x10000 + (*count & 1023));

		if (osd_secmgr_request(m, env.system_id, &w, 0, &c) < 0)
			break;
		(*count)++;
	}
	osd_secmgr_close(m);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 5000;
	unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 4;
	uint64_t *lat, total = 0, counts[64] = { 0 };
	pthread_t t[64];
	struct osd_credential c;
	osd_secmgr *m;
	uint64_t t0;

	if (argc > 3)
		seconds = (unsigned)atoi(argv[3]);
	if (!n || !threads || threads > 64 || !seconds)
		return 2;
	if (secenv_start(&env, "grant writer partition 0x10000 perms read,write,create\n") < 0 ||
	    secenv_open_mgr(&env, "writer", &m) < 0) {
		secenv_stop(&env);
		return 1;
	}
	lat = calloc(n, sizeof(*lat));
	for (unsigned i = 0; i < n; i++) {
		struct osd_cred_request w = want(0x10000 + i);

		t0 = now_ns();
		if (osd_secmgr_request(m, env.system_id, &w, 0, &c) < 0) {
			fprintf(stderr, "bench: %s\n", osd_secmgr_error(m));
			return 1;
		}
		lat[i] = now_ns() - t0;
	}
	osd_secmgr_close(m);
	qsort(lat, n, sizeof(*lat), cmp);
	printf("round trip: %u credentials, p50 %.1f us, p99 %.1f us, max %.1f us\n", n,
	       lat[n / 2] / 1e3, lat[(size_t)n * 99 / 100] / 1e3, lat[n - 1] / 1e3);
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, &counts[i]);
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		total += counts[i];
	}
	printf("throughput: %u clients, %u s: %llu credentials, %.0f credentials/s\n", threads,
	       seconds, (unsigned long long)total, (double)total / seconds);
	free(lat);
	secenv_stop(&env);
	return 0;
}
