/* Sending requests: credential, layout and signature at submit time, the
 * transport's completion, synchronous waiting, and freeing. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <osd/attributes.h>
#include "request/private.h"
#include "security/cdb_icv.h"

#define SERVICE_SLICE_MS 10 /* poll period for transports without an fd */
/* Longest poll() of a synchronous wait: service() also runs the transport's
 * timers (iSCSI keepalive and failover_ms), which are that late at most. */
#define WAIT_SLICE_MS 250

int osd__errmsg(osd_req *req, const char *fmt, ...)
{
	char buf[OSD__ERR_LEN];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	req->errmsg = osd__arena_dup(&req->arena, buf, strlen(buf) + 1);
	return n;
}

void osd__req_destroy(osd_req *req)
{
	if (!req)
		return;
	osd__keyref_release(req->dev, req->key);
	osd__arena_release(&req->arena);
	free(req);
}

/* Called with dev->lock held (the key and the token are shared). */
static int sign(osd_req *req)
{
	osd_dev *dev = req->dev;
	int rc;

	if (!req->key)
		return 0;
	if (req->cdb.cap.security_method == OSD_SEC_CAPKEY) {
		const uint8_t *icv;

		/* The token may have changed since the last request (reconnect):
		 * the cached ICV is reused only for the token it was made with. */
		osd__dev_refresh_token(dev);
		memcpy(req->signed_token, dev->token, dev->token_len);
		req->signed_token_len = dev->token_len;
		rc = osd__keyref_capkey_icv(req->key, dev->token_len ? dev->token : NULL,
					    dev->token_len, &icv);
		if (rc == 0)
			rc = osd__sec_sign_cdb_capkey(req->cdb_buf, req->xfer.cdb_len, icv);
	} else {
		rc = osd_sec_sign_cdb(req->key->key, req->cdb.cap.security_method, req->cdb_buf,
				      req->xfer.cdb_len, dev->token_len ? dev->token : NULL,
				      dev->token_len, osd__dev_clock(dev));
	}
	if (rc == 0)
		rc = osd__req_sign_data_out(req);
	return rc;
}

/*
 * A CMDRSP/ALLDATA request refused with NONCE TIMESTAMP OUT OF RANGE under a
 * verified response ICV was not executed: the target checks the nonce
 * before anything else, and signs its refusal. Its nonce went stale between
 * signing and the check, typically because the target's replay cache
 * tightened its window under load (docs/security.md 4).
 */
static int stale_nonce(const osd_req *req)
{
	return req->sense.has_ricv && req->sense.asc == OSD_ASC_NONCE_TIMESTAMP_OUT_OF_RANGE;
}

/*
 * A CAPKEY request whose request ICV was refused (INVALID FIELD IN CDB at the
 * ICV) while the channel's token is no longer the one it was signed for: the
 * transport logged in again (a new session, a new token) between signing
 * and sending. The target checks the ICV before executing anything.
 */
static int session_changed(osd_req *req)
{
	osd_dev *dev = req->dev;
	int changed;

	if (req->cdb.cap.security_method != OSD_SEC_CAPKEY ||
	    req->sense.asc != OSD_ASC_INVALID_FIELD_IN_CDB || !req->sense.has_field ||
	    !req->sense.field_in_cdb ||
	    req->sense.field_pointer != osd_cdb_icv_offset(req->cdb.version))
		return 0;
	pthread_mutex_lock(&dev->lock);
	osd__dev_refresh_token(dev);
	changed = dev->token_len != req->signed_token_len ||
		  memcmp(dev->token, req->signed_token, dev->token_len) != 0;
	pthread_mutex_unlock(&dev->lock);
	return changed;
}

/*
 * A UNIT ATTENTION that reports an event and is cleared by being reported
 * (SAM-5 5.14: the target reports it instead of executing the command, on
 * each I_T nexus the event concerns; SPC-4 4.5.6 and Annex D for the codes):
 *   28h/xx  NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED
 *   29h/xx  POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (a new I_T nexus,
 *           a new iSCSI session: 29h/00h-29h/07h)
 *   2Ah/xx  PARAMETERS CHANGED (mode, log, reservations, priority, ...)
 *   2Fh/xx  COMMANDS CLEARED BY ANOTHER INITIATOR / BY POWER LOSS / BY DEVICE
 *   3Fh/xx  TARGET OPERATING CONDITIONS HAVE CHANGED (microcode, INQUIRY
 *           data, REPORTED LUNS DATA CHANGED)
 * The command was not executed, so sending it again is safe even for
 * commands that may not run twice (CREATE, APPEND).
 */
#define UA_RESEND_MAX 3

