/*
 * SCSI commands over iSCSI (RFC 7143 sections 4.2.5 and 11.2-11.8):
 * immediate data, unsolicited Data-Out up to FirstBurstLength, R2T for the
 * rest, then execution and Data-In / SCSI Response with residuals.
 */
#include "iscsi/server.h"

#include "exec/precheck.h"
#include "proto/byteorder.h"
#include "response.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ASC_DATA_PHASE_ERROR 0x4B00
#define ASC_PROTOCOL_CRC_ERROR 0x4705
#define ASC_TIMEOUT_BEFORE_PROCESSING 0x2E01
#define ASC_POWER_ON_RESET 0x2900 /* | ASCQ 07h: I_T NEXUS LOSS OCCURRED */
#define OP_REQUEST_SENSE 0x03
#define OP_INQUIRY 0x12
#define OP_REPORT_LUNS 0xA0
#define GROW_STEP (256u << 10)          /* data-out buffers grow by this much */

void osd__tgt_iscsi_task_free(struct iscsi_conn *c, struct iscsi_task *t)
{
	if (t) {
		osd__tgt_iscsi_budget_put(c->srv, t->shared);
		pthread_mutex_lock(&c->mu);
		c->own -= t->cap - t->shared;
		pthread_mutex_unlock(&c->mu);
		free(t->out);
		free(t);
	}
}

/* A task answered or dropped without execution: out of c->order, freed. */
static void task_free(struct iscsi_conn *c, struct iscsi_task *t)
{
	osd__tgt_iscsi_task_leave(c, t);
}

/*
 * Room in t->out for data-out up to @p need. Buffers grow with the data that
 * actually arrives (in GROW_STEP steps), not with the transfer length a
 * command announces: a command whose data never comes holds next to
 * nothing. Each connection may hold ISCSI_CONN_ALLOWANCE of its own, so
 * peers that exhaust the server's budget do not stall everybody's small
 * writes; beyond it the budget is shared. 0 or -ENOBUFS.
 */
static int task_grow(struct iscsi_conn *c, struct iscsi_task *t, size_t need)
{
	if (need <= t->cap)
		return 0;
	size_t want = need + GROW_STEP - 1 - (need + GROW_STEP - 1) % GROW_STEP;
	if (want > t->out_len)
		want = t->out_len;
	pthread_mutex_lock(&c->mu); /* workers give back what finished tasks held */
	size_t more = want - t->cap, own = ISCSI_CONN_ALLOWANCE - c->own;
	if (own > more)
		own = more;
	c->own += own;
	pthread_mutex_unlock(&c->mu);
	uint8_t *b = NULL;
	if (osd__tgt_iscsi_budget_take(c->srv, more - own) == 0) {
		b = realloc(t->out, want);
		if (!b)
			osd__tgt_iscsi_budget_put(c->srv, more - own);
	}
	if (!b) {
		pthread_mutex_lock(&c->mu);
		c->own -= own;
		pthread_mutex_unlock(&c->mu);
		return -ENOBUFS;
	}
	t->shared += more - own;
	t->out = b;
	t->cap = want;
	return 0;
}

static struct iscsi_task *task_unlink(struct iscsi_conn *c, uint32_t itt)
{
	for (struct iscsi_task **pp = &c->tasks; *pp; pp = &(*pp)->next) {
		struct iscsi_task *t = *pp;
		if (t->itt == itt) {
			*pp = t->next;
			t->next = NULL;
			c->ntasks--;
			return t;
		}
	}
	return NULL;
}

static struct iscsi_task *task_find(struct iscsi_conn *c, uint32_t itt)
{
	for (struct iscsi_task *t = c->tasks; t; t = t->next)
		if (t->itt == itt)
			return t;
	return NULL;
}

