/* osd_dev: opening (with version detection), closing, errors, clock and the
 * event-loop pass-through to the transport. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <osd/attributes.h>
#include <osd/keyring.h>
#include "proto/byteorder.h"
#include "request/private.h"

#define INQUIRY_LEN 96
#define INQUIRY_VD_FIRST 58   /* version descriptors: 8 x 2 bytes at 58-73 */
#define INQUIRY_VD_COUNT 8
#define PERIPHERAL_TYPE_OSD 0x11

void osd__dev_set_error(osd_dev *dev, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&dev->lock);
	va_start(ap, fmt);
	vsnprintf(dev->err, sizeof(dev->err), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&dev->lock);
}

void osd__dev_copy_req_error(osd_dev *dev, const osd_req *req)
{
	if (req->errmsg)
		osd__dev_set_error(dev, "%s", req->errmsg);
}

uint64_t osd__dev_clock(const osd_dev *dev)
{
	return (uint64_t)((int64_t)osd_now_ms() + dev->clock_offset);
}

/* The calling thread's copy of the last device message it asked for: the
 * shared buffer is only read under the device lock, so a reader never sees
 * it half rewritten by another thread. */
static __thread char err_copy[OSD__ERR_LEN];

size_t osd_dev_error_copy(osd_dev *dev, char *buf, size_t len)
{
	size_t n;

	if (!dev)
		return (size_t)snprintf(buf, len, "no device");
	pthread_mutex_lock(&dev->lock);
	n = (size_t)snprintf(buf, len, "%s", dev->err);
	pthread_mutex_unlock(&dev->lock);
	return n;
}

const char *osd_dev_error(osd_dev *dev)
{
	osd_dev_error_copy(dev, err_copy, sizeof(err_copy));
	return err_copy;
}

enum osd_version osd_dev_version(osd_dev *dev)
{
	return dev->version;
}

uint64_t osd_dev_reset_count(osd_dev *dev)
{
	uint64_t n;

	if (!dev)
		return 0;
	pthread_mutex_lock(&dev->lock);
	n = dev->resets;
	pthread_mutex_unlock(&dev->lock);
	return n;
}

/* ---- a bare SCSI exchange, for INQUIRY ---- */

/* Heap-allocated so that a transport answering after we gave up writes into
 * memory that is still ours: the completion frees an abandoned exchange. */
struct raw_xchg {
	struct osd_xfer x;
	uint8_t cdb[6];
	uint8_t data[INQUIRY_LEN];
	struct iovec iov;
	osd_dev *dev;
	int done, err, abandoned;
};

static void raw_done(struct osd_xfer *x, int err)
{
	struct raw_xchg *r = x->priv;
	osd_dev *dev = r->dev;
	int abandoned;

	pthread_mutex_lock(&dev->lock);
	abandoned = r->abandoned;
	r->done = 1;
	r->err = err;
	pthread_cond_broadcast(&dev->cond);
	pthread_mutex_unlock(&dev->lock);
	if (abandoned)
		free(r);
}

/* Sends INQUIRY and reads the version descriptors.
 * Returns OSD_V1/OSD_V2 when they say, 0 when they do not, <0 on failure. */
