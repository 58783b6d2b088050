/* See daemon_wait.h. */
#include "daemon_wait.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

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
