/*
 * osd-targetd against hostile peers (docs/iscsi.md, "Limits"): a real
 * daemon with short configured bounds, held by idle TCP connections,
 * trickling logins, logged-in sessions that never answer a ping and writes
 * whose Data-Out never comes (from several 127.x.y.z source addresses),
 * while a normal client logs in and is served; then every hostile
 * connection is closed by a deadline and the daemon's RSS stayed bounded.
 * Also: eviction and the per-address limit, session reinstatement by
 * someone else, commands refused before their Data-Out (and CMDRSP nonces
 * used once), CHAP failure delays, libosd's initiator after the target
 * closed its idle session, the --allow list and the 12-byte CHAP secret
 * minimum.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <osd/attributes.h>
#include <osd/capability.h>
#include <osd/cdb.h>
#include <osd/iscsi.h>
#include <osd/request.h>
#include <osd/security.h>
#include <osd/sense.h>
#include <osdtarget/iscsi.h>

#include "client.h"
#include "daemon_wait.h"

#ifndef OSD_TARGETD_PATH
#define OSD_TARGETD_PATH ""
#endif

#define IQN OSD_TARGET_ISCSI_DEFAULT_NAME
#define PID 0x10000
#define OID 0x10001
#define IO_LEN 65536
#define MAX_ARGS 40
/* The flood's login bound and budget (passed as --limit login-ms, budget).
 * Idle sessions (IDLE_MS + nop-ms 1000) and stalled writes (login-ms for
 * dataout-ms too) end at the same time: long enough that a loaded ASan run
 * sets all of them up before the first is closed. */
#define LOGIN_MS 6000
#define IDLE_MS 5000
#define STR_(x) #x
#define STR(x) STR_(x)
#define BUDGET (32u << 20)
/* What the daemon may add to its RSS under the flood (docs/iscsi.md): the
 * data-out budget, each connection's own 1 MiB allowance, and a slack for
 * receive buffers (MaxRecvDataSegmentLength + read-ahead) and thread stacks
 * touched, for the MAX_CONN connections at most. */
#define MAX_CONN 80
#define ALLOWANCE_KB 1024
#define RSS_SLACK_KB (40u << 10)
/* ASan's quarantine and shadow memory make RSS meaningless: report only. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_ASSERTED 0
#else
#define RSS_ASSERTED 1
#endif

static char g_dir[256];
static pid_t g_pid = -1;
static int g_port;

static void new_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(g_dir, sizeof(g_dir), "%s/osddos-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

/* Start osd-targetd with @p extra arguments (NULL-terminated) on the store
 * g_dir/store (made in a new g_dir unless there is one). */
static void start_daemon(const char *const *extra)
{
	char portfile[300], store[300], log[300];
	const char *argv[MAX_ARGS];
	int n = 0;

	if (!g_dir[0])
		new_dir();
	snprintf(portfile, sizeof(portfile), "%s/port", g_dir);
	snprintf(store, sizeof(store), "%s/store", g_dir);
	snprintf(log, sizeof(log), "%s/log", g_dir);
	argv[n++] = "osd-targetd";
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	argv[n++] = "--port-file";
	argv[n++] = portfile;
	argv[n++] = "--create";
	while (extra && *extra && n < MAX_ARGS - 2)
		argv[n++] = *extra++;
	argv[n++] = store;
	argv[n] = NULL;
	g_pid = fork();
	ck_assert_int_ge(g_pid, 0);
	if (g_pid == 0) {
		int fd = open(getenv("OSD_TEST_VERBOSE") ? "/dev/stderr" : log,
			      O_WRONLY | O_CREAT | O_TRUNC, 0600);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (fd >= 0)
			dup2(fd, 2);
		execv(OSD_TARGETD_PATH, (char *const *)argv);
		_exit(127);
	}
	g_port = (int)osd_test_wait_port(portfile, &g_pid, 15000);
	ck_assert_msg(g_port > 0, "osd-targetd did not start");
}

static void teardown(void)
{
	osd_test_targetd_stop(&g_pid, g_dir);
	g_dir[0] = 0;
}

static unsigned rss_kb(pid_t pid)
{
	char path[64], line[256];
	unsigned kb = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %u kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Whether the peer closed @p fd within @p ms (what it sent is drained). */
static int closed_within(int fd, unsigned ms)
{
	uint64_t end = osd_test_now_ms() + ms;
	uint8_t buf[65536];
	for (;;) {
		uint64_t now = osd_test_now_ms();
		if (now >= end)
			return 0;
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, (int)(end - now)) <= 0)
			continue;
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return 1;
	}
}

/* Read a stalled writer's PDUs until the target closes it, counting the
 * writes ended BUSY (no room) and CHECK CONDITION (Data-Out overdue);
 * whether it closed within @p ms. */
