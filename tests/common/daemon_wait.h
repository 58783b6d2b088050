/* Waiting for a daemon a test started (osd-targetd --port-file), bounded and
 * without fixed sleeps. */
#ifndef OSD_TEST_DAEMON_WAIT_H
#define OSD_TEST_DAEMON_WAIT_H

#include <stdint.h>
#include <sys/types.h>

/* Monotonic milliseconds. */
uint64_t osd_test_now_ms(void);

/* The TCP port the daemon *pid wrote to @p file, or 0 when it exited (then
 * *pid is set to -1) or wrote nothing valid within @p timeout_ms. */
unsigned osd_test_wait_port(const char *file, pid_t *pid, unsigned timeout_ms);

/* Starts osd-targetd (@p path) on 127.0.0.1 with an ephemeral port,
 * serving a new store @p dir/store (its port file is @p dir/port); output
 * goes to /dev/null unless OSD_TEST_VERBOSE is set. Returns the port and
 * sets *pid, or returns 0 (then *pid is -1) when it did not start. */
unsigned osd_test_targetd_start(const char *path, const char *dir, pid_t *pid,
				unsigned timeout_ms);

/* Stops the daemon *pid (SIGTERM, then waits; *pid becomes -1) and removes
 * @p dir with everything in it. A *pid <= 0 or an empty @p dir is skipped. */
void osd_test_targetd_stop(pid_t *pid, const char *dir);

#endif
