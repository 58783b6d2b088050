/* See daemon_wait.h. */
#include "daemon_wait.h"

#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t osd_test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The port in @p file, or 0 while it holds no complete number. */
static unsigned read_port(const char *file)
{
	char buf[32] = "";
	FILE *f = fopen(file, "r");
	unsigned long v;
	size_t n;
	char *e;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	v = strtoul(buf, &e, 10);
	return n && v > 0 && v < 65536 && (*e == '\n' || *e == '\0') ? (unsigned)v : 0;
}

unsigned osd_test_wait_port(const char *file, pid_t *pid, unsigned timeout_ms)
{
	uint64_t end = osd_test_now_ms() + timeout_ms;

	while (osd_test_now_ms() < end) {
		unsigned port = read_port(file);
		int status;

		if (port)
			return port;
		if (waitpid(*pid, &status, WNOHANG) == *pid) {
			*pid = -1;
			return 0;
		}
		poll(NULL, 0, 10); /* waiting for a condition, bounded above */
	}
	return 0;
}

unsigned osd_test_targetd_start(const char *path, const char *dir, pid_t *pid,
				unsigned timeout_ms)
{
	char portfile[4200], store[4200];

	snprintf(portfile, sizeof(portfile), "%s/port", dir);
	snprintf(store, sizeof(store), "%s/store", dir);
	*pid = fork();
	if (*pid < 0)
		return 0;
	if (*pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGTERM); /* a test killed on timeout takes it along */
		if (null >= 0 && !getenv("OSD_TEST_VERBOSE"))
			dup2(null, 1), dup2(null, 2);
		execl(path, "osd-targetd", "--listen", "127.0.0.1:0", "--port-file", portfile,
		      "--create", store, (char *)NULL);
		_exit(127);
	}
	return osd_test_wait_port(portfile, pid, timeout_ms);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void osd_test_targetd_stop(pid_t *pid, const char *dir)
{
	int status;

	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, &status, 0);
	}
	*pid = -1;
	if (dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
