/*
 * The login phase (RFC 7143 6.3): security negotiation with optional one-way
 * CHAP, operational negotiation, transit to full feature phase.
 */
#include "iscsi/server.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAP_CHALLENGE_LEN 16
#define CHAP_NAME_MAX ISCSI_CHAP_NAME_MAX

struct login {
	int stage;                  /* current stage (CSG) */
	int got_first;
	int authenticated;
	int chap;                   /* AuthMethod=CHAP chosen */
	int challenged;             /* CHAP_C sent */
	uint8_t chap_id;
	uint8_t challenge[CHAP_CHALLENGE_LEN];
	char chap_name[CHAP_NAME_MAX];
	int have_chap_n;
	uint8_t chap_r[64];
	long chap_r_len;            /* -1 until CHAP_R arrives */
	int have_target;
	int declared;               /* our MaxRecvDataSegmentLength sent */
	int sent_tpgt;
	uint16_t status;            /* first failure (class << 8 | detail) */
	struct osd__iscsi_text in;  /* text of a request spanning PDUs (C bit) */
};

static void fail(struct login *l, uint16_t status)
{
	if (!l->status)
		l->status = status;
}

static int kv_value_is(const struct osd__iscsi_kv *kv, const char *v)
{
	return strlen(v) == kv->value_len && memcmp(kv->value, v, kv->value_len) == 0;
}

/* Whether the comma-separated list value of @p kv contains @p item. */
static int list_has(const struct osd__iscsi_kv *kv, const char *item)
{
	size_t n = strlen(item), i = 0;
	while (i <= kv->value_len) {
		size_t j = i;
		while (j < kv->value_len && kv->value[j] != ',')
			j++;
		if (j - i == n && memcmp(kv->value + i, item, n) == 0)
			return 1;
		i = j + 1;
	}
	return 0;
}

static void copy_value(char *dst, size_t cap, const struct osd__iscsi_kv *kv, struct login *l)
{
	if (kv->value_len == 0 || kv->value_len >= cap) {
		fail(l, OSD_ISCSI_LOGIN_INITIATOR_ERROR);
		dst[0] = 0;
		return;
	}
	memcpy(dst, kv->value, kv->value_len);
	dst[kv->value_len] = 0;
}

static int chap_offer(struct iscsi_conn *c, struct login *l, const struct osd__iscsi_kv *kv,
		      struct osd__iscsi_text *ans)
{
	if (!l->chap || l->challenged || !list_has(kv, "5")) {
		fail(l, OSD_ISCSI_LOGIN_AUTH_FAILED);
		return osd__iscsi_text_add(ans, "CHAP_A", "Reject");
	}
	char id[4], chal[2 * CHAP_CHALLENGE_LEN + 3];
	if (RAND_bytes(&l->chap_id, 1) != 1 ||
	    RAND_bytes(l->challenge, sizeof(l->challenge)) != 1) {
		fail(l, OSD_ISCSI_LOGIN_TARGET_ERROR);
		return 0;
	}
	snprintf(id, sizeof(id), "%u", l->chap_id);
	osd__iscsi_binary_encode(chal, l->challenge, sizeof(l->challenge));
	l->challenged = 1;
	int rc = osd__iscsi_text_add(ans, "CHAP_A", "5");
	if (!rc)
		rc = osd__iscsi_text_add(ans, "CHAP_I", id);
	if (!rc)
		rc = osd__iscsi_text_add(ans, "CHAP_C", chal);
	(void)c;
	return rc;
}

static int auth_method(struct iscsi_conn *c, struct login *l, const struct osd__iscsi_kv *kv,
		       struct osd__iscsi_text *ans)
{
	if (c->srv->chap_secret) {
		if (list_has(kv, "CHAP")) {
			l->chap = 1;
			return osd__iscsi_text_add(ans, "AuthMethod", "CHAP");
		}
	} else if (list_has(kv, "None")) {
		l->authenticated = 1;
		return osd__iscsi_text_add(ans, "AuthMethod", "None");
	}
	fail(l, OSD_ISCSI_LOGIN_AUTH_FAILED);
	return osd__iscsi_text_add(ans, "AuthMethod", "Reject");
}