static int unit_attention(const osd_req *req)
{
	unsigned asc = req->sense.asc >> 8;

	if (req->result != -EAGAIN || req->sense.key != OSD_SK_UNIT_ATTENTION)
		return 0;
	return asc == 0x28 || asc == 0x29 || asc == 0x2A || asc == 0x2F || asc == 0x3F;
}

/*
 * Count a reset the unit attention reports (dev->lock held): 29h/00h-04h,
 * a power on, bus reset, bus device reset function or device internal reset
 * (spc4r37 §4.5.6, Annex D), may have emptied the device's volatile cache.
 * Not before the target has answered a command of this device: the report
 * of the new I_T nexus every first session gets comes before anything ran
 * (and a device opened on a session another one used first never gets it).
 * 29h/05h-06h (transceiver mode) and 29h/07h (I_T NEXUS LOSS: a reconnect
 * to a target that kept running) say nothing of the cache.
 */
static void count_reset(osd_dev *dev, uint16_t asc)
{
	if (asc >> 8 == 0x29 && (asc & 0xFF) <= 0x04 && dev->answered)
		dev->resets++;
}

/*
 * Sign a refused request again (fresh nonce, current token) and send it once
 * more when its refusal shows it was not executed: a stale nonce, or a CAPKEY
 * signature made for a session that has since been replaced; or, up to
 * UA_RESEND_MAX times per session, a UNIT ATTENTION reported instead of
 * executing it.
 * The unit attention is recorded as the device's error (osd_dev_error()).
 * Returns 1 if it is in flight again.
 */
static int resend_refused(osd_req *req)
{
	osd_dev *dev = req->dev;
	int rc;

	if (!req->has_sense)
		return 0;
	if (unit_attention(req)) {
		/* The bound is per session: after a reconnect (a new channel
		 * token) the new I_T nexus reports its own unit attention, a new
		 * event. Reconnects are bounded by the transport (failover_ms). */
		pthread_mutex_lock(&dev->lock);
		count_reset(dev, req->sense.asc);
		osd__dev_refresh_token(dev);
		if (dev->token_len != req->ua_token_len ||
		    memcmp(dev->token, req->ua_token, dev->token_len) != 0) {
			memcpy(req->ua_token, dev->token, dev->token_len);
			req->ua_token_len = dev->token_len;
			req->ua_resends = 0;
		}
		pthread_mutex_unlock(&dev->lock);
		if (req->ua_resends >= UA_RESEND_MAX)
			return 0; /* finish with the last unit attention */
		req->ua_resends++;
		osd__dev_set_error(dev,
				   "%s of 0x%llx/0x%llx: unit attention %02Xh/%02Xh (%s), "
				   "sent again (%u of %u)",
				   osd_action_name(req->cdb.action),
				   (unsigned long long)req->cdb.obj.partition,
				   (unsigned long long)req->cdb.obj.id, req->sense.asc >> 8,
				   req->sense.asc & 0xFF, osd_asc_string(req->sense.asc),
				   req->ua_resends, UA_RESEND_MAX);
	} else {
		if (req->resent || req->result != -EACCES ||
		    !(stale_nonce(req) || session_changed(req)))
			return 0;
		req->resent = 1;
	}
	pthread_mutex_lock(&dev->lock);
	/* A caller that gave up meanwhile has its buffers back: no resend. */
	rc = req->give_up ? -ECANCELED : sign(req);
	if (rc == 0) {
		req->completing = 0; /* in flight again: give_up() may cancel it */
		pthread_cond_broadcast(&dev->cond);
	}
	pthread_mutex_unlock(&dev->lock);
	if (rc)
		return 0; /* finish with the refusal */
	req->xfer.status = 0;
	req->xfer.sense_len = 0;
	req->xfer.in_xferred = 0;
	req->has_sense = 0;
	req->errmsg = NULL;
	rc = dev->tp.ops->submit(dev->tp.impl, &req->xfer);
	if (rc < 0)
		osd__req_complete(req, rc);
	return rc == 0;
}

static void xfer_done(struct osd_xfer *xfer, int err)
{
	osd_req *req = xfer->priv;
	osd_dev *dev = req->dev;
	osd_req_cb cb;
	void *data;
	int detached, result, gave_up;

	pthread_mutex_lock(&dev->lock);
	req->completing = 1; /* give_up() waits for us from here on */
	gave_up = req->give_up;
	pthread_mutex_unlock(&dev->lock);
	if (gave_up) {
		/* The caller stopped waiting and may have freed its buffers: take
		 * nothing from the answer (ALLDATA would read the data-in). */
		osd__req_complete(req, gave_up);
	} else {
		osd__req_complete(req, err);
		if (resend_refused(req))
			return;
	}
	pthread_mutex_lock(&dev->lock);
	if (!err && !gave_up)
		dev->answered = 1; /* from now on a reset may lose what it did */
	req->state = OSD__REQ_DONE;
	req->completing = 0;
	dev->inflight--;
	detached = req->detached;
	cb = req->cb;
	data = req->cb_data;
	result = req->result;
	pthread_cond_broadcast(&dev->cond);
	pthread_mutex_unlock(&dev->lock);
	/* A synchronous waiter may free the request as soon as the lock drops:
	 * touch nothing of it below unless it is ours to finish. */
	if (detached)
		osd__req_destroy(req);
	else if (cb)
		cb(req, result, data);
}

