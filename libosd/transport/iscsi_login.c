/* Login (security stage with CHAP, operational negotiation), Text requests
 * (SendTargets) and Logout, all blocking with a deadline: they run before
 * the session is in full-feature phase or while it is being torn down. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include "transport/iscsi_private.h"

#define CHAP_CHALLENGE_LEN 16
#define ISCSI_VERSION 0x00

/* Copies the value of @p key in the text segment into @p out (NUL
 * terminated). Returns 1 if found, 0 if not, -EPROTO if malformed or too long. */
static int text_get(const struct osd__iscsi_text *t, const char *key, char *out, size_t cap)
{
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	int rc;

	while ((rc = osd__iscsi_text_next(&kv, t->data, t->len, &pos)) == 1) {
		if (!osd__iscsi_kv_is(&kv, key))
			continue;
		if (kv.value_len >= cap)
			return -EPROTO;
		memcpy(out, kv.value, kv.value_len);
		out[kv.value_len] = '\0';
		return 1;
	}
	return rc < 0 ? -EPROTO : 0;
}

/* CHAP_I: a number from 0 to 255 (RFC 7143 §12.1.3), decimal or 0x
 * hexadecimal (§6.1), nothing after it. */
static int chap_id(const char *val, uint64_t *id)
{
	struct osd__iscsi_kv kv = { .value = val, .value_len = strlen(val) };

	return osd__iscsi_parse_number(&kv, 255, id);
}

static int text_append_raw(struct osd__iscsi_text *t, const uint8_t *d, size_t n)
{
	uint8_t *nb;

	if (t->len + n > OSD_ISCSI_MAX_TEXT)
		return -EPROTO;
	nb = realloc(t->data, t->len + n + 1);
	if (!nb)
		return -ENOMEM;
	t->data = nb;
	t->cap = t->len + n + 1;
	memcpy(t->data + t->len, d, n);
	t->len += n;
	t->data[t->len] = 0; /* a C string for whoever reads it as one */
	return 0;
}

/* ---- one login round trip ---- */

static int login_status_errno(struct osd__iscsi_sess *s, const struct osd__iscsi_bhs *h)
{
	unsigned st = (unsigned)h->status_class << 8 | h->status_detail;

	if (st == OSD_ISCSI_LOGIN_SUCCESS)
		return 0;
	osd__iscsi_set_error(s, "login refused by the target: status class %u detail %u%s",
			     h->status_class, h->status_detail,
			     st == OSD_ISCSI_LOGIN_AUTH_FAILED ? " (authentication failed)" :
			     st == OSD_ISCSI_LOGIN_FORBIDDEN ? " (not authorized)" :
			     st == OSD_ISCSI_LOGIN_NOT_FOUND ? " (no such target)" :
			     h->status_class == 1 ? " (redirection is not supported)" : "");
	if (st == OSD_ISCSI_LOGIN_AUTH_FAILED || st == OSD_ISCSI_LOGIN_FORBIDDEN)
		return -EACCES;
	if (st == OSD_ISCSI_LOGIN_NOT_FOUND || st == 0x0204)
		return -ENOENT;
	return -EPROTO;
}

/* Sends one Login Request and collects the whole answer (following C bits)
 * into @p rsp_text. Returns 0 or -errno. */