static int inquiry_version(osd_dev *dev)
{
	struct raw_xchg *r = calloc(1, sizeof(*r));
	uint64_t end = osd__mono_ms() + dev->opts.timeout_ms;
	int rc, v = 0;

	if (!r)
		return -ENOMEM;
	r->dev = dev;
	osd_xfer_init(&r->x);
	r->x.resend = OSD_XFER_RESEND_ALWAYS; /* INQUIRY only reads (SPC-4 INQUIRY; docs/protocol.md §12.1) */
	r->cdb[0] = 0x12;
	r->cdb[4] = INQUIRY_LEN;
	r->iov.iov_base = r->data;
	r->iov.iov_len = sizeof(r->data);
	r->x.cdb = r->cdb;
	r->x.cdb_len = sizeof(r->cdb);
	r->x.in_iov = &r->iov;
	r->x.in_iovcnt = 1;
	r->x.in_len = sizeof(r->data);
	r->x.done = raw_done;
	r->x.priv = r;
	rc = dev->tp.ops->submit(dev->tp.impl, &r->x);
	if (rc) {
		free(r);
		return rc;
	}
	pthread_mutex_lock(&dev->lock);
	/* by the clock: each PDU the target sends (a ping...) ends a step early */
	while (!r->done && (dev->opts.timeout_ms == 0 || osd__mono_ms() < end))
		osd__dev_wait_step(dev, 100);
	if (!r->done) {
		/* Take it back from the transport (never sent again); a transport
		 * that cannot do that frees it when it completes. */
		pthread_mutex_unlock(&dev->lock);
		osd__dev_cancel(dev, &r->x);
		pthread_mutex_lock(&dev->lock);
		if (!r->done) {
			r->abandoned = 1;
			pthread_mutex_unlock(&dev->lock);
			return -ETIMEDOUT;
		}
		pthread_mutex_unlock(&dev->lock);
		free(r);
		return -ETIMEDOUT;
	}
	pthread_mutex_unlock(&dev->lock);
	rc = r->err;
	/* an answer that broke the protocol, or no connection: decisive */
	if (rc == -EPROTO || rc == -ENOTCONN || rc == -ENOBUFS)
		v = rc;
	if (rc == 0 && r->x.status == OSD_STATUS_GOOD && r->x.in_xferred >= INQUIRY_VD_FIRST) {
		int v1 = 0, v2 = 0;

		for (int i = 0; i < INQUIRY_VD_COUNT; i++) {
			size_t at = INQUIRY_VD_FIRST + 2u * (size_t)i;
			uint16_t vd;

			if (at + 2 > r->x.in_xferred)
				break;
			vd = osd__get_be16(r->data + at);
			v2 |= vd >= 0x0440 && vd <= 0x045F;
			v1 |= vd >= 0x0340 && vd <= 0x035F;
		}
		/* OSD-2 wins when a target claims both */
		v = v2 ? OSD_V2 : v1 ? OSD_V1 : 0;
		if ((r->data[0] & 0x1F) != PERIPHERAL_TYPE_OSD)
			v = -ENODEV;
	}
	free(r);
	/* A transport failure on INQUIRY is not decisive: the probe decides. */
	return v;
}

/*
 * Whether a CHECK CONDITION refuses the CDB's format rather than the request:
 * ILLEGAL REQUEST with INVALID COMMAND OPERATION CODE (or no additional sense,
 * or a service action pointed at: osd_sense_errno() says -EOPNOTSUPP), or
 * INVALID FIELD IN CDB without a field pointer or pointing into bytes 0-15,
 * whose layout differs between the versions (docs/protocol.md §2: byte 7
 * ADDITIONAL CDB LENGTH, 200 - 8 in OSD-1 and 236 - 8 in OSD-2).
 */
static int cdb_format_refused(const osd_req *req, int rc)
{
	const struct osd_sense *s = &req->sense;

	if (rc == -EOPNOTSUPP)
		return 1;
	return rc == -EINVAL && req->has_sense && s->key == OSD_SK_ILLEGAL_REQUEST &&
	       s->asc == OSD_ASC_INVALID_FIELD_IN_CDB &&
	       (!s->has_field || (s->field_in_cdb && s->field_pointer < 16));
}

/* GET ATTRIBUTES of the root information in @p version. Returns 1 if the
 * target understood the command (whatever its answer), 0 if it rejected it
 * as an unknown operation or an invalid CDB format (or could not carry it),
 * <0 if we could not ask. Also learns the system id and the OSD clock, and
 * on a refusal keeps its sense in @p why (may be NULL). */
