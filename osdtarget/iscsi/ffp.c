/*
 * Full feature phase: CmdSN window, NOP, task management, text (SendTargets)
 * and logout; SCSI commands and Data-Out are in task.c.
 */
#include "iscsi/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* RFC 7143 4.2.2.1: a non-immediate command outside [ExpCmdSN, MaxCmdSN]
 * is silently ignored. Returns 1 if the PDU is to be processed. */
static int accept_cmd_sn(struct iscsi_conn *c, const struct osd__iscsi_bhs *h)
{
	if (h->immediate)
		return 1;
	pthread_mutex_lock(&c->mu);
	uint32_t exp = c->exp_cmd_sn, max = osd__tgt_iscsi_max_cmd_sn(c);
	int in = osd__iscsi_sn_in_window(h->cmd_sn, exp, max);
	if (in) {
		/* One connection per session delivers in order; a gap can only be
		 * a command we rejected, so the window moves past it. A SCSI
		 * command holds its slot until it has been executed. */
		c->exp_cmd_sn = h->cmd_sn + 1;
		if (h->opcode == OSD_ISCSI_OP_SCSI_CMD) {
			c->nwindow++;
			c->cmd_slot = 1;
		}
	}
	pthread_mutex_unlock(&c->mu);
	if (!in)
		osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_WARNING,
			       "%s: %s with CmdSN %u outside [%u, %u] dropped", c->peer,
			       osd__iscsi_opcode_name(h->opcode), h->cmd_sn, exp, max);
	return in;
}

static int nop_out(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu)
{
	const struct osd__iscsi_bhs *req = &pdu->bhs;
	if (req->itt == OSD_ISCSI_RSVD_TAG)
		return 0; /* answer to a ping of ours, or a ping wanting no answer */
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_NOP_IN;
	h.flags = OSD_ISCSI_F_FINAL;
	memcpy(h.lun, req->lun, 8);
	h.itt = req->itt;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	size_t n = pdu->data_len;
	if (n > c->params.max_recv_dsl_initiator)
		n = c->params.max_recv_dsl_initiator;
	return osd__tgt_iscsi_conn_reply(c, &h, SN_ADVANCE, pdu->data, n); /* echo the ping data */
}

static uint8_t tmf_execute(struct iscsi_conn *c, const struct osd__iscsi_bhs *req)
{
	int fn = req->flags & 0x7F;
	int lun = osd__iscsi_lun_decode(req->lun);
	int lun_ok = lun >= 0 && (size_t)lun < c->srv->nluns;
	uint32_t exp;
	switch (fn) {
	case OSD_ISCSI_TASK_ABORT:
		/* Waiting for Data-Out or for an earlier command: dropped; in a
		 * worker's hands: it finishes, and the answer follows its own. */
		if (osd__tgt_iscsi_task_abort(c, req->ttt) ||
		    osd__tgt_iscsi_sched_drop(c, NULL, req->ttt))
			return OSD_ISCSI_TMF_RSP_COMPLETE;
		/* A command the target has received (RefCmdSN below ExpCmdSN)
		 * and no longer holds has been answered already. */
		pthread_mutex_lock(&c->mu);
		exp = c->exp_cmd_sn;
		pthread_mutex_unlock(&c->mu);
		return osd__iscsi_sn_lt(req->ref_cmd_sn, exp) ? OSD_ISCSI_TMF_RSP_COMPLETE
							      : OSD_ISCSI_TMF_RSP_NO_TASK;
	case OSD_ISCSI_TASK_ABORT_SET:
	case OSD_ISCSI_TASK_CLEAR_SET:
	case OSD_ISCSI_TASK_LUN_RESET:
		if (!lun_ok)
			return OSD_ISCSI_TMF_RSP_NO_LUN;
		osd__tgt_iscsi_tasks_drop(c, req->lun);
		osd__tgt_iscsi_sched_drop(c, req->lun, OSD_ISCSI_RSVD_TAG);
		return OSD_ISCSI_TMF_RSP_COMPLETE;
	case OSD_ISCSI_TASK_REASSIGN:
		return OSD_ISCSI_TMF_RSP_NO_REASSIGN;
	default: /* CLEAR ACA (no ACA), target resets */
		return OSD_ISCSI_TMF_RSP_NOT_SUPPORTED;
	}
}

static int tmf(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu)
{
	const struct osd__iscsi_bhs *req = &pdu->bhs;
	if (!(req->flags & OSD_ISCSI_F_FINAL) || pdu->data_len)
		return osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_PROTOCOL, c->rx);
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_TMF_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = tmf_execute(c, req);
	h.itt = req->itt;
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_INFO, "%s: task management %d -> %u", c->peer,
		       req->flags & 0x7F, h.response);
	/* After the answers of the commands it covers that are still running */
	return osd__tgt_iscsi_tmf_defer(c, req, &h);
}

/* "addr:port,1" of the local end of @p c's socket. */
static void local_address(struct iscsi_conn *c, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "127.0.0.1";
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host,
				  sizeof(host));
			snprintf(buf, len, "[%s]:%d,1", host, c->srv->port);
			return;
		}
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	}
	snprintf(buf, len, "%s:%d,1", host, c->srv->port);
}