static int login_round(struct osd__iscsi_sess *s, int csg, int nsg, int transit,
		       const struct osd__iscsi_text *req, struct osd__iscsi_text *rsp_text, struct osd__iscsi_bhs *rsp,
		       uint64_t deadline)
{
	const uint8_t *data = req ? req->data : NULL;
	size_t dlen = req ? req->len : 0;
	int rc;

	rsp_text->len = 0;
	for (;;) {
		struct osd__iscsi_bhs h;
		const struct osd__iscsi_pdu *p = &s->rx.pdu;

		memset(&h, 0, sizeof(h));
		h.opcode = OSD_ISCSI_OP_LOGIN_REQ;
		h.immediate = 1;
		h.flags = OSD_ISCSI_LOGIN_FLAGS(transit, 0, csg, nsg);
		h.response = ISCSI_VERSION; /* VersionMax */
		h.status = ISCSI_VERSION;   /* VersionMin */
		memcpy(h.isid, s->isid, 6);
		h.tsih = 0;
		h.itt = s->login_itt;
		h.cid = s->cid;
		h.cmd_sn = s->cmdsn;
		h.exp_stat_sn = s->expstatsn;
		rc = osd__iscsi_send(s, &h, NULL, 0, data, dlen);
		if (rc == 0)
			rc = osd__iscsi_wait_pdu(s, deadline);
		if (rc)
			return rc;
		*rsp = p->bhs;
		osd__iscsi_rx_reset(s);
		if (rsp->opcode != OSD_ISCSI_OP_LOGIN_RSP || rsp->itt != h.itt) {
			osd__iscsi_set_error(s, "unexpected %s during login",
					     osd__iscsi_opcode_name(rsp->opcode));
			return -EPROTO;
		}
		/* A target that never ends the login (no T bit, or C bits
		 * without end) is bounded in time by the deadline and in
		 * work and memory by this budget over all its responses. */
		s->login_rsp_bytes += OSD_ISCSI_BHS_LEN + p->data_len;
		if (s->login_rsp_bytes > OSD_ISCSI_LOGIN_BUDGET) {
			osd__iscsi_set_error(s, "login not complete after %zu bytes of Login "
					     "Responses (limit %u)", s->login_rsp_bytes,
					     OSD_ISCSI_LOGIN_BUDGET);
			return -EPROTO;
		}
		rc = login_status_errno(s, rsp);
		if (rc)
			return rc;
		s->expstatsn = rsp->stat_sn + 1;
		s->expcmdsn = rsp->exp_cmd_sn;
		s->maxcmdsn = rsp->max_cmd_sn;
		if (p->data_len) {
			rc = text_append_raw(rsp_text, p->data, p->data_len);
			if (rc)
				return rc;
		}
		if (!(rsp->flags & OSD_ISCSI_F_CONTINUE))
			return 0;
		/* more text to come: ask with an empty request */
		data = NULL;
		dlen = 0;
		transit = 0;
	}
}

/* ---- CHAP (RFC 1994 via RFC 7143 section 12.1.3) ---- */

static int chap_exchange(struct osd__iscsi_sess *s, struct osd__iscsi_text *rt,
			 struct osd__iscsi_bhs *rsp, uint64_t deadline)
{
	struct osd__iscsi_text q = { 0 };
	uint8_t chal[1024], resp[OSD_ISCSI_CHAP_DIGEST_LEN], mychal[CHAP_CHALLENGE_LEN], myid = 0;
	char val[OSD_ISCSI_MAX_VALUE + 1], hex[2 * CHAP_CHALLENGE_LEN + 3];
	long clen;
	uint64_t id;
	int rc;

