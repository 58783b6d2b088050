/*
 * Micro-benchmark for the report: ns per osd_key_hmac on 236 bytes and per
 * osd_sec_sign_cdb (CAPKEY, CMDRSP); median of 5 runs. Not a test.
 * Times are thread CPU time, so other processes competing for the shared
 * cores do not inflate them; wall-clock medians are printed alongside.
 * Usage: bench_security [calls per run, default 200000]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include <osd/capability.h>
#include <osd/security.h>

#define RUNS 5

static double clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

enum what { HMAC236, SIGN_CAPKEY, SIGN_CMDRSP };

/* Returns CPU ns per call; *wall gets wall-clock ns per call. */
static double run(enum what w, osd_key *k, uint8_t *cdb, long calls, double *wall)
{
	static const uint8_t token[] = "bench token";
	struct iovec iov = { cdb, 236 };
	uint8_t mac[OSD_HMAC_LEN];
	double c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = clock_ns(CLOCK_MONOTONIC);
	long i;

	for (i = 0; i < calls; i++) {
		int rc;

		if (w == HMAC236)
			rc = osd_key_hmac(k, &iov, 1, mac);
		else
			rc = osd_sec_sign_cdb(k, w == SIGN_CAPKEY ? OSD_SEC_CAPKEY : OSD_SEC_CMDRSP,
					      cdb, 236, token, sizeof(token), 0x018C2A3B4C5DULL);
		if (rc != 0) {
			fprintf(stderr, "call failed: %d\n", rc);
			exit(1);
		}
	}
	*wall = (clock_ns(CLOCK_MONOTONIC) - t0) / (double)calls;
	return (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)calls;
}

int main(int argc, char **argv)
{
	static const char *names[] = { "osd_key_hmac (236 bytes)", "osd_sec_sign_cdb CAPKEY",
				       "osd_sec_sign_cdb CMDRSP" };
	long calls = argc > 1 ? atol(argv[1]) : 200000;
	uint8_t key[20], cdb[236];
	osd_key *k;
	int w, r;

	memset(key, 0x42, sizeof(key));
	memset(cdb, 0x17, sizeof(cdb));
	if (calls <= 0 || osd_key_new(&k, key, sizeof(key)) != 0)
		return 1;
	for (w = HMAC236; w <= SIGN_CMDRSP; w++) {
		double t[RUNS], wall[RUNS];

		cdb[80 + 2] = w == SIGN_CAPKEY ? OSD_SEC_CAPKEY : OSD_SEC_CMDRSP;
		for (r = 0; r < RUNS; r++)
			t[r] = run((enum what)w, k, cdb, calls, &wall[r]);
		qsort(t, RUNS, sizeof(t[0]), cmp_double);
		qsort(wall, RUNS, sizeof(wall[0]), cmp_double);
		printf("%-26s cpu median %.0f ns/call (min %.0f, max %.0f), wall median %.0f; "
		       "%d x %ld calls\n", names[w], t[RUNS / 2], t[0], t[RUNS - 1], wall[RUNS / 2],
		       RUNS, calls);
	}
	osd_key_free(k);
	return 0;
}