static int drain_writer(int fd, unsigned ms, unsigned *busy, unsigned *timed_out)
{
	struct tc t = { .fd = fd };
	uint64_t end = osd_test_now_ms() + ms;
	int closed = 0;
	while (!closed && osd_test_now_ms() < end) {
		struct osd__iscsi_pdu p;
		int rc = tc_recv(&t, &p);
		if (rc == -ETIMEDOUT)
			continue;
		if (rc) {
			closed = 1;
		} else if (p.bhs.opcode == OSD_ISCSI_OP_SCSI_RSP) {
			*busy += p.bhs.status == 0x08;
			*timed_out += p.bhs.status == 0x02;
		}
	}
	free(t.rx);
	return closed;
}

static int raw_connect(const char *source)
{
	struct tc c;
	return tc_connect_from(&c, g_port, source) ? -1 : c.fd;
}

/* A CDB with a root capability for every object (GLOBAL) under @p m,
 * signed with @p root_key (its capability key) unless NOSEC. */
static void signed_cdb_perms(uint8_t out[OSD_CDB_V2_LEN], enum osd_action a, uint64_t pid,
			     uint64_t oid, uint64_t len, enum osd_sec_method m,
			     const uint8_t *root_key, const uint8_t *sid, uint16_t perms)
{
	struct osd_cdb c;
	osd_cdb_init(&c, OSD_V2, a);
	c.obj.partition = pid;
	c.obj.id = oid;
	c.length = len;
	osd_capability_init(&c.cap, OSD_V2, &c.obj, 0, perms, m);
	c.cap.desc_type = OSD_CAP_DESC_PAR;
	c.cap.object_type = OSD_OBJ_ROOT;
	c.cap.allowed_partition = 0;
	c.cap.allowed_object = 0;
	c.cap.permissions |= OSD_PERM_GLOBAL;
	ck_assert_int_eq(osd_cdb_encode(&c, out, OSD_CDB_V2_LEN), OSD_CDB_V2_LEN);
	if (m == OSD_SEC_NOSEC)
		return;
	osd_key *root, *ck;
	uint8_t key[OSD_HMAC_LEN];
	ck_assert_int_eq(osd_key_new(&root, root_key, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_capability_key(root, OSD_V2, &c.cap, sid, key), 0);
	ck_assert_int_eq(osd_key_new(&ck, key, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_sec_sign_cdb(ck, m, out, OSD_CDB_V2_LEN, NULL, 0, osd_now_ms()), 0);
	osd_key_free(ck);
	osd_key_free(root);
}

static void signed_cdb(uint8_t out[OSD_CDB_V2_LEN], enum osd_action a, uint64_t pid,
		       uint64_t oid, uint64_t len, enum osd_sec_method m, const uint8_t *root_key,
		       const uint8_t *sid)
{
	signed_cdb_perms(out, a, pid, oid, len, m, root_key, sid, OSD_PERM_ALL_V2);
}

static void osd_cdb(uint8_t out[OSD_CDB_V2_LEN], enum osd_action a, uint64_t pid, uint64_t oid,
		    uint64_t len)
{
	signed_cdb(out, a, pid, oid, len, OSD_SEC_NOSEC, NULL, NULL);
}

/* One OSD command; returns its latency in ms (status must be GOOD). */
static uint64_t osd_cmd(struct tc *t, enum osd_action a, uint64_t pid, uint64_t oid,
			const uint8_t *out, uint8_t *in, size_t len)
{
	uint8_t cdb[OSD_CDB_V2_LEN];
	osd_cdb(cdb, a, pid, oid, len);
	struct tc_cmd cmd = { .cdb = cdb, .cdb_len = sizeof(cdb), .out = out,
			      .out_len = out ? len : 0, .in = in, .in_len = in ? len : 0 };
	uint64_t t0 = osd_test_now_ms();
	ck_assert_int_eq(tc_command(t, &cmd), 0);
	ck_assert_msg(cmd.status == 0, "%s: status %u", osd_action_name(a), cmd.status);
	return osd_test_now_ms() - t0;
}

static uint64_t inquiry(struct tc *t)
{
	uint8_t cdb[6] = { 0x12, 0, 0, 0, 96, 0 }, in[96];
	struct tc_cmd cmd = { .cdb = cdb, .cdb_len = 6, .in = in, .in_len = sizeof(in) };
	uint64_t t0 = osd_test_now_ms();
	ck_assert_int_eq(tc_command(t, &cmd), 0);
	ck_assert_uint_eq(cmd.status, 0);
	return osd_test_now_ms() - t0;
}

/* A WRITE of @p edtl bytes whose data only comes for the first @p send
 * bytes (in answer to R2Ts); returns 1 if the target answered BUSY. */
static int stalled_write(struct tc *t, uint32_t edtl, size_t send)
{
	static uint8_t zeros[262144];
	uint8_t cdb[OSD_CDB_V2_LEN], ahs[300];
	osd_cdb(cdb, OSD_ACT_WRITE, PID, 0x30000 + (uint64_t)t->itt, edtl);
	long ahs_len = osd__iscsi_ahs_build(ahs, sizeof(ahs), cdb, sizeof(cdb), 0, 0);
	ck_assert_int_gt(ahs_len, 0);
	struct osd__iscsi_bhs h = { 0 };
	uint32_t itt = t->itt++;
	h.opcode = OSD_ISCSI_OP_SCSI_CMD;
	h.flags = OSD_ISCSI_ATTR_SIMPLE | OSD_ISCSI_F_WRITE | OSD_ISCSI_F_FINAL;
	h.itt = itt;
	h.ttt = edtl;
	h.cmd_sn = t->cmd_sn++;
	h.exp_stat_sn = t->exp_stat_sn;
	memcpy(h.cdb, cdb, 16);
	ck_assert_int_eq(tc_send(t, &h, ahs, (size_t)ahs_len, NULL, 0), 0);
	size_t sent = 0;
	while (sent < send) {
		struct osd__iscsi_pdu p;
		ck_assert_int_eq(tc_recv(t, &p), 0);
		if (p.bhs.opcode == OSD_ISCSI_OP_SCSI_RSP)
			return p.bhs.status == 0x08;
		if (p.bhs.opcode != OSD_ISCSI_OP_R2T)
			continue;
		uint32_t off = p.bhs.offset, end = off + p.bhs.length, sn = 0;
		for (; off < end && sent < send; sn++) {
			struct osd__iscsi_bhs d = { 0 };
			uint32_t n = end - off < sizeof(zeros) ? end - off : sizeof(zeros);
			d.opcode = OSD_ISCSI_OP_DATA_OUT;
			d.flags = off + n == end ? OSD_ISCSI_F_FINAL : 0;
			d.itt = itt;
			d.ttt = p.bhs.ttt;
			d.exp_stat_sn = t->exp_stat_sn;
			d.data_sn = sn;
			d.offset = off;
			ck_assert_int_eq(tc_send(t, &d, NULL, 0, zeros, n), 0);
			off += n;
			sent += n;
		}
	}
	return 0;
}

/* ---- the flood ---- */

enum { IDLE_TCP, TRICKLE, IDLE_SESSION, PENDING_WRITE, KINDS };
static const char *const kind_name[KINDS] = { "idle TCP", "trickling login",
					      "idle session", "pending writes" };
#define PER_KIND 18
#define PER_ADDR 6 /* below the daemon's per-address limit of 8 */

struct hostile {
	int fd[KINDS][PER_KIND];
	uint64_t opened[KINDS][PER_KIND];
	uint64_t trickle_closed[PER_KIND]; /* when the trickler saw the target close it */
	atomic_int stop;
};

/* Whether the target has closed @p fd (FIN or RST), without reading. */
static int peer_closed(int fd)
{
	struct pollfd p = { fd, POLLRDHUP, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Login bytes, one at a time, every 250 ms, to every trickling connection:
 * the login deadline must not move with them. It also notes when each one
 * is closed, so the deadline is measured where it happens and not when the
 * test gets round to looking (after the normal client, on a loaded machine). */
static void *trickler(void *arg)
{
	struct hostile *h = arg;
	/* 50 bytes: trickled for 12.5 s, past LOGIN_MS */
	static const char login[] = "\x43\x87\x00\x00\x00\x00\x01\x00"
				    "InitiatorName=iqn.2026-12.org.example:trickle";
	for (size_t i = 0;; i++) {
		int open = 0;
		for (int k = 0; k < PER_KIND; k++) {
			int fd = h->fd[TRICKLE][k];
			if (fd < 0 || h->trickle_closed[k])
				continue;
			if (peer_closed(fd)) {
				h->trickle_closed[k] = osd_test_now_ms();
				continue;
			}
			open++;
			if (i < sizeof(login) - 1)
				send(fd, login + i, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		}
		if (!open || atomic_load(&h->stop)) /* stop comes after every close */
			break;
		poll(NULL, 0, 250); /* the trickle's pace, not a synchronisation */
	}
	return NULL;
}

static void source_of(char *buf, size_t len, int kind, int i)
{
	snprintf(buf, len, "127.0.%d.%d", 10 + kind, 1 + i / PER_ADDR);
}

START_TEST(flood)
{
	static const char *const args[] = {
		"--limit", "connections=80", "--limit", "per-address=8",
		"--limit", "login-ms=" STR(LOGIN_MS), "--limit", "idle-ms=" STR(IDLE_MS),
		"--limit", "nop-ms=1000", "--limit", "dataout-ms=" STR(LOGIN_MS),
		"--limit", "budget=33554432", NULL };
	/* the slowest to set up first: all are held when the client comes */
	static const int order[KINDS] = { PENDING_WRITE, IDLE_SESSION, TRICKLE, IDLE_TCP };
	static struct hostile h;
	static uint8_t data[IO_LEN], back[IO_LEN];
	char src[32];
	pthread_t thr;
	unsigned busy = 0, timed_out = 0;

	start_daemon(args);
	unsigned rss0 = rss_kb(g_pid), peak = rss0;
	ck_assert_uint_gt(rss0, 0);
	memset(&h, 0, sizeof(h));
	uint64_t t0 = osd_test_now_ms();
	for (int j = 0; j < KINDS; j++) {
		int k = order[j];
		for (int i = 0; i < PER_KIND; i++) {
			source_of(src, sizeof(src), k, i);
			h.opened[k][i] = osd_test_now_ms();
			if (k == IDLE_TCP || k == TRICKLE) {
				h.fd[k][i] = raw_connect(src);
				ck_assert_int_ge(h.fd[k][i], 0);
				continue;
			}
			struct tc t;
			struct tc_login o = { .target = IQN, .source = src, .initial_r2t = 1,
					      .max_burst = 1u << 20 };
			ck_assert_int_eq(tc_login(&t, g_port, &o), 0);
			if (k == PENDING_WRITE) {
				ck_assert_int_eq(tc_clear_ua(&t, 0), 0); /* raw WRITEs follow */
				/* the first of each session's writes gets 4 MiB of data */
				busy += (unsigned)stalled_write(&t, 64u << 20, 4u << 20);
				for (int w = 0; w < 3; w++)
					stalled_write(&t, 64u << 20, 0);
			}
			h.fd[k][i] = t.fd;
			free(t.rx);
		}
		unsigned r = rss_kb(g_pid);
		peak = r > peak ? r : peak;
	}
	ck_assert_int_eq(pthread_create(&thr, NULL, trickler, &h), 0);
	unsigned held = 0;
	for (int k = 0; k < KINDS; k++)
		for (int i = 0; i < PER_KIND; i++)
			held += !closed_within(h.fd[k][i], 0);
	ck_assert_uint_ge(held, 64);

	/* A normal client, meanwhile: every command within 1 s. */
	struct tc c;
	struct tc_login o = { .target = IQN };
	uint64_t l0 = osd_test_now_ms(), max_lat;
	ck_assert_int_eq(tc_login(&c, g_port, &o), 0);
	max_lat = osd_test_now_ms() - l0;
	uint64_t lat = osd_cmd(&c, OSD_ACT_CREATE_PARTITION, PID, 0, NULL, NULL, 0);
	max_lat = lat > max_lat ? lat : max_lat;
	lat = osd_cmd(&c, OSD_ACT_CREATE, PID, OID, NULL, NULL, 0);
	max_lat = lat > max_lat ? lat : max_lat;
	int served = 2;
	for (int i = 0; i < 30; i++) {
		memset(data, i, sizeof(data));
		lat = osd_cmd(&c, OSD_ACT_WRITE, PID, OID, data, NULL, IO_LEN);
		max_lat = lat > max_lat ? lat : max_lat;
		lat = osd_cmd(&c, OSD_ACT_READ, PID, OID, NULL, back, IO_LEN);
		max_lat = lat > max_lat ? lat : max_lat;
		ck_assert_int_eq(memcmp(data, back, IO_LEN), 0);
		lat = inquiry(&c);
		max_lat = lat > max_lat ? lat : max_lat;
		served += 3;
		unsigned r = rss_kb(g_pid);
		peak = r > peak ? r : peak;
	}
	/* Below the hostile connections' deadlines (6 s): a daemon that waited
	 * for any of them would exceed it; slack above 1 s for a loaded ASan run. */
	ck_assert_msg(max_lat < 2500, "a command took %llu ms", (unsigned long long)max_lat);
	tc_logout(&c);
	tc_close(&c);

	/* Every hostile connection is closed by a deadline. */
	unsigned closed = 0;
	uint64_t latest[KINDS] = { 0 };
	for (int k = 0; k < KINDS; k++) {
		for (int i = 0; i < PER_KIND; i++) {
			int ok = k == PENDING_WRITE
					 ? drain_writer(h.fd[k][i], 10000, &busy, &timed_out)
					 : closed_within(h.fd[k][i], 10000);
			uint64_t when = osd_test_now_ms() - h.opened[k][i];
			ck_assert_msg(ok, "%s connection %d still open", kind_name[k], i);
			latest[k] = when > latest[k] ? when : latest[k];
			closed++;
			unsigned r = rss_kb(g_pid);
			peak = r > peak ? r : peak;
		}
	}
	atomic_store(&h.stop, 1);
	pthread_join(thr, NULL);
	latest[TRICKLE] = 0; /* from when the trickler saw each close */
	for (int i = 0; i < PER_KIND; i++) {
		uint64_t when = h.trickle_closed[i] ? h.trickle_closed[i] - h.opened[TRICKLE][i] : 0;

		ck_assert_msg(h.trickle_closed[i], "trickling login %d: its close was not seen", i);
		latest[TRICKLE] = when > latest[TRICKLE] ? when : latest[TRICKLE];
	}
	for (int k = 0; k < KINDS; k++)
		for (int i = 0; i < PER_KIND; i++)
			close(h.fd[k][i]);
	ck_assert_int_eq(waitpid(g_pid, NULL, WNOHANG), 0); /* still serving */
	fprintf(stderr, "flood: %u hostile connections opened (%d per kind), %u held when the "
		"client came, %u closed "
		"(latest after %llu/%llu/%llu/%llu ms: %s/%s/%s/%s); of their %d writes "
		"%u ended BUSY, %u timed out\n",
		KINDS * PER_KIND, PER_KIND, held, closed, (unsigned long long)latest[0],
		(unsigned long long)latest[1], (unsigned long long)latest[2],
		(unsigned long long)latest[3], kind_name[0], kind_name[1], kind_name[2],
		kind_name[3], 4 * PER_KIND, busy, timed_out);
	fprintf(stderr, "flood: %d commands served, max latency %llu ms (login included), "
		"RSS %u kB at start, peak %u kB (bound %u kB), %llu ms in all\n",
		served, (unsigned long long)max_lat, rss0, peak,
		rss0 + (BUDGET >> 10) + MAX_CONN * ALLOWANCE_KB + RSS_SLACK_KB,
		(unsigned long long)(osd_test_now_ms() - t0));
	if (RSS_ASSERTED)
		ck_assert_uint_le(peak, rss0 + (BUDGET >> 10) + MAX_CONN * ALLOWANCE_KB + RSS_SLACK_KB);
	/* The login deadline is absolute: a trickle does not extend it. */
	ck_assert_uint_eq(busy + timed_out, 4 * PER_KIND); /* every write was answered */
	ck_assert_uint_gt(busy, 0); /* 18 x 4 MiB fed: more than the budget holds */
	ck_assert_uint_ge(latest[TRICKLE], LOGIN_MS - 100);
	ck_assert_uint_lt(latest[TRICKLE], LOGIN_MS + 3000);

	/* And afterwards the daemon serves as before. */
	ck_assert_int_eq(tc_login(&c, g_port, &o), 0);
	inquiry(&c);
	tc_close(&c);
}
END_TEST

/* ---- eviction and the per-address limit ---- */

START_TEST(eviction_and_per_address)
{
	static const char *const args[] = { "--limit", "connections=12", "--limit", "reserved=4",
					    "--limit", "per-address=8", "--limit", "login-ms=8000",
					    NULL };
	int fd[9];
	char src[32];
	start_daemon(args);
	/* 8 connections in login (the most 12 - 4 allows), from 127.0.20.1 and .2 */
	for (int i = 0; i < 8; i++) {
		snprintf(src, sizeof(src), "127.0.20.%d", 1 + i / 4);
		fd[i] = raw_connect(src);
		ck_assert_int_ge(fd[i], 0);
	}
	/* A normal client still gets in: the oldest login is evicted. */
	struct tc c;
	struct tc_login o = { .target = IQN };
	uint64_t t0 = osd_test_now_ms();
	ck_assert_int_eq(tc_login(&c, g_port, &o), 0);
	inquiry(&c);
	/* well below login-ms=8000, which a daemon that did not evict would wait */
	ck_assert_uint_lt(osd_test_now_ms() - t0, 4000);
	ck_assert_msg(closed_within(fd[0], 10000), "the oldest login was not evicted");
	fprintf(stderr, "eviction: normal login in %llu ms with 8 logins held\n",
		(unsigned long long)(osd_test_now_ms() - t0));
	tc_close(&c);
	for (int i = 0; i < 8; i++)
		close(fd[i]);

	/* At most 8 connections from one address: the 9th is closed at once. */
	for (int i = 0; i < 9; i++) {
		fd[i] = raw_connect("127.0.22.1");
		ck_assert_int_ge(fd[i], 0);
	}
	ck_assert_msg(closed_within(fd[8], 10000), "9th connection from one address kept");
	o.source = "127.0.22.2";
	ck_assert_int_eq(tc_login(&c, g_port, &o), 0);
	tc_close(&c);
	for (int i = 0; i < 9; i++)
		close(fd[i]);
}
END_TEST

/* ---- session reinstatement ---- */

static const uint8_t victim_isid[6] = { 0x80, 0xAB, 0xCD, 0xEF, 0x01, 0x02 };

static void reinstatement(const char *user, const char *secret)
{
	struct tc v, a;
	struct tc_login vo = { .target = IQN, .initiator = "iqn.2026-12.org.osd:victim",
			       .isid = victim_isid, .chap_user = user, .chap_secret = secret };
	struct tc_login ao = vo;
	ck_assert_int_eq(tc_login(&v, g_port, &vo), 0);
	inquiry(&v);
	/* Another address with the victim's InitiatorName and ISID. */
	ao.source = "127.0.30.1";
	if (secret)
		ao.chap_secret = "not-the-secret!";
	int st = tc_login(&a, g_port, &ao);
	ck_assert_int_eq(st, secret ? 0x0201 : 0x0202);
	tc_close(&a);
	inquiry(&v); /* the victim's session still works */
	/* Its own initiator (same address; with CHAP the same user) may. */
	ck_assert_int_eq(tc_login(&a, g_port, &vo), 0);
	inquiry(&a);
	ck_assert_msg(closed_within(v.fd, 10000), "the replaced session still open");
	tc_close(&a);
	tc_close(&v);
}

START_TEST(reinstate_only_by_owner)
{
	start_daemon(NULL);
	reinstatement(NULL, NULL);
}
END_TEST

/* A secret file only its owner reads (osd-targetd insists). */
static void write_secret(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

/* Start with CHAP: the secret file lives in a directory of its own. */
static void start_chap_daemon(const char **extra, size_t nextra)
{
	static char path[300];
	const char *tmp = getenv("TMPDIR");
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/osddos-s-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/secret", dir);
	write_secret(path, "dos-test-secret-1\n");
	const char *args[MAX_ARGS] = { "--chap-user", "alice", "--chap-secret-file", path };
	for (size_t i = 0; i < nextra; i++)
		args[4 + i] = extra[i];
	args[4 + nextra] = NULL;
	start_daemon(args);
	unlink(path);
	rmdir(dir);
}

START_TEST(reinstate_chap)
{
	start_chap_daemon(NULL, 0);
	reinstatement("alice", "dos-test-secret-1");
}
END_TEST

/* ---- CHAP failures are delayed ---- */

START_TEST(chap_failures_delayed)
{
	const char *extra[] = { "--limit", "auth-delay-ms=100", "--limit",
				"auth-delay-max-ms=400" };
	struct tc t;
	start_chap_daemon(extra, 4);
	struct tc_login o = { .target = IQN, .chap_user = "alice", .chap_secret = "guess-guess-1",
			      .source = "127.0.40.1" };
	/* 6 wrong guesses: waits of 0, 100, 200, 400, 400, 400 ms before them */
	const unsigned expected = 1500;
	uint64_t t0 = osd_test_now_ms();
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(tc_login(&t, g_port, &o), 0x0201);
		tc_close(&t);
	}
	uint64_t took = osd_test_now_ms() - t0;
	/* The right secret from elsewhere is not held up. */
	o.source = "127.0.40.2";
	o.chap_secret = "dos-test-secret-1";
	uint64_t t1 = osd_test_now_ms();
	ck_assert_int_eq(tc_login(&t, g_port, &o), 0);
	uint64_t ok_ms = osd_test_now_ms() - t1;
	tc_close(&t);
	fprintf(stderr, "chap: 6 wrong guesses took %llu ms (at least %u expected); "
		"a right one from another address %llu ms\n", (unsigned long long)took,
		expected, (unsigned long long)ok_ms);
	ck_assert_uint_ge(took, expected);
	ck_assert_uint_lt(ok_ms, 2000); /* slack for a loaded ASan run */
}
END_TEST

/* ---- commands checked before their Data-Out ---- */

START_TEST(precheck_before_data_out)
{
	static const uint8_t root_key[OSD_HMAC_LEN] = "dos-test-root-key-20";
	static uint8_t data[300000], back[300000];
	uint8_t sid[OSD_SYSTEM_ID_LEN], cdb[OSD_CDB_V2_LEN], replay[OSD_CDB_V2_LEN];
	char store[300];
	osd_target *tgt;
	struct tc t;

	/* A store whose root is keyed (so it needs a signed credential). */
	new_dir();
	snprintf(store, sizeof(store), "%s/store", g_dir);
	ck_assert_int_eq(osd_target_open(&tgt, store, NULL), 0);
	ck_assert_int_eq(osd_target_set_root_key(tgt, root_key), 0);
	osd_target_system_id(tgt, sid);
	osd_target_close(tgt);
	start_daemon(NULL);
	struct tc_login o = { .target = IQN };
	ck_assert_int_eq(tc_login(&t, g_port, &o), 0);

	/* CMDRSP: the precheck uses no nonce, the execution checks it once. */
	const enum osd_action setup[] = { OSD_ACT_CREATE_PARTITION, OSD_ACT_CREATE };
	for (int i = 0; i < 2; i++) {
		signed_cdb(cdb, setup[i], PID, i ? OID : 0, 0, OSD_SEC_CMDRSP, root_key, sid);
		struct tc_cmd c = { .cdb = cdb, .cdb_len = sizeof(cdb) };
		ck_assert_int_eq(tc_command(&t, &c), 0);
		ck_assert_uint_eq(c.status, 0);
	}
	memset(data, 0x5A, sizeof(data));
	signed_cdb(cdb, OSD_ACT_WRITE, PID, OID, sizeof(data), OSD_SEC_CMDRSP, root_key, sid);
	memcpy(replay, cdb, sizeof(cdb));
	struct tc_cmd w = { .cdb = cdb, .cdb_len = sizeof(cdb), .out = data,
			    .out_len = sizeof(data) };
	ck_assert_int_eq(tc_command(&t, &w), 0);
	ck_assert_msg(w.status == 0, "signed WRITE with R2T: status %u asc %02x%02x", w.status,
		      w.sense[2], w.sense[3]);
	ck_assert_int_gt(w.r2ts, 0);
	signed_cdb(cdb, OSD_ACT_READ, PID, OID, sizeof(back), OSD_SEC_CMDRSP, root_key, sid);
	struct tc_cmd r = { .cdb = cdb, .cdb_len = sizeof(cdb), .in = back,
			    .in_len = sizeof(back) };
	ck_assert_int_eq(tc_command(&t, &r), 0);
	ck_assert_uint_eq(r.status, 0);
	ck_assert_int_eq(memcmp(back, data, sizeof(data)), 0);

	/* The same WRITE again: its data is taken, the execution refuses the
	 * used nonce. */
	struct tc_cmd again = { .cdb = replay, .cdb_len = sizeof(replay), .out = data,
				.out_len = sizeof(data) };
	ck_assert_int_eq(tc_command(&t, &again), 0);
	ck_assert_uint_eq(again.status, 2);
	ck_assert_uint_eq((unsigned)again.sense[2] << 8 | again.sense[3], OSD_ASC_NONCE_NOT_UNIQUE);

	/* A bad signature, or a credential without WRITE: answered before any R2T. */
	signed_cdb(cdb, OSD_ACT_WRITE, PID, OID, sizeof(data), OSD_SEC_CMDRSP, root_key, sid);
	cdb[osd_cdb_icv_offset(OSD_V2)] ^= 1;
	struct tc_cmd bad = { .cdb = cdb, .cdb_len = sizeof(cdb), .out = data,
			      .out_len = sizeof(data) };
	ck_assert_int_eq(tc_command(&t, &bad), 0);
	ck_assert_uint_eq(bad.status, 2);
	ck_assert_int_eq(bad.r2ts, 0);
	ck_assert_uint_eq((unsigned)bad.sense[2] << 8 | bad.sense[3], OSD_ASC_INVALID_FIELD_IN_CDB);
	signed_cdb_perms(cdb, OSD_ACT_WRITE, PID, OID, sizeof(data), OSD_SEC_CMDRSP, root_key, sid,
			 OSD_PERM_READ);
	struct tc_cmd ro = { .cdb = cdb, .cdb_len = sizeof(cdb), .out = data,
			     .out_len = sizeof(data) };
	ck_assert_int_eq(tc_command(&t, &ro), 0);
	ck_assert_uint_eq(ro.status, 2);
	ck_assert_int_eq(ro.r2ts, 0);
	ck_assert_uint_eq((unsigned)ro.sense[2] << 8 | ro.sense[3], OSD_ASC_INVALID_FIELD_IN_CDB);
	fprintf(stderr, "precheck: signed 300000-byte WRITE in %d R2Ts; replay refused "
		"(NONCE NOT UNIQUE); bad ICV and read-only credential refused before any R2T\n",
		w.r2ts);
	tc_close(&t);
}
END_TEST

/* ---- libosd's initiator and idle sessions ---- */

/* Whether the daemon's log (g_dir/log) says @p what @p n times within @p ms. */
static int logged_within(const char *what, int n, unsigned ms)
{
	char path[300], line[1024];
	uint64_t end = osd_test_now_ms() + ms;
	snprintf(path, sizeof(path), "%s/log", g_dir);
	do {
		FILE *f = fopen(path, "r");
		int found = 0;
		while (f && fgets(line, sizeof(line), f))
			found += strstr(line, what) != NULL;
		if (f)
			fclose(f);
		if (found >= n)
			return 1;
		poll(NULL, 0, 20); /* waiting for a condition, bounded above */
	} while (osd_test_now_ms() < end);
	return 0;
}

static int run_req(osd_req *req)
{
	int rc = osd_req_execute(req);
	osd_req_free(req);
	return rc;
}

/* A session left idle (nobody services the transport, so pings go
 * unanswered) is closed by the target; the next command, even one that may
 * not be resent (APPEND), still succeeds: libosd takes the close in before
 * sending and logs in again. */
START_TEST(initiator_after_idle_close)
{
	static const char *const args[] = { "--limit", "idle-ms=300", "--limit", "nop-ms=300",
					    NULL };
	char url[200], err[256] = "";
	struct osd_transport tp;
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	struct osd_dev_options dopts = OSD_DEV_OPTIONS_INIT;
	osd_dev *dev;
	osd_req *req;
	struct osd_obj_id obj = { PID, OID };
	char data[10] = "0123456789";
	struct iovec iov = { data, sizeof(data) };

	if (getenv("OSD_TEST_VERBOSE"))
		return; /* the daemon's log goes to stderr, not to the file watched */
	start_daemon(args);
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%d/%s/0", g_port, IQN);
	io.errbuf = err;
	io.errbuf_len = sizeof(err);
	ck_assert_msg(osd_iscsi_transport_new(&tp, url, &io) == 0, "%s", err);
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &dopts), 0);
	ck_assert_int_eq(osd_req_create_partition(&req, dev, PID), 0);
	ck_assert_int_eq(run_req(req), 0);
	ck_assert_int_eq(osd_req_create(&req, dev, &obj, 1), 0);
	ck_assert_int_eq(run_req(req), 0);
	for (int i = 0; i < 2; i++) {
		/* "closed" is logged once the socket is shut down */
		ck_assert_msg(logged_within("ping unanswered", i + 1, 10000) &&
			      logged_within(": closed", i + 1, 10000),
			      "the idle session was not closed");
		ck_assert_int_eq(osd_req_append(&req, dev, &obj, &iov, 1), 0);
		ck_assert_int_eq(run_req(req), 0);
	}
	uint64_t len = 0;
	ck_assert_int_eq(osd_get_attr_u64(dev, &obj, OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION,
					  OSD_ATTR_UI_LOGICAL_LENGTH, &len), 0);
	ck_assert_uint_eq(len, 2 * sizeof(data));
	osd_dev_close(dev);
}
END_TEST

/* ---- the access list ---- */

START_TEST(allow_list)
{
	static const char *const args[] = { "--allow", "iqn.2026-12.org.osd:good", "--allow",
					    "iqn.2026-12.org.osd:also-good", NULL };
	struct tc t;
	start_daemon(args);
	struct tc_login o = { .target = IQN, .initiator = "iqn.2026-12.org.osd:good" };
	ck_assert_int_eq(tc_login(&t, g_port, &o), 0);
	inquiry(&t);
	tc_close(&t);
	o.initiator = "iqn.2026-12.org.osd:also-good";
	ck_assert_int_eq(tc_login(&t, g_port, &o), 0);
	tc_close(&t);
	o.initiator = "iqn.2026-12.org.osd:evil";
	ck_assert_int_eq(tc_login(&t, g_port, &o), 0x0202);
	tc_close(&t);
	o.discovery = 1;
	o.target = NULL;
	ck_assert_int_eq(tc_login(&t, g_port, &o), 0x0202);
	tc_close(&t);
}
END_TEST

/* ---- the 12-byte CHAP secret minimum ---- */

static char g_logged[512];

static void keep_log(void *payload, int level, const char *msg)
{
	(void)payload;
	if (level == OSD_TARGET_ISCSI_LOG_ERROR)
		snprintf(g_logged, sizeof(g_logged), "%s", msg);
}

START_TEST(chap_secret_minimum)
{
	const char *tmp = getenv("TMPDIR");
	char store[300], path[300];
	osd_target *tgt;
	osd_target_iscsi *srv;
	snprintf(g_dir, sizeof(g_dir), "%s/osddos-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
	snprintf(store, sizeof(store), "%s/store", g_dir);
	ck_assert_int_eq(osd_target_open(&tgt, store, NULL), 0);
	struct osd_target_iscsi_options o = OSD_TARGET_ISCSI_OPTIONS_INIT;
	o.port = 0;
	o.chap_user = "alice";
	o.chap_secret = (const uint8_t *)"eleven-char";
	o.chap_secret_len = 11;
	o.log = keep_log;
	ck_assert_int_eq(osd_target_iscsi_create(&srv, &tgt, 1, &o), -EINVAL);
	ck_assert_ptr_null(srv);
	ck_assert_ptr_nonnull(strstr(g_logged, "at least 12 bytes"));
	o.chap_secret = (const uint8_t *)"twelve-chars";
	o.chap_secret_len = 12;
	ck_assert_int_eq(osd_target_iscsi_create(&srv, &tgt, 1, &o), 0);
	osd_target_iscsi_free(srv);
	/* Version 1 callers (no bounds fields) still work, with the defaults. */
	o.version = 1;
	ck_assert_int_eq(osd_target_iscsi_create(&srv, &tgt, 1, &o), 0);
	osd_target_iscsi_free(srv);
	osd_target_close(tgt);

	/* The daemon refuses such a secret file, saying why. */
	snprintf(path, sizeof(path), "%s/secret", g_dir);
	write_secret(path, "short-11-ch\n");
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "%s --listen 127.0.0.1:0 --chap-user alice "
		 "--chap-secret-file %s %s 2>&1", OSD_TARGETD_PATH, path, store);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	char out[1024] = "";
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	int status = pclose(p);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "exit %d: %s", status, out);
	ck_assert_msg(strstr(out, "at least 12") != NULL, "%s", out);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iscsi_dos");
	TCase *t = tcase_create("dos");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, flood);
	tcase_add_test(t, eviction_and_per_address);
	tcase_add_test(t, reinstate_only_by_owner);
	tcase_add_test(t, reinstate_chap);
	tcase_add_test(t, chap_failures_delayed);
	tcase_add_test(t, precheck_before_data_out);
	tcase_add_test(t, initiator_after_idle_close);
	tcase_add_test(t, allow_list);
	tcase_add_test(t, chap_secret_minimum);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	if (!OSD_TARGETD_PATH[0] || access(OSD_TARGETD_PATH, X_OK)) {
		fprintf(stderr, "osd-targetd not built: skipped\n");
		return 77;
	}
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
