/* Public entry points: creating the transport, SendTargets discovery and
 * task management. */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "transport/iscsi_private.h"

static int fail_msg(const struct osd_iscsi_options *o, int rc, const char *fmt, ...)
{
	va_list ap;

	if (o && o->errbuf && o->errbuf_len) {
		va_start(ap, fmt);
		vsnprintf(o->errbuf, o->errbuf_len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int check_options(const struct osd_iscsi_options *o)
{
	if (o->version != OSD_ISCSI_OPTIONS_VERSION)
		return fail_msg(o, -EINVAL, "options version %d, expected %d", o->version,
				OSD_ISCSI_OPTIONS_VERSION);
	if ((unsigned)o->header_digest > OSD_ISCSI_DIGEST_PREFER_NONE ||
	    (unsigned)o->data_digest > OSD_ISCSI_DIGEST_PREFER_NONE)
		return fail_msg(o, -EINVAL, "unknown digest preference");
	if (o->initiator_name &&
	    !osd__iscsi_name_valid(o->initiator_name, strlen(o->initiator_name)))
		return fail_msg(o, -EINVAL, "initiator name '%s' is not a valid iSCSI name",
				o->initiator_name);
	if (!o->chap_user != !o->chap_secret)
		return fail_msg(o, -EINVAL, "CHAP needs both a user and a secret");
	if (!o->chap_target_user != !o->chap_target_secret)
		return fail_msg(o, -EINVAL, "mutual CHAP needs both a target user and secret");
	if (o->chap_target_user && !o->chap_user)
		return fail_msg(o, -EINVAL, "mutual CHAP needs one-way CHAP as well");
	if ((o->chap_secret && (!*o->chap_secret || strlen(o->chap_secret) > 255)) ||
	    (o->chap_target_secret && (!*o->chap_target_secret ||
				       strlen(o->chap_target_secret) > 255)))
		return fail_msg(o, -EINVAL, "CHAP secrets must be 1 to 255 bytes");
	if ((o->chap_user && (!*o->chap_user || strlen(o->chap_user) > 255)) ||
	    (o->chap_target_user && (!*o->chap_target_user || strlen(o->chap_target_user) > 255)))
		return fail_msg(o, -EINVAL, "CHAP names must be 1 to 255 bytes");
	if (o->chap_secret && o->chap_target_secret && !strcmp(o->chap_secret, o->chap_target_secret))
		return fail_msg(o, -EINVAL, "mutual CHAP secrets must differ (RFC 7143 12.1.3)");
	if (o->max_inflight == 0 || o->max_inflight > 65536)
		return fail_msg(o, -EINVAL, "max_inflight must be 1 to 65536");
	if (o->max_recv_data_segment < 512 || o->max_recv_data_segment > 16777215)
		return fail_msg(o, -EINVAL, "max_recv_data_segment must be 512 to 16777215");
	if (o->nop_interval_ms && !o->nop_timeout_ms)
		return fail_msg(o, -EINVAL, "a keepalive interval needs a keepalive timeout");
	if (o->failover_ms && o->failover_ms < 300)
		return fail_msg(o, -EINVAL, "failover_ms must be 0 or at least 300");
	return 0;
}

/* Options of version 1 end before failover_ms: copied into @p tmp with the
 * default for it. Any other version is checked as it is. */
static const struct osd_iscsi_options *upgrade_options(const struct osd_iscsi_options *o,
						       struct osd_iscsi_options *tmp)
{
	const struct osd_iscsi_options dflt = OSD_ISCSI_OPTIONS_INIT;

	if (o->version != 1)
		return o;
	*tmp = dflt;
	memcpy(tmp, o, offsetof(struct osd_iscsi_options, failover_ms));
	tmp->version = OSD_ISCSI_OPTIONS_VERSION;
	return tmp;
}

static uint64_t deadline_of(const struct osd_iscsi_options *o)
{
	return o->connect_timeout_ms ? osd__iscsi_now_ms() + o->connect_timeout_ms : 0;
}

/* Creates, connects and logs in a session. */
static int open_session(struct osd__iscsi_sess **out, const struct osd_iscsi_url *u,
			const struct osd_iscsi_options *o, int discovery)
{
	struct osd__iscsi_sess *s;
	uint64_t deadline = deadline_of(o);
	int rc = osd__iscsi_sess_new(&s, u, o, discovery);

	if (rc)
		return fail_msg(o, rc, "out of memory");
	rc = osd__iscsi_connect(s, deadline);
	if (rc == 0)
		rc = osd__iscsi_login(s, deadline);
	if (rc) {
		fail_msg(o, rc, "%s", s->err[0] ? s->err : strerror(-rc));
		osd__iscsi_sess_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int osd_iscsi_transport_new(struct osd_transport *out, const char *url,
			    const struct osd_iscsi_options *opts)
{
	struct osd_iscsi_options dflt = OSD_ISCSI_OPTIONS_INIT, v1;
	struct osd__iscsi_sess *s;
	struct osd_iscsi_url u;
	int rc;

	opts = opts ? upgrade_options(opts, &v1) : &dflt;
	if (!out)
		return fail_msg(opts, -EINVAL, "no transport to fill");
	rc = check_options(opts);
	if (rc == 0)
		rc = osd_iscsi_url_parse(&u, url, opts->errbuf, opts->errbuf_len);
	if (rc == 0)
		rc = open_session(&s, &u, opts, 0);
	if (rc)
		return rc;
	out->ops = &osd__iscsi_ops;
	out->impl = s;
	return 0;
}

/* "host[:port]" or "iscsi://host[:port][/anything]" */
static int parse_portal(struct osd_iscsi_url *u, const char *portal,
			const struct osd_iscsi_options *o)
{
	const char *hp = portal, *end;

	memset(u, 0, sizeof(*u));
	if (!portal)
		return fail_msg(o, -EINVAL, "no portal");
	if (!strncmp(portal, "iscsi://", 8))
		hp = portal + 8;
	end = strchr(hp, '/');
	if (!end)
		end = hp + strlen(hp);
	return osd__iscsi_parse_hostport(hp, (size_t)(end - hp), u->host, sizeof(u->host),
					 &u->port, o->errbuf, o->errbuf_len);
}

/* Turns "TargetName=..\0TargetAddress=..\0" into an array. Every pair,
 * the last one too, ends in a NUL (RFC 7143 §6.1): an answer that breaks
 * the text format is refused, not read past its end. */
static int parse_send_targets(const char *txt, size_t len, struct osd_iscsi_target_info **out,
			      size_t *count, const struct osd_iscsi_options *o)
{
	struct osd_iscsi_target_info *v = NULL, *nv;
	struct osd__iscsi_kv kv;
	size_t n = 0, pos = 0;
	int rc;

	while ((rc = osd__iscsi_text_next(&kv, (const uint8_t *)txt, len, &pos)) == 1) {
		if (osd__iscsi_kv_is(&kv, "TargetName")) {
			nv = realloc(v, (n + 1) * sizeof(*v));
			if (!nv) {
				free(v);
				return fail_msg(o, -ENOMEM, "out of memory");
			}
			v = nv;
			memset(&v[n], 0, sizeof(v[n]));
			snprintf(v[n].name, sizeof(v[n].name), "%.*s", (int)kv.value_len, kv.value);
			n++;
		} else if (osd__iscsi_kv_is(&kv, "TargetAddress") && n && !v[n - 1].address[0]) {
			snprintf(v[n - 1].address, sizeof(v[n - 1].address), "%.*s",
				 (int)kv.value_len, kv.value);
		}
	}
	if (rc < 0) {
		free(v);
		return fail_msg(o, -EPROTO, "malformed SendTargets answer at byte %zu of %zu "
				"(a key=value pair without its NUL, or a bad key)", pos, len);
	}
	*out = v;
	*count = n;
	return 0;
}

int osd_iscsi_discover(struct osd_iscsi_target_info **out, size_t *count, const char *portal,
		       const struct osd_iscsi_options *opts)
{
	struct osd_iscsi_options dflt = OSD_ISCSI_OPTIONS_INIT, v1;
	struct osd__iscsi_sess *s;
	struct osd_iscsi_url u;
	char *reply = NULL;
	size_t reply_len = 0;
	int rc;

	opts = opts ? upgrade_options(opts, &v1) : &dflt;
	if (!out || !count)
		return fail_msg(opts, -EINVAL, "no output");
	*out = NULL;
	*count = 0;
	rc = check_options(opts);
	if (rc == 0)
		rc = parse_portal(&u, portal, opts);
	if (rc == 0)
		rc = open_session(&s, &u, opts, 1);
	if (rc)
		return rc;
	rc = osd__iscsi_text_exchange(s, "SendTargets=All", &reply, &reply_len, deadline_of(opts));
	if (rc == 0)
		rc = parse_send_targets(reply, reply_len, out, count, opts);
	else
		fail_msg(opts, rc, "%s", s->err);
	if (rc == 0)
		osd__iscsi_logout(s, deadline_of(opts));
	free(reply);
	osd__iscsi_sess_free(s);
	return rc;
}

/* ---- task management ---- */

static int tmf_errno(int response)
{
	switch (response) {
	case OSD_ISCSI_TMF_RSP_COMPLETE: return 0;
	case OSD_ISCSI_TMF_RSP_NO_TASK: return -ENOENT;
	case OSD_ISCSI_TMF_RSP_NO_LUN: return -ENODEV;
	case OSD_ISCSI_TMF_RSP_NOT_SUPPORTED: return -ENOTSUP;
	case OSD_ISCSI_TMF_RSP_AUTH_FAILED:
	case OSD_ISCSI_TMF_RSP_REJECTED: return -EPERM;
	default: return -EIO;
	}
}

static struct osd__iscsi_task *task_of(struct osd__iscsi_sess *s, const struct osd_xfer *x)
{
	for (struct osd__iscsi_task *t = s->tasks; t; t = t->next)
		if (t->xfer == x)
			return t;
	return NULL;
}

/* After a completed TMF: the commands it ended complete with -ECANCELED. */
static void tmf_finish(struct osd__iscsi_sess *s, enum osd_iscsi_tmf fn, uint32_t ref_itt)
{
	struct osd__iscsi_task *t = s->tasks, *next;

	for (; t; t = next) {
		next = t->next;
		if (t->state == TASK_SENT && (fn == OSD_ISCSI_TASK_LUN_RESET || t->itt == ref_itt))
			osd__iscsi_complete(s, t, -ECANCELED);
	}
}

static int send_tmf(struct osd__iscsi_sess *s, enum osd_iscsi_tmf fn,
		    const struct osd__iscsi_task *t)
{
	struct osd__iscsi_bhs h;

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_TMF_REQ;
	h.immediate = 1;
	h.flags = OSD_ISCSI_F_FINAL | (uint8_t)fn;
	osd__iscsi_lun_encode(h.lun, (uint16_t)s->url.lun);
	s->tmf_itt = osd__iscsi_new_itt(s);
	h.itt = s->tmf_itt;
	h.ttt = t ? t->itt : OSD_ISCSI_RSVD_TAG; /* Referenced Task Tag */
	h.cmd_sn = s->cmdsn;
	h.exp_stat_sn = s->expstatsn;
	h.ref_cmd_sn = t ? t->cmdsn : s->cmdsn;
	s->tmf_done = 0;
	return osd__iscsi_send(s, &h, NULL, 0, NULL, 0);
}

int osd_iscsi_task_mgmt(struct osd_transport *tp, enum osd_iscsi_tmf fn, struct osd_xfer *xfer,
			unsigned timeout_ms)
{
	struct osd__iscsi_sess *s;
	struct osd__iscsi_task *t = NULL;
	uint64_t end = timeout_ms ? osd__iscsi_now_ms() + timeout_ms : 0;
	uint32_t ref = OSD_ISCSI_RSVD_TAG;
	int rc;

	if (!tp || tp->ops != &osd__iscsi_ops || !tp->impl ||
	    (fn != OSD_ISCSI_TASK_ABORT && fn != OSD_ISCSI_TASK_LUN_RESET) ||
	    (fn == OSD_ISCSI_TASK_ABORT) != (xfer != NULL))
		return -EINVAL;
	s = tp->impl;
	pthread_mutex_lock(&s->lock);
	if (s->tmf_itt != OSD_ISCSI_RSVD_TAG || s->fd < 0) {
		pthread_mutex_unlock(&s->lock);
		return s->fd < 0 ? -EIO : -EBUSY;
	}
	if (xfer) {
		t = task_of(s, xfer);
		if (!t || t->state == TASK_DONE) {
			pthread_mutex_unlock(&s->lock);
			return -ENOENT;
		}
		if (t->state == TASK_PENDING) { /* never sent: nothing to ask */
			osd__iscsi_complete(s, t, -ECANCELED);
			pthread_mutex_unlock(&s->lock);
			osd__iscsi_run_completions(s);
			return 0;
		}
		ref = t->itt;
	}
	rc = send_tmf(s, fn, t);
	if (rc == 0 && osd__iscsi_flush(s))
		osd__iscsi_conn_lost(s, -EIO);
	while (rc == 0 && !s->tmf_done) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN | (s->sendq ? POLLOUT : 0) };
		uint64_t now = osd__iscsi_now_ms();

		if (end && now >= end) {
			rc = -ETIMEDOUT;
			break;
		}
		pthread_mutex_unlock(&s->lock);
		poll(&pfd, 1, end ? (int)(end - now < 100 ? end - now : 100) : 100);
		pthread_mutex_lock(&s->lock);
		osd__iscsi_service_locked(s, pfd.revents);
		pthread_mutex_unlock(&s->lock);
		osd__iscsi_run_completions(s);
		pthread_mutex_lock(&s->lock);
	}
	if (rc == 0) {
		rc = s->tmf_response < 0 ? -EIO : tmf_errno(s->tmf_response);
		if (rc == 0)
			tmf_finish(s, fn, ref);
	}
	s->tmf_itt = OSD_ISCSI_RSVD_TAG;
	pthread_mutex_unlock(&s->lock);
	osd__iscsi_run_completions(s);
	return rc;
}

int osd_iscsi_error_is_transport(int rc)
{
	return rc == -EPROTO || rc == -EIO || rc == -ENOTCONN || rc == -ENOBUFS || rc == -ENODEV;
}

int osd_iscsi_transport_error(struct osd_transport *tp, char *buf, size_t len)
{
	struct osd__iscsi_sess *s;
	size_t n;

	if (!tp || tp->ops != &osd__iscsi_ops || !tp->impl || !buf || !len)
		return -EINVAL;
	s = tp->impl;
	pthread_mutex_lock(&s->lock);
	n = strlen(s->err);
	snprintf(buf, len, "%s", s->err);
	pthread_mutex_unlock(&s->lock);
	return (int)n;
}