	rc = osd__iscsi_text_add_num(&q, "CHAP_A", OSD_ISCSI_CHAP_MD5);
	if (rc == 0)
		rc = login_round(s, 0, 1, 0, &q, rt, rsp, deadline);
	if (rc)
		goto out;
	rc = -EPROTO;
	if (text_get(rt, "CHAP_A", val, sizeof(val)) != 1 || strcmp(val, "5")) {
		osd__iscsi_set_error(s, "target did not accept CHAP with MD5");
		goto out;
	}
	if (text_get(rt, "CHAP_I", val, sizeof(val)) != 1 || chap_id(val, &id) < 0) {
		osd__iscsi_set_error(s, "missing or bad CHAP_I from the target");
		goto out;
	}
	if (text_get(rt, "CHAP_C", val, sizeof(val)) != 1 ||
	    (clen = osd__iscsi_binary_decode(chal, sizeof(chal), val, strlen(val))) <= 0) {
		osd__iscsi_set_error(s, "missing or bad CHAP_C from the target");
		goto out;
	}
	rc = osd__iscsi_chap_response(resp, (uint8_t)id, (const uint8_t *)s->chap_secret,
				      strlen(s->chap_secret), chal, (size_t)clen);
	if (rc)
		goto out;
	q.len = 0;
	osd__iscsi_binary_encode(hex, resp, sizeof(resp));
	rc = osd__iscsi_text_add(&q, "CHAP_N", s->chap_user);
	if (rc == 0)
		rc = osd__iscsi_text_add(&q, "CHAP_R", hex);
	if (rc == 0 && s->chap_tuser) {
		if (RAND_bytes(mychal, sizeof(mychal)) != 1 || RAND_bytes(&myid, 1) != 1) {
			rc = -EIO;
			goto out;
		}
		osd__iscsi_binary_encode(hex, mychal, sizeof(mychal));
		rc = osd__iscsi_text_add_num(&q, "CHAP_I", myid);
		if (rc == 0)
			rc = osd__iscsi_text_add(&q, "CHAP_C", hex);
	}
	if (rc == 0)
		rc = login_round(s, 0, 1, 1, &q, rt, rsp, deadline);
	if (rc == 0 && s->chap_tuser) {
		uint8_t want[OSD_ISCSI_CHAP_DIGEST_LEN], got[OSD_ISCSI_CHAP_DIGEST_LEN];
		long glen = -1;
		int name_ok = text_get(rt, "CHAP_N", val, sizeof(val)) == 1 &&
			      !strcmp(val, s->chap_tuser);

		if (name_ok && text_get(rt, "CHAP_R", val, sizeof(val)) == 1)
			glen = osd__iscsi_binary_decode(got, sizeof(got), val, strlen(val));
		if (glen != (long)sizeof(got) ||
		    osd__iscsi_chap_response(want, myid, (const uint8_t *)s->chap_tsecret,
					     strlen(s->chap_tsecret), mychal, sizeof(mychal)) ||
		    CRYPTO_memcmp(want, got, sizeof(got))) {
			osd__iscsi_set_error(s, "the target failed mutual CHAP authentication");
			rc = -EACCES;
		}
	}
out:
	osd__iscsi_text_free(&q);
	return rc;
}

/* ---- stages ---- */

static int security_stage(struct osd__iscsi_sess *s, struct osd__iscsi_text *rt, uint64_t deadline)
{
	struct osd__iscsi_bhs rsp;
	struct osd__iscsi_text q = { 0 };
	int chap = s->chap_user != NULL, rc;
	char am[16];

	rc = osd__iscsi_text_add(&q, "InitiatorName", s->initiator_name);
	if (rc == 0)
		rc = osd__iscsi_text_add(&q, "SessionType", s->discovery ? "Discovery" : "Normal");
	if (rc == 0 && !s->discovery)
		rc = osd__iscsi_text_add(&q, "TargetName", s->url.target);
	if (rc == 0)
		rc = osd__iscsi_text_add(&q, "AuthMethod", chap ? "CHAP" : "None");
	if (rc == 0)
		rc = login_round(s, 0, 1, !chap, &q, rt, &rsp, deadline);
	osd__iscsi_text_free(&q);
	if (rc)
		return rc;
	if (chap) {
		if (text_get(rt, "AuthMethod", am, sizeof(am)) != 1 || strcmp(am, "CHAP")) {
			osd__iscsi_set_error(s, "target did not accept AuthMethod=CHAP");
			return -EACCES;
		}
		rc = chap_exchange(s, rt, &rsp, deadline);
		if (rc)
			return rc;
	}
	/* a target may need more rounds before it transits */
	while (!(rsp.flags & OSD_ISCSI_F_TRANSIT)) {
		rc = login_round(s, 0, 1, 1, NULL, rt, &rsp, deadline);
		if (rc)
			return rc;
	}
	if (OSD_ISCSI_LOGIN_NSG(rsp.flags) != OSD_ISCSI_STAGE_OPERATIONAL) {
		osd__iscsi_set_error(s, "target skipped the operational stage");
		return -EPROTO;
	}
	return 0;
}

