/*
 * Shaped links for osd-bench --layout --link-rate: the osd-targetd of device
 * i runs in a network namespace of its own, joined to the benchmark's own
 * namespace by a veth pair; each end of the pair has a tbf qdisc at the link
 * rate, so both directions are shaped. Every namespace, address and qdisc is
 * one the benchmark made: the namespace osd-bench started in gains nothing.
 *
 * Names: osd-bench-PID (the benchmark's side: ends dev0, dev1, ..., device i
 * at 10.0.i.1/30) and osd-bench-PID-I (device i: end "bench", 10.0.i.2/30).
 * Removal does what `ip netns del` does, detach the bind mount under
 * /var/run/netns and unlink it; a namespace goes, with its veth end, once no
 * process is left in it. Plain system calls, so the signal path can use it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_net.h"

#define NETNS_DIR "/var/run/netns" /* where `ip netns` keeps its names */
#define NS_PREFIX "osd-bench-"
#define MAX_ARGS 24
#define TOOL_OUT 512

static char ip_tool[PATH_MAX], tc_tool[PATH_MAX];
static pid_t net_owner;        /* the process whose names these are */
static int bench_ns_made;      /* osd-bench-PID may exist */
static unsigned dev_ns_made;   /* osd-bench-PID-0 .. -(n-1) may exist */

static void ns_name(char *buf, size_t len, pid_t pid, int dev)
{
	if (dev < 0)
		snprintf(buf, len, NS_PREFIX "%ld", (long)pid);
	else
		snprintf(buf, len, NS_PREFIX "%ld-%d", (long)pid, dev);
}