/* Under CMDRSP/ALLDATA a request that retrieves attributes anyway also asks
 * for the response ICV (current-command attribute 1): no extra permission,
 * and a GOOD answer becomes verifiable. */
static int want_response_icv(osd_req *req)
{
	if (req->cdb.cap.security_method < OSD_SEC_CMDRSP || req->page_mode || !req->gets.n)
		return 0;
	return osd__req_add_cc_get(req, OSD_ATTR_CC_RESPONSE_ICV);
}

int osd__req_submit(osd_req *req, osd_req_cb cb, void *data)
{
	osd_dev *dev = req->dev;
	const char *what = "credential";
	int rc;

	if (req->state != OSD__REQ_BUILDING)
		return -EBUSY;
	rc = osd__cred_prepare(req);
	if (rc == 0)
		rc = want_response_icv(req);
	if (rc == 0) {
		what = "layout";
		rc = osd__req_layout(req);
	}
	if (rc == 0) {
		/* Sign and go in flight under one hold of the lock. */
		what = "signature";
		pthread_mutex_lock(&dev->lock);
		rc = sign(req);
		if (rc == 0) {
			req->xfer.done = xfer_done;
			req->xfer.priv = req;
			req->cb = cb;
			req->cb_data = data;
			req->state = OSD__REQ_INFLIGHT;
			dev->inflight++;
		}
		pthread_mutex_unlock(&dev->lock);
	}
	if (rc) {
		/* Keep a credential message already written; otherwise say what failed. */
		if (!req->errmsg)
			osd__errmsg(req, "%s of 0x%llx/0x%llx: cannot build the request (%s: %s)",
				    osd_action_name(req->cdb.action),
				    (unsigned long long)req->cdb.obj.partition,
				    (unsigned long long)req->cdb.obj.id, what, strerror(-rc));
		osd__dev_copy_req_error(dev, req);
		osd__keyref_release(dev, req->key);
		req->key = NULL;
		return rc;
	}
	rc = dev->tp.ops->submit(dev->tp.impl, &req->xfer);
	if (rc < 0) {
		/* done() never runs: undo and let the caller retry or free. */
		pthread_mutex_lock(&dev->lock);
		req->state = OSD__REQ_BUILDING;
		dev->inflight--;
		pthread_mutex_unlock(&dev->lock);
		osd__keyref_release(dev, req->key);
		req->key = NULL;
		osd__dev_set_error(dev, "%s: the transport refused the command: %s",
				   osd_action_name(req->cdb.action), strerror(-rc));
		return rc;
	}
	/* From here the request may already be complete and even freed by cb. */
	return 0;
}

int osd_req_submit(osd_req *req, osd_req_cb cb, void *private_data)
{
	if (!req || !cb)
		return -EINVAL;
	return osd__req_submit(req, cb, private_data);
}