unsigned osd__tgt_iscsi_tasks_drop(struct iscsi_conn *c, const uint8_t *lun)
{
	unsigned n = 0;
	struct iscsi_task **pp = &c->tasks;
	while (*pp) {
		struct iscsi_task *t = *pp;
		if (!lun || memcmp(t->lun, lun, 8) == 0) {
			*pp = t->next;
			c->ntasks--;
			task_free(c, t);
			n++;
		} else {
			pp = &t->next;
		}
	}
	return n;
}

int osd__tgt_iscsi_task_abort(struct iscsi_conn *c, uint32_t itt)
{
	struct iscsi_task *t = task_unlink(c, itt);
	task_free(c, t);
	return t != NULL;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

static int send_r2t(struct iscsi_conn *c, struct iscsi_task *t)
{
	size_t len = min_size(t->out_len - t->received, c->params.max_burst);
	struct osd__iscsi_bhs h = { 0 };
	if (++c->next_ttt == OSD_ISCSI_RSVD_TAG)
		c->next_ttt = 1;
	t->ttt = c->next_ttt;
	t->r2t_end = t->received + len;
	t->data_sn = 0;
	t->deadline_ms = osd__tgt_iscsi_now_ms() + c->srv->dataout_ms;
	h.opcode = OSD_ISCSI_OP_R2T;
	h.flags = OSD_ISCSI_F_FINAL;
	memcpy(h.lun, t->lun, 8);
	h.itt = t->itt;
	h.ttt = t->ttt;
	h.data_sn = t->r2t_sn++;
	h.offset = (uint32_t)t->received;
	h.length = (uint32_t)len;
	return osd__tgt_iscsi_conn_reply(c, &h, SN_KEEP, NULL, 0);
}

/* The data-in of a finished command, in PDUs of at most the initiator's
 * MaxRecvDataSegmentLength and sequences of at most MaxBurstLength. With
 * @p with_status the last PDU carries the status (S bit). */
static int send_data_in(struct iscsi_conn *c, const struct iscsi_task *t, const uint8_t *buf,
			size_t len, const struct osd_xfer *x, int with_status, uint32_t *data_sn)
{
	size_t off = 0, burst_end = min_size(len, c->params.max_burst);
	while (off < len) {
		size_t n = min_size(min_size(len - off, c->params.max_recv_dsl_initiator),
				    burst_end - off);
		int last = off + n == len;
		struct osd__iscsi_bhs h = { 0 };
		h.opcode = OSD_ISCSI_OP_DATA_IN;
		memcpy(h.lun, t->lun, 8);
		h.itt = t->itt;
		h.ttt = OSD_ISCSI_RSVD_TAG;
		h.data_sn = (*data_sn)++;
		h.offset = (uint32_t)off;
		if (off + n == burst_end) {
			h.flags |= OSD_ISCSI_F_FINAL;
			burst_end = min_size(len, burst_end + c->params.max_burst);
		}
		int sn = SN_ZERO;
		if (last && with_status) {
			h.flags |= OSD_ISCSI_F_STATUS;
			h.status = x->status;
			if (len < t->in_len) {
				h.flags |= OSD_ISCSI_F_UNDER;
				h.length = (uint32_t)(t->in_len - len);
			}
			sn = SN_ADVANCE;
		}
		int rc = osd__tgt_iscsi_conn_reply(c, &h, sn, buf + off, n);
		if (rc)
			return rc;
		off += n;
	}
	return 0;
}

static int send_scsi_rsp(struct iscsi_conn *c, const struct iscsi_task *t,
			 const struct osd_xfer *x, int failed, size_t got, uint32_t data_sn)
{
	struct osd__iscsi_bhs h = { 0 };
	uint8_t sense[2 + sizeof(x->sense)];
	size_t slen = 0;
	h.opcode = OSD_ISCSI_OP_SCSI_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = t->itt;
	h.response = failed ? OSD_ISCSI_RSP_TARGET_FAILURE : OSD_ISCSI_RSP_COMPLETED;
	h.status = failed ? 0 : x->status;
	h.data_sn = data_sn; /* ExpDataSN: Data-In PDUs sent */
	if (!failed && got < t->in_len) {
		if (t->bidi) {
			h.flags |= OSD_ISCSI_F_BIDI_UNDER;
			h.offset = (uint32_t)(t->in_len - got);
		} else {
			h.flags |= OSD_ISCSI_F_UNDER;
			h.length = (uint32_t)(t->in_len - got);
		}
	}
	if (!failed && x->sense_len) {
		osd__put_be16(sense, x->sense_len);
		memcpy(sense + 2, x->sense, x->sense_len);
		slen = 2 + (size_t)x->sense_len;
	}
	return osd__tgt_iscsi_conn_reply(c, &h, SN_ADVANCE, slen ? sense : NULL, slen);
}

/* Answer a finished command: Data-In, then status in the last Data-In
 * (read without sense) or in a SCSI Response. */
static int respond(struct iscsi_conn *c, const struct iscsi_task *t, const struct osd_xfer *x,
		   int failed, const uint8_t *in)
{
	size_t got = failed ? 0 : min_size(x->in_xferred, t->in_len);
	uint32_t data_sn = 0;
	int collapse = !failed && got > 0 && !t->bidi && t->out_len == 0 && x->sense_len == 0;
	int rc = got ? send_data_in(c, t, in, got, x, collapse, &data_sn) : 0;
	if (rc || collapse)
		return rc;
	return send_scsi_rsp(c, t, x, failed, got, data_sn);
}

/* BUSY for a command that finds no room for its data-in. */
static int busy_data_in(struct iscsi_conn *c, const struct iscsi_task *t)
{
	struct osd_xfer x = { 0 };
	osd__tgt_iscsi_refused(c->srv, "%s: task %#x: no room for %zu bytes of data-in", c->peer,
			       t->itt, t->in_len);
	x.status = OSD_STATUS_BUSY;
	return send_scsi_rsp(c, t, &x, 0, t->in_len, 0);
}

/*
 * The unit attention of a new I_T nexus (SAM-5 5.14, 6.3.1: a target
 * reports POWER ON, RESET, OR BUS DEVICE RESET OCCURRED to every I_T nexus
 * that has not seen it; a new iSCSI session is a new nexus, RFC 7143 4.4.1).
 * The first command to an existing LUN other than INQUIRY, REPORT LUNS and
 * REQUEST SENSE is answered CHECK CONDITION, UNIT ATTENTION with what
 * happened (spc4r37 §4.5.6, Annex D; nexus.c): 29h/00h POWER ON, RESET, OR
 * BUS DEVICE RESET OCCURRED (as LIO; libiscsi's iscsi-ls passes over exactly
 * this one, not 29h/01h) to an initiator port this process has not seen (the device may have lost
 * what it had not flushed), 29h/07h I_T NEXUS LOSS OCCURRED to one that
 * reconnects (it kept running), instead of being executed, which clears it
 * for that LUN of this session. It is checked as each command arrives, in
 * CmdSN order: a write that would wait for Data-Out gets it before any R2T.
 * INQUIRY and REPORT LUNS neither report nor clear it
 * (SAM-5 5.14, SPC-4 6.6, 6.33); REQUEST SENSE leaves it too (here it is
 * not returned as sense data: the next command reports it). Returns 1 when
 * @p x now holds the unit attention.
 */
static int unit_attention(struct iscsi_conn *c, int lun, const uint8_t *cdb, struct osd_xfer *x)
{
	uint8_t bit;

	if (lun < 0 || (size_t)lun >= c->srv->nluns || lun >= ISCSI_UA_LUNS)
		return 0;
	bit = (uint8_t)(1u << (lun & 7));
	if (!(c->ua_pending[lun >> 3] & bit) || cdb[0] == OP_INQUIRY ||
	    cdb[0] == OP_REPORT_LUNS || cdb[0] == OP_REQUEST_SENSE)
		return 0;
	c->ua_pending[lun >> 3] &= (uint8_t)~bit;
	osd__resp_error(x, OSD_SK_UNIT_ATTENTION, ASC_POWER_ON_RESET | c->ua_ascq, -1);
	return 1;
}

/*
 * The data-in buffer of a task: a connection's running tasks share
 * ISCSI_KEEP_IN of their own; beyond it the buffer comes from the data-out
 * budget while the command runs and its answer is sent, so peers that do
 * not read their answers cannot pin many large ones. Returns the bytes
 * taken from the budget, or -ENOBUFS.
 */
static long in_take(struct iscsi_conn *c, size_t len)
{
	pthread_mutex_lock(&c->mu);
	int own = len <= ISCSI_KEEP_IN - c->in_own;
	if (own)
		c->in_own += len;
	pthread_mutex_unlock(&c->mu);
	if (own)
		return 0;
	return osd__tgt_iscsi_budget_take(c->srv, len) ? -ENOBUFS : (long)len;
}

static void in_put(struct iscsi_conn *c, size_t len, size_t shared)
{
	if (shared) {
		osd__tgt_iscsi_budget_put(c->srv, shared);
		return;
	}
	pthread_mutex_lock(&c->mu);
	c->in_own -= len;
	pthread_mutex_unlock(&c->mu);
}

static int execute_lun(struct iscsi_conn *c, struct iscsi_task *t, struct osd_xfer *x, int lun);

/* Execute @p t into @p x; returns 1 when the target failed it. */
static int execute(struct iscsi_conn *c, struct iscsi_task *t, struct osd_xfer *x)
{
	struct osd_target_iscsi *srv = c->srv;
	int lun = t->lun_index;

	/* the hook may block: it counts as blocking, as slow commands do */
	int blocking = t->may_block || srv->on_execute;
	if (blocking)
		osd__tgt_iscsi_pool_blocking(srv, 1);
	int failed = execute_lun(c, t, x, lun);
	if (blocking)
		osd__tgt_iscsi_pool_blocking(srv, 0);
	return failed;
}

static int execute_lun(struct iscsi_conn *c, struct iscsi_task *t, struct osd_xfer *x, int lun)
{
	struct osd_target_iscsi *srv = c->srv;

	if (srv->on_execute)
		srv->on_execute(srv->on_execute_payload, t->cdb, t->cdb_len);
	if (lun >= 0 && (size_t)lun < srv->nluns && t->cdb[0] != 0xA0 /* REPORT LUNS */) {
		/* CAPKEY binds requests to the session's token (login.c) */
		if (osd_target_execute(srv->luns[lun], x, c->token, sizeof(c->token)) < 0) {
			osd__tgt_iscsi_log(srv, OSD_TARGET_ISCSI_LOG_ERROR, "%s: LUN %d: %s", c->peer,
				       lun, osd_target_error(srv->luns[lun]));
			return 1;
		}
		return 0;
	}
	osd__tgt_iscsi_lun_execute(srv, x);
	return 0;
}

void osd__tgt_iscsi_task_run(struct iscsi_conn *c, struct iscsi_task *t)
{
	long shared = 0;
	uint8_t *in = NULL;

	if (t->in_len) {
		shared = in_take(c, t->in_len);
		if (shared >= 0 && !(in = malloc(t->in_len))) {
			in_put(c, t->in_len, (size_t)shared);
			shared = -ENOMEM;
		}
		if (shared < 0) {
			osd__tgt_iscsi_task_executed(c, t);
			busy_data_in(c, t);
			return;
		}
	}
	struct iovec out_iov = { t->out, t->out_len }, in_iov = { in, t->in_len };
	struct osd_xfer x = { 0 };

	x.cdb = t->cdb;
	x.cdb_len = t->cdb_len;
	if (t->out_len) {
		x.out_iov = &out_iov;
		x.out_iovcnt = 1;
		x.out_len = t->out_len;
	}
	if (t->in_len) {
		x.in_iov = &in_iov;
		x.in_iovcnt = 1;
		x.in_len = t->in_len;
	}
	int failed = execute(c, t, &x);
	/* Done: later commands that waited for it may run while it is answered. */
	osd__tgt_iscsi_task_executed(c, t);
	respond(c, t, &x, failed, in);
	free(in);
	if (t->in_len)
		in_put(c, t->in_len, (size_t)shared);
}

/* End a task with CHECK CONDITION ABORTED COMMAND (bad data transfer). */
static int task_fail(struct iscsi_conn *c, struct iscsi_task *t, uint16_t asc)
{
	struct osd_xfer x = { 0 };
	osd__resp_error(&x, OSD_SK_ABORTED_COMMAND, asc, -1);
	int rc = send_scsi_rsp(c, t, &x, 0, t->in_len, 0);
	task_free(c, t);
	return rc;
}

/* End a task (not in the list) with BUSY: no room for its data now. */
static int task_busy(struct iscsi_conn *c, struct iscsi_task *t, const char *why)
{
	struct osd_xfer x = { 0 };
	osd__tgt_iscsi_refused(c->srv, "%s: task %#x: %s", c->peer, t->itt, why);
	x.status = OSD_STATUS_BUSY;
	int rc = send_scsi_rsp(c, t, &x, 0, t->in_len, 0);
	task_free(c, t);
	return rc;
}

/* Its data is in: hand @p t over for execution. */
static int run_task(struct iscsi_conn *c, struct iscsi_task *t)
{
	osd__tgt_iscsi_task_ready(c, t);
	return 0;
}

int osd__tgt_iscsi_tasks_expire(struct iscsi_conn *c, uint64_t now, uint64_t *next)
{
	struct iscsi_task **pp = &c->tasks;
	*next = 0;
	while (*pp) {
		struct iscsi_task *t = *pp;
		if (now < t->deadline_ms) {
			if (!*next || t->deadline_ms < *next)
				*next = t->deadline_ms;
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		c->ntasks--;
		osd__tgt_iscsi_refused(c->srv, "%s: task %#x: Data-Out overdue", c->peer, t->itt);
		int rc = task_fail(c, t, ASC_TIMEOUT_BEFORE_PROCESSING);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * A command that still waits for Data-Out is checked first (CDB, LUN and
 * credential, exec/precheck.h), so a refused one gets its answer now and
 * no buffer. Returns 1 to go on, or 0 / -errno once it has been answered.
 */
static int precheck(struct iscsi_conn *c, struct iscsi_task *t)
{
	struct osd_target_iscsi *srv = c->srv;
	struct osd_xfer x = { 0 };
	int lun = osd__iscsi_lun_decode(t->lun), ok;

	x.cdb = t->cdb;
	x.cdb_len = t->cdb_len;
	if (lun >= 0 && (size_t)lun < srv->nluns && t->cdb[0] != 0xA0 /* REPORT LUNS */) {
		ok = osd__target_precheck(srv->luns[lun], &x, c->token, sizeof(c->token));
	} else {
		osd__tgt_iscsi_lun_execute(srv, &x); /* needs no data-out */
		ok = 0;
	}
	if (ok)
		return 1; /* -EINVAL too: the execution reports it */
	osd__tgt_iscsi_refused(srv, "%s: task %#x refused before its Data-Out", c->peer, t->itt);
	x.in_xferred = 0;
	int rc = respond(c, t, &x, 0, NULL);
	task_free(c, t);
	return rc;
}

/* Check a SCSI Command's shape; returns a reject reason or 0. */
static int check_cmd(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu,
		     const struct osd__iscsi_ahs_info *ahs)
{
	const struct osd__iscsi_bhs *h = &pdu->bhs;
	int r = !!(h->flags & OSD_ISCSI_F_READ), w = !!(h->flags & OSD_ISCSI_F_WRITE);
	int final = !!(h->flags & OSD_ISCSI_F_FINAL);
	uint32_t edtl = h->ttt;
	if (c->discovery)
		return OSD_ISCSI_REJECT_PROTOCOL;
	if (r && w && !ahs->has_bidi_read)
		return OSD_ISCSI_REJECT_PROTOCOL;
	if ((!w && (pdu->data_len || !final)) || (w && !final && c->params.initial_r2t))
		return OSD_ISCSI_REJECT_PROTOCOL;
	if (pdu->data_len && (!c->params.immediate_data || pdu->data_len > edtl ||
			      pdu->data_len > c->params.first_burst))
		return OSD_ISCSI_REJECT_PROTOCOL;
	/* Unsolicited Data-Out announced (F = 0) but no room left for it. */
	if (w && !final && pdu->data_len >= min_size(edtl, c->params.first_burst))
		return OSD_ISCSI_REJECT_PROTOCOL;
	if ((r || w) && edtl > ISCSI_MAX_XFER)
		return OSD_ISCSI_REJECT_OUT_OF_RESOURCES;
	if (r && w && ahs->bidi_read_len > ISCSI_MAX_XFER)
		return OSD_ISCSI_REJECT_OUT_OF_RESOURCES;
	/* the tag of a command still collecting data (those are in c->order
	 * too), queued or running: two tasks with one tag would share its
	 * answers and its ABORT TASK */
	if (osd__tgt_iscsi_itt_unanswered(c, h->itt))
		return OSD_ISCSI_REJECT_TASK_IN_PROGRESS;
	return 0;
}

int osd__tgt_iscsi_scsi_cmd(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu)
{
	const struct osd__iscsi_bhs *h = &pdu->bhs;
	struct osd__iscsi_ahs_info ahs;
	if (osd__iscsi_ahs_parse(&ahs, pdu->ahs, pdu->ahs_len))
		return osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_INVALID_FIELD, c->rx);
	int reason = check_cmd(c, pdu, &ahs);
	if (reason)
		return osd__tgt_iscsi_conn_reject(c, (uint8_t)reason, c->rx);

	struct iscsi_task *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	int r = !!(h->flags & OSD_ISCSI_F_READ), w = !!(h->flags & OSD_ISCSI_F_WRITE);
	t->itt = h->itt;
	memcpy(t->lun, h->lun, 8);
	t->cdb_len = (size_t)osd__iscsi_cdb_join(t->cdb, sizeof(t->cdb), h, &ahs);
	t->bidi = r && w;
	t->out_len = w ? h->ttt : 0;
	t->in_len = t->bidi ? ahs.bidi_read_len : r ? h->ttt : 0;
	t->ttt = OSD_ISCSI_RSVD_TAG;
	t->unsolicited = w && !(h->flags & OSD_ISCSI_F_FINAL);
	t->unsolicited_end = min_size(c->params.first_burst, t->out_len);
	t->deadline_ms = osd__tgt_iscsi_now_ms() + c->srv->dataout_ms;
	/* Reported in the order commands arrive, before any Data-Out */
	struct osd_xfer ua = { 0 };
	if (unit_attention(c, osd__iscsi_lun_decode(t->lun), t->cdb, &ua)) {
		int rc = respond(c, t, &ua, 0, NULL);
		task_free(c, t);
		return rc;
	}
	if (pdu->data_len < t->out_len) {
		int rc = precheck(c, t);
		if (rc <= 0)
			return rc;
		if (c->ntasks >= c->srv->max_pending)
			return task_busy(c, t, "too many commands waiting for Data-Out");
	}
	osd__tgt_iscsi_task_classify(c->srv, t, h->flags & 7u);
	if (osd__tgt_iscsi_task_enter(c, t))
		return task_busy(c, t, "too many commands held");
	if (task_grow(c, t, pdu->data_len))
		return task_busy(c, t, "data-out budget exhausted");
	if (pdu->data_len)
		memcpy(t->out, pdu->data, pdu->data_len);
	t->received = pdu->data_len;
	if (t->received == t->out_len)
		return run_task(c, t);
	t->next = c->tasks;
	c->tasks = t;
	c->ntasks++;
	return t->unsolicited ? 0 : send_r2t(c, t);
}

/* Where a Data-Out's segment belongs: in its task's buffer at the next
 * offset, when the PDU matches what the task expects (the same checks as
 * osd__tgt_iscsi_data_out()); NULL otherwise. */
static uint8_t *data_out_slot(struct iscsi_conn *c, const struct osd__iscsi_bhs *h)
{
	struct iscsi_task *t = task_find(c, h->itt);
	if (!t)
		return NULL;
	int solicited = h->ttt != OSD_ISCSI_RSVD_TAG;
	size_t end = solicited ? t->r2t_end : t->unsolicited_end;
	if ((solicited ? h->ttt != t->ttt : !t->unsolicited) || h->offset != t->received ||
	    h->data_sn != t->data_sn || h->data_len > end - t->received ||
	    task_grow(c, t, t->received + h->data_len))
		return NULL;
	return t->out + t->received;
}

uint8_t *osd__tgt_iscsi_data_out_dest(struct iscsi_conn *c, const struct osd__iscsi_bhs *h)
{
	if (h->opcode != OSD_ISCSI_OP_DATA_OUT || h->ahs_words || !h->data_len)
		return NULL;
	return data_out_slot(c, h);
}

int osd__tgt_iscsi_data_out(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu)
{
	const struct osd__iscsi_bhs *h = &pdu->bhs;
	struct iscsi_task *t = task_find(c, h->itt);
	if (!t) { /* aborted, failed or never existed: RFC 7143 lets us ignore it */
		osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_DEBUG,
			       "%s: Data-Out for unknown task %#x ignored", c->peer, h->itt);
		return 0;
	}
	int solicited = h->ttt != OSD_ISCSI_RSVD_TAG;
	size_t end = solicited ? t->r2t_end : t->unsolicited_end;
	if ((solicited ? h->ttt != t->ttt : !t->unsolicited) || h->offset != t->received ||
	    h->data_sn != t->data_sn || pdu->data_len > end - t->received) {
		int rc = osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_INVALID_FIELD, c->rx);
		task_unlink(c, t->itt);
		return rc ? rc : task_fail(c, t, ASC_DATA_PHASE_ERROR);
	}
	if (task_grow(c, t, t->received + pdu->data_len))
		return task_busy(c, task_unlink(c, t->itt), "data-out budget exhausted");
	if (pdu->data_len && pdu->data != t->out + t->received) /* else received in place */
		memcpy(t->out + t->received, pdu->data, pdu->data_len);
	t->received += pdu->data_len;
	t->data_sn++;
	if (!(h->flags & OSD_ISCSI_F_FINAL))
		return 0;
	if (solicited)
		t->ttt = OSD_ISCSI_RSVD_TAG;
	else
		t->unsolicited = 0;
	if (t->received == t->out_len)
		return run_task(c, task_unlink(c, t->itt));
	/* Sequence over: solicit what is missing (one R2T outstanding). */
	return t->ttt == OSD_ISCSI_RSVD_TAG && !t->unsolicited ? send_r2t(c, t) : 0;
}

int osd__tgt_iscsi_data_digest_error(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu)
{
	int rc = osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_DIGEST, c->rx);
	if (rc || pdu->bhs.opcode != OSD_ISCSI_OP_DATA_OUT)
		return rc;
	/* ERL 0: a lost data PDU ends its task (RFC 7143 7.8). */
	struct iscsi_task *t = task_unlink(c, pdu->bhs.itt);
	return t ? task_fail(c, t, ASC_PROTOCOL_CRC_ERROR) : 0;
}
