/* The hostile-target cases against the tools: osdctl, run as a child
 * process against the raw-PDU fake target, for each case prints its exit
 * status, time and peak RSS (its ru_maxrss) and checks them: exit 1
 * with the cause named on stderr (or the target's own answer where the
 * initiator recovers), within CASE_MS, peak RSS within RSS_SLACK_KB of a
 * well-behaved run's, and no sanitizer report (ASan/UBSan builds). docs/iscsi-initiator.md, "Bounds against a hostile
 * target" and "RFC 7143 error cases".
 *
 * OSD_HOSTILE_OSDCTL=PATH runs another osdctl (an older build, for a
 * before/after table), OSD_HOSTILE_REPORT=1 only prints (no checks), and
 * OSD_HOSTILE_KILL_MS bounds each run (default CASE_MS * 3). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "fake_target.h"

#define TARGET "iqn.2026-01.org.libosd:fake"
#define CASE_MS 8000          /* the longest a case may take */
#define RSS_SLACK_KB 16384    /* peak RSS over the well-behaved run's */
#define PING_LEN (64u << 10)

enum mode {
	M_PLAIN,            /* every command: CHECK CONDITION, ILLEGAL REQUEST */
	M_R2T_READ,         /* an R2T for every command with data-in */
	M_DATA_IN_BEYOND,   /* Data-In past the end of the buffer */
	M_DATA_IN_WRAP,     /* Data-In whose offset wraps */
	M_R2T_BEYOND,       /* an R2T past the end of a WRITE's data */
	M_ASYNC_DROP,       /* Async Message "connection will drop" for every command */
	M_BIG_PDU,          /* a 1 MiB Data-In segment, over MaxRecvDataSegmentLength */
	M_NOP_FLOOD,        /* NOP-Ins as fast as the socket takes them */
	M_PINGS_UNREAD,     /* 64 KiB pings, their answers never read */
	M_LOGIN_NO_T,       /* Login Responses that never set T */
	M_DATA_IN_DUP,      /* the first Data-In twice */
	M_STATSN_JUMP,      /* StatSN 2^20 ahead */
	M_DATA_AFTER_RSP,   /* the SCSI Response, then the Data-In */
	M_REJECT,           /* Reject (command not supported) of every command */
	M_ASYNC_LOGOUT,     /* Async logout request, then plain answers */
	M_ASYNC_SCSI,       /* Async SCSI event (unit attention), then plain answers */
	M_MAXCMDSN_BELOW,   /* MaxCmdSN < ExpCmdSN - 1 in every answer (ignored) */
	M_ATTR_LIST_HUGE,   /* GET ATTRIBUTES answered GOOD, list length 0xFFFFFFF0 */
	M_ASYNC_NEGOTIATE,  /* Async negotiation request, then plain answers */
	M_WINDOW_CLOSED,    /* every answer closes the CmdSN window, a NOP-In opens it */
	M_DATA_IN_CHECK,    /* reads answered by a Data-In carrying CHECK CONDITION */
};

struct tool_case {
	const char *name;
	enum mode mode;
	const char *cmd;      /* "info" or "write" */
	const char *expect;   /* on stderr */
};

