/* The session: submission under the CmdSN window, dispatch of incoming
 * PDUs, keepalive, reconnect, and the struct osd_transport_ops. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <openssl/rand.h>
#include "transport/iscsi_private.h"

#define LOGOUT_WAIT_MS 2000

static char *dup_opt(const char *v, int *fail)
{
	char *d;

	if (!v)
		return NULL;
	d = strdup(v);
	if (!d)
		*fail = 1;
	return d;
}

int osd__iscsi_sess_new(struct osd__iscsi_sess **out, const struct osd_iscsi_url *url,
			const struct osd_iscsi_options *opts, int discovery)
{
	struct osd__iscsi_sess *s = calloc(1, sizeof(*s));
	char dflt[OSD_ISCSI_DEFAULT_NAME_LEN];
	int fail = 0;

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->url = *url;
	s->opts = *opts;
	s->discovery = discovery;
	s->fd = -1;
	if (!opts->initiator_name)
		osd__iscsi_default_name(dflt);
	s->initiator_name = dup_opt(opts->initiator_name ? opts->initiator_name : dflt, &fail);
	s->chap_user = dup_opt(opts->chap_user, &fail);
	s->chap_secret = dup_opt(opts->chap_secret, &fail);
	s->chap_tuser = dup_opt(opts->chap_target_user, &fail);
	s->chap_tsecret = dup_opt(opts->chap_target_secret, &fail);
	/* ISID type "random" (RFC 7143 section 11.12.5): T=10b, B, C, D random */
	if (RAND_bytes(s->isid + 1, 5) != 1)
		fail = 1;
	s->isid[0] = 0x80;
	s->cmdsn = 1;
	s->next_itt = 1;
	s->nop_itt = OSD_ISCSI_RSVD_TAG;
	s->tmf_itt = OSD_ISCSI_RSVD_TAG;
	s->p.max_recv_dsl = opts->max_recv_data_segment;
	if (fail) {
		osd__iscsi_sess_free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void osd__iscsi_sess_free(struct osd__iscsi_sess *s)
{
	if (!s)
		return;
	osd__iscsi_disconnect(s);
	free(s->rx.buf);
	free(s->initiator_name);
	free(s->chap_user);
	free(s->chap_secret);
	free(s->chap_tuser);
	free(s->chap_tsecret);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

uint32_t osd__iscsi_new_itt(struct osd__iscsi_sess *s)
{
	if (s->next_itt == OSD_ISCSI_RSVD_TAG)
		s->next_itt = 1;
	return s->next_itt++;
}

/* ---- completion ---- */

static void unlink_task(struct osd__iscsi_sess *s, struct osd__iscsi_task *t)
{
	for (struct osd__iscsi_task **pp = &s->tasks; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (t->state == TASK_SENT)
		s->inflight--;
}

/* Puts @p t (already out of the task list) on the done list. */
static void queue_done(struct osd__iscsi_sess *s, struct osd__iscsi_task *t, int err)
{
	t->state = TASK_DONE;
	t->err = err;
	if (err == 0)
		t->xfer->in_xferred = t->in_got;
	t->next = NULL;
	if (s->done_tail)
		s->done_tail->next = t;
	else
		s->done_list = t;
	s->done_tail = t;
}

/* Moves @p t to the done list; its callback runs once the lock is dropped.
 * A cancelled task has no callback: it is just forgotten. */
void osd__iscsi_complete(struct osd__iscsi_sess *s, struct osd__iscsi_task *t, int err)
{
	unlink_task(s, t);
	osd__iscsi_sendq_release(s, t);
	osd__iscsi_rx_forget(s, t);
	if (!t->xfer) {
		free(t);
		return;
	}
	queue_done(s, t, err);
}

/* Runs the callbacks of completed tasks. Called without the lock held. */
void osd__iscsi_run_completions(struct osd__iscsi_sess *s)
{
	for (;;) {
		struct osd__iscsi_task *t;

		pthread_mutex_lock(&s->lock);
		t = s->done_list;
		if (t) {
			s->done_list = t->next;
			if (!s->done_list)
				s->done_tail = NULL;
		}
		pthread_mutex_unlock(&s->lock);
		if (!t)
			return;
		t->xfer->done(t->xfer, t->err);
		free(t);
	}
}

struct osd__iscsi_task *osd__iscsi_find_task(struct osd__iscsi_sess *s, uint32_t itt)
{
	for (struct osd__iscsi_task *t = s->tasks; t; t = t->next)
		if (t->itt == itt && t->state == TASK_SENT)
			return t;
	return NULL;
}

static void fail_all(struct osd__iscsi_sess *s, int err)
{
	while (s->tasks)
		osd__iscsi_complete(s, s->tasks, err);
}

/* ---- sending ---- */

static int window_open(const struct osd__iscsi_sess *s)
{
	return osd__iscsi_sn_le(s->cmdsn, s->maxcmdsn) && s->inflight < s->opts.max_inflight;
}

/* Sends pending commands while the CmdSN window and our limit allow. */
static int start_pending(struct osd__iscsi_sess *s)
{
	for (struct osd__iscsi_task *t = s->tasks; t && s->fd >= 0; t = t->next) {
		int rc;

		if (t->state != TASK_PENDING)
			continue;
		if (!window_open(s) || s->logout_requested)
			break;
		t->state = TASK_SENT;
		t->in_got = 0;
		t->in_pdus = 0;
		t->r2ts = 0;
		s->inflight++;
		rc = osd__iscsi_cmd_send(s, t);
		if (rc)
			return rc;
	}
	return osd__iscsi_flush(s);
}

void osd__iscsi_send_nop_out(struct osd__iscsi_sess *s, uint32_t itt, uint32_t ttt,
			     const uint8_t *lun, const uint8_t *data, size_t dlen)
{
	struct osd__iscsi_bhs h;

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_NOP_OUT;
	h.immediate = 1;
	h.flags = OSD_ISCSI_F_FINAL;
	if (lun)
		memcpy(h.lun, lun, 8);
	h.itt = itt;
	h.ttt = ttt;
	h.cmd_sn = s->cmdsn;
	h.exp_stat_sn = s->expstatsn;
	if (ttt != OSD_ISCSI_RSVD_TAG ? osd__iscsi_send_nop_answer(s, &h, data, dlen) < 0 :
	    osd__iscsi_send(s, &h, NULL, 0, data, dlen) != 0)
		osd__iscsi_set_error(s, "cannot queue a NOP-Out");
}

/* ---- receiving ---- */

/* The sequence numbers of a PDU from the target. A status whose StatSN is
 * more than OSD_ISCSI_STATSN_SLACK from ExpStatSN, either way, means
 * statuses lost or a target that lost count: RFC 7143 §4.2.2.2 has the
 * initiator recover (here: drop the connection, a protocol error charged
 * to the command it answers) instead of taking the number. Within the
 * slack a later StatSN is taken, an earlier one ignored. Returns 0 or
 * -EPROTO. */
static int update_sn(struct osd__iscsi_sess *s, const struct osd__iscsi_bhs *h, int has_status)
{
	if (has_status) {
		int32_t d = (int32_t)(h->stat_sn - s->expstatsn);

		if (d > OSD_ISCSI_STATSN_SLACK || d < -OSD_ISCSI_STATSN_SLACK) {
			osd__iscsi_set_error(s, "StatSN %u %s ExpStatSN (%s, task 0x%x)",
					     (unsigned)(d < 0 ? -(int64_t)d : d),
					     d < 0 ? "behind" : "ahead of",
					     osd__iscsi_opcode_name(h->opcode), (unsigned)h->itt);
			osd__iscsi_proto_error(s, h->itt, 0);
			return -EPROTO;
		}
		if (d >= 0)
			s->expstatsn = h->stat_sn + 1;
	}
	/* RFC 7143 §4.2.2.1: ignore windows with MaxCmdSN < ExpCmdSN - 1 */
	if (osd__iscsi_sn_lt(h->max_cmd_sn, h->exp_cmd_sn - 1))
		return 0;
	if (osd__iscsi_sn_gt(h->exp_cmd_sn, s->expcmdsn))
		s->expcmdsn = h->exp_cmd_sn;
	if (osd__iscsi_sn_gt(h->max_cmd_sn, s->maxcmdsn))
		s->maxcmdsn = h->max_cmd_sn;
	return 0;
}

static int on_r2t(struct osd__iscsi_sess *s, const struct osd__iscsi_bhs *h)
{
	struct osd__iscsi_task *t = osd__iscsi_find_task(s, h->itt);

	/* Aborted meanwhile, or cancelled: its data-out is not ours to send
	 * any more, and our ABORT TASK ends the transfer (RFC 7143 §11.5.1). */
	if (!t || !t->xfer)
		return 0;
	/* R2Ts keep coming while our queue does not drain: the target does
	 * not read, and each answer would queue more (RFC 7143 §11.8 bounds
	 * them by MaxOutstandingR2T, which we do not track). */
	if (s->sendq_mem > OSD_ISCSI_SENDQ_MAX) {
		osd__iscsi_set_error(s, "send queue full: %zu bytes queued, limit %u",
				     s->sendq_mem, OSD_ISCSI_SENDQ_MAX);
		return -ENOBUFS;
	}
	/* An R2T for a command without data-out makes no sense for it
	 * (RFC 7143 §11.8): it fails, whatever the target says next. */
	if (!t->xfer->out_len) {
		osd__iscsi_set_error(s, "R2T for a READ (task 0x%x)", (unsigned)t->itt);
		osd__iscsi_proto_error(s, t->itt, 1);
		return -EPROTO;
	}
	/* R2TSN counts the task's R2Ts from 0; with Data-In (bidirectional)
	 * the two may share one sequence (RFC 7143 §11.8.5). Another number
	 * is an R2T lost, repeated or made up (§7.9): at ErrorRecoveryLevel 0
	 * the connection drops. */
	if (!osd__iscsi_task_sn_ok(t, h->data_sn, t->r2ts)) {
		osd__iscsi_set_error(s, "R2T with R2TSN %u, expected %u (task 0x%x)",
				     (unsigned)h->data_sn, (unsigned)t->r2ts, (unsigned)t->itt);
		osd__iscsi_proto_error(s, t->itt, 0);
		return -EPROTO;
	}
	t->r2ts++;
	if (h->offset > t->xfer->out_len || h->length > t->xfer->out_len - h->offset ||
	    h->length == 0) {
		osd__iscsi_set_error(s, "R2T for [%u, +%u) outside the %zu-byte data-out (task 0x%x)",
				     (unsigned)h->offset, (unsigned)h->length, t->xfer->out_len,
				     (unsigned)t->itt);
		osd__iscsi_proto_error(s, t->itt, 0);
		return -EPROTO;
	}
	return osd__iscsi_data_out(s, t, h->ttt, h->offset, h->length);
}

/* A SCSI asynchronous event (AsyncEvent 0): the data segment holds
 * SenseLength and sense data (RFC 7143 §11.9.1, §11.4.7). We never enable
 * asynchronous event reporting, so nothing waits for it: the sense is kept
 * as the session's last (async_sense) and counted; the condition it
 * reports reaches the commands as the unit attention the target
 * establishes for this nexus (SAM-5 §5.14), which libosd handles. A sense
 * length past the segment is counted (async_bad) and dropped. */
static void async_sense(struct osd__iscsi_sess *s, const struct osd__iscsi_pdu *p)
{
	size_t sl;

	if (p->data_len < 2 || (sl = (size_t)p->data[0] << 8 | p->data[1]) > p->data_len - 2 ||
	    sl > sizeof(s->async_sense)) {
		s->async_bad++;
		return;
	}
	memcpy(s->async_sense, p->data + 2, sl);
	s->async_sense_len = sl;
}

/* An Async Message (RFC 7143 §11.9.1); a drop is handled here (the
 * connection is logged in again before this returns). */
static void on_async(struct osd__iscsi_sess *s, const struct osd__iscsi_pdu *p)
{
	const struct osd__iscsi_bhs *h = &p->bhs;

	s->async_events++;
	switch (h->async_event) {
	case OSD_ISCSI_ASYNC_SCSI:
		async_sense(s, p);
		break;
	case OSD_ISCSI_ASYNC_LOGOUT:
	case OSD_ISCSI_ASYNC_NEGOTIATE:
		/* Logout requested, or renegotiation, which the initiator may
		 * honour with a Logout Request: stop sending, and log out and in
		 * again once the commands in flight are done (service). */
		s->logout_requested = 1;
		break;
	case OSD_ISCSI_ASYNC_DROP_CONN:
	case OSD_ISCSI_ASYNC_DROP_SESS: {
		/* Parameter2: seconds to wait before logging in again */
		unsigned ms = h->async_param[1] * 1000u;

		if (ms > OSD_ISCSI_TIME2WAIT_MAX_MS)
			ms = OSD_ISCSI_TIME2WAIT_MAX_MS;
		s->time2wait_until = ms ? osd__iscsi_now_ms() + ms : 0;
		osd__iscsi_set_error(s, "target announced it drops the connection");
		osd__iscsi_proto_error(s, OSD_ISCSI_RSVD_TAG, 0);
		osd__iscsi_conn_lost(s, -ECONNRESET);
		break;
	}
	default: /* reserved and vendor-specific events: nothing to do */
		s->async_ignored++;
		break;
	}
}

/* RFC 7143 §11.17.1 reason codes, for the error text. */
static const char *reject_reason(uint8_t r)
{
	switch (r) {
	case 0x02: return "data digest error";
	case 0x03: return "SNACK reject";
	case 0x04: return "protocol error";
	case 0x05: return "command not supported";
	case 0x06: return "immediate command reject";
	case 0x07: return "task in progress";
	case 0x08: return "invalid data ack";
	case 0x09: return "invalid PDU field";
	case 0x0a: return "long operation reject";
	case 0x0b: return "deprecated reason";
	case 0x0c: return "waiting for logout";
	default: return "reserved reason";
	}
}

/* A Reject (RFC 7143 §11.17): the command it names fails at once with
 * -EIO, whatever follows for it (a SCSI Response, §11.17.1, finds no task
 * and is dropped). A Reject without the rejected header names nothing:
 * only its reason is kept. */
static void on_reject(struct osd__iscsi_sess *s, const struct osd__iscsi_pdu *p)
{
	struct osd__iscsi_bhs rej;
	struct osd__iscsi_task *t;

	if (p->data_len < OSD_ISCSI_BHS_LEN || osd__iscsi_bhs_decode(&rej, p->data)) {
		osd__iscsi_set_error(s, "target rejected a PDU it does not name: %s (reason 0x%02x)",
				     reject_reason(p->bhs.response), p->bhs.response);
		return;
	}
	osd__iscsi_set_error(s, "target rejected a %s: %s (reason 0x%02x)",
			     osd__iscsi_opcode_name(rej.opcode), reject_reason(p->bhs.response),
			     p->bhs.response);
	t = osd__iscsi_find_task(s, rej.itt);
	if (t)
		osd__iscsi_complete(s, t, -EIO);
	if (rej.itt == s->nop_itt)
		s->nop_itt = OSD_ISCSI_RSVD_TAG;
	if (rej.itt == s->tmf_itt) {
		s->tmf_done = 1;
		s->tmf_response = OSD_ISCSI_TMF_RSP_REJECTED;
	}
}

/* The answer to the ABORT TASK of a cancelled task. "Function complete" or
 * "task does not exist": the target holds the command no more and sends
 * nothing further for it (RFC 7143 §11.6.1), so the task is forgotten.
 * Any other answer leaves it to its status or to the connection. */
static void on_abort_answer(struct osd__iscsi_sess *s, const struct osd__iscsi_bhs *h)
{
	for (struct osd__iscsi_task *t = s->tasks; t; t = t->next) {
		if (t->xfer || t->abort_itt != h->itt)
			continue;
		if (h->response == OSD_ISCSI_TMF_RSP_COMPLETE ||
		    h->response == OSD_ISCSI_TMF_RSP_NO_TASK)
			osd__iscsi_complete(s, t, -ECANCELED);
		return;
	}
}

/* Counts a PDU the target sent on its own (a NOP-In that does not answer
 * our keepalive, an Async Message, a Reject). More than
 * OSD_ISCSI_UNSOLICITED_MAX within OSD_ISCSI_UNSOLICITED_WINDOW_MS is a
 * flood: -EPROTO, and the connection drops. Each costs us work and a NOP-In
 * ping an answer (RFC 7143 §11.19), so a target sending them as fast as it
 * can would otherwise hold the connection (and our memory) hostage. */
static int count_unsolicited(struct osd__iscsi_sess *s, const struct osd__iscsi_bhs *h)
{
	uint64_t now = osd__iscsi_now_ms();

	if (!s->unsol_count || now - s->unsol_start_ms >= OSD_ISCSI_UNSOLICITED_WINDOW_MS) {
		s->unsol_start_ms = now;
		s->unsol_count = 0;
		s->unsol_nop = 0;
	}
	s->unsol_count++;
	if (h->opcode == OSD_ISCSI_OP_NOP_IN)
		s->unsol_nop++;
	if (s->unsol_count <= OSD_ISCSI_UNSOLICITED_MAX)
		return 0;
	if (s->unsol_nop * 2 > s->unsol_count)
		osd__iscsi_set_error(s, "NOP-In flood: %u in %u ms", s->unsol_count,
				     (unsigned)(now - s->unsol_start_ms));
	else
		osd__iscsi_set_error(s, "unsolicited PDU flood: %u in %u ms (%u NOP-In)",
				     s->unsol_count, (unsigned)(now - s->unsol_start_ms),
				     s->unsol_nop);
	osd__iscsi_proto_error(s, OSD_ISCSI_RSVD_TAG, 0);
	return -EPROTO;
}

/* Handles one received PDU. Returns 0 or -EPROTO (drop the connection). */
static int dispatch(struct osd__iscsi_sess *s, const struct osd__iscsi_pdu *p)
{
	const struct osd__iscsi_bhs *h = &p->bhs;
	struct osd__iscsi_task *t;
	int rc;

	if (h->opcode == OSD_ISCSI_OP_ASYNC_MSG || h->opcode == OSD_ISCSI_OP_REJECT ||
	    (h->opcode == OSD_ISCSI_OP_NOP_IN &&
	     (h->itt == OSD_ISCSI_RSVD_TAG || h->itt != s->nop_itt))) {
		rc = count_unsolicited(s, h);
		if (rc)
			return rc;
	}
	switch (h->opcode) {
	case OSD_ISCSI_OP_DATA_IN:
		rc = update_sn(s, h, h->flags & OSD_ISCSI_F_STATUS);
		t = osd__iscsi_find_task(s, h->itt);
		if (rc || !t)
			return rc;
		rc = osd__iscsi_data_in(s, t, p);
		if (rc == 1)
			osd__iscsi_complete(s, t, 0);
		return rc < 0 ? rc : 0;
	case OSD_ISCSI_OP_SCSI_RSP:
		rc = update_sn(s, h, 1);
		t = osd__iscsi_find_task(s, h->itt);
		if (rc || !t)
			return rc;
		if (h->response != OSD_ISCSI_RSP_COMPLETED) {
			osd__iscsi_set_error(s, "target failure (iSCSI response 0x%02x)", h->response);
			osd__iscsi_complete(s, t, -EIO);
			return 0;
		}
		rc = osd__iscsi_scsi_rsp(s, t, p);
		if (rc == 0)
			osd__iscsi_complete(s, t, 0);
		return rc;
	case OSD_ISCSI_OP_R2T:
		rc = update_sn(s, h, 0);
		return rc ? rc : on_r2t(s, h);
	case OSD_ISCSI_OP_NOP_IN:
		rc = update_sn(s, h, h->itt != OSD_ISCSI_RSVD_TAG);
		if (rc)
			return rc;
		if (h->itt != OSD_ISCSI_RSVD_TAG && h->itt == s->nop_itt)
			s->nop_itt = OSD_ISCSI_RSVD_TAG;
		if (h->ttt != OSD_ISCSI_RSVD_TAG) /* a ping: echo it */
			osd__iscsi_send_nop_out(s, OSD_ISCSI_RSVD_TAG, h->ttt, h->lun, p->data, p->data_len);
		return 0;
	case OSD_ISCSI_OP_TMF_RSP:
		rc = update_sn(s, h, 1);
		if (rc)
			return rc;
		if (h->itt == s->tmf_itt) {
			s->tmf_done = 1;
			s->tmf_response = h->response;
		} else {
			on_abort_answer(s, h);
		}
		return 0;
	case OSD_ISCSI_OP_ASYNC_MSG:
		rc = update_sn(s, h, 1);
		if (rc)
			return rc;
		on_async(s, p); /* a drop is handled there, not again by receive() */
		return 0;
	case OSD_ISCSI_OP_REJECT:
		rc = update_sn(s, h, 1);
		if (rc == 0)
			on_reject(s, p);
		return rc;
	case OSD_ISCSI_OP_LOGOUT_RSP:
	case OSD_ISCSI_OP_TEXT_RSP:
		return update_sn(s, h, 1);
	default:
		osd__iscsi_set_error(s, "unexpected %s in full-feature phase",
				     osd__iscsi_opcode_name(h->opcode));
		osd__iscsi_proto_error(s, OSD_ISCSI_RSVD_TAG, 0);
		return -EPROTO;
	}
}

/* ---- connection loss and reconnect ---- */

void osd__iscsi_proto_error(struct osd__iscsi_sess *s, uint32_t itt, int fatal)
{
	s->proto_fault = 1;
	s->proto_itt = itt;
	s->proto_fatal = fatal;
}

/* The connection dropped for a protocol error: the command it concerns
 * (every command in flight when it concerns none in particular) is
 * charged with it. A command charged more than OSD_ISCSI_PROTO_RESENDS
 * times, or once with a fatal error, is not resent: triage() fails it with
 * -EPROTO, the error text naming the cause. A target (or a relay) that
 * breaks the protocol on every command would otherwise have it resent,
 * and the connection logged in again, until the caller's timeout. */
static void charge_proto(struct osd__iscsi_sess *s, uint32_t itt, int fatal)
{
	for (struct osd__iscsi_task *t = s->tasks; t; t = t->next) {
		if (t->state != TASK_SENT || !t->xfer)
			continue;
		if (itt != OSD_ISCSI_RSVD_TAG && t->itt != itt)
			continue;
		t->proto_errs += fatal ? OSD_ISCSI_PROTO_RESENDS + 1 : 1;
	}
}

/* Before a login after a protocol error: once OSD_ISCSI_PROTO_LOGIN_MAX
 * such logins started within OSD_ISCSI_PROTO_LOGIN_WINDOW_MS, waits
 * OSD_ISCSI_PROTO_BACKOFF_MIN_MS, doubling with each further one up to
 * OSD_ISCSI_PROTO_BACKOFF_MAX_MS, but never past @p until (failover_ms).
 * Then counts this login. */
static void proto_login_pace(struct osd__iscsi_sess *s, uint64_t until)
{
	uint64_t now = osd__iscsi_now_ms();
	uint64_t oldest = s->proto_logins[s->proto_login_next];

	if (s->proto_logins_total >= OSD_ISCSI_PROTO_LOGIN_MAX &&
	    now - oldest < OSD_ISCSI_PROTO_LOGIN_WINDOW_MS) {
		unsigned wait = s->proto_backoff_ms ? s->proto_backoff_ms * 2 :
				OSD_ISCSI_PROTO_BACKOFF_MIN_MS;

		if (wait > OSD_ISCSI_PROTO_BACKOFF_MAX_MS)
			wait = OSD_ISCSI_PROTO_BACKOFF_MAX_MS;
		s->proto_backoff_ms = wait;
		if (until && now + wait > until)
			wait = until > now ? (unsigned)(until - now) : 0;
		if (wait)
			poll(NULL, 0, (int)wait);
		now = osd__iscsi_now_ms();
	} else {
		s->proto_backoff_ms = 0;
	}
	s->proto_logins[s->proto_login_next] = now;
	s->proto_login_next = (s->proto_login_next + 1) % OSD_ISCSI_PROTO_LOGIN_MAX;
	s->proto_logins_total++;
}

/* The wait an Async Message announcing the drop asked for before the next
 * login (Parameter2, Time2Wait, RFC 7143 §11.9.1), beyond what
 * proto_login_pace() waited already: at most
 * OSD_ISCSI_TIME2WAIT_MAX_MS, and never past @p until (failover_ms). */
static void time2wait(struct osd__iscsi_sess *s, uint64_t until)
{
	uint64_t now = osd__iscsi_now_ms(), end = s->time2wait_until;

	s->time2wait_until = 0;
	if (until && end > until)
		end = until;
	if (end > now)
		poll(NULL, 0, (int)(end - now));
}

/* Before the next login after a refused connection (nothing listens: a
 * target restarting, as an upgrade or a crash and restart does): waits
 * OSD_ISCSI_REFUSED_WAIT_MS, doubling per attempt up to
 * OSD_ISCSI_REFUSED_WAIT_MAX_MS, never past @p until. Logins tried back to
 * back would all be refused within a millisecond, and the session would
 * die although the target is back a moment later. */
static void refused_pace(unsigned attempt, uint64_t until)
{
	uint64_t now = osd__iscsi_now_ms();
	unsigned wait = OSD_ISCSI_REFUSED_WAIT_MS << (attempt < 8 ? attempt : 8);

	if (wait > OSD_ISCSI_REFUSED_WAIT_MAX_MS)
		wait = OSD_ISCSI_REFUSED_WAIT_MAX_MS;
	if (until && now + wait > until)
		wait = until > now ? (unsigned)(until - now) : 0;
	if (wait)
		poll(NULL, 0, (int)wait);
}

/* Logs in again, up to reconnect_attempts times, each bounded by
 * connect_timeout_ms and all of them by @p until (0 = no such bound). */
static int relogin(struct osd__iscsi_sess *s, uint64_t until)
{
	int rc = -ECONNRESET;

	for (unsigned i = 0; i < s->opts.reconnect_attempts; i++) {
		uint64_t now, deadline;

		if (i > 0 && rc == -ECONNREFUSED)
			refused_pace(i - 1, until);
		now = osd__iscsi_now_ms();
		deadline = s->opts.connect_timeout_ms ? now + s->opts.connect_timeout_ms : 0;
		if (until && now >= until) {
			osd__iscsi_set_error(s, "no login within failover_ms (%u ms)",
					     s->opts.failover_ms);
			return -ETIMEDOUT;
		}
		if (until && (!deadline || deadline > until))
			deadline = until;
		rc = osd__iscsi_connect(s, deadline);
		if (rc == 0)
			rc = osd__iscsi_login(s, deadline);
		if (rc == 0)
			return 0;
		osd__iscsi_disconnect(s);
		if (rc == -EACCES || rc == -ENOENT)
			break; /* will not get better by retrying */
	}
	return rc;
}

/* The last command in flight that may not be resent, or NULL. A
 * repeatable write sent before it must not be resent either: the target
 * may have run both, and running the write again would come after it. */
static const struct osd__iscsi_task *last_unrepeatable(const struct osd__iscsi_sess *s)
{
	const struct osd__iscsi_task *last = NULL;

	for (const struct osd__iscsi_task *t = s->tasks; t; t = t->next)
		if (t->state == TASK_SENT && t->idempotent == OSD_ISCSI_RESEND_NEVER)
			last = t;
	return last;
}

/* Commands in flight when the connection drops: reads, and repeatable
 * writes with no unrepeatable command after them, go back to the queue
 * (in their order); the others fail with -EIO. A cancelled command is
 * forgotten: its submitter has its buffers back, so it is never resent (it
 * still counts as a barrier: the target may have run it). */
static void triage(struct osd__iscsi_sess *s)
{
	const struct osd__iscsi_task *barrier = last_unrepeatable(s);
	int before = barrier != NULL;
	struct osd__iscsi_task *t, *next;

	for (t = s->tasks; t; t = next) {
		next = t->next;
		if (t == barrier)
			before = 0;
		if (t->state != TASK_SENT)
			continue;
		if (!t->xfer)
			osd__iscsi_complete(s, t, -ECANCELED);
		else if (t->proto_errs > OSD_ISCSI_PROTO_RESENDS)
			osd__iscsi_complete(s, t, -EPROTO);
		else if (t->idempotent == OSD_ISCSI_RESEND_ALWAYS ||
		    (t->idempotent == OSD_ISCSI_RESEND_REPEATABLE && !before)) {
			t->state = TASK_PENDING;
			s->inflight--;
		} else {
			osd__iscsi_complete(s, t, -EIO);
		}
	}
}

/* The connection is gone: triage the commands in flight, then log in again
 * (blocking, bounded by the options). With commands waiting the logins end
 * failover_ms after the target's last PDU (timers() spent about two thirds
 * of it noticing a silence), but get at least a sixth of it. */
void osd__iscsi_conn_lost(struct osd__iscsi_sess *s, int err)
{
	uint64_t until = 0;
	int proto = s->proto_fault;
	char why[sizeof(s->err)];

	(void)err;
	s->proto_fault = 0;
	s->rx.no_read = 0; /* the logins below read, whatever budget receive() spent */
	s->unsol_count = 0;
	if (s->opts.failover_ms && s->tasks) {
		uint64_t least = osd__iscsi_now_ms() + s->opts.failover_ms / 6;

		until = s->last_rx_ms + s->opts.failover_ms;
		if (until < least)
			until = least;
	}
	osd__iscsi_disconnect(s);
	if (proto)
		charge_proto(s, s->proto_itt, s->proto_fatal);
	triage(s);
	s->nop_itt = OSD_ISCSI_RSVD_TAG;
	s->logout_requested = 0;
	if (s->tmf_itt != OSD_ISCSI_RSVD_TAG) {
		s->tmf_done = 1;
		s->tmf_response = -1;
	}
	if (proto)
		proto_login_pace(s, until);
	time2wait(s, until);
	memcpy(why, s->err, sizeof(why));
	if (relogin(s, until)) {
		s->dead = 1;
		fail_all(s, -EIO);
		return;
	}
	/* the reason of the drop stays readable; a clean login leaves no other */
	memcpy(s->err, why, sizeof(why));
	s->proto_fault = 0; /* one met while logging in is the login's failure */
	if (start_pending(s))
		osd__iscsi_conn_lost(s, -EIO);
}

/* ---- event loop ---- */

/* Keepalive: a NOP-Out after nop_interval_ms without a PDU from the
 * target, and the connection dropped when it is not answered within
 * nop_timeout_ms. While commands are in flight the target may stay silent
 * for failover_ms in all: both steps shrink to a third of it, and the
 * logins after the drop get the last third (osd__iscsi_conn_lost). */
static void timers(struct osd__iscsi_sess *s)
{
	uint64_t now = osd__iscsi_now_ms();
	unsigned interval = s->opts.nop_interval_ms, timeout = s->opts.nop_timeout_ms;

	if (s->fd < 0)
		return;
	if (s->opts.failover_ms && s->inflight) {
		unsigned third = s->opts.failover_ms / 3;

		if (!interval || interval > third)
			interval = third;
		if (!timeout || timeout > third)
			timeout = third;
	}
	if (!interval)
		return;
	if (s->nop_itt != OSD_ISCSI_RSVD_TAG) {
		if (timeout && now - s->nop_sent_ms >= timeout) {
			osd__iscsi_set_error(s, "keepalive unanswered for %u ms", timeout);
			osd__iscsi_conn_lost(s, -ETIMEDOUT);
		}
		return;
	}
	if (now - s->last_rx_ms >= interval) {
		s->nop_itt = osd__iscsi_new_itt(s);
		s->nop_sent_ms = now;
		osd__iscsi_send_nop_out(s, s->nop_itt, OSD_ISCSI_RSVD_TAG, NULL, NULL, 0);
	}
}

/* Reads and handles what the target sent. The work is bounded: after
 * OSD_ISCSI_SERVICE_MAX_PDUS PDUs or OSD_ISCSI_SERVICE_MAX_BYTES bytes the
 * socket is read no more in this call, only the PDUs already buffered are
 * handled (at most the read-ahead), so that a target sending without pause
 * cannot keep the caller here: the timers and the caller's own timeouts
 * run, and the next poll() finds the socket readable again. Nothing whole
 * stays buffered, so no PDU waits for a poll() that would not wake. A lost
 * connection is logged in again here (osd__iscsi_conn_lost) and reading
 * goes on within the same budget; after a second loss in one call the
 * rest waits for the next call, so that a target that floods every new
 * connection at once costs at most two logins per call. */
static void receive(struct osd__iscsi_sess *s)
{
	unsigned pdus = 0, lost = 0;
	int rc;

	s->rx.bytes_read = 0;
	s->rx.no_read = 0;
	while (s->fd >= 0) {
		if (pdus >= OSD_ISCSI_SERVICE_MAX_PDUS ||
		    s->rx.bytes_read >= OSD_ISCSI_SERVICE_MAX_BYTES)
			s->rx.no_read = 1;
		rc = osd__iscsi_recv(s);
		if (rc == 0)
			break;
		if (rc == 1) {
			pdus++;
			rc = dispatch(s, &s->rx.pdu);
			osd__iscsi_rx_reset(s);
		}
		if (rc < 0) {
			s->rx.no_read = 0;
			osd__iscsi_conn_lost(s, rc);
			if (++lost == 2)
				break;
		}
	}
	s->rx.no_read = 0;
}

int osd__iscsi_service_locked(struct osd__iscsi_sess *s, int revents)
{
	(void)revents; /* the non-blocking calls tell us everything */
	if (s->dead)
		return -ENOTCONN;
	receive(s);
	if (s->fd >= 0 && s->logout_requested && s->inflight == 0) {
		uint64_t deadline = osd__iscsi_now_ms() + LOGOUT_WAIT_MS;

		osd__iscsi_logout(s, deadline);
		osd__iscsi_conn_lost(s, 0);
	}
	if (s->fd >= 0)
		timers(s);
	if (s->fd >= 0 && start_pending(s))
		osd__iscsi_conn_lost(s, -EIO);
	return s->dead ? -ENOTCONN : 0;
}

/* ---- transport operations ---- */

static int xfer_valid(const struct osd_xfer *x)
{
	size_t out = 0, in = 0;

	if (!x || !OSD_XFER_SIZE_OK(x) || !x->cdb || x->cdb_len == 0 ||
	    x->cdb_len > OSD_ISCSI_MAX_CDB || !x->done ||
	    x->out_iovcnt < 0 || x->in_iovcnt < 0 || x->out_len > UINT32_MAX ||
	    x->in_len > UINT32_MAX)
		return 0;
	for (int i = 0; i < x->out_iovcnt; i++)
		out += x->out_iov[i].iov_len;
	for (int i = 0; i < x->in_iovcnt; i++)
		in += x->in_iov[i].iov_len;
	return out >= x->out_len && in >= x->in_len;
}

static int op_submit(void *impl, struct osd_xfer *xfer)
{
	struct osd__iscsi_sess *s = impl;
	struct osd__iscsi_task *t, **pp;

	if (!xfer_valid(xfer))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->xfer = xfer;
	t->idempotent = osd__iscsi_cmd_idempotent(xfer);
	xfer->status = 0;
	xfer->sense_len = 0;
	xfer->in_xferred = 0;
	pthread_mutex_lock(&s->lock);
	if (s->dead || s->discovery) {
		pthread_mutex_unlock(&s->lock);
		free(t);
		return -ENOTCONN;
	}
	t->itt = osd__iscsi_new_itt(s);
	t->state = TASK_PENDING;
	for (pp = &s->tasks; *pp; pp = &(*pp)->next)
		;
	*pp = t;
	/* Idle, what the target sent meanwhile (a NOP-In ping, or the close of
	 * a connection it found idle, RFC 7143 §11.19) is taken in first, so
	 * the command does not go into a dead connection and fail with -EIO.
	 * The service sends it (or logs in again, then sends it). */
	if (s->inflight == 0 && s->fd >= 0)
		osd__iscsi_service_locked(s, 0);
	else if (start_pending(s))
		osd__iscsi_conn_lost(s, -EIO);
	pthread_mutex_unlock(&s->lock);
	osd__iscsi_run_completions(s);
	return 0;
}

/* ---- giving up on a command ---- */

/* ABORT TASK (RFC 7143 §11.5.1) for the cancelled task @p z, not waited
 * for: its answer (on_abort_answer) or the command's own status ends @p z.
 * If it cannot be queued or sent, the connection is shut down and handled
 * as lost on the next service, which forgets @p z as well. */
static void send_abort(struct osd__iscsi_sess *s, struct osd__iscsi_task *z)
{
	struct osd__iscsi_bhs h;

	if (s->fd < 0)
		return;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_TMF_REQ;
	h.immediate = 1;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_TASK_ABORT;
	osd__iscsi_lun_encode(h.lun, (uint16_t)s->url.lun);
	z->abort_itt = osd__iscsi_new_itt(s);
	h.itt = z->abort_itt;
	h.ttt = z->itt; /* Referenced Task Tag */
	h.cmd_sn = s->cmdsn;
	h.exp_stat_sn = s->expstatsn;
	h.ref_cmd_sn = z->cmdsn;
	if (osd__iscsi_send(s, &h, NULL, 0, NULL, 0) == 0 && osd__iscsi_flush(s) == 0)
		return;
	osd__iscsi_set_error(s, "cannot send ABORT TASK for a cancelled command");
	shutdown(s->fd, SHUT_RDWR);
}

/* Task @p *pp, sent, is given up by its submitter. The target holds the
 * command, so its ITT stays listed under a stand-in without buffers (in
 * @p t's place and in its count of commands in flight); a Data-In segment
 * arriving for it goes on into the sink. @p t leaves the list, its queued
 * data-out copied. Returns @p t. */
static struct osd__iscsi_task *cancel_sent(struct osd__iscsi_sess *s,
					   struct osd__iscsi_task **pp)
{
	struct osd__iscsi_task *t = *pp, *z = calloc(1, sizeof(*z));

	if (!z) {
		/* Nothing to remember it by: end the connection, which forgets it. */
		osd__iscsi_set_error(s, "out of memory cancelling a command");
		if (s->fd >= 0)
			shutdown(s->fd, SHUT_RDWR);
		unlink_task(s, t);
		osd__iscsi_sendq_release(s, t);
		osd__iscsi_rx_forget(s, t);
		return t;
	}
	z->itt = t->itt;
	z->cmdsn = t->cmdsn;
	z->state = TASK_SENT;
	z->in_got = t->in_got;
	z->idempotent = t->idempotent;
	z->abort_itt = OSD_ISCSI_RSVD_TAG;
	z->next = t->next;
	*pp = z;
	if (s->rx.direct == t)
		s->rx.direct = z;
	osd__iscsi_sendq_release(s, t);
	send_abort(s, z);
	return t;
}

/* The submitter gives up on @p xfer (include/osd/sys/transport.h): when
 * this returns 0 its done() has run, on this thread, and nothing of the
 * xfer or its buffers is used again. A command never sent is dropped; one
 * the target holds is aborted and what still comes for it dropped; one
 * answered already gets its answer. -ENOENT: done() has been taken by
 * another thread's completion run. */
static int op_cancel(void *impl, struct osd_xfer *xfer)
{
	struct osd__iscsi_sess *s = impl;
	struct osd__iscsi_task **pp, *t = NULL, *prev = NULL;
	int err = -ECANCELED;

	if (!xfer)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	for (pp = &s->tasks; *pp && (*pp)->xfer != xfer; pp = &(*pp)->next)
		;
	if (*pp && (*pp)->state == TASK_PENDING) {
		t = *pp; /* never sent: nothing to ask the target */
		unlink_task(s, t);
	} else if (*pp) {
		t = cancel_sent(s, pp);
	} else {
		/* answered, its callback not run yet: run it here and now */
		for (t = s->done_list; t && t->xfer != xfer; prev = t, t = t->next)
			;
		if (t) {
			if (prev)
				prev->next = t->next;
			else
				s->done_list = t->next;
			if (s->done_tail == t)
				s->done_tail = prev;
			err = t->err;
		}
	}
	if (t)
		t->state = TASK_DONE;
	pthread_mutex_unlock(&s->lock);
	if (!t)
		return -ENOENT;
	xfer->done(xfer, err);
	free(t);
	return 0;
}

static int op_get_fd(void *impl)
{
	struct osd__iscsi_sess *s = impl;
	int fd;

	pthread_mutex_lock(&s->lock);
	fd = s->fd;
	pthread_mutex_unlock(&s->lock);
	return fd;
}

static int op_which_events(void *impl)
{
	struct osd__iscsi_sess *s = impl;
	int ev;

	pthread_mutex_lock(&s->lock);
	ev = s->fd < 0 ? 0 : POLLIN | (s->sendq ? POLLOUT : 0);
	pthread_mutex_unlock(&s->lock);
	return ev;
}

static int op_service(void *impl, int revents)
{
	struct osd__iscsi_sess *s = impl;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = osd__iscsi_service_locked(s, revents);
	pthread_mutex_unlock(&s->lock);
	osd__iscsi_run_completions(s);
	return rc;
}

/* The security token the target gave this session at login (Security Token
 * VPD page); a reconnect reads the new session's. */
static size_t op_security_token(void *impl, uint8_t *buf, size_t len)
{
	struct osd__iscsi_sess *s = impl;
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->token_len;
	memcpy(buf, s->token, len < n ? len : n);
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void op_destroy(void *impl)
{
	struct osd__iscsi_sess *s = impl;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->fd >= 0 && !s->tasks) {
		uint64_t wait = s->opts.connect_timeout_ms && s->opts.connect_timeout_ms <
				LOGOUT_WAIT_MS ? s->opts.connect_timeout_ms : LOGOUT_WAIT_MS;

		osd__iscsi_logout(s, osd__iscsi_now_ms() + wait);
	}
	osd__iscsi_disconnect(s);
	fail_all(s, -ECANCELED);
	pthread_mutex_unlock(&s->lock);
	osd__iscsi_run_completions(s);
	osd__iscsi_sess_free(s);
}

const struct osd_transport_ops osd__iscsi_ops = {
	.version = OSD_TRANSPORT_VERSION,
	.submit = op_submit,
	.get_fd = op_get_fd,
	.which_events = op_which_events,
	.service = op_service,
	.security_token = op_security_token,
	.destroy = op_destroy,
	.cancel = op_cancel,
};
