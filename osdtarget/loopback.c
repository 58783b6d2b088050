/* In-process loopback transport: submit() runs the command in the calling thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>

#include "target_internal.h"

#define LOOPBACK_TOKEN_LEN 16

struct loopback {
	osd_target *tgt;
	uint8_t token[LOOPBACK_TOKEN_LEN]; /* this channel's security token (CAPKEY) */
};

static int lb_submit(void *impl, struct osd_xfer *xfer)
{
	struct loopback *lb = impl;
	int rc;

	if (!xfer || !xfer->done || !OSD_XFER_SIZE_OK(xfer))
		return -EINVAL;
	rc = osd_target_execute(lb->tgt, xfer, lb->token, sizeof(lb->token));
	if (rc < 0)
		return rc;
	xfer->done(xfer, 0);
	return 0;
}

static size_t lb_security_token(void *impl, uint8_t *buf, size_t len)
{
	struct loopback *lb = impl;

	if (buf)
		memcpy(buf, lb->token, len < sizeof(lb->token) ? len : sizeof(lb->token));
	return sizeof(lb->token);
}

static int lb_get_fd(void *impl)
{
	(void)impl;
	return -1;
}

static void lb_destroy(void *impl)
{
	struct loopback *lb = impl;

	if (lb)
		memset(lb->token, 0, sizeof(lb->token));
	free(lb);
}

static const struct osd_transport_ops loopback_ops = {
	.version = OSD_TRANSPORT_VERSION,
	.submit = lb_submit,
	.get_fd = lb_get_fd,
	.which_events = NULL,
	.service = NULL,
	.security_token = lb_security_token,
	.destroy = lb_destroy,
};

int osd_target_loopback(osd_target *tgt, struct osd_transport *out)
{
	struct loopback *lb;

	if (!tgt || !out)
		return -EINVAL;
	lb = calloc(1, sizeof(*lb));
	if (!lb)
		return -ENOMEM;
	if (RAND_bytes(lb->token, sizeof(lb->token)) != 1) {
		free(lb);
		return osd__target_seterr(tgt, -EIO, "no randomness for the loopback token");
	}
	lb->tgt = tgt;
	out->ops = &loopback_ops;
	out->impl = lb;
	return 0;
}