static void chap_verify(struct iscsi_conn *c, struct login *l)
{
	struct osd_target_iscsi *srv = c->srv;
	uint8_t want[OSD_ISCSI_CHAP_DIGEST_LEN];
	/* Failed guesses from this address slow down every next verification,
	 * the right answer's too: an early success would tell wrong from right. */
	if (osd__tgt_iscsi_auth_wait(c)) {
		fail(l, OSD_ISCSI_LOGIN_AUTH_FAILED);
		return;
	}
	if (!l->challenged || !l->have_chap_n || l->chap_r_len != OSD_ISCSI_CHAP_DIGEST_LEN ||
	    strcmp(l->chap_name, srv->chap_user) != 0 ||
	    osd__iscsi_chap_response(want, l->chap_id, srv->chap_secret, srv->chap_secret_len,
				     l->challenge, sizeof(l->challenge)) ||
	    CRYPTO_memcmp(want, l->chap_r, sizeof(want)) != 0) {
		osd__tgt_iscsi_auth_result(c, 0);
		osd__tgt_iscsi_refused(srv, "%s: CHAP authentication failed", c->peer);
		fail(l, OSD_ISCSI_LOGIN_AUTH_FAILED);
		return;
	}
	osd__tgt_iscsi_auth_result(c, 1);
	snprintf(c->chap_user, sizeof(c->chap_user), "%s", l->chap_name);
	l->authenticated = 1;
}

/* Keys of the login phase that are not operational parameters. */
static int session_key(struct iscsi_conn *c, struct login *l, const struct osd__iscsi_kv *kv,
		       struct osd__iscsi_text *ans)
{
	if (osd__iscsi_kv_is(kv, "InitiatorName")) {
		copy_value(c->initiator_name, sizeof(c->initiator_name), kv, l);
	} else if (osd__iscsi_kv_is(kv, "TargetName")) {
		if (!kv_value_is(kv, c->srv->target_name))
			fail(l, OSD_ISCSI_LOGIN_NOT_FOUND);
		l->have_target = 1;
	} else if (osd__iscsi_kv_is(kv, "AuthMethod")) {
		if (l->stage != OSD_ISCSI_STAGE_SECURITY)
			fail(l, OSD_ISCSI_LOGIN_INITIATOR_ERROR);
		else
			return auth_method(c, l, kv, ans);
	} else if (osd__iscsi_kv_is(kv, "CHAP_A")) {
		return chap_offer(c, l, kv, ans);
	} else if (osd__iscsi_kv_is(kv, "CHAP_N")) {
		copy_value(l->chap_name, sizeof(l->chap_name), kv, l);
		l->have_chap_n = 1;
	} else if (osd__iscsi_kv_is(kv, "CHAP_R")) {
		l->chap_r_len = osd__iscsi_binary_decode(l->chap_r, sizeof(l->chap_r), kv->value,
							 kv->value_len);
	} else if (osd__iscsi_kv_is(kv, "CHAP_I") || osd__iscsi_kv_is(kv, "CHAP_C")) {
		fail(l, OSD_ISCSI_LOGIN_AUTH_FAILED); /* mutual CHAP: not supported */
	}
	/* InitiatorAlias and keys only a target sends are ignored. */
	return 0;
}

static int process_keys(struct iscsi_conn *c, struct login *l, const uint8_t *text, size_t len,
			struct osd__iscsi_text *ans)
{
	size_t pos = 0;
	struct osd__iscsi_kv kv;
	int rc;
	while ((rc = osd__iscsi_text_next(&kv, text, len, &pos)) == 1) {
		rc = osd__iscsi_negotiate_offer(&c->params, &c->srv->ours, &kv, ans);
		if (rc == -ENOENT)
			rc = session_key(c, l, &kv, ans);
		if (rc) {
			fail(l, OSD_ISCSI_LOGIN_OUT_OF_RESOURCES);
			return 0;
		}
	}
	if (rc < 0)
		fail(l, OSD_ISCSI_LOGIN_INITIATOR_ERROR);
	if (l->chap_r_len >= 0 || l->have_chap_n)
		chap_verify(c, l);
	return 0;
}

static int send_login_rsp(struct iscsi_conn *c, const struct osd__iscsi_bhs *req, uint8_t flags,
			  uint16_t status, const struct osd__iscsi_text *ans)
{
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_LOGIN_RSP;
	h.flags = flags;
	memcpy(h.isid, c->isid, sizeof(h.isid));
	h.tsih = (flags & OSD_ISCSI_F_TRANSIT) && OSD_ISCSI_LOGIN_NSG(flags) ==
		 OSD_ISCSI_STAGE_FULL_FEATURE ? c->tsih : 0;
	h.itt = req->itt;
	h.status_class = (uint8_t)(status >> 8);
	h.status_detail = (uint8_t)status;
	return osd__tgt_iscsi_conn_reply(c, &h, SN_ADVANCE, ans ? ans->data : NULL,
					 ans ? ans->len : 0);
}