static const struct tool_case cases[] = {
	{ "plain", M_PLAIN, "info", "ILLEGAL REQUEST" },
	{ "r2t_for_read", M_R2T_READ, "info", "Protocol error (iSCSI: R2T for a READ" },
	{ "data_in_beyond", M_DATA_IN_BEYOND, "info", "[1048576, +64) outside the" },
	{ "data_in_wrap", M_DATA_IN_WRAP, "info", "[4294967280, +64) outside the" },
	{ "r2t_beyond_write", M_R2T_BEYOND, "write", "R2T for [0, +4120) outside the 24-byte data-out" },
	{ "async_drop_every_cmd", M_ASYNC_DROP, "info", "drops the connection" },
	{ "pdu_over_max", M_BIG_PDU, "info", "data segment" },
	{ "nop_in_flood", M_NOP_FLOOD, "info", "NOP-In flood" },
	{ "pings_unread_64k", M_PINGS_UNREAD, "info", "ILLEGAL REQUEST" },
	{ "login_never_transits", M_LOGIN_NO_T, "info", "login not complete" },
	{ "data_in_duplicated", M_DATA_IN_DUP, "info", "Data-In with DataSN 0, expected 1" },
	{ "statsn_jump", M_STATSN_JUMP, "info", "StatSN 1048576 ahead" },
	{ "data_in_after_response", M_DATA_AFTER_RSP, "info", "SCSI Response after 0 of 1" },
	{ "reject_every_cmd", M_REJECT, "info", "command not supported" },
	{ "async_logout_request", M_ASYNC_LOGOUT, "info", "ILLEGAL REQUEST" },
	{ "async_scsi_event", M_ASYNC_SCSI, "info", "ILLEGAL REQUEST" },
	{ "maxcmdsn_below_window", M_MAXCMDSN_BELOW, "info", "ILLEGAL REQUEST" },
	{ "attr_list_len_huge", M_ATTR_LIST_HUGE, "info", "list length" },
	{ "async_negotiate_request", M_ASYNC_NEGOTIATE, "info", "ILLEGAL REQUEST" },
	{ "cmdsn_window_closed", M_WINDOW_CLOSED, "info", "ILLEGAL REQUEST" },
	{ "data_in_check_condition", M_DATA_IN_CHECK, "info", "Data-In carrying status 0x02" },
};