static int probe_version(osd_dev *dev, enum osd_version version, struct osd_sense *why)
{
	const uint32_t ri = OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION;
	struct osd_obj_id root = { 0, 0 };
	struct osd_attr a;
	osd_req *req;
	int rc;

	dev->version = version;
	rc = osd_req_get_attributes(&req, dev, &root);
	if (rc == 0)
		rc = osd_req_add_get_attr(req, ri, OSD_ATTR_RI_CLOCK);
	if (rc == 0)
		rc = osd_req_add_get_attr(req, ri, OSD_ATTR_RI_SYSTEM_ID);
	if (rc) {
		osd_req_free(req);
		return rc;
	}
	rc = osd_req_execute(req);
	if (req->state == OSD__REQ_BUILDING) {
		osd_req_free(req); /* never sent: credential or transport refusal */
		return rc;
	}
	/* No answer, or one that broke the protocol (the transport's error
	 * says how), or no connection left: the other version would fare no
	 * better. A Reject (-EIO) may refuse just this CDB's length. */
	if (rc == -ETIMEDOUT || rc == -EPROTO || rc == -ENOTCONN || rc == -ENOBUFS) {
		osd_req_free(req);
		return rc;
	}
	/* A malformed answer (bad_answer) is still an answer: the target
	 * parsed the CDB, so it settles the version like a GOOD one. */
	if (cdb_format_refused(req, rc) || (rc < 0 && !req->has_sense && !req->bad_answer)) {
		if (why)
			*why = req->sense;
		osd_req_free(req);
		return 0;
	}
	if (rc == 0) {
		if (osd_req_find_attr(req, ri, OSD_ATTR_RI_SYSTEM_ID, &a) == 0 &&
		    a.length == OSD_SYSTEM_ID_LEN) {
			memcpy(dev->system_id, a.value, OSD_SYSTEM_ID_LEN);
			dev->have_system_id = 1;
		}
		if (osd_req_find_attr(req, ri, OSD_ATTR_RI_CLOCK, &a) == 0 && a.length == 6)
			dev->clock_offset = (int64_t)osd__get_be48(a.value) - (int64_t)osd_now_ms();
	}
	osd_req_free(req);
	return 1;
}

static int detect_version(osd_dev *dev)
{
	struct osd_sense why2 = { 0 };
	int v = inquiry_version(dev), rc;

	if (v == -ENODEV) {
		osd__dev_set_error(dev, "the logical unit is not an OSD (INQUIRY device type)");
		return v;
	}
	if (v == -ETIMEDOUT) {
		osd__dev_set_error(dev, "no answer to INQUIRY");
		return v;
	}
	if (v < 0) {
		osd__dev_set_error(dev, "INQUIRY: %s", strerror(-v));
		return v;
	}
	if (v == OSD_V1 || v == OSD_V2) {
		/* Asking for the identity (system id, clock) is a bonus that may
		 * fail, e.g. without a credential yet; but a target that refuses
		 * the CDB format its INQUIRY claims gets the other version. */
		struct osd_sense why = { 0 };
		enum osd_version other = v == OSD_V1 ? OSD_V2 : OSD_V1;

		if (probe_version(dev, (enum osd_version)v, &why) == 0 &&
		    probe_version(dev, other, NULL) == 1) {
			snprintf(dev->version_note, sizeof(dev->version_note),
				 "INQUIRY claims OSD-%d but the target refused an OSD-%d CDB "
				 "(%02Xh/%02Xh %s): speaking OSD-%d",
				 v == OSD_V1 ? 1 : 2, v == OSD_V1 ? 1 : 2, why.asc >> 8,
				 why.asc & 0xFF, osd_asc_string(why.asc), other == OSD_V1 ? 1 : 2);
			dev->version = other;
			return 0;
		}
		dev->version = (enum osd_version)v;
		return 0;
	}
	rc = probe_version(dev, OSD_V2, &why2);
	if (rc == 0)
		rc = probe_version(dev, OSD_V1, NULL);
	if (rc == 0) {
		char sense[160] = "no sense data";

		if (why2.key)
			osd_sense_describe(&why2, sense, sizeof(sense));
		osd__dev_set_error(dev, "the target answered neither an OSD-2 nor an OSD-1 "
				   "GET ATTRIBUTES (OSD-2: %s)", sense);
		return -ENODEV;
	}
	if (rc < 0)
		osd__dev_set_error(dev, "version probe: %s%s", strerror(-rc),
				   rc == -ENOKEY ? " (set a credential source in the options or "
						   "choose the OSD version)" : "");
	return rc < 0 ? rc : 0;
}

int osd__dev_cancel(osd_dev *dev, struct osd_xfer *xfer)
{
	const struct osd_transport_ops *ops = dev->tp.ops;

	if (ops->version < 2 || !ops->cancel)
		return -ENOTSUP;
	return ops->cancel(dev->tp.impl, xfer);
}

/* The channel's security token can change under the device (an iSCSI
 * reconnect opens a new session), so CAPKEY signing reads it afresh. */