uint64_t osd__mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void deadline_ts(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/*
 * The caller stops waiting for @p req (its timeout, or osd_req_free() in
 * flight), with @p why (-ETIMEDOUT, -ECANCELED) as the result. Asks the
 * transport to cancel the exchange: once the request is DONE the transport
 * no longer holds its buffers (include/osd/sys/transport.h). An answer
 * being taken in on another thread is waited for; one the transport has
 * handed to a completion run that has not started yet is retried. Called
 * and returns with dev->lock held; the request is DONE on return unless
 * the transport cannot cancel (-ENOTSUP, or its own error).
 */
static int give_up(osd_req *req, int why)
{
	osd_dev *dev = req->dev;
	int rc = 0;

	req->give_up = why;
	while (req->state == OSD__REQ_INFLIGHT) {
		struct timespec ts;

		if (req->completing) {
			pthread_cond_wait(&dev->cond, &dev->lock);
			continue;
		}
		pthread_mutex_unlock(&dev->lock);
		rc = osd__dev_cancel(dev, &req->xfer);
		pthread_mutex_lock(&dev->lock);
		if (rc == 0 || req->state != OSD__REQ_INFLIGHT || req->completing)
			continue;
		if (rc != -ENOENT)
			return rc;
		/* The transport has let go of it but xfer_done() has not begun:
		 * it is about to, on another thread. */
		deadline_ts(&ts, 1);
		pthread_cond_timedwait(&dev->cond, &dev->lock, &ts);
	}
	return 0;
}

/* One step of waiting: poll the transport's fd, service a fd-less transport
 * that has a service hook, or sleep on the completion condition. One thread
 * at a time polls the fd: a second one would sleep in poll() until its slice
 * ends when the first one's service reads and completes its request. */
void osd__dev_wait_step(osd_dev *dev, unsigned slice_ms)
{
	const struct osd_transport_ops *ops = dev->tp.ops;
	int fd = ops->get_fd ? ops->get_fd(dev->tp.impl) : -1;

	if (fd >= 0 && !dev->polling) {
		struct pollfd pfd = { .fd = fd, .events = (short)osd_dev_which_events(dev) };

		dev->polling = 1;
		pthread_mutex_unlock(&dev->lock);
		if (poll(&pfd, 1, (int)slice_ms) < 0)
			pfd.revents = 0;
		if (ops->service)
			ops->service(dev->tp.impl, pfd.revents);
		pthread_mutex_lock(&dev->lock);
		dev->polling = 0;
		pthread_cond_broadcast(&dev->cond); /* another waiter may poll now */
		return;
	}
	if (fd < 0 && ops->service) {
		pthread_mutex_unlock(&dev->lock);
		ops->service(dev->tp.impl, 0);
		pthread_mutex_lock(&dev->lock);
		if (slice_ms > SERVICE_SLICE_MS)
			slice_ms = SERVICE_SLICE_MS;
	}
	struct timespec ts;

	deadline_ts(&ts, slice_ms);
	pthread_cond_timedwait(&dev->cond, &dev->lock, &ts);
}

int osd__req_wait(osd_req *req, unsigned timeout_ms)
{
	osd_dev *dev = req->dev;
	uint64_t end = timeout_ms ? osd__mono_ms() + timeout_ms : 0;
	int rc = 0;

	pthread_mutex_lock(&dev->lock);
	while (req->state != OSD__REQ_DONE) {
		unsigned slice = WAIT_SLICE_MS;

		if (end) {
			uint64_t now = osd__mono_ms();

			if (now >= end) {
				rc = -ETIMEDOUT;
				break;
			}
			if (end - now < slice)
				slice = (unsigned)(end - now);
		}
		osd__dev_wait_step(dev, slice);
	}
	/* Timed out: the request completes with -ETIMEDOUT and its buffers are
	 * the caller's again, unless the transport cannot cancel it; then it
	 * stays in flight (osd_req_free() detaches it). An answer that came
	 * in meanwhile wins. */
	if (rc && give_up(req, -ETIMEDOUT) == 0 && req->result != -ETIMEDOUT)
		rc = 0;
	pthread_mutex_unlock(&dev->lock);
	if (rc) {
		if (req->state == OSD__REQ_DONE)
			osd__errmsg(req, "%s: no answer within %u ms",
				    osd_action_name(req->cdb.action), timeout_ms);
		osd__dev_set_error(dev, "%s: no answer within %u ms", osd_action_name(req->cdb.action),
				   timeout_ms);
		return rc;
	}
	return req->result;
}

int osd_req_execute(osd_req *req)
{
	unsigned timeout;
	int rc;

	if (!req)
		return -EINVAL;
	timeout = req->cdb.action == OSD_ACT_FORMAT_OSD ? req->dev->opts.format_timeout_ms
							: req->dev->opts.timeout_ms;
	rc = osd__req_submit(req, NULL, NULL);
	if (rc)
		return rc;
	rc = osd__req_wait(req, timeout);
	if (rc < 0 && req->state == OSD__REQ_DONE)
		osd__dev_copy_req_error(req->dev, req);
	return rc;
}

void osd_req_free(osd_req *req)
{
	osd_dev *dev;

	if (!req)
		return;
	dev = req->dev;
	pthread_mutex_lock(&dev->lock);
	if (req->state == OSD__REQ_INFLIGHT) {
		req->cb = NULL;
		give_up(req, -ECANCELED);
	}
	if (req->state == OSD__REQ_INFLIGHT) {
		/* The transport cannot cancel: it keeps the exchange, and its
		 * completion releases the request. */
		req->detached = 1;
		pthread_mutex_unlock(&dev->lock);
		return;
	}
	/* Drop the key under this hold of the lock rather than take it again. */
	osd__keyref_put_locked(req->key);
	req->key = NULL;
	pthread_mutex_unlock(&dev->lock);
	osd__req_destroy(req);
}