/* The first executable @p name on PATH into @p out; 0 or -ENOENT. */
static int find_tool(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p = path ? path : "";

	while (*p) {
		size_t n = strcspn(p, ":");

		if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, p, name) < len &&
		    access(out, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}

/* Whether this process holds capability @p cap in its effective set. */
static int has_cap(unsigned cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return !!(data[cap / 32].effective & (1u << (cap % 32)));
}

int bench_net_check(char *err, size_t len)
{
	if (!has_cap(CAP_SYS_ADMIN) || !has_cap(CAP_NET_ADMIN)) {
		snprintf(err, len, "--link-rate needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN): "
			 "it makes network namespaces, veth pairs and tc qdiscs");
		return -EPERM;
	}
	if (find_tool("ip", ip_tool, sizeof(ip_tool)) ||
	    find_tool("tc", tc_tool, sizeof(tc_tool))) {
		snprintf(err, len, "--link-rate needs 'ip' and 'tc' on PATH (Debian: "
			 "apt-get install iproute2)");
		return -ENOENT;
	}
	return 0;
}

/* Runs a tool (argv, NULL-terminated) to completion; its output becomes the
 * error. 0, or -EIO with "COMMAND: OUTPUT" in @p err. */
static int run_tool(char *const argv[], char *err, size_t len)
{
	char out[TOOL_OUT];
	size_t n = 0, used;
	int pfd[2], st = 0;
	ssize_t r;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL); /* the parent blocks a few */
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while ((r = read(pfd[0], out + n, sizeof(out) - 1 - n)) != 0) {
		if (r > 0)
			n += (size_t)r;
		else if (errno != EINTR)
			break;
		if (n == sizeof(out) - 1) {
			char drain[256];

			while (read(pfd[0], drain, sizeof(drain)) > 0)
				;
			break;
		}
	}
	close(pfd[0]);
	if (pid < 0) {
		snprintf(err, len, "fork for %s: %s", argv[0], strerror(EAGAIN));
		return -EAGAIN;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	while (n && out[n - 1] == '\n')
		n--;
	out[n] = '\0';
	used = 0;
	for (int i = 0; argv[i] && used < len; i++)
		used += (size_t)snprintf(err + used, len - used, "%s%s", i ? " " : "",
					 i ? argv[i] : strrchr(argv[0], '/') + 1);
	if (used < len)
		snprintf(err + used, len - used, ": %s", n ? out : "failed");
	return -EIO;
}

/* run_tool() on @p tool and the NULL-terminated arguments after it. */
static int tool(char *err, size_t len, const char *tool_path, ...)
{
	char *argv[MAX_ARGS + 1];
	int argc = 0;
	va_list ap;

	argv[argc++] = (char *)tool_path;
	va_start(ap, tool_path);
	while (argc < MAX_ARGS && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	return run_tool(argv, err, len);
}

/* tbf on one end (egress, so one direction): a burst of 4 ms at the rate
 * (rate / HZ at HZ 250, the usual floor), at least 64 KiB so that a veth GSO
 * packet passes whole, and a queue of 50 ms so that TCP is not cut back by
 * drops while it fills the link. */
static int shape(const char *ns, const char *dev, uint64_t rate_bps, char *err, size_t len)
{
	char rate[32], burst[32];
	uint64_t b = rate_bps / 8 / 250;

	snprintf(rate, sizeof(rate), "%llubit", (unsigned long long)rate_bps);
	snprintf(burst, sizeof(burst), "%llu", (unsigned long long)(b < 65536 ? 65536 : b));
	return tool(err, len, tc_tool, "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf",
		    "rate", rate, "burst", burst, "latency", "50ms", (char *)NULL);
}

/* Device @p i: its namespace, the veth pair, addresses, links up, tbf. */
static int link_up(unsigned i, const char *bns, uint64_t rate_bps, char *err, size_t len)
{
	char dns[64], end[16], baddr[32], daddr[32];
	int rc;

	ns_name(dns, sizeof(dns), net_owner, (int)i);
	snprintf(end, sizeof(end), "dev%u", i);
	snprintf(baddr, sizeof(baddr), "10.0.%u.1/30", i);
	snprintf(daddr, sizeof(daddr), "10.0.%u.2/30", i);
	dev_ns_made = i + 1;
	if ((rc = tool(err, len, ip_tool, "netns", "add", dns, (char *)NULL)) ||
	    (rc = tool(err, len, ip_tool, "-n", bns, "link", "add", end, "type", "veth", "peer",
		       "name", "bench", "netns", dns, (char *)NULL)) ||
	    (rc = tool(err, len, ip_tool, "-n", bns, "addr", "add", baddr, "dev", end,
		       (char *)NULL)) ||
	    (rc = tool(err, len, ip_tool, "-n", dns, "addr", "add", daddr, "dev", "bench",
		       (char *)NULL)) ||
	    (rc = tool(err, len, ip_tool, "-n", bns, "link", "set", end, "up", (char *)NULL)) ||
	    (rc = tool(err, len, ip_tool, "-n", dns, "link", "set", "bench", "up",
		       (char *)NULL)) ||
	    (rc = shape(bns, end, rate_bps, err, len)) ||
	    (rc = shape(dns, "bench", rate_bps, err, len)))
		return rc;
	return 0;
}

/* This thread (and the threads and processes it makes) into namespace
 * @p name. 0 or -errno. */
static int enter_ns(const char *name)
{
	char path[sizeof(NETNS_DIR) + 256];
	int fd, rc = 0;

	snprintf(path, sizeof(path), NETNS_DIR "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		rc = -errno;
	close(fd);
	return rc;
}

int bench_net_up(unsigned ndev, uint64_t rate_bps, char *err, size_t len)
{
	char bns[64];
	int rc;

	net_owner = getpid();
	ns_name(bns, sizeof(bns), net_owner, -1);
	bench_ns_made = 1;
	if ((rc = tool(err, len, ip_tool, "netns", "add", bns, (char *)NULL)) ||
	    (rc = tool(err, len, ip_tool, "-n", bns, "link", "set", "lo", "up", (char *)NULL)))
		return rc;
	for (unsigned i = 0; i < ndev; i++)
		if ((rc = link_up(i, bns, rate_bps, err, len)))
			return rc;
	if ((rc = enter_ns(bns)))
		snprintf(err, len, "entering namespace %s: %s", bns, strerror(-rc));
	return rc;
}

int bench_net_enter_device(unsigned i)
{
	char dns[64];

	ns_name(dns, sizeof(dns), net_owner, (int)i);
	return enter_ns(dns);
}

void bench_net_addr(unsigned i, char *buf, size_t len)
{
	snprintf(buf, len, "10.0.%u.2", i);
}

/* What `ip netns del` does; a name already gone is fine. */
static void remove_ns(const char *name)
{
	char path[sizeof(NETNS_DIR) + 256];

	snprintf(path, sizeof(path), NETNS_DIR "/%s", name);
	umount2(path, MNT_DETACH);
	unlink(path);
}

void bench_net_down(void)
{
	char name[64];

	while (dev_ns_made > 0) {
		ns_name(name, sizeof(name), net_owner, (int)--dev_ns_made);
		remove_ns(name);
	}
	if (bench_ns_made) {
		ns_name(name, sizeof(name), net_owner, -1);
		remove_ns(name);
		bench_ns_made = 0;
	}
}

void bench_net_sweep(void)
{
	DIR *d = opendir(NETNS_DIR);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		const char *p = e->d_name + strlen(NS_PREFIX);
		char *end;
		long pid;

		if (strncmp(e->d_name, NS_PREFIX, strlen(NS_PREFIX)) || *p < '1' || *p > '9')
			continue;
		pid = strtol(p, &end, 10);
		if (*end && *end != '-')
			continue;
		/* left by an osd-bench that was killed: this process has made none
		 * yet, so a name with its own (reused) pid is stale too */
		if (pid == (long)getpid() || (kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			remove_ns(e->d_name);
	}
	closedir(d);
}

int bench_net_parse_rate(const char *s, uint64_t *bps)
{
	double v, mult = 1;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *s < '0' || *s > '9')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mult = 1e3; end++; break;
	case 'm': case 'M': mult = 1e6; end++; break;
	case 'g': case 'G': mult = 1e9; end++; break;
	}
	v *= mult;
	if (*end || v < 1e6 || v > 4e11)
		return -EINVAL;
	*bps = (uint64_t)(v + 0.5);
	return 0;
}
