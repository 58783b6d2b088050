/*
 * Commands libosd's request API does not build (INQUIRY, REPORT LUNS, TEST
 * UNIT READY, OBJECT STRUCTURE CHECK, an unknown service action, a replayed
 * CDB): encoded here with the public codec and signing functions and sent on
 * the device's own transport (osd/sys/transport.h), driving its fd like
 * osd_req_execute() does.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include "conform.h"

#define RAW_TIMEOUT_MS 30000 /* same bound as a libosd command */
#define RAW_UA_RETRIES 3     /* a unit attention means the command did not run (SAM-5 5.14) */

struct raw_wait {
	int done;
	int err;
};

static void raw_done(struct osd_xfer *x, int err)
{
	struct raw_wait *w = x->priv;

	w->err = err;
	w->done = 1;
}

/* Submits @p x and drives the transport until it completed, bounded. */
static int raw_once(const struct osd_transport *tp, struct osd_xfer *x)
{
	struct raw_wait w = { 0, 0 };
	int waited = 0, rc;

	x->done = raw_done;
	x->priv = &w;
	rc = tp->ops->submit(tp->impl, x);
	if (rc < 0)
		return rc;
	while (!w.done && waited < RAW_TIMEOUT_MS) {
		int fd = tp->ops->get_fd ? tp->ops->get_fd(tp->impl) : -1;
		struct pollfd p = { fd, 0, 0 };

		if (fd < 0)
			break; /* an inline transport completes inside submit */
		p.events = (short)(tp->ops->which_events ? tp->ops->which_events(tp->impl) : POLLIN);
		rc = poll(&p, 1, 100);
		waited += 100;
		rc = tp->ops->service(tp->impl, rc > 0 ? p.revents : 0);
		if (rc < 0 && !w.done)
			break;
	}
	if (!w.done) {
		if (tp->ops->version >= 2 && tp->ops->cancel)
			tp->ops->cancel(tp->impl, x);
		return w.done ? w.err : -ETIMEDOUT;
	}
	return w.err;
}

int cf_raw_exec(struct cf_ctx *c, const uint8_t *cdb, size_t cdb_len, void *in, size_t in_len,
		struct cf_raw *r, const char *what)
{
	const struct osd_transport *tp = &c->d->tp;
	struct iovec iov = { in, in_len };
	int rc = -ENODEV;

	memset(r, 0, sizeof(*r));
	for (int attempt = 0; tp->ops && attempt <= RAW_UA_RETRIES; attempt++) {
		struct osd_xfer x;

		osd_xfer_init(&x); /* resend: never (a conformance probe runs once) */
		x.cdb = cdb;
		x.cdb_len = cdb_len;
		x.in_iov = in_len ? &iov : NULL;
		x.in_iovcnt = in_len ? 1 : 0;
		x.in_len = in_len;
		rc = raw_once(tp, &x);
		if (rc < 0)
			break;
		r->status = x.status;
		r->in_xferred = x.in_xferred;
		r->have_sense = x.status == OSD_STATUS_CHECK_CONDITION &&
				osd_sense_decode(x.sense, x.sense_len, &r->sense) == 0;
		if (!r->have_sense || r->sense.key != OSD_SK_UNIT_ATTENTION)
			return 0;
	}
	if (rc == 0)
		return 0; /* unit attentions to the end: the caller sees the last one */
	cf_set(c, CF_FAIL, "%s: the transport failed: %s", what, strerror(-rc));
	return rc;
}

int cf_raw_good(struct cf_ctx *c, const struct cf_raw *r, const char *what)
{
	char code[16], text[256] = "";

	if (r->status == OSD_STATUS_GOOD)
		return 0;
	if (!r->have_sense)
		return cf_set(c, CF_FAIL, "%s: status %02Xh without sense data", what,
			      r->status), -1;
	c->have_sense = 1;
	c->sense = r->sense;
	osd_sense_describe(&r->sense, text, sizeof(text));
	cf_set(c, cf_sense_unsupported(&r->sense) ? CF_UNSUPPORTED : CF_FAIL, "%s: %s (%s)", what,
	       cf_sense_code(&r->sense, code, sizeof(code)), text);
	return -1;
}

int cf_raw_osd_cdb(struct cf_ctx *c, enum osd_action action, uint16_t code,
		   const struct osd_obj_id *obj, uint16_t perms, uint8_t *cdb, size_t len)
{
	struct osd_credential cr;
	struct osd_cdb f;
	uint8_t token[256];
	size_t toklen = 0;
	osd_key *key = NULL;
	int n, rc;

	if (cf_credential(c, obj, 0, perms, c->method, &cr) < 0)
		return -1;
	osd_cdb_init(&f, c->ver, action);
	f.obj = *obj;
	f.cap = cr.cap;
	n = osd_cdb_encode(&f, cdb, len);
	if (n < 0)
		return cf_set(c, n == -ENOTSUP ? CF_NA : CF_FAIL, "cannot encode %s: %s",
			      osd_action_name(action), strerror(-n)), -1;
	if (code) {
		cdb[8] = (uint8_t)(code >> 8); /* SERVICE ACTION, osd-r10 §5.2 */
		cdb[9] = (uint8_t)code;
	}
	if (c->method == OSD_SEC_CAPKEY && c->d->tp.ops->security_token)
		toklen = c->d->tp.ops->security_token(c->d->tp.impl, token, sizeof(token));
	rc = c->method == OSD_SEC_NOSEC ? 0 : osd_key_new(&key, cr.cap_key, OSD_HMAC_LEN);
	if (rc == 0)
		rc = osd_sec_sign_cdb(key, c->method, cdb, (size_t)n, token,
				      toklen > sizeof(token) ? 0 : toklen, osd_now_ms());
	osd_key_free(key);
	memset(&cr, 0, sizeof(cr));
	if (rc < 0)
		return cf_set(c, CF_FAIL, "cannot sign %s: %s", osd_action_name(action),
			      strerror(-rc)), -1;
	return n;
}