/* Check the first Login Request and set the connection's identity. */
static void first_request(struct iscsi_conn *c, struct login *l, const struct osd__iscsi_bhs *h)
{
	memcpy(c->isid, h->isid, sizeof(c->isid));
	c->cid = h->cid;
	c->exp_cmd_sn = h->cmd_sn;
	c->stat_sn = h->exp_stat_sn;
	l->stage = OSD_ISCSI_LOGIN_CSG(h->flags);
	if (h->status > 0) /* Version-min above the only version there is */
		fail(l, OSD_ISCSI_LOGIN_UNSUPPORTED_VERSION);
	if (h->tsih != 0)
		fail(l, OSD_ISCSI_LOGIN_NO_SESSION); /* one connection per session */
	if (!c->srv->chap_secret && l->stage == OSD_ISCSI_STAGE_OPERATIONAL)
		l->authenticated = 1;
	l->got_first = 1;
}

/* Whether the initiator's requested transit can happen now. */
static int may_transit(struct iscsi_conn *c, struct login *l, int csg, int nsg)
{
	if (csg == OSD_ISCSI_STAGE_SECURITY && !l->authenticated)
		return 0;
	if (nsg == OSD_ISCSI_STAGE_FULL_FEATURE) {
		if (!c->initiator_name[0] || (!c->params.discovery && !l->have_target)) {
			fail(l, OSD_ISCSI_LOGIN_MISSING_PARAMETER);
			return 0;
		}
	}
	/* The access list (RFC 7143 11.13.5: 02h/02h authorization failure). */
	if (c->initiator_name[0] && !osd__tgt_iscsi_initiator_allowed(c->srv, c->initiator_name)) {
		osd__tgt_iscsi_refused(c->srv, "%s: initiator %s not in the access list", c->peer,
				       c->initiator_name);
		fail(l, OSD_ISCSI_LOGIN_FORBIDDEN);
		return 0;
	}
	return 1;
}

/* Keys the target adds: TargetPortalGroupTag and TargetAlias first, our
 * MaxRecvDataSegmentLength once we are past security negotiation. */
static int target_keys(struct iscsi_conn *c, struct login *l, int csg, int to_ffp,
		       struct osd__iscsi_text *ans)
{
	int rc = 0;
	if (!l->sent_tpgt && !c->params.discovery) {
		rc = osd__iscsi_text_add(ans, "TargetPortalGroupTag", "1");
		if (!rc && c->srv->target_alias)
			rc = osd__iscsi_text_add(ans, "TargetAlias", c->srv->target_alias);
		l->sent_tpgt = 1;
	}
	if (!rc && !l->declared && (csg == OSD_ISCSI_STAGE_OPERATIONAL || to_ffp)) {
		rc = osd__iscsi_text_add_num(ans, "MaxRecvDataSegmentLength",
					     c->srv->ours.max_recv_dsl_target);
		l->declared = 1;
	}
	return rc;
}

/*
 * The session's security token (OSD-2 Security Token VPD page B1h,
 * docs/protocol.md §12.2): ISID and TSIH, then random bytes. CAPKEY request
 * ICVs cover it, so the random part keeps a captured request from verifying
 * in any other session, even one whose ISID and TSIH repeat (TSIH is a
 * 16-bit counter).
 */
static int new_token(struct iscsi_conn *c)
{
	memcpy(c->token, c->isid, sizeof(c->isid));
	c->token[6] = (uint8_t)(c->tsih >> 8);
	c->token[7] = (uint8_t)c->tsih;
	return RAND_bytes(c->token + 8, ISCSI_TOKEN_LEN - 8) == 1 ? 0 : -EIO;
}

/* One Login Request. Returns 1 when full feature phase is reached, 0 to go
 * on, or -errno to close the connection. */
