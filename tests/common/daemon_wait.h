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

#endif
