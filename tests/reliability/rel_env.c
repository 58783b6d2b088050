/* See rel_env.h. */
#define _XOPEN_SOURCE 700
#include "rel_env.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "daemon_wait.h"

#define START_WAIT_MS 15000

double rel_scale(double min)
{
	const char *s = getenv("OSD_REL_SCALE");
	double v = s && *s ? strtod(s, NULL) : 1.0;

	if (!(v > 0))
		v = 1.0;
	return v < min ? min : v;
}

unsigned long long rel_seed(unsigned long long dflt)
{
	const char *s = getenv("OSD_REL_SEED");

	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void rel_rmtree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void rel_die_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* the parent died before prctl() */
		_exit(1);
}

pid_t rel_targetd_start(const char *exe, const char *dir, const char *store, unsigned *port)
{
	char portfile[512];
	pid_t pid, self = getpid();

	snprintf(portfile, sizeof(portfile), "%s/port", dir);
	unlink(portfile);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		rel_die_with_parent(self);

		if (null >= 0 && !getenv("OSD_TEST_VERBOSE"))
			dup2(null, 1), dup2(null, 2);
		execl(exe, "osd-targetd", "--listen", "127.0.0.1:0", "--port-file", portfile,
		      "--create", store, (char *)NULL);
		_exit(127);
	}
	*port = osd_test_wait_port(portfile, &pid, START_WAIT_MS);
	return *port ? pid : -1;
}

static const char *skipped_test; /* a daemon test not added */

void rel_add_daemon_test(TCase *tc, const TTest *test, const char *targetd)
{
	if (targetd[0] && access(targetd, X_OK) == 0)
		tcase_add_test(tc, test);
	else
		skipped_test = test->name;
}

int rel_run_tcase(const char *suite, TCase *tc)
{
	Suite *s = suite_create(suite);
	SRunner *sr;
	int failed;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (!failed && skipped_test) {
		printf("%s: %s needs osd-targetd, which is not built: skipped\n", suite,
		       skipped_test);
		return 77;
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