static int login_step(struct iscsi_conn *c, struct login *l, const struct osd__iscsi_pdu *pdu)
{
	const struct osd__iscsi_bhs *h = &pdu->bhs;
	int transit = !!(h->flags & OSD_ISCSI_F_TRANSIT);
	int cont = !!(h->flags & OSD_ISCSI_F_CONTINUE);
	int csg = OSD_ISCSI_LOGIN_CSG(h->flags), nsg = OSD_ISCSI_LOGIN_NSG(h->flags);
	struct osd__iscsi_text ans = { 0 };
	int rc;

	if (!l->got_first)
		first_request(c, l, h);
	else if (memcmp(h->isid, c->isid, sizeof(c->isid)) != 0)
		fail(l, OSD_ISCSI_LOGIN_INITIATOR_ERROR);
	if (csg == 2 || csg == OSD_ISCSI_STAGE_FULL_FEATURE || csg < l->stage ||
	    (transit && (cont || nsg == 2 || nsg <= csg)))
		fail(l, OSD_ISCSI_LOGIN_INITIATOR_ERROR);
	l->stage = csg;
	if (!l->status && c->srv->chap_secret && csg != OSD_ISCSI_STAGE_SECURITY &&
	    !l->authenticated)
		fail(l, OSD_ISCSI_LOGIN_AUTH_FAILED);
	if (!l->status && pdu->data_len &&
	    osd__iscsi_text_add_raw(&l->in, pdu->data, pdu->data_len))
		fail(l, OSD_ISCSI_LOGIN_OUT_OF_RESOURCES);
	if (!l->status && cont) /* more text follows: ask for it */
		return send_login_rsp(c, h, OSD_ISCSI_LOGIN_FLAGS(0, 0, csg, 0), 0, NULL);
	if (!l->status)
		process_keys(c, l, l->in.data, l->in.len, &ans);
	l->in.len = 0;
	int go = !l->status && transit && may_transit(c, l, csg, nsg);
	int to_ffp = go && nsg == OSD_ISCSI_STAGE_FULL_FEATURE;
	if (!l->status && target_keys(c, l, csg, to_ffp, &ans))
		fail(l, OSD_ISCSI_LOGIN_OUT_OF_RESOURCES);
	/* Only the session's own initiator may reinstate it (02h/02h otherwise). */
	if (!l->status && to_ffp && !c->params.discovery && osd__tgt_iscsi_reinstate(c))
		fail(l, OSD_ISCSI_LOGIN_FORBIDDEN);
	if (l->status) {
		osd__tgt_iscsi_refused(c->srv, "%s: login failed (%#06x)", c->peer, l->status);
		send_login_rsp(c, h, OSD_ISCSI_LOGIN_FLAGS(0, 0, csg, 0), l->status, NULL);
		osd__iscsi_text_free(&ans);
		return -EACCES;
	}
	if (to_ffp) {
		unsigned t;
		while ((t = atomic_fetch_add(&c->srv->next_tsih, 1) & 0xFFFF) == 0)
			;
		c->tsih = (uint16_t)t;
		if (new_token(c) < 0)
			return -EIO;
		/* A new I_T nexus: each LUN reports it once (task.c), as POWER ON,
		 * RESET, OR BUS DEVICE RESET OCCURRED to a port this process has not
		 * seen, else as I_T NEXUS LOSS OCCURRED (spc4r37 §4.5.6, Annex D;
		 * nexus.c). */
		memset(c->ua_pending, 0xFF, sizeof(c->ua_pending));
		c->ua_ascq = !c->params.discovery &&
			     osd__tgt_iscsi_port_seen(c->srv, c->initiator_name, c->isid) ? 0x07 : 0x00;
	}
	rc = send_login_rsp(c, h, OSD_ISCSI_LOGIN_FLAGS(go, 0, csg, go ? nsg : 0), 0, &ans);
	osd__iscsi_text_free(&ans);
	if (rc)
		return rc;
	if (go)
		l->stage = nsg;
	return to_ffp ? 1 : 0;
}

/* What full feature phase runs with. */
static void enter_ffp(struct iscsi_conn *c)
{
	struct osd__iscsi_params *p = &c->params;
	if (p->first_burst > p->max_burst)
		p->first_burst = p->max_burst;
	c->dg.header = p->header_digest;
	c->dg.data = p->data_digest;
	c->discovery = p->discovery;
	c->next_ttt = 1;
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_INFO,
		       "%s: %s session of %s, tsih %u (digests %s/%s, recv %u, burst %u/%u%s)",
		       c->peer, c->discovery ? "discovery" : "normal", c->initiator_name, c->tsih,
		       c->dg.header ? "CRC32C" : "None", c->dg.data ? "CRC32C" : "None",
		       p->max_recv_dsl_initiator, p->first_burst, p->max_burst,
		       p->initial_r2t ? "" : ", unsolicited data");
}

int osd__tgt_iscsi_login(struct iscsi_conn *c)
{
	struct login l = { .chap_r_len = -1 };
	osd__iscsi_params_default(&c->params);
	int rc;
	for (;;) {
		struct osd__iscsi_pdu pdu;
		rc = osd__tgt_iscsi_conn_recv(c, &pdu);
		if (rc)
			break;
		if (pdu.bhs.opcode != OSD_ISCSI_OP_LOGIN_REQ) {
			osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_WARNING,
				       "%s: %s during login", c->peer,
				       osd__iscsi_opcode_name(pdu.bhs.opcode));
			rc = -EPROTO;
			break;
		}
		rc = login_step(c, &l, &pdu);
		if (rc) {
			if (rc == 1) {
				enter_ffp(c);
				rc = 0;
			}
			break;
		}
	}
	osd__iscsi_text_free(&l.in);
	OPENSSL_cleanse(l.challenge, sizeof(l.challenge));
	return rc;
}
