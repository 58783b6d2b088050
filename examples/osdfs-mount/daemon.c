/*
 * Going to the background. The fork happens before anything else starts
 * (the embedded target may run threads, which a fork would lose), and the
 * parent waits until the child has mounted or failed, so the caller gets the
 * real exit status and messages still reach the terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mount.h"

static int status_fd = -1;

/* The parent: exit with the child's verdict. */
static void wait_for_child(pid_t child, int fd)
{
	unsigned char status;
	ssize_t n;
	int ws;

	do
		n = read(fd, &status, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && status == TC_EXIT_OK)
		_exit(status);
	if (n == 1) {
		/* the child exits right after a failure: reap it */
		while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
			;
		_exit(status);
	}
	/* the child died without a word: report how */
	while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
		;
	_exit(WIFEXITED(ws) ? WEXITSTATUS(ws) : TC_EXIT_FAILED);
}

int mnt_daemon_start(void)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	if (pid > 0) {
		close(fds[1]);
		wait_for_child(pid, fds[0]);
	}
	close(fds[0]);
	status_fd = fds[1];
	return 0;
}

static void tell_parent(unsigned char status)
{
	ssize_t n;

	if (status_fd < 0)
		return;
	do
		n = write(status_fd, &status, 1);
	while (n < 0 && errno == EINTR);
	close(status_fd);
	status_fd = -1;
}

void mnt_daemon_ready(void)
{
	int null;

	if (status_fd < 0)
		return;
	if (setsid() < 0)
		tc_err("setsid failed; staying in the caller's session");
	if (chdir("/") < 0)
		tc_err("cannot change to /");
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	tell_parent(TC_EXIT_OK);
}

void mnt_daemon_failed(int status)
{
	tell_parent((unsigned char)status);
}
