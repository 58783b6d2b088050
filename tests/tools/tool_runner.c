/* fork/exec of the tool with its stdout and stderr collected through pipes. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "tool_runner.h"

struct sink {
	char *buf;
	size_t len, cap;
};

static int sink_read(struct sink *s, int fd)
{
	char tmp[65536];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n <= 0)
		return n < 0 && errno == EINTR ? 1 : 0;
	if (s->len + (size_t)n + 1 > s->cap) {
		size_t ncap = (s->len + (size_t)n + 1) * 2;
		char *nb = realloc(s->buf, ncap);

		if (!nb)
			abort();
		s->buf = nb;
		s->cap = ncap;
	}
	memcpy(s->buf + s->len, tmp, (size_t)n);
	s->len += (size_t)n;
	s->buf[s->len] = '\0';
	return 1;
}

int run_toolv(struct run_result *r, const char *target, char *const *args)
{
	char *argv[64];
	int n = 0;

	if (target) {
		argv[n++] = (char *)"--target";
		argv[n++] = (char *)target;
	}
	for (int i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return run_progv(r, OSDFS_TOOL_PATH, argv);
}

int run_progv(struct run_result *r, const char *prog, char *const *args)
{
	struct sink out = { calloc(1, 1), 0, 1 }, err = { calloc(1, 1), 0, 1 };
	char *argv[64];
	int po[2], pe[2], n = 0, st;
	pid_t pid;

	argv[n++] = (char *)prog;
	for (int i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd p[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };

		if (po[0] < 0)
			p[0].fd = -1;
		if (pe[0] < 0)
			p[1].fd = -1;
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents && !sink_read(&out, po[0])) {
			close(po[0]);
			po[0] = -1;
			open_fds--;
		}
		if (p[1].revents && !sink_read(&err, pe[0])) {
			close(pe[0]);
			pe[0] = -1;
			open_fds--;
		}
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (r) {
		r->status = st;
		r->out = out.buf;
		r->err = err.buf;
		r->out_len = out.len;
	} else {
		free(out.buf);
		free(err.buf);
	}
	return st;
}

int run_tool(struct run_result *r, const char *target, ...)
{
	char *args[60];
	va_list ap;
	int n = 0;

	va_start(ap, target);
	while (n < 59 && (args[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	args[n] = NULL;
	return run_toolv(r, target, args);
}

int run_prog(struct run_result *r, const char *prog, ...)
{
	char *args[60];
	va_list ap;
	int n = 0;

	va_start(ap, prog);
	while (n < 59 && (args[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	args[n] = NULL;
	return run_progv(r, prog, args);
}

void run_free(struct run_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

char *run_mkdtemp(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *p;

	if (!base || !*base)
		base = "/tmp";
	if (asprintf(&p, "%s/osdfs-%s-XXXXXX", base, tag) < 0 || !mkdtemp(p))
		abort();
	return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	remove(path);
	return 0;
}

void run_rmtree(const char *path)
{
	nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS);
}