void osd__dev_refresh_token(osd_dev *dev)
{
	const struct osd_transport *tp = &dev->tp;

	dev->token_len = 0;
	if (tp->ops->security_token)
		dev->token_len = tp->ops->security_token(tp->impl, dev->token, sizeof(dev->token));
	if (dev->token_len > sizeof(dev->token))
		dev->token_len = 0;
}

int osd_dev_open(osd_dev **out, struct osd_transport *tp, const struct osd_dev_options *opts)
{
	struct osd_dev_options dflt = OSD_DEV_OPTIONS_INIT;
	osd_dev *dev;
	int rc;

	if (!out || !tp || !tp->ops || !tp->ops->submit)
		return -EINVAL;
	*out = NULL;
	if (!opts)
		opts = &dflt;
	if (opts->version < 1 || opts->version > OSD_DEV_OPTIONS_VERSION ||
	    (opts->osd_version != OSD_VERSION_AUTO && opts->osd_version != OSD_VERSION_1 &&
	     opts->osd_version != OSD_VERSION_2) ||
	    (unsigned)opts->security > OSD_SEC_ALLDATA ||
	    tp->ops->version < 1 || tp->ops->version > OSD_TRANSPORT_VERSION)
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->tp = *tp;
	dev->opts = *opts;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_cond_init(&dev->cond, NULL);
	osd__cred_cache_init(&dev->cache);
	dev->cache.max = opts->cred_cache_max;
	osd__dev_refresh_token(dev);
	if (opts->osd_version == OSD_VERSION_AUTO) {
		rc = detect_version(dev);
		if (rc) {
			if (opts->version >= 2 && opts->error && opts->error_size)
				snprintf(opts->error, opts->error_size, "%s", dev->err);
			/* the caller keeps the transport */
			osd__cred_cache_destroy(&dev->cache);
			pthread_cond_destroy(&dev->cond);
			pthread_mutex_destroy(&dev->lock);
			free(dev);
			return rc;
		}
	} else {
		dev->version = (enum osd_version)opts->osd_version;
	}
	/* What the open found out about the version is the only message left. */
	snprintf(dev->err, sizeof(dev->err), "%s", dev->version_note);
	*out = dev;
	return 0;
}

void osd_dev_close(osd_dev *dev)
{
	if (!dev)
		return;
	pthread_mutex_lock(&dev->lock);
	/* Requests still in flight complete into detached or callback state;
	 * drive an event-driven transport until they are done. */
	while (dev->inflight)
		osd__dev_wait_step(dev, 100);
	pthread_mutex_unlock(&dev->lock);
	if (dev->tp.ops->destroy)
		dev->tp.ops->destroy(dev->tp.impl);
	osd__cred_cache_destroy(&dev->cache);
	osd_keyring_free(dev->keyring);
	pthread_cond_destroy(&dev->cond);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

int osd_dev_system_id(osd_dev *dev, uint8_t id[OSD_SYSTEM_ID_LEN])
{
	struct osd_obj_id root = { 0, 0 };
	size_t got = 0;
	int rc;

	if (!dev || !id)
		return -EINVAL;
	if (!dev->have_system_id) {
		rc = osd_get_attr(dev, &root, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION,
				  OSD_ATTR_RI_SYSTEM_ID, dev->system_id, OSD_SYSTEM_ID_LEN, &got);
		if (rc || got != OSD_SYSTEM_ID_LEN)
			return -ENODATA;
		dev->have_system_id = 1;
	}
	memcpy(id, dev->system_id, OSD_SYSTEM_ID_LEN);
	return 0;
}

const struct osd_transport *osd_dev_transport(osd_dev *dev)
{
	return dev ? &dev->tp : NULL;
}

int osd_dev_get_fd(osd_dev *dev)
{
	return dev->tp.ops->get_fd ? dev->tp.ops->get_fd(dev->tp.impl) : -1;
}

int osd_dev_which_events(osd_dev *dev)
{
	return dev->tp.ops->which_events ? dev->tp.ops->which_events(dev->tp.impl) : 0;
}

int osd_dev_service(osd_dev *dev, int revents)
{
	return dev->tp.ops->service ? dev->tp.ops->service(dev->tp.impl, revents) : 0;
}

unsigned osd_dev_queue_length(osd_dev *dev)
{
	unsigned n;

	pthread_mutex_lock(&dev->lock);
	n = dev->inflight;
	pthread_mutex_unlock(&dev->lock);
	return n;
}
