/*
 * The iSCSI initiator's opening of a session against a target that sends
 * arbitrary bytes (RFC 7143): the Login Responses of the security stage
 * (AuthMethod, the CHAP challenge and the target's mutual CHAP answer) and
 * of the operational stage (the negotiated keys), the answer to the
 * INQUIRY of the security token page, then either the SendTargets answer
 * of a discovery session (osd_iscsi_discover) or, for a normal session
 * (osd_iscsi_transport_new), whatever comes before the Logout Response.
 *
 * Byte 0 picks: bit 0 discovery, bit 1 one-way CHAP, bit 2 mutual CHAP
 * (with bit 1), bit 3 digests preferred on. The rest is what the target
 * sends, all of it at once, on a real TCP connection; the connection then
 * ends. Every failure must say why (errbuf), nothing may be touched
 * outside its buffers (ASan), and the call must return once the bytes
 * end (the -timeout). OSD_FUZZ_LOG=1 prints each input's outcome.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <osd/iscsi.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX_INPUT 65536

static int fz_listen = -1;
static uint16_t fz_port;

/* The fake target: the one connection gets the input, then its end. */
struct fz_peer {
	const uint8_t *data;
	size_t size;
};

static void *fz_serve(void *arg)
{
	const struct fz_peer *p = arg;
	static uint8_t sink[65536];
	size_t sent = 0;
	ssize_t n;
	int fd;

	/* libFuzzer's timer signal (-timeout) may interrupt any of these */
	while ((fd = accept(fz_listen, NULL, NULL)) < 0)
		if (errno != EINTR)
			abort();
	while (sent < p->size) {
		n = send(fd, p->data + sent, p->size - sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the initiator gave up first */
		sent += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	while ((n = recv(fd, sink, sizeof(sink), 0)) > 0 || (n < 0 && errno == EINTR))
		; /* what the initiator sends, until it closes */
	close(fd);
	return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int big = 4 * FZ_MAX_INPUT;

	(void)argc;
	(void)argv;
	fz_listen = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* room for the whole input before the initiator reads any of it */
	if (fz_listen < 0 || setsockopt(fz_listen, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big)) ||
	    bind(fz_listen, (struct sockaddr *)&a, sizeof(a)) || listen(fz_listen, 4) ||
	    getsockname(fz_listen, (struct sockaddr *)&a, &len)) {
		perror("fuzz_iscsi_login: listen");
		abort();
	}
	fz_port = ntohs(a.sin_port);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct fz_peer peer;
	struct osd_iscsi_target_info *found = NULL;
	struct osd_transport tp = { NULL, NULL };
	char url[96], err[256] = "";
	size_t count = 0;
	pthread_t th;
	int rc;

	if (size < 1 || size > FZ_MAX_INPUT)
		return 0;
	peer.data = data + 1;
	peer.size = size - 1;
	o.initiator_name = "iqn.2026-12.org.osd:fuzz";
	o.connect_timeout_ms = 5000; /* the bytes end long before */
	o.reconnect_attempts = 0;
	o.nop_interval_ms = 0;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	if (data[0] & 2) {
		o.chap_user = "fuzz";
		o.chap_secret = "fuzz-chap-secret";
		if (data[0] & 4) {
			o.chap_target_user = "target";
			o.chap_target_secret = "target-chap-secret";
		}
	}
	if (data[0] & 8)
		o.header_digest = o.data_digest = OSD_ISCSI_DIGEST_PREFER_CRC32C;
	if (pthread_create(&th, NULL, fz_serve, &peer))
		abort();
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/iqn.2026-12.org.osd:target/0",
		 (unsigned)fz_port);
	if (data[0] & 1) {
		rc = osd_iscsi_discover(&found, &count, url, &o);
		if (rc == 0)
			for (size_t i = 0; i < count; i++)
				if (!memchr(found[i].name, 0, sizeof(found[i].name)) ||
				    !memchr(found[i].address, 0, sizeof(found[i].address)))
					abort(); /* a name or address not terminated */
		free(found);
	} else {
		rc = osd_iscsi_transport_new(&tp, url, &o);
		if (rc == 0)
			tp.ops->destroy(tp.impl);
	}
	if (getenv("OSD_FUZZ_LOG")) /* to check what a seed reaches */
		fprintf(stderr, "fuzz_iscsi_login: %d (%zu targets) %s\n", rc, count, err);
	if (rc > 0 || (rc < 0 && rc != -ENOMEM && !err[0]))
		abort(); /* every failure says why */
	pthread_join(th, NULL);
	return 0;
}