static const char *digest_offer(enum osd_iscsi_digest d)
{
	switch (d) {
	case OSD_ISCSI_DIGEST_CRC32C: return "CRC32C";
	case OSD_ISCSI_DIGEST_PREFER_CRC32C: return "CRC32C,None";
	case OSD_ISCSI_DIGEST_PREFER_NONE: return "None,CRC32C";
	default: return "None";
	}
}

/* What we offer: the codec's params as the starting point of the answers. */
static int build_offer(struct osd__iscsi_sess *s, struct osd__iscsi_params *np,
		       struct osd__iscsi_text *q)
{
	int rc;

	osd__iscsi_params_default(np);
	np->max_recv_dsl_initiator = s->p.max_recv_dsl;
	np->discovery = s->discovery;
	np->error_recovery_level = 0;
	rc = osd__iscsi_text_add(q, "HeaderDigest", digest_offer(s->opts.header_digest));
	if (rc == 0)
		rc = osd__iscsi_text_add(q, "DataDigest", digest_offer(s->opts.data_digest));
	if (rc == 0)
		rc = osd__iscsi_text_add_num(q, "MaxRecvDataSegmentLength", s->p.max_recv_dsl);
	if (rc == 0)
		rc = osd__iscsi_text_add_num(q, "ErrorRecoveryLevel", 0);
	if (rc || s->discovery)
		return rc;
	np->initial_r2t = 0;
	np->immediate_data = 1;
	np->first_burst = 1048576; /* a 1 MiB write goes out without waiting for an R2T */
	np->max_burst = 1048576;
	np->max_outstanding_r2t = 1;
	np->max_connections = 1;
	np->time2wait = 0;
	np->time2retain = 0;
	rc = osd__iscsi_text_add(q, "InitialR2T", "No");
	if (rc == 0)
		rc = osd__iscsi_text_add(q, "ImmediateData", "Yes");
	if (rc == 0)
		rc = osd__iscsi_text_add_num(q, "FirstBurstLength", np->first_burst);
	if (rc == 0)
		rc = osd__iscsi_text_add_num(q, "MaxBurstLength", np->max_burst);
	if (rc == 0)
		rc = osd__iscsi_text_add_num(q, "MaxOutstandingR2T", 1);
	if (rc == 0)
		rc = osd__iscsi_text_add_num(q, "MaxConnections", 1);
	if (rc == 0)
		rc = osd__iscsi_text_add(q, "DataPDUInOrder", "Yes");
	if (rc == 0)
		rc = osd__iscsi_text_add(q, "DataSequenceInOrder", "Yes");
	if (rc == 0)
		rc = osd__iscsi_text_add_num(q, "DefaultTime2Wait", 0);
	if (rc == 0)
		rc = osd__iscsi_text_add_num(q, "DefaultTime2Retain", 0);
	return rc;
}

static int key_in(const struct osd__iscsi_text *t, const struct osd__iscsi_kv *want)
{
	struct osd__iscsi_kv kv;
	size_t pos = 0;

	while (osd__iscsi_text_next(&kv, t->data, t->len, &pos) == 1)
		if (kv.key_len == want->key_len && !memcmp(kv.key, want->key, kv.key_len))
			return 1;
	return 0;
}

/* Applies the target's text: answers to our offers go through the codec's
 * rules; keys the target proposes itself get an answer in @p extra. */
static int apply_answers(struct osd__iscsi_sess *s, struct osd__iscsi_params *np,
			 const struct osd__iscsi_text *sent, const struct osd__iscsi_text *rt,
			 struct osd__iscsi_text *extra)
{
	struct osd__iscsi_params ours = *np;
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	int rc;

