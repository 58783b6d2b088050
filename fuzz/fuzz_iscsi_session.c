/*
 * The iSCSI initiator's receive path on arbitrary bytes: the input is what a
 * target sends on a connection in full-feature phase (RFC 7143), while a
 * READ, a WRITE and a bidirectional command are in flight. Each command
 * completes at most once; one that succeeds reports no more data-in than
 * its buffer holds; nothing is touched outside the buffers (ASan). A lost
 * connection is not logged in again (reconnect_attempts 0): the session
 * then fails what is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/iscsi_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 65536

struct cmd {
	uint8_t cdb[236];
	uint8_t in[4096], out[4096];
	struct iovec iiov, oiov;
	struct osd_xfer x;
	int called;
};

static void done(struct osd_xfer *x, int err)
{
	struct cmd *c = x->priv;

	if (c->called++)
		abort();
	if (err == 0 && x->in_xferred > x->in_len)
		abort();
}

/* OSD command @p action with @p in_len bytes of data-in, @p out_len of data-out. */
static void cmd_init(struct cmd *c, uint16_t action, size_t in_len, size_t out_len)
{
	memset(c, 0, sizeof(*c));
	c->cdb[0] = 0x7F;
	c->cdb[7] = sizeof(c->cdb) - 8;
	c->cdb[8] = (uint8_t)(action >> 8);
	c->cdb[9] = (uint8_t)action;
	c->iiov = (struct iovec){ c->in, in_len };
	c->oiov = (struct iovec){ c->out, out_len };
	c->x.cdb = c->cdb;
	c->x.cdb_len = sizeof(c->cdb);
	if (in_len) {
		c->x.in_iov = &c->iiov;
		c->x.in_iovcnt = 1;
		c->x.in_len = in_len;
	}
	if (out_len) {
		c->x.out_iov = &c->oiov;
		c->x.out_iovcnt = 1;
		c->x.out_len = out_len;
	}
	c->x.done = done;
	c->x.priv = c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cmd cmds[3];
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_iscsi_url url;
	struct osd__iscsi_sess *s;
	int sv[2], big = MAX_INPUT * 4;

	if (size > MAX_INPUT || osd_iscsi_url_parse(&url, "iscsi://127.0.0.1:9/iqn.2026-01.x:y/0",
						    NULL, 0))
		return 0;
	o.reconnect_attempts = 0;
	o.nop_interval_ms = 0;
	o.failover_ms = 60; /* bounds the waits before a login (Time2Wait, backoff) */
	if (osd__iscsi_sess_new(&s, &url, &o, 0))
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		osd__iscsi_sess_free(s);
		return 0;
	}
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	/* as osd__iscsi_login() leaves it: the fake target's parameters */
	s->fd = sv[0];
	osd__iscsi_rx_clear(s);
	s->p.max_send_dsl = s->p.max_recv_dsl = 8192;
	s->p.first_burst = 512;
	s->p.max_burst = 262144;
	s->p.max_outstanding_r2t = 1;
	s->p.immediate_data = 1;
	s->p.initial_r2t = 1;
	s->expstatsn = 0x100;
	s->expcmdsn = s->cmdsn;
	s->maxcmdsn = s->cmdsn + 31;
	s->last_rx_ms = osd__iscsi_now_ms();
	cmd_init(&cmds[0], 0x8885, sizeof(cmds[0].in), 0);         /* READ */
	cmd_init(&cmds[1], 0x8886, 0, sizeof(cmds[1].out));        /* WRITE */
	cmd_init(&cmds[2], 0x888E, 96, 24);                        /* GET ATTRIBUTES */
	for (int i = 0; i < 3; i++)
		if (osd__iscsi_ops.submit(s, &cmds[i].x))
			abort();
	if (write(sv[1], data, size) != (ssize_t)size)
		abort();
	shutdown(sv[1], SHUT_WR);
	/* each call reads a bounded amount; the end of the input ends the connection */
	for (int i = 0; i < 1024 && !s->dead; i++)
		osd__iscsi_ops.service(s, POLLIN);
	osd__iscsi_ops.destroy(s);
	close(sv[1]);
	for (int i = 0; i < 3; i++)
		if (cmds[i].called != 1)
			abort();
	return 0;
}