struct serve {
	enum mode mode;
	int stop;             /* atomic */
	int conns;
	int async_sent;       /* M_ASYNC_LOGOUT, M_PINGS_UNREAD: once per connection */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- the target's side ---- */

static void rsp_init(struct osd__iscsi_bhs *h, uint8_t op, uint32_t itt)
{
	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->flags = OSD_ISCSI_F_FINAL;
	h->itt = itt;
	h->ttt = OSD_ISCSI_RSVD_TAG;
}

/* CHECK CONDITION, ILLEGAL REQUEST, INVALID FIELD IN CDB: the command is
 * understood and refused, so the tools end with the target's answer. */
static int answer_plain(struct ft *ft, uint32_t itt)
{
	static const uint8_t sense[] = { 0x00, 0x08, 0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0 };
	struct osd__iscsi_bhs h;

	rsp_init(&h, OSD_ISCSI_OP_SCSI_RSP, itt);
	h.status = 0x02;
	ft_rsp_sn(ft, &h, 1);
	if (((struct serve *)ft->user)->mode == M_MAXCMDSN_BELOW)
		h.max_cmd_sn = h.exp_cmd_sn - 7;
	if (((struct serve *)ft->user)->mode != M_WINDOW_CLOSED)
		return ft_send(ft, &h, NULL, 0, sense, sizeof(sense));
	/* MaxCmdSN = ExpCmdSN - 1 (RFC 7143 §4.2.2.1), then a NOP-In opens it */
	ft->maxcmdsn = ft->expcmdsn - 1;
	h.max_cmd_sn = ft->maxcmdsn;
	if (ft_send(ft, &h, NULL, 0, sense, sizeof(sense)))
		return -1;
	ft->maxcmdsn = ft->expcmdsn;
	rsp_init(&h, OSD_ISCSI_OP_NOP_IN, OSD_ISCSI_RSVD_TAG);
	ft_rsp_sn(ft, &h, 0);
	return ft_send(ft, &h, NULL, 0, NULL, 0);
}

static int send_async(struct ft *ft, uint8_t event)
{
	static const uint8_t seg[] = { 0, 8, 0x72, 0x06, 0x2A, 0x09, 0, 0, 0, 0 };
	struct osd__iscsi_bhs h;

	rsp_init(&h, OSD_ISCSI_OP_ASYNC_MSG, OSD_ISCSI_RSVD_TAG);
	h.async_event = event;
	ft_rsp_sn(ft, &h, 1);
	return ft_send(ft, &h, NULL, 0, event == 0 ? seg : NULL, event == 0 ? sizeof(seg) : 0);
}

/* NOP-Ins as fast as the socket takes them, until the initiator drops. */
static void nop_flood(struct ft *ft)
{
	struct osd__iscsi_bhs h;
	uint8_t one[OSD_ISCSI_BHS_LEN], train[64 * OSD_ISCSI_BHS_LEN];
	uint64_t end = now_ms() + 10000;

	rsp_init(&h, OSD_ISCSI_OP_NOP_IN, OSD_ISCSI_RSVD_TAG);
	ft_rsp_sn(ft, &h, 0);
	if (osd__iscsi_pdu_build(one, sizeof(one), &h, NULL, 0, NULL, 0, &ft->dg) != sizeof(one))
		return;
	for (unsigned i = 0; i < 64; i++)
		memcpy(train + i * sizeof(one), one, sizeof(one));
	while (now_ms() < end && send(ft->fd, train, sizeof(train), MSG_NOSIGNAL) > 0)
		;
}

/* 64 KiB pings, 100 a second (under the flood rate), for 3 s, while the
 * target reads nothing: 19 MB of answers, about half beyond what the
 * socket buffers of the loopback hold. Then the command gets its plain
 * answer. */
static int pings_unread(struct ft *ft, uint32_t itt)
{
	static uint8_t d[PING_LEN];
	struct osd__iscsi_bhs h;
	uint64_t t0 = now_ms();

	for (unsigned i = 0; i < 300; i++) {
		struct timespec ts = { 0, 0 };
		uint64_t due = t0 + i * 10u, now = now_ms();

		if (now > due + 50) { /* stalled: resume the pace, no burst to catch up */
			t0 = now - i * 10u;
			due = now;
		}
		if (due > now) {
			/* pacing the sender, not waiting for anything */
			ts.tv_nsec = (long)(due - now) * 1000000L;
			nanosleep(&ts, NULL);
		}
		rsp_init(&h, OSD_ISCSI_OP_NOP_IN, OSD_ISCSI_RSVD_TAG);
		h.ttt = 0x1000 + i;
		ft_rsp_sn(ft, &h, 0);
		if (ft_send(ft, &h, NULL, 0, d, sizeof(d)))
			return -1;
	}
	return answer_plain(ft, itt);
}

/* Login Responses that neither transit nor end (RFC 7143 §11.13). */
static void login_no_transit(struct ft *ft)
{
	struct osd__iscsi_bhs h;

	for (unsigned i = 0; i < 100000 && ft_recv(ft) == 0; i++) {
		rsp_init(&h, OSD_ISCSI_OP_LOGIN_RSP, ft->pdu.bhs.itt);
		h.flags = OSD_ISCSI_LOGIN_FLAGS(0, 0, 0, 1);
		h.ttt = 0;
		memcpy(h.isid, ft->pdu.bhs.isid, 6);
		ft->expcmdsn = ft->pdu.bhs.cmd_sn;
		ft->maxcmdsn = ft->pdu.bhs.cmd_sn + 8;
		ft_rsp_sn(ft, &h, 1);
		if (ft_send(ft, &h, NULL, 0, NULL, 0))
			return;
	}
}

/* The data-in length of bidirectional command @p p (its Bidirectional
 * Read AHS, RFC 7143 §11.3.5), 0 without one. */
static uint32_t bidi_in_len(const struct osd__iscsi_pdu *p)
{
	for (size_t off = 0; off + 8 <= p->ahs_len;) {
		size_t len = (size_t)p->ahs[off] << 8 | p->ahs[off + 1];

		if (p->ahs[off + 2] == 2)
			return (uint32_t)p->ahs[off + 4] << 24 | (uint32_t)p->ahs[off + 5] << 16 |
			       (uint32_t)p->ahs[off + 6] << 8 | p->ahs[off + 7];
		off += (3 + len + 3) & ~(size_t)3;
	}
	return 0;
}

/* The hostile answer to SCSI Command @p q (or the plain one). */
static int answer_cmd(struct ft *ft, struct serve *sv, const struct osd__iscsi_bhs *q)
{
	static uint8_t d[(1u << 20) + 4];
	int rd = q->flags & OSD_ISCSI_F_READ, wr = q->flags & OSD_ISCSI_F_WRITE;
	uint32_t edtl = q->ttt;
	struct osd__iscsi_bhs h;

	rsp_init(&h, OSD_ISCSI_OP_DATA_IN, q->itt);
	switch (sv->mode) {
	case M_R2T_READ:
		if (!rd || wr)
			break;
		rsp_init(&h, OSD_ISCSI_OP_R2T, q->itt);
		h.ttt = 0x77;
		h.length = edtl ? edtl : 1;
		ft_rsp_sn(ft, &h, 0);
		return ft_send(ft, &h, NULL, 0, NULL, 0);
	case M_DATA_IN_BEYOND:
	case M_DATA_IN_WRAP:
		if (!rd)
			break;
		h.offset = sv->mode == M_DATA_IN_WRAP ? 0xFFFFFFF0u : 1u << 20;
		ft_rsp_sn(ft, &h, 0);
		return ft_send(ft, &h, NULL, 0, d, 64);
	case M_R2T_BEYOND:
		if (!wr)
			break;
		rsp_init(&h, OSD_ISCSI_OP_R2T, q->itt);
		h.ttt = 0x78;
		h.offset = 0;
		h.length = edtl + 4096;
		ft_rsp_sn(ft, &h, 0);
		return ft_send(ft, &h, NULL, 0, NULL, 0);
	case M_ASYNC_DROP:
		return send_async(ft, 2);
	case M_BIG_PDU:
		if (!rd)
			break;
		ft_rsp_sn(ft, &h, 0);
		return ft_send(ft, &h, NULL, 0, d, sizeof(d));
	case M_NOP_FLOOD:
		nop_flood(ft);
		return -1;
	case M_PINGS_UNREAD:
		if (!sv->async_sent++)
			return pings_unread(ft, q->itt);
		break;
	case M_DATA_IN_DUP:
		if (!rd || edtl < 2)
			break;
		h.flags = 0;
		ft_rsp_sn(ft, &h, 0);
		return ft_send(ft, &h, NULL, 0, d, edtl / 2) || ft_send(ft, &h, NULL, 0, d, edtl / 2);
	case M_DATA_IN_CHECK:
		if (!rd)
			break;
		h.flags |= OSD_ISCSI_F_STATUS;
		h.status = 0x02;
		ft_rsp_sn(ft, &h, 1);
		return ft_send(ft, &h, NULL, 0, d, edtl < 16 ? edtl : 16);
	case M_STATSN_JUMP:
		ft->statsn += 0x100000;
		break;
	case M_DATA_AFTER_RSP: {
		uint8_t b[2 * OSD_ISCSI_BHS_LEN + 64];
		long n1, n2;

		if (!rd)
			break;
		rsp_init(&h, OSD_ISCSI_OP_SCSI_RSP, q->itt);
		h.data_sn = 1; /* ExpDataSN: one Data-In */
		ft_rsp_sn(ft, &h, 1);
		n1 = osd__iscsi_pdu_build(b, sizeof(b), &h, NULL, 0, NULL, 0, &ft->dg);
		rsp_init(&h, OSD_ISCSI_OP_DATA_IN, q->itt);
		ft_rsp_sn(ft, &h, 0);
		n2 = n1 > 0 ? osd__iscsi_pdu_build(b + n1, sizeof(b) - (size_t)n1, &h, NULL, 0, d,
						   edtl < 16 ? edtl : 16, &ft->dg) : -1;
		return n2 > 0 ? ft_send_raw(ft, b, (size_t)(n1 + n2)) : -1;
	}
	case M_REJECT:
		rsp_init(&h, OSD_ISCSI_OP_REJECT, OSD_ISCSI_RSVD_TAG);
		h.response = 0x05; /* command not supported, RFC 7143 §11.17.1 */
		ft_rsp_sn(ft, &h, 1);
		return ft_send(ft, &h, NULL, 0, ft->buf, OSD_ISCSI_BHS_LEN);
	case M_ASYNC_LOGOUT:
	case M_ASYNC_NEGOTIATE:
		if (!sv->async_sent++ && send_async(ft, sv->mode == M_ASYNC_LOGOUT ? 1 : 4))
			return -1;
		break;
	case M_ASYNC_SCSI:
		if (send_async(ft, 0))
			return -1;
		break;
	case M_ATTR_LIST_HUGE: {
		/* a retrieved attributes list (osd2r05 §7.1.3.3: type 9h) whose
		 * length claims 4 GiB in an answer of a few bytes */
		uint32_t n = bidi_in_len(&ft->pdu);

		if (!rd || !wr || n < 8 || n > sizeof(d))
			break;
		memset(d, 0, n);
		d[0] = 0x09;
		d[4] = d[5] = d[6] = 0xFF;
		d[7] = 0xF0;
		h.flags |= OSD_ISCSI_F_STATUS;
		ft_rsp_sn(ft, &h, 1);
		return ft_send(ft, &h, NULL, 0, d, n);
	}
	default:
		break;
	}
	return answer_plain(ft, q->itt);
}

/* One connection: answers until the initiator logs out or drops. */
static void serve_conn(struct ft *ft, struct serve *sv)
{
	struct osd__iscsi_bhs h;
	int rc;

	sv->async_sent = 0;
	while (ft_recv(ft) == 0) {
		const struct osd__iscsi_bhs *q = &ft->pdu.bhs;

		switch (q->opcode) {
		case OSD_ISCSI_OP_SCSI_CMD:
			if (!q->immediate)
				ft->expcmdsn = q->cmd_sn + 1;
			/* M_WINDOW_CLOSED: one command at a time (login: window 1) */
			ft->maxcmdsn = ft->expcmdsn + (sv->mode == M_WINDOW_CLOSED ? 0 : 31);
			/* the token (not read by older initiators) is no case's target */
			rc = ft_answer_token(ft);
			if (rc < 0 || (rc == 0 && answer_cmd(ft, sv, q)))
				return;
			break;
		case OSD_ISCSI_OP_NOP_OUT:
			if (q->itt == OSD_ISCSI_RSVD_TAG)
				break; /* an answer to our ping */
			rsp_init(&h, OSD_ISCSI_OP_NOP_IN, q->itt);
			ft_rsp_sn(ft, &h, 1);
			if (ft_send(ft, &h, NULL, 0, NULL, 0))
				return;
			break;
		case OSD_ISCSI_OP_LOGOUT_REQ:
			rsp_init(&h, OSD_ISCSI_OP_LOGOUT_RSP, q->itt);
			ft_rsp_sn(ft, &h, 1);
			ft_send(ft, &h, NULL, 0, NULL, 0);
			return;
		default: /* Data-Out, task management: not answered */
			break;
		}
	}
}

/* Takes connections until the test shuts the listening socket. */
static void script_serve(struct ft *ft)
{
	struct serve *sv = ft->user;

	while (!__atomic_load_n(&sv->stop, __ATOMIC_SEQ_CST) && ft_accept(ft) == 0) {
		sv->conns++;
		if (sv->mode == M_LOGIN_NO_T)
			login_no_transit(ft);
		else if (ft_login(ft) == 0)
			serve_conn(ft, sv);
		ft->fail[0] = 0; /* what the initiator does is judged by the tool's result */
	}
	ft->fail[0] = 0;
}

/* ---- the tool's side ---- */

struct run {
	int status;           /* wait4 status */
	int killed;           /* ran past the bound */
	uint64_t ms;
	long maxrss_kb;
	char err[4096];       /* stderr */
};

static const char *osdctl_path(void)
{
	const char *p = getenv("OSD_HOSTILE_OSDCTL");

	return p && *p ? p : OSDCTL_PATH;
}

static int report_only(void)
{
	const char *p = getenv("OSD_HOSTILE_REPORT");

	return p && *p == '1';
}

static unsigned kill_ms(void)
{
	const char *p = getenv("OSD_HOSTILE_KILL_MS");

	return p && *p ? (unsigned)strtoul(p, NULL, 10) : CASE_MS * 3;
}

/* Kills the spawner (and with it the tool) if it hangs itself. */
struct watchdog {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pid_t pid;
	int done, fired;
};

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	struct timespec end;
	unsigned ms = kill_ms() + 10000; /* a backstop: the spawner bounds the tool */

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &end) == 0)
		;
	if (!w->done) {
		w->fired = 1;
		kill(w->pid, SIGKILL);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/*
 * "--spawn FD MS PROGRAM ARGV0 ARGS...": this binary, freshly executed, runs
 * the tool as its child, kills it after MS ms, and writes "STATUS MAXRSS
 * KILLED" to FD. The tool's ru_maxrss counts the pages it had from fork()
 * to exec() as well: forked from the test, with the fake target and the
 * earlier cases in it, that would be the test's size, not the tool's;
 * forked from this small process it is the tool's own peak.
 */
static int spawn_main(char **argv)
{
	int fd = atoi(argv[2]), st = 0, killed = 0, got;
	unsigned ms = (unsigned)strtoul(argv[3], NULL, 10);
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	struct rusage ru = { 0 };
	sigset_t chld;
	pid_t pid;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with the spawner */
		execv(argv[4], argv + 5);
		_exit(127);
	}
	if (pid < 0)
		return 1;
	/* the bound: SIGCHLD (its only child's) within MS, or the tool is killed */
	while ((got = sigtimedwait(&chld, NULL, &ts)) < 0 && errno == EINTR)
		;
	if (got < 0) {
		kill(pid, SIGKILL);
		killed = 1;
	}
	if (wait4(pid, &st, 0, &ru) != pid && !killed)
		return 1;
	dprintf(fd, "%d %ld %d\n", st, ru.ru_maxrss, killed);
	return 0;
}