/* SendTargets=All, =<our name>, or empty (this session's target). */
static int send_targets(struct iscsi_conn *c, const struct osd__iscsi_kv *kv,
			struct osd__iscsi_text *t)
{
	const char *name = c->srv->target_name;
	int all = kv->value_len == 3 && memcmp(kv->value, "All", 3) == 0;
	int mine = kv->value_len == strlen(name) && memcmp(kv->value, name, kv->value_len) == 0;
	int current = kv->value_len == 0 && !c->discovery;
	if (!all && !mine && !current)
		return 0; /* no such target: an empty answer */
	char addr[INET6_ADDRSTRLEN + 16];
	local_address(c, addr, sizeof(addr));
	int rc = osd__iscsi_text_add(t, "TargetName", name);
	return rc ? rc : osd__iscsi_text_add(t, "TargetAddress", addr);
}

static int text_req(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu)
{
	const struct osd__iscsi_bhs *req = &pdu->bhs;
	struct osd__iscsi_text in = { 0 }, ans = { 0 };
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	int rc = 0, more;
	/* Requests spanning PDUs (C bit) are not supported: our answers fit one. */
	if ((req->flags & OSD_ISCSI_F_CONTINUE) || req->ttt != OSD_ISCSI_RSVD_TAG)
		return osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_NOT_SUPPORTED, c->rx);
	if (pdu->data_len)
		rc = osd__iscsi_text_add_raw(&in, pdu->data, pdu->data_len);
	while (!rc && (more = osd__iscsi_text_next(&kv, in.data, in.len, &pos)) != 0) {
		if (more < 0) {
			osd__iscsi_text_free(&in);
			osd__iscsi_text_free(&ans);
			return osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_INVALID_FIELD, c->rx);
		}
		if (osd__iscsi_kv_is(&kv, "SendTargets")) {
			rc = send_targets(c, &kv, &ans);
		} else { /* nothing is renegotiable in full feature phase */
			char key[OSD_ISCSI_MAX_KEY + 1];
			memcpy(key, kv.key, kv.key_len);
			key[kv.key_len] = 0;
			rc = osd__iscsi_text_add(&ans, key, "Reject");
		}
	}
	osd__iscsi_text_free(&in);
	if (rc || ans.len > c->params.max_recv_dsl_initiator) {
		osd__iscsi_text_free(&ans);
		return osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_OUT_OF_RESOURCES, c->rx);
	}
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_TEXT_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	memcpy(h.lun, req->lun, 8);
	h.itt = req->itt;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	rc = osd__tgt_iscsi_conn_reply(c, &h, SN_ADVANCE, ans.data, ans.len);
	osd__iscsi_text_free(&ans);
	return rc;
}

/* Returns 1 when the connection is to be closed. */
static int logout(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu)
{
	const struct osd__iscsi_bhs *req = &pdu->bhs;
	int reason = req->flags & 0x7F;
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_LOGOUT_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = req->itt;
	if (reason == OSD_ISCSI_LOGOUT_RECOVERY)
		h.response = OSD_ISCSI_LOGOUT_RSP_NO_RECOVERY;
	else if (reason == OSD_ISCSI_LOGOUT_CONNECTION && req->cid != c->cid)
		h.response = OSD_ISCSI_LOGOUT_RSP_NO_CID;
	else if (reason > OSD_ISCSI_LOGOUT_RECOVERY)
		return osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_INVALID_FIELD, c->rx);
	else
		h.response = OSD_ISCSI_LOGOUT_RSP_OK;
	if (h.response == OSD_ISCSI_LOGOUT_RSP_OK) {
		/* RFC 7143 11.14: commands not started end with the connection;
		 * those running are answered before the Logout Response. */
		osd__tgt_iscsi_tasks_drop(c, NULL);
		osd__tgt_iscsi_sched_drop(c, NULL, OSD_ISCSI_RSVD_TAG);
		osd__tgt_iscsi_sched_quiesce(c);
	}
	int rc = osd__tgt_iscsi_conn_reply(c, &h, SN_ADVANCE, NULL, 0);
	if (rc || h.response != OSD_ISCSI_LOGOUT_RSP_OK)
		return rc;
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_INFO, "%s: logged out", c->peer);
	return 1;
}

int osd__tgt_iscsi_ffp_pdu(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu)
{
	const struct osd__iscsi_bhs *h = &pdu->bhs;
	if (!osd__iscsi_opcode_is_request(h->opcode) || h->opcode == OSD_ISCSI_OP_LOGIN_REQ)
		return osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_PROTOCOL, c->rx);
	if (h->opcode == OSD_ISCSI_OP_DATA_OUT)
		return osd__tgt_iscsi_data_out(c, pdu);
	if (h->opcode == OSD_ISCSI_OP_SNACK_REQ) /* ErrorRecoveryLevel 0 */
		return osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_SNACK, c->rx);
	if (!accept_cmd_sn(c, h))
		return 0;
	if (c->discovery && h->opcode != OSD_ISCSI_OP_TEXT_REQ &&
	    h->opcode != OSD_ISCSI_OP_LOGOUT_REQ && h->opcode != OSD_ISCSI_OP_NOP_OUT)
		return osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_PROTOCOL, c->rx);
	switch (h->opcode) {
	case OSD_ISCSI_OP_NOP_OUT:
		return nop_out(c, pdu);
	case OSD_ISCSI_OP_SCSI_CMD: {
		int rc = osd__tgt_iscsi_scsi_cmd(c, pdu);
		osd__tgt_iscsi_window_release(c); /* if it did not become a task */
		return rc;
	}
	case OSD_ISCSI_OP_TMF_REQ:
		return tmf(c, pdu);
	case OSD_ISCSI_OP_TEXT_REQ:
		return text_req(c, pdu);
	default:
		return logout(c, pdu);
	}
}