	while ((rc = osd__iscsi_text_next(&kv, rt->data, rt->len, &pos)) == 1) {
		if (key_in(sent, &kv) || osd__iscsi_kv_is(&kv, "MaxRecvDataSegmentLength"))
			rc = osd__iscsi_negotiate_answer(np, &kv);
		else
			rc = osd__iscsi_negotiate_offer(np, &ours, &kv, extra);
		if (rc == -ENOENT)
			continue; /* TargetAlias, TargetPortalGroupTag, ... */
		if (rc) {
			osd__iscsi_set_error(s, "target answered %.*s=%.*s, which breaks the "
					     "negotiation", (int)kv.key_len, kv.key,
					     (int)kv.value_len, kv.value);
			return -EPROTO;
		}
	}
	return rc < 0 ? -EPROTO : 0;
}

/* Copies the settled values to the data path, checking the digest choice. */
static int settle(struct osd__iscsi_sess *s, const struct osd__iscsi_params *np)
{
	struct osd__iscsi_conn_params *p = &s->p;

	if ((s->opts.header_digest == OSD_ISCSI_DIGEST_CRC32C && !np->header_digest) ||
	    (s->opts.data_digest == OSD_ISCSI_DIGEST_CRC32C && !np->data_digest) ||
	    (s->opts.header_digest == OSD_ISCSI_DIGEST_NONE && np->header_digest) ||
	    (s->opts.data_digest == OSD_ISCSI_DIGEST_NONE && np->data_digest)) {
		osd__iscsi_set_error(s, "target chose digests (header %s, data %s) we did not offer",
				     np->header_digest ? "CRC32C" : "None",
				     np->data_digest ? "CRC32C" : "None");
		return -EPROTO;
	}
	p->max_send_dsl = np->max_recv_dsl_target;
	p->first_burst = np->first_burst;
	p->max_burst = np->max_burst;
	p->max_outstanding_r2t = np->max_outstanding_r2t;
	p->immediate_data = np->immediate_data;
	p->initial_r2t = np->initial_r2t;
	if (p->first_burst > p->max_burst) {
		osd__iscsi_set_error(s, "target negotiated FirstBurstLength above MaxBurstLength");
		return -EPROTO;
	}
	/* digests start with the first full-feature PDU */
	p->dg.header = np->header_digest;
	p->dg.data = np->data_digest;
	return 0;
}

static int operational_stage(struct osd__iscsi_sess *s, struct osd__iscsi_text *rt,
			     uint64_t deadline)
{
	struct osd__iscsi_params np;
	struct osd__iscsi_bhs rsp;
	struct osd__iscsi_text q = { 0 }, extra = { 0 };
	int rc;

	rc = build_offer(s, &np, &q);
	if (rc == 0)
		rc = login_round(s, 1, 3, 1, &q, rt, &rsp, deadline);
	if (rc == 0)
		rc = apply_answers(s, &np, &q, rt, &extra);
	while (rc == 0 && !(rsp.flags & OSD_ISCSI_F_TRANSIT)) {
		rc = login_round(s, 1, 3, 1, extra.len ? &extra : NULL, rt, &rsp, deadline);
		extra.len = 0;
		if (rc == 0)
			rc = apply_answers(s, &np, &q, rt, &extra);
	}
	if (rc == 0 && OSD_ISCSI_LOGIN_NSG(rsp.flags) != OSD_ISCSI_STAGE_FULL_FEATURE) {
		osd__iscsi_set_error(s, "target did not move to full-feature phase");
		rc = -EPROTO;
	}
	if (rc == 0)
		rc = settle(s, &np);
	if (rc == 0)
		s->tsih = rsp.tsih;
	osd__iscsi_text_free(&q);
	osd__iscsi_text_free(&extra);
	return rc;
}

