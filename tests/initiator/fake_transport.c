#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include "fake_transport.h"

static size_t gather(const struct iovec *iov, int cnt, uint8_t *dst, size_t cap)
{
	size_t n = 0;

	for (int i = 0; i < cnt; i++) {
		size_t take = iov[i].iov_len;

		if (n + take > cap)
			take = cap - n;
		memcpy(dst + n, iov[i].iov_base, take);
		n += take;
	}
	return n;
}

static void scatter(struct osd_xfer *x, const uint8_t *src, size_t len)
{
	size_t off = 0;

	for (int i = 0; i < x->in_iovcnt && off < len; i++) {
		size_t take = x->in_iov[i].iov_len;

		if (take > len - off)
			take = len - off;
		memcpy(x->in_iov[i].iov_base, src + off, take);
		off += take;
	}
	x->in_xferred = off;
}

static void answer(struct fake *f, struct osd_xfer *x, unsigned idx)
{
	struct fake_answer *a = idx < f->nanswers ? &f->answers[idx] : NULL;

	if (!a) {
		x->status = OSD_STATUS_GOOD;
		x->in_xferred = 0;
		x->done(x, 0);
		return;
	}
	if (a->transport_err) {
		x->done(x, a->transport_err);
		return;
	}
	scatter(x, a->data_in, a->data_in_len < x->in_len ? a->data_in_len : x->in_len);
	x->in_xferred += a->overreport;
	x->status = a->status;
	x->sense_len = (uint8_t)(a->sense_len_report ? a->sense_len_report : a->sense_len);
	memcpy(x->sense, a->sense, a->sense_len);
	x->done(x, 0);
}

static int fake_submit(void *impl, struct osd_xfer *x)
{
	struct fake *f = impl;
	struct fake_sent *s;
	unsigned idx;

	if (f->refuse)
		return f->refuse;
	if (f->nsent >= FAKE_MAX)
		return -12;
	idx = f->nsent++;
	s = &f->sent[idx];
	memcpy(s->cdb, x->cdb, x->cdb_len);
	s->cdb_len = x->cdb_len;
	s->out_len = gather(x->out_iov, x->out_iovcnt, s->out, sizeof(s->out));
	s->in_len = x->in_len;
	s->xfer_size = x->size;
	s->resend = OSD_XFER_HAS(x, resend) ? x->resend : -1;
	if (f->deferred) {
		f->pending[f->npending++] = x;
		return 0;
	}
	answer(f, x, idx);
	return 0;
}

static int fake_service(void *impl, int revents)
{
	struct fake *f = impl;
	unsigned base = f->nsent - f->npending;
	unsigned n = f->npending;

	(void)revents;
	if (f->hold)
		return 0;
	f->npending = 0;
	for (unsigned i = 0; i < n; i++)
		if (f->pending[i])
			answer(f, f->pending[i], base + i);
	return 0;
}

/* Takes a pending exchange back: it is never answered, done(-ECANCELED)
 * runs now. */
static int fake_cancel(void *impl, struct osd_xfer *x)
{
	struct fake *f = impl;

	if (!f->cancellable)
		return -ENOTSUP; /* the request layer keeps it in flight */
	for (unsigned i = 0; i < f->npending; i++) {
		if (f->pending[i] != x)
			continue;
		/* keep the order of the others: answers go by submission index */
		f->pending[i] = NULL;
		f->cancels++;
		x->done(x, -ECANCELED);
		return 0;
	}
	return -ENOENT;
}

static void fake_destroy(void *impl)
{
	((struct fake *)impl)->destroyed = 1;
}

static size_t fake_token(void *impl, uint8_t *buf, size_t len)
{
	struct fake *f = impl;

	if (f->token_len > len)
		return 0;
	memcpy(buf, f->token, f->token_len);
	return f->token_len;
}

static const struct osd_transport_ops fake_ops = {
	.version = OSD_TRANSPORT_VERSION,
	.submit = fake_submit,
	.service = fake_service,
	.security_token = fake_token,
	.destroy = fake_destroy,
	.cancel = fake_cancel,
};

void fake_transport(struct fake *f, struct osd_transport *tp)
{
	tp->ops = &fake_ops;
	tp->impl = f;
}

struct fake_answer *fake_next_answer(struct fake *f)
{
	struct fake_answer *a = &f->answers[f->nanswers++];

	memset(a, 0, sizeof(*a));
	a->status = OSD_STATUS_GOOD;
	return a;
}

void fake_answer_put(struct fake_answer *a, size_t off, const void *p, size_t len)
{
	memcpy(a->data_in + off, p, len);
	if (off + len > a->data_in_len)
		a->data_in_len = off + len;
}
