/*
 * The software target's iSCSI server (osdtarget/iscsi) on arbitrary bytes:
 * the input is everything an initiator sends on one TCP connection, from
 * the first Login Request on (RFC 7143): login negotiation, then SCSI
 * commands with their AHS and Data-Out, R2T sequences, NOP-Out, task
 * management, Text (SendTargets) and Logout. Byte 0 bit 0 picks a server
 * that requires one-way CHAP (whose challenge is random, so only its
 * parsing and refusals are reached) over one without authentication; the
 * rest is the byte stream. The servers run in their own threads as
 * osd-targetd runs them, sharing one LUN; the fuzzer reads whatever
 * it answers until it closes the connection, which it must do once the
 * input ends. Nothing may be touched outside its buffers (ASan) and no
 * connection may outlive its input (the -timeout).
 *
 * The servers and their LUN are opened once per process, in a temporary
 * directory removed at exit; the LUN's store is capped so no input can make
 * it grow without bound.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <osdtarget/iscsi.h>
#include <osdtarget/target.h>

#include "fuzz_scratch.h"

#define FZ_MAX_INPUT 65536
#define FZ_CAPACITY (8ULL << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);

/* OpenSSL 3 now and then loses the per-thread DRBG context of a thread
 * that ended (openssl/openssl#31375); the server's connection threads
 * draw session tokens with RAND_bytes, so LeakSanitizer would report it at
 * exit. Only that allocation is excused; the full unwinder (no slower
 * here: the target waits on sockets) is what sees its frame inside
 * libcrypto, which has no frame pointers. */
const char *__lsan_default_suppressions(void)
{
	return "leak:EVP_RAND_CTX_new\n";
}

const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

static char fz_dir[256];
static osd_target *fz_tgt;
static osd_target_iscsi *fz_srv[2]; /* without, with CHAP */
static int fz_port[2];

static void fz_cleanup(void)
{
	for (int i = 0; i < 2; i++) {
		osd_target_iscsi_stop(fz_srv[i]);
		osd_target_iscsi_free(fz_srv[i]);
	}
	osd_target_close(fz_tgt);
	if (fz_dir[0])
		fz_rm_tree(fz_dir);
}

/* The servers' log, shown when OSD_FUZZ_LOG is set (to debug seeds). */
static void fz_log(void *payload, int level, const char *msg)
{
	(void)payload;
	fprintf(stderr, "iscsi[%d]: %s\n", level, msg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct osd_target_options o = OSD_TARGET_OPTIONS_INIT;
	struct osd_target_iscsi_options so = OSD_TARGET_ISCSI_OPTIONS_INIT;
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	/* OpenSSL's own exit handler must run after fz_cleanup has joined the
	 * server threads (their per-thread RNG state is freed as they end):
	 * handlers run in reverse order, so OpenSSL registers first. */
	if (!OPENSSL_init_crypto(0, NULL))
		abort();
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fz_dir, sizeof(fz_dir), "%s/osdfz-iscsi-XXXXXX", tmp);
	if (!mkdtemp(fz_dir)) {
		perror("fuzz_iscsi_target: mkdtemp");
		abort();
	}
	atexit(fz_cleanup);
	o.capacity = FZ_CAPACITY;
	if (osd_target_open(&fz_tgt, fz_dir, &o)) {
		fprintf(stderr, "fuzz_iscsi_target: open %s: %s\n", fz_dir,
			osd_target_error(fz_tgt));
		abort();
	}
	if (getenv("OSD_FUZZ_LOG"))
		so.log = fz_log;
	for (int i = 0; i < 2; i++) {
		so.port = 0;
		so.workers = 2;
		/* Short bounds: an input that stops mid-login or mid-burst ends
		 * at EOF anyway; these only bound what a slow worker holds up. */
		so.login_timeout_ms = 2000;
		so.dataout_timeout_ms = 2000;
		so.max_connections_per_address = 64;
		so.auth_fail_delay_ms = so.auth_fail_delay_max_ms = 1;
		if (i) {
			so.chap_user = "fuzz";
			so.chap_secret = (const uint8_t *)"fuzz-chap-secret";
			so.chap_secret_len = 16;
		}
		if (osd_target_iscsi_create(&fz_srv[i], &fz_tgt, 1, &so) ||
		    osd_target_iscsi_start(fz_srv[i])) {
			fprintf(stderr, "fuzz_iscsi_target: server: %s\n",
				fz_srv[i] ? osd_target_iscsi_error(fz_srv[i]) : "no memory");
			abort();
		}
		fz_port[i] = osd_target_iscsi_port(fz_srv[i]);
	}
	return 0;
}

/* Send the input and read the answers until the server closes: sending
 * and reading interleave, so neither side blocks on a full socket. */
static void converse(int fd, const uint8_t *data, size_t size)
{
	static uint8_t sink[65536];
	size_t sent = 0;

	if (size == 0)
		shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p = { fd, POLLIN | (sent < size ? POLLOUT : 0), 0 };
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			abort();
		}
		if (p.revents & POLLIN || (p.revents & (POLLHUP | POLLERR))) {
			ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				return; /* the server closed (or reset) the connection */
		}
		if (sent < size && (p.revents & POLLOUT)) {
			ssize_t n = send(fd, data + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return; /* it closed before reading everything */
			if (n > 0 && (sent += (size_t)n) == size)
				shutdown(fd, SHUT_WR); /* the end of the input ends the connection */
		}
	}
}

/* libFuzzer's timer signal (-timeout) may interrupt connect(), which then
 * goes on in the background: wait for it. Returns 1 once connected. */
static int connect_interrupted(int fd)
{
	struct pollfd p = { fd, POLLOUT, 0 };
	socklen_t len = sizeof(int);
	int err = 0;

	if (errno != EINTR)
		return 0;
	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		errno = err;
		return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	/* No TIME_WAIT on our side: the server closed first. */
	struct linger lg = { 1, 0 };
	int fd;

	if (size < 1 || size > FZ_MAX_INPUT)
		return 0;
	a.sin_port = htons((uint16_t)fz_port[data[0] & 1]);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		abort();
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && !connect_interrupted(fd)) {
		perror("fuzz_iscsi_target: connect");
		abort();
	}
	converse(fd, data + 1, size - 1);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
	return 0;
}
