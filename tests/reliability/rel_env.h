/* What the reliability tests share: the scale factor and seed from the
 * environment, removing a test directory, and starting osd-targetd on a store. */
#ifndef TEST_REL_ENV_H
#define TEST_REL_ENV_H

#include <check.h>
#include <sys/types.h>

/* $OSD_REL_SCALE (1 when unset or not positive), at least @p min. The ASan
 * run in CI sets it below 1. */
double rel_scale(double min);

/* $OSD_REL_SEED (decimal or 0x hex), or @p dflt when unset: the base seed of
 * a test's pseudo-random schedule, printed so a failure can be replayed. */
unsigned long long rel_seed(unsigned long long dflt);

/* rm -r @p dir (errors ignored). */
void rel_rmtree(const char *dir);

/* In a child forked by @p parent: get SIGKILL when the parent (the test)
 * dies, so a failing test leaves no process behind. */
void rel_die_with_parent(pid_t parent);

/* Start @p exe (osd-targetd) on 127.0.0.1, kernel-chosen port, serving
 * @p store (created if missing); its port file goes in @p dir. Output goes
 * to /dev/null unless $OSD_TEST_VERBOSE. Returns the pid and the port in
 * *port, or -1 when it did not come up within 15 s. */
pid_t rel_targetd_start(const char *exe, const char *dir, const char *store, unsigned *port);

/* Add @p test, which needs osd-targetd, to @p tc when @p targetd (its path,
 * "" when not built) is executable; otherwise it is reported as skipped. */
void rel_add_daemon_test(TCase *tc, const TTest *test, const char *targetd);

/* Run the suite @p suite of one test case (stdout line-buffered so the REL
 * lines survive a failing test, SIGPIPE ignored). Returns main()'s status:
 * 77 (skipped) when the rest passed but a daemon test could not run. */
int rel_run_tcase(const char *suite, TCase *tc);

#endif
