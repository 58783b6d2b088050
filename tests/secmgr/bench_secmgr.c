/*
 * Not a test: the credential round trip (p50, p99) over one TLS connection,
 * osd-secd's throughput in credentials/s with several clients asking at
 * once, and 4 KiB READs/s over iSCSI to osd-targetd with the manager as the
 * credential source (lifetime 600 s: served by the device's cache; 3 s: the
 * device asks the source, whose cache answers, every command) against a
 * device holding the same credential added by hand (what --key-file costs
 * once its credential is cached), on the secmgr_env test bed (127.0.0.1).
 * Usage: bench_secmgr [ROUND_TRIPS [THREADS [SECONDS]]]   (default 5000 4 5)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/uio.h>
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
	w.permissions = OSD_PERM_READ | OSD_PERM_WRITE | OSD_PERM_GET_ATTR;
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

#define IO_OBJ 0x10100ULL
#define IO_LEN 4096

/* READs of IO_OBJ for @p ms; returns READs/s. */
static double reads_per_s(osd_dev *dev, unsigned ms)
{
	static char buf[IO_LEN];
	struct osd_obj_id o = { PART_A, IO_OBJ };
	struct iovec iov = { buf, sizeof(buf) };
	uint64_t n = 0, t0 = now_ns(), end = t0 + (uint64_t)ms * 1000000u;

	while (now_ns() < end) {
		osd_req *req = NULL;
		int rc = osd_req_read(&req, dev, &o, 0, &iov, 1);

		if (rc == 0)
			rc = osd_req_execute(req);
		osd_req_free(req);
		if (rc < 0) {
			fprintf(stderr, "bench: READ: %s\n", strerror(-rc));
			exit(1);
		}
		n++;
	}
	return (double)n * 1e9 / (double)(now_ns() - t0);
}

static osd_dev *managed_dev(unsigned lifetime_ms, osd_secmgr **m)
{
	struct osd_secmgr_options o = OSD_SECMGR_OPTIONS_INIT;
	char err[256];
	osd_dev *dev;

	o.url = env.mgr_url;
	o.cert_file = secenv_path(&env, "writer.pem");
	o.key_file = secenv_path(&env, "writer.key");
	o.ca_file = secenv_path(&env, "ca.pem");
	o.lifetime_ms = lifetime_ms;
	if (secenv_open_dev(&env, &dev) < 0 || osd_secmgr_open(m, &o, err, sizeof(err)) < 0 ||
	    osd_secmgr_attach(*m, dev) < 0) {
		fprintf(stderr, "bench: cannot open a managed device\n");
		exit(1);
	}
	return dev;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define ROUNDS 15

/* Median of ROUNDS rounds of each mode, the order rotating from round to
 * round so that load from elsewhere falls on every mode alike. */
static void io_bench(unsigned round_ms)
{
	static char data[IO_LEN];
	struct osd_obj_id o = { PART_A, IO_OBJ };
	struct iovec iov = { data, sizeof(data) };
	struct osd_cred_request w = want(IO_OBJ);
	struct osd_credential cred;
	osd_secmgr *ml, *ms, *mw;
	osd_dev *base, *lng, *shrt;
	osd_dev *devs[3];
	double r[3][ROUNDS];
	osd_req *req = NULL;

	lng = managed_dev(0, &ml);
	shrt = managed_dev(3000, &ms);
	if (osd_req_create(&req, lng, &o, 1) == 0)
		osd_req_execute(req);
	osd_req_free(req);
	req = NULL;
	if (osd_req_write(&req, lng, &o, 0, &iov, 1) != 0 || osd_req_execute(req) != 0) {
		fprintf(stderr, "bench: cannot write the object\n");
		exit(1);
	}
	osd_req_free(req);
	if (secenv_open_mgr(&env, "writer", &mw) < 0 || secenv_open_dev(&env, &base) < 0 ||
	    osd_secmgr_request(mw, env.system_id, &w, 0, &cred) < 0 ||
	    osd_dev_add_credential(base, &cred) < 0) {
		fprintf(stderr, "bench: cannot set up the baseline device\n");
		exit(1);
	}
	devs[0] = base;
	devs[1] = lng;
	devs[2] = shrt;
	for (int i = 0; i < ROUNDS; i++)
		for (int j = 0; j < 3; j++) {
			int k = (i + j) % 3;

			r[k][i] = reads_per_s(devs[k], round_ms);
		}
	for (int k = 0; k < 3; k++)
		qsort(r[k], ROUNDS, sizeof(double), cmp_d);
	printf("iSCSI 4 KiB READ, CAPKEY, median of %d x %u ms: credential added by hand %.0f/s, "
	       "manager (600 s) %.0f/s (%+.1f %%), manager (3 s, source asked every command) "
	       "%.0f/s (%+.1f %%)\n", ROUNDS, round_ms, r[0][ROUNDS / 2], r[1][ROUNDS / 2],
	       100.0 * (r[1][ROUNDS / 2] / r[0][ROUNDS / 2] - 1), r[2][ROUNDS / 2],
	       100.0 * (r[2][ROUNDS / 2] / r[0][ROUNDS / 2] - 1));
	{
		struct osd_secmgr_stats a, b;

		osd_secmgr_get_stats(ml, &a);
		osd_secmgr_get_stats(ms, &b);
		printf("source asked: manager (600 s) %llu times (%llu round trips), manager (3 s) "
		       "%llu times (%llu round trips, %llu renewals)\n",
		       (unsigned long long)(a.cache_hits + a.round_trips),
		       (unsigned long long)a.round_trips,
		       (unsigned long long)(b.cache_hits + b.round_trips - b.refreshes),
		       (unsigned long long)b.round_trips, (unsigned long long)b.refreshes);
	}
	osd_dev_close(base);
	osd_dev_close(lng);
	osd_dev_close(shrt);
	osd_secmgr_close(ml);
	osd_secmgr_close(ms);
	osd_secmgr_close(mw);
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
	if (secenv_start(&env, "grant writer partition 0x10000 perms read,write,create,get_attr\n") < 0 ||
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
	io_bench(300);
	secenv_stop(&env);
	return 0;
}