static const char *self_path;

/* Runs osdctl @p cmd against the fake target on @p port. */
static void run_tool(uint16_t port, const char *cmd, struct run *r)
{
	char url[128], in[64], fdarg[16], msarg[16], rep[64] = "";
	int efd = memfd_create("stderr", MFD_CLOEXEC), infd = memfd_create("in", 0);
	int rfd = memfd_create("report", 0), st;
	uint64_t t0 = now_ms();
	struct watchdog w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };
	pthread_t th;
	pid_t pid;
	ssize_t n;

	ck_assert_int_ge(efd, 0);
	ck_assert_int_ge(infd, 0);
	ck_assert_int_ge(rfd, 0);
	for (unsigned i = 0; i < 64; i++) /* 4 KiB to write */
		ck_assert_int_eq(write(infd, memset(in, 'w', sizeof(in)), sizeof(in)), sizeof(in));
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/" TARGET "/0", port);
	snprintf(in, sizeof(in), "/proc/self/fd/%d", infd);
	snprintf(fdarg, sizeof(fdarg), "%d", rfd);
	snprintf(msarg, sizeof(msarg), "%u", kill_ms());
	memset(r, 0, sizeof(*r));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		const char *tool = osdctl_path();

		dup2(efd, 2);
		dup2(devnull, 1);
		if (!strcmp(cmd, "write"))
			execl(self_path, "spawn", "--spawn", fdarg, msarg, tool, "osdctl", "--target",
			      url, "write", "--input", in, "0x10000", "0x10000", (char *)NULL);
		else
			execl(self_path, "spawn", "--spawn", fdarg, msarg, tool, "osdctl", "--target",
			      url, cmd, (char *)NULL);
		_exit(127);
	}
	w.pid = pid;
	ck_assert_int_eq(pthread_create(&th, NULL, watchdog_main, &w), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	pthread_mutex_lock(&w.mu);
	w.done = 1;
	pthread_cond_signal(&w.cv);
	pthread_mutex_unlock(&w.mu);
	pthread_join(th, NULL);
	r->killed = w.fired; /* or the spawner's report, below */
	r->ms = now_ms() - t0;
	r->status = st; /* the spawner's, if it could not report the tool's */
	r->maxrss_kb = -1;
	n = pread(rfd, rep, sizeof(rep) - 1, 0);
	if (n > 0 && sscanf(rep, "%d %ld %d", &r->status, &r->maxrss_kb, &r->killed) != 3)
		r->maxrss_kb = -1;
	n = pread(efd, r->err, sizeof(r->err) - 1, 0);
	r->err[n > 0 ? n : 0] = 0;
	close(efd);
	close(infd);
	close(rfd);
}

