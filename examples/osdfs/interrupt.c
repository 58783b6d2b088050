/*
 * Stopping cleanly on SIGINT, SIGTERM and SIGHUP. A command that writes the
 * filesystem traps them: the handler only records the signal, the copy
 * loops stop at the next safe point (a partial file is removed, directories
 * get their modes), and the command unmounts as usual, so the filesystem is
 * left consistent with no mount record. Signals that reach another thread
 * (the library's lease renewal, an embedded target's) are passed on to the
 * main thread, so that a blocking read there (put from a pipe) returns
 * EINTR.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "osdfs_tool.h"

static volatile sig_atomic_t caught, count;
static pthread_t main_thread;

static void on_signal(int sig)
{
	static const char again[] =
		"osdfs: stopping cleanly after the current file; SIGKILL stops at once "
		"(the next command then needs --force)\n";
	int saved = errno;

	if (!pthread_equal(pthread_self(), main_thread)) {
		pthread_kill(main_thread, sig);
		errno = saved;
		return;
	}
	if (!caught)
		caught = sig;
	if (++count == 2 && write(STDERR_FILENO, again, sizeof(again) - 1) < 0)
		count = 2; /* nothing more to do about a closed stderr */
	errno = saved;
}

void tool_trap_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: a blocked read returns EINTR */
	main_thread = pthread_self();
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int tool_interrupted(void)
{
	return caught;
}

int tool_interrupt_status(struct tool *t, int status)
{
	const char *name = caught ? sigabbrev_np(caught) : NULL;

	if (!caught)
		return status;
	tc_err("%s: interrupted by SIG%s: stopped at a safe point (the current file finished "
	       "or removed) and unmounted", t->cmd, name ? name : "?");
	return 128 + caught;
}