int osd__iscsi_login(struct osd__iscsi_sess *s, uint64_t deadline)
{
	struct osd__iscsi_text rt = { 0 };
	int rc;

	/* login PDUs travel without digests; a fresh session each time */
	s->p.dg.header = 0;
	s->p.dg.data = 0;
	s->tsih = 0;
	s->expstatsn = 0;
	s->login_itt = osd__iscsi_new_itt(s);
	s->login_rsp_bytes = 0;
	rc = security_stage(s, &rt, deadline);
	if (rc == 0)
		rc = operational_stage(s, &rt, deadline);
	osd__iscsi_text_free(&rt);
	if (rc == 0) {
		/* the login's CmdSN is the first command's CmdSN */
		if (osd__iscsi_sn_lt(s->cmdsn, s->expcmdsn))
			s->cmdsn = s->expcmdsn;
	}
	s->token_len = 0;
	if (rc == 0 && !s->discovery)
		rc = osd__iscsi_read_token(s, deadline);
	return rc;
}

/* ---- Text exchange (discovery) ---- */

int osd__iscsi_text_exchange(struct osd__iscsi_sess *s, const char *text, char **reply,
			     size_t *reply_len, uint64_t deadline)
{
	struct osd__iscsi_text q = { 0 }, rt = { 0 };
	uint32_t ttt = OSD_ISCSI_RSVD_TAG, itt = osd__iscsi_new_itt(s);
	int rc = 0, first = 1;

	rc = text_append_raw(&q, (const uint8_t *)text, strlen(text) + 1);
	while (rc == 0) {
		struct osd__iscsi_bhs h;
		const struct osd__iscsi_pdu *p = &s->rx.pdu;

		memset(&h, 0, sizeof(h));
		h.opcode = OSD_ISCSI_OP_TEXT_REQ;
		h.immediate = 1;
		h.flags = OSD_ISCSI_F_FINAL;
		h.itt = itt;
		h.ttt = ttt;
		h.cmd_sn = s->cmdsn;
		h.exp_stat_sn = s->expstatsn;
		rc = osd__iscsi_send(s, &h, NULL, 0, first ? q.data : NULL,
				     first ? q.len : 0);
		first = 0;
		if (rc == 0)
			rc = osd__iscsi_wait_pdu(s, deadline);
		if (rc)
			break;
		if (p->bhs.opcode != OSD_ISCSI_OP_TEXT_RSP || p->bhs.itt != itt) {
			osd__iscsi_set_error(s, "unexpected %s answering a Text request",
					     osd__iscsi_opcode_name(p->bhs.opcode));
			rc = -EPROTO;
			break;
		}
		s->expstatsn = p->bhs.stat_sn + 1;
		if (p->data_len)
			rc = text_append_raw(&rt, p->data, p->data_len);
		ttt = p->bhs.ttt;
		if (!(p->bhs.flags & OSD_ISCSI_F_CONTINUE)) {
			osd__iscsi_rx_reset(s);
			break;
		}
		osd__iscsi_rx_reset(s);
	}
	osd__iscsi_text_free(&q);
	if (rc) {
		osd__iscsi_text_free(&rt);
		return rc;
	}
	*reply = (char *)rt.data;
	*reply_len = rt.len;
	return 0;
}

/* ---- Logout ---- */

int osd__iscsi_logout(struct osd__iscsi_sess *s, uint64_t deadline)
{
	struct osd__iscsi_bhs h;
	int rc;

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_LOGOUT_REQ;
	h.immediate = 1;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_LOGOUT_SESSION;
	h.itt = osd__iscsi_new_itt(s);
	h.cid = s->cid;
	h.cmd_sn = s->cmdsn;
	h.exp_stat_sn = s->expstatsn;
	rc = osd__iscsi_send(s, &h, NULL, 0, NULL, 0);
	/* skip whatever else is still arriving until the Logout Response */
	while (rc == 0) {
		rc = osd__iscsi_wait_pdu(s, deadline);
		if (rc)
			break;
		if (s->rx.pdu.bhs.opcode == OSD_ISCSI_OP_LOGOUT_RSP && s->rx.pdu.bhs.itt == h.itt) {
			rc = s->rx.pdu.bhs.response == OSD_ISCSI_LOGOUT_RSP_OK ? 0 : -EIO;
			osd__iscsi_rx_reset(s);
			break;
		}
		osd__iscsi_rx_reset(s);
	}
	return rc;
}
