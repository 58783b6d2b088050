#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "fake_target.h"

#define IO_TIMEOUT_MS 10000

void ft_failf(struct ft *ft, const char *fmt, ...)
{
	va_list ap;

	if (ft->fail[0])
		return;
	va_start(ap, fmt);
	vsnprintf(ft->fail, sizeof(ft->fail), fmt, ap);
	va_end(ap);
}

static void *ft_main(void *arg)
{
	struct ft *ft = arg;

	ft->script(ft);
	if (ft->fd >= 0)
		close(ft->fd);
	ft->fd = -1;
	__atomic_store_n(&ft->finished, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

void ft_start(struct ft *ft, ft_script script)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);

	ft->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ft->fd = -1;
	if (ft->lfd < 0 || bind(ft->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(ft->lfd, 4) || getsockname(ft->lfd, (struct sockaddr *)&sa, &sl)) {
		ft_failf(ft, "cannot listen: %s", strerror(errno));
		return;
	}
	ft->port = ntohs(sa.sin_port);
	if (!ft->window)
		ft->window = 32;
	if (!ft->first_burst)
		ft->first_burst = "512";
	if (!ft->initial_r2t)
		ft->initial_r2t = "Yes";
	ft->statsn = 0x100;
	ft->script = script;
	pthread_mutex_init(&ft->step_mu, NULL);
	pthread_cond_init(&ft->step_cv, NULL);
	pthread_create(&ft->th, NULL, ft_main, ft);
}

const char *ft_join(struct ft *ft)
{
	pthread_join(ft->th, NULL);
	if (ft->lfd >= 0)
		close(ft->lfd);
	ft->lfd = -1;
	return ft->fail;
}

int ft_accept(struct ft *ft)
{
	struct pollfd pfd = { .fd = ft->lfd, .events = POLLIN };

	if (ft->fd >= 0)
		close(ft->fd);
	ft->fd = -1;
	memset(&ft->dg, 0, sizeof(ft->dg));
	FT_CHECK_RC(ft, poll(&pfd, 1, IO_TIMEOUT_MS) == 1, "no connection came");
	ft->fd = accept(ft->lfd, NULL, NULL);
	FT_CHECK_RC(ft, ft->fd >= 0, "accept: %s", strerror(errno));
	return 0;
}

static int read_full(struct ft *ft, uint8_t *p, size_t n)
{
	while (n) {
		struct pollfd pfd = { .fd = ft->fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, IO_TIMEOUT_MS) != 1)
			return -ETIMEDOUT;
		r = recv(ft->fd, p, n, 0);
		if (r <= 0)
			return -ECONNRESET;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int ft_recv(struct ft *ft)
{
	struct osd__iscsi_bhs h;
	size_t rest;
	long n;

	FT_CHECK_RC(ft, read_full(ft, ft->buf, OSD_ISCSI_BHS_LEN) == 0, "no PDU from the initiator");
	FT_CHECK_RC(ft, osd__iscsi_bhs_decode(&h, ft->buf) == 0, "undecodable BHS");
	rest = osd__iscsi_pdu_rest_len(&h, &ft->dg);
	FT_CHECK_RC(ft, rest + OSD_ISCSI_BHS_LEN <= sizeof(ft->buf), "PDU too large");
	FT_CHECK_RC(ft, read_full(ft, ft->buf + OSD_ISCSI_BHS_LEN, rest) == 0, "truncated PDU");
	ft->len = OSD_ISCSI_BHS_LEN + rest;
	n = osd__iscsi_pdu_parse(&ft->pdu, ft->buf, ft->len, &ft->dg, FT_BUF);
	FT_CHECK_RC(ft, n == (long)ft->len, "PDU does not parse (%ld): bad digest or layout", n);
	return 0;
}

static size_t send_all(struct ft *ft, const uint8_t *b, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = send(ft->fd, b + off, n - off, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	return off;
}

int ft_send(struct ft *ft, struct osd__iscsi_bhs *h, const uint8_t *ahs, size_t ahs_len,
	    const uint8_t *data, size_t dlen)
{
	size_t cap = OSD_ISCSI_BHS_LEN + ahs_len + dlen + 16;
	uint8_t *b = malloc(cap);
	long n;
	size_t off = 0;

	FT_CHECK_RC(ft, b != NULL, "out of memory");
	n = osd__iscsi_pdu_build(b, cap, h, ahs, ahs_len, data, dlen, &ft->dg);
	if (n > 0 && ft->corrupt_next && ft->dg.header) {
		b[OSD_ISCSI_BHS_LEN + ahs_len] ^= 0x01;
		ft->corrupt_next = 0;
	}
	if (n > 0)
		off = send_all(ft, b, (size_t)n);
	free(b);
	FT_CHECK_RC(ft, n > 0 && off == (size_t)n, "cannot send a PDU");
	return 0;
}

int ft_send_raw(struct ft *ft, const uint8_t *p, size_t n)
{
	FT_CHECK_RC(ft, send_all(ft, p, n) == n, "cannot send %zu bytes", n);
	return 0;
}

void ft_step_set(struct ft *ft, int n)
{
	pthread_mutex_lock(&ft->step_mu);
	ft->step = n;
	pthread_cond_broadcast(&ft->step_cv);
	pthread_mutex_unlock(&ft->step_mu);
}

int ft_step_wait(struct ft *ft, int n)
{
	struct timespec end;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += IO_TIMEOUT_MS / 1000;
	pthread_mutex_lock(&ft->step_mu);
	while (ft->step < n && rc == 0)
		rc = pthread_cond_timedwait(&ft->step_cv, &ft->step_mu, &end);
	rc = ft->step >= n ? 0 : -1;
	pthread_mutex_unlock(&ft->step_mu);
	FT_CHECK_RC(ft, rc == 0, "step %d not reached", n);
	return 0;
}

void ft_rsp_sn(struct ft *ft, struct osd__iscsi_bhs *h, int advance_statsn)
{
	h->stat_sn = ft->statsn;
	if (advance_statsn)
		ft->statsn++;
	h->exp_cmd_sn = ft->expcmdsn;
	h->max_cmd_sn = ft->maxcmdsn;
}

/* ---- login ---- */

static const char *text_value(const struct osd__iscsi_pdu *p, const char *key, char *out,
			      size_t cap)
{
	struct osd__iscsi_kv kv;
	size_t pos = 0;

	while (osd__iscsi_text_next(&kv, p->data, p->data_len, &pos) == 1) {
		if (osd__iscsi_kv_is(&kv, key) && kv.value_len < cap) {
			memcpy(out, kv.value, kv.value_len);
			out[kv.value_len] = '\0';
			return out;
		}
	}
	return NULL;
}

static int login_reply(struct ft *ft, uint8_t flags, uint16_t tsih, const struct osd__iscsi_text *t,
		       uint16_t status)
{
	struct osd__iscsi_bhs h;
	const struct osd__iscsi_bhs *q = &ft->pdu.bhs;

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_LOGIN_RSP;
	h.flags = flags;
	memcpy(h.isid, q->isid, 6);
	h.tsih = tsih;
	h.itt = q->itt;
	ft->expcmdsn = q->cmd_sn;
	ft->maxcmdsn = q->cmd_sn + ft->window - 1;
	ft_rsp_sn(ft, &h, 1);
	h.status_class = (uint8_t)(status >> 8);
	h.status_detail = (uint8_t)status;
	return ft_send(ft, &h, NULL, 0, t ? t->data : NULL, t ? t->len : 0);
}

static int chap_stage(struct ft *ft)
{
	static const uint8_t chal[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct osd__iscsi_text t = { 0 };
	uint8_t want[16], mc[64], resp[16];
	char v[1024], hex[64];
	long mcl;
	int rc;

	FT_CHECK_RC(ft, text_value(&ft->pdu, "AuthMethod", v, sizeof(v)) && !strcmp(v, "CHAP"),
		    "initiator did not offer AuthMethod=CHAP");
	osd__iscsi_text_add(&t, "AuthMethod", "CHAP");
	rc = login_reply(ft, OSD_ISCSI_LOGIN_FLAGS(0, 0, 0, 1), 0, &t, 0);
	t.len = 0;
	if (rc || ft_recv(ft))
		goto out;
	FT_CHECK_RC(ft, text_value(&ft->pdu, "CHAP_A", v, sizeof(v)) && !strcmp(v, "5"),
		    "CHAP_A=5 expected");
	osd__iscsi_binary_encode(hex, chal, sizeof(chal));
	osd__iscsi_text_add(&t, "CHAP_A", "5");
	osd__iscsi_text_add(&t, "CHAP_I", ft->chap_id ? ft->chap_id : "7");
	osd__iscsi_text_add(&t, "CHAP_C", hex);
	rc = login_reply(ft, OSD_ISCSI_LOGIN_FLAGS(0, 0, 0, 1), 0, &t, 0);
	t.len = 0;
	if (rc || ft_recv(ft))
		goto out;
	osd__iscsi_chap_response(want, 7, (const uint8_t *)ft->chap_secret,
				 strlen(ft->chap_secret), chal, sizeof(chal));
	osd__iscsi_binary_encode(hex, want, sizeof(want));
	if (!text_value(&ft->pdu, "CHAP_N", v, sizeof(v)) || strcmp(v, ft->chap_user) ||
	    !text_value(&ft->pdu, "CHAP_R", v, sizeof(v)) || strcmp(v, hex)) {
		login_reply(ft, 0, 0, NULL, OSD_ISCSI_LOGIN_AUTH_FAILED);
		rc = -1;
		goto out;
	}
	FT_CHECK_RC(ft, ft->pdu.bhs.flags & OSD_ISCSI_F_TRANSIT, "CHAP_R without T bit");
	if (ft->chap_tuser) {
		char ci[8];

		FT_CHECK_RC(ft, text_value(&ft->pdu, "CHAP_I", ci, sizeof(ci)) &&
			    text_value(&ft->pdu, "CHAP_C", v, sizeof(v)), "mutual CHAP expected");
		mcl = osd__iscsi_binary_decode(mc, sizeof(mc), v, strlen(v));
		FT_CHECK_RC(ft, mcl == 16, "initiator challenge of %ld bytes", mcl);
		osd__iscsi_chap_response(resp, (uint8_t)atoi(ci), (const uint8_t *)ft->chap_tsecret,
					 strlen(ft->chap_tsecret), mc, (size_t)mcl);
		if (ft->chap_bad_mutual)
			resp[0] ^= 1;
		osd__iscsi_binary_encode(hex, resp, sizeof(resp));
		osd__iscsi_text_add(&t, "CHAP_N", ft->chap_tuser);
		osd__iscsi_text_add(&t, "CHAP_R", hex);
	}
	rc = login_reply(ft, OSD_ISCSI_LOGIN_FLAGS(1, 0, 0, 1), 0, &t, 0);
out:
	osd__iscsi_text_free(&t);
	return rc ? -1 : 0;
}

int ft_send_token(struct ft *ft, uint32_t from)
{
	uint8_t page[4 + sizeof(FT_TOKEN) - 1] = { 0x11, 0xB1, 0, sizeof(FT_TOKEN) - 1 };
	struct osd__iscsi_bhs h;

	memcpy(page + 4, FT_TOKEN, sizeof(FT_TOKEN) - 1);
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_DATA_IN;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_STATUS;
	h.itt = ft->pdu.bhs.itt;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	h.offset = from;
	ft_rsp_sn(ft, &h, 1);
	return ft_send(ft, &h, NULL, 0, page + from, sizeof(page) - from);
}

int ft_answer_token(struct ft *ft)
{
	if (!(ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD && ft->pdu.bhs.cdb[0] == 0x12 &&
	      ft->pdu.bhs.cdb[1] == 1 && ft->pdu.bhs.cdb[2] == 0xB1))
		return 0;
	return ft_send_token(ft, 0) ? -1 : 1;
}

/* The initiator reads the session's security token (INQUIRY, VPD page B1h)
 * right after login: answer with FT_TOKEN in one Data-In carrying status. */
static int answer_token_inquiry(struct ft *ft)
{
	int rc;

	if (ft_recv(ft))
		return -1;
	rc = ft_answer_token(ft);
	FT_CHECK_RC(ft, rc != 0, "INQUIRY of the security token page expected after login");
	return rc < 0 ? -1 : 0;
}

int ft_login(struct ft *ft)
{
	struct osd__iscsi_text t = { 0 };
	char v[256];
	int rc, discovery;

	if (ft_recv(ft))
		return -1;
	FT_CHECK_RC(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_LOGIN_REQ, "first PDU is not a login");
	if (__atomic_fetch_add(&ft->logins, 1, __ATOMIC_SEQ_CST) == 0) {
		memcpy(ft->login1, ft->buf, ft->len < sizeof(ft->login1) ? ft->len : sizeof(ft->login1));
		ft->login1_len = ft->len;
	}
	memcpy(ft->isid, ft->pdu.bhs.isid, 6);
	discovery = text_value(&ft->pdu, "SessionType", v, sizeof(v)) && !strcmp(v, "Discovery");
	if (ft->chap_user) {
		if (chap_stage(ft))
			return -1;
	} else {
		FT_CHECK_RC(ft, text_value(&ft->pdu, "AuthMethod", v, sizeof(v)) &&
			    !strcmp(v, "None"), "AuthMethod=None expected");
		osd__iscsi_text_add(&t, "AuthMethod", "None");
		rc = login_reply(ft, OSD_ISCSI_LOGIN_FLAGS(1, 0, 0, 1), 0, &t, 0);
		osd__iscsi_text_free(&t);
		if (rc)
			return -1;
	}
	if (ft_recv(ft))
		return -1;
	FT_CHECK_RC(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_LOGIN_REQ &&
		    ft->pdu.bhs.flags == OSD_ISCSI_LOGIN_FLAGS(1, 0, 1, 3),
		    "operational login with T, CSG=1, NSG=3 expected (flags %02x)",
		    ft->pdu.bhs.flags);
	ft->op_text_len = ft->pdu.data_len < sizeof(ft->op_text) ? ft->pdu.data_len : 0;
	memcpy(ft->op_text, ft->pdu.data, ft->op_text_len);
	osd__iscsi_text_add(&t, "HeaderDigest", ft->want_hd ? "CRC32C" : "None");
	osd__iscsi_text_add(&t, "DataDigest", ft->want_dd ? "CRC32C" : "None");
	osd__iscsi_text_add(&t, "MaxRecvDataSegmentLength", "8192");
	osd__iscsi_text_add(&t, "ErrorRecoveryLevel", "0");
	osd__iscsi_text_add(&t, "InitialR2T", ft->initial_r2t);
	osd__iscsi_text_add(&t, "ImmediateData", "Yes");
	osd__iscsi_text_add(&t, "FirstBurstLength", ft->first_burst);
	osd__iscsi_text_add(&t, "MaxBurstLength", "262144");
	osd__iscsi_text_add(&t, "MaxOutstandingR2T", "1");
	osd__iscsi_text_add(&t, "MaxConnections", "1");
	osd__iscsi_text_add(&t, "DataPDUInOrder", "Yes");
	osd__iscsi_text_add(&t, "DataSequenceInOrder", "Yes");
	osd__iscsi_text_add(&t, "DefaultTime2Wait", "0");
	osd__iscsi_text_add(&t, "DefaultTime2Retain", "0");
	osd__iscsi_text_add(&t, "TargetPortalGroupTag", "1");
	rc = login_reply(ft, OSD_ISCSI_LOGIN_FLAGS(1, 0, 1, 3), 0x1234, &t, 0);
	osd__iscsi_text_free(&t);
	ft->dg.header = ft->want_hd;
	ft->dg.data = ft->want_dd;
	return rc ? -1 : discovery || ft->token_by_script ? 0 : answer_token_inquiry(ft);
}

int ft_logout(struct ft *ft)
{
	struct osd__iscsi_bhs h;

	/* keepalives may still come first */
	do {
		if (ft_recv(ft))
			return -1;
	} while (ft->pdu.bhs.opcode == OSD_ISCSI_OP_NOP_OUT);
	FT_CHECK_RC(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_LOGOUT_REQ, "Logout expected, got %s",
		    osd__iscsi_opcode_name(ft->pdu.bhs.opcode));
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_LOGOUT_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = ft->pdu.bhs.itt;
	ft_rsp_sn(ft, &h, 1);
	return ft_send(ft, &h, NULL, 0, NULL, 0);
}