static int exit_code(const struct run *r)
{
	return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128 + WTERMSIG(r->status);
}

/* One case: start the target, run the tool, stop the target. */
static void play(const struct tool_case *tc, struct run *r, int *conns)
{
	struct ft *ft = calloc(1, sizeof(*ft));
	struct serve sv = { .mode = tc->mode };

	ck_assert_ptr_nonnull(ft);
	ft->user = &sv;
	ft->token_by_script = 1;
	if (tc->mode == M_WINDOW_CLOSED)
		ft->window = 1;
	ft_start(ft, script_serve);
	ck_assert_msg(ft->fail[0] == 0, "%s", ft->fail);
	run_tool(ft->port, tc->cmd, r);
	__atomic_store_n(&sv.stop, 1, __ATOMIC_SEQ_CST);
	shutdown(ft->lfd, SHUT_RDWR); /* wakes ft_accept() */
	if (ft->fd >= 0)
		shutdown(ft->fd, SHUT_RDWR);
	ft_join(ft);
	*conns = sv.conns;
	free(ft);
}

static long baseline_kb;

START_TEST(tool_case)
{
	const struct tool_case *tc = &cases[_i];
	const char *only = getenv("OSD_HOSTILE_CASE");
	struct run r;
	char *nl;
	int conns;

	if (only && *only && _i && strcmp(only, tc->name))
		return;

	play(tc, &r, &conns);
	if (_i == 0)
		baseline_kb = r.maxrss_kb;
	nl = strrchr(r.err, '\n');
	if (nl && nl[1] == 0)
		*nl = 0;
	nl = strrchr(r.err, '\n');
	printf("case %-24s osdctl %-5s exit %3d%s time %6llu ms  peak RSS %7ld KiB  logins %4d  "
	       "stderr: %s\n", tc->name, tc->cmd, exit_code(&r), r.killed ? " (killed)" : "",
	       (unsigned long long)r.ms, r.maxrss_kb, conns, nl ? nl + 1 : r.err);
	fflush(stdout);
	if (report_only())
		return;
	ck_assert_msg(!strstr(r.err, "Sanitizer") && !strstr(r.err, "runtime error:"),
		      "%s: sanitizer report: %s", tc->name, r.err);
	ck_assert_msg(!r.killed, "%s: still running after %u ms", tc->name, kill_ms());
	ck_assert_msg(exit_code(&r) == 1, "%s: exit %d: %s", tc->name, exit_code(&r), r.err);
	ck_assert_msg(strstr(r.err, tc->expect), "%s: '%s' not in: %s", tc->name, tc->expect, r.err);
	ck_assert_msg(r.ms < CASE_MS, "%s: %llu ms", tc->name, (unsigned long long)r.ms);
	ck_assert_msg(r.maxrss_kb > 0 && r.maxrss_kb < baseline_kb + RSS_SLACK_KB,
		      "%s: peak RSS %ld KiB (plain %ld)", tc->name, r.maxrss_kb, baseline_kb);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iscsi_hostile_tools");
	TCase *tc = tcase_create("osdctl");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, tool_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (argc > 5 && !strcmp(argv[1], "--spawn"))
		return spawn_main(argv);
	self_path = "/proc/self/exe";
	sr = srunner_create(suite());

	if (access(osdctl_path(), X_OK)) {
		printf("no osdctl at %s\n", osdctl_path());
		return 77;
	}
	/* the cases run in order in this process: the first one's RSS is the baseline */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
