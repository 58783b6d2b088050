/*
 * Device health: per-slot counters of medium errors and repairs, and the
 * newest events (device down or back, repairs, unrecoverable reads,
 * mismatches), kept as a record on the superblock of every device
 * (attribute 0x10004/4, docs/layout.md) so any later open reports them, and
 * passed to the event handler as they happen.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "checksum/crc32c.h"
#include "lebytes.h"
#include "layout/layout_int.h"

#define BAD(...) lay_errf(err, errlen, -EINVAL, __VA_ARGS__)

size_t lay_health_len(const struct lay_health *h)
{
	return LAY_HEALTH_HDR + (size_t)h->ndev * LAY_HEALTH_SLOT +
	       (size_t)h->nev * LAY_HEALTH_EVENT + 4;
}

static void encode_event(uint8_t *o, const struct osdfs_layout_event *e)
{
	size_t rl = strnlen(e->reason, LAY_REASON_MAX - 1);

	memset(o, 0, LAY_HEALTH_EVENT);
	osdfs__put_le64(o, (uint64_t)e->time);
	osdfs__put_le64(o + 8, e->oid);
	osdfs__put_le64(o + 16, e->offset);
	osdfs__put_le16(o + 24, e->slot < 0 ? 0xFFFFu : (uint16_t)e->slot);
	o[26] = (uint8_t)e->kind;
	o[27] = (uint8_t)e->severity;
	osdfs__put_le16(o + 28, (uint16_t)rl);
	memcpy(o + 32, e->reason, rl);
}

void lay_health_encode(uint8_t *out, const struct lay_health *h)
{
	size_t o = LAY_HEALTH_HDR;

	memset(out, 0, LAY_HEALTH_HDR);
	memcpy(out, LAY_HEALTH_MAGIC, 8);
	osdfs__put_le16(out + 8, LAY_HEALTH_VERSION);
	osdfs__put_le16(out + 10, LAY_HEALTH_HDR);
	osdfs__put_le32(out + 12, h->ndev);
	osdfs__put_le64(out + 16, h->generation);
	osdfs__put_le32(out + 24, h->nev);
	for (unsigned s = 0; s < h->ndev; s++, o += LAY_HEALTH_SLOT) {
		osdfs__put_le64(out + o, h->medium[s]);
		osdfs__put_le64(out + o + 8, h->repairs[s]);
		osdfs__put_le64(out + o + 16, h->unrepaired[s]);
		osdfs__put_le64(out + o + 24, 0);
	}
	for (unsigned i = 0; i < h->nev; i++, o += LAY_HEALTH_EVENT)
		encode_event(out + o, &h->ev[i]);
	osdfs__put_le32(out + o, osd__crc32c(0, out, o));
}

static int decode_event(struct osdfs_layout_event *e, const uint8_t *in, unsigned ndev)
{
	uint16_t slot = osdfs__get_le16(in + 24);
	size_t rl = osdfs__get_le16(in + 28);

	memset(e, 0, sizeof(*e));
	if (in[26] < OSDFS_LAYOUT_EV_DOWN || in[26] > OSDFS_LAYOUT_EV_RESYNC_FINISHED || in[27] > 7 ||
	    (slot != 0xFFFFu && slot >= ndev) || rl >= LAY_REASON_MAX || in[30] || in[31] ||
	    memchr(in + 32, 0, rl))
		return -EINVAL;
	for (size_t i = 32 + rl; i < LAY_HEALTH_EVENT; i++)
		if (in[i])
			return -EINVAL;
	e->time = (int64_t)osdfs__get_le64(in);
	e->oid = osdfs__get_le64(in + 8);
	e->offset = osdfs__get_le64(in + 16);
	e->slot = slot == 0xFFFFu ? -1 : slot;
	e->kind = (enum osdfs_layout_event_kind)in[26];
	e->severity = in[27];
	memcpy(e->reason, in + 32, rl);
	return 0;
}

int lay_health_decode(struct lay_health *h, const uint8_t *in, size_t len, char *err,
		      size_t errlen)
{
	size_t o = LAY_HEALTH_HDR;

	memset(h, 0, sizeof(*h));
	if (len < LAY_HEALTH_HDR + 4)
		return BAD("health record: %zu bytes, too short", len);
	if (memcmp(in, LAY_HEALTH_MAGIC, 8) != 0)
		return BAD("health record: bad magic");
	if (osdfs__get_le16(in + 8) != LAY_HEALTH_VERSION)
		return BAD("health record: unknown version %u", osdfs__get_le16(in + 8));
	h->ndev = osdfs__get_le32(in + 12);
	h->nev = osdfs__get_le32(in + 24);
	if (osdfs__get_le16(in + 10) != LAY_HEALTH_HDR || h->ndev == 0 ||
	    h->ndev > OSDFS_LAYOUT_MAX_DEVICES || h->nev > LAY_HEALTH_EVENTS ||
	    osdfs__get_le32(in + 28) != 0)
		return BAD("health record: bad header");
	if (len != lay_health_len(h))
		return BAD("health record: %zu bytes for %u devices and %u events", len, h->ndev,
			   h->nev);
	if (osd__crc32c(0, in, len - 4) != osdfs__get_le32(in + len - 4))
		return BAD("health record: checksum mismatch");
	h->generation = osdfs__get_le64(in + 16);
	for (unsigned s = 0; s < h->ndev; s++, o += LAY_HEALTH_SLOT) {
		h->medium[s] = osdfs__get_le64(in + o);
		h->repairs[s] = osdfs__get_le64(in + o + 8);
		h->unrepaired[s] = osdfs__get_le64(in + o + 16);
		if (osdfs__get_le64(in + o + 24) != 0)
			return BAD("health record: slot %u: reserved field set", s);
	}
	for (unsigned i = 0; i < h->nev; i++, o += LAY_HEALTH_EVENT)
		if (decode_event(&h->ev[i], in + o, h->ndev) < 0)
			return BAD("health record: event %u is malformed", i);
	return 0;
}

static int severity_of(enum osdfs_layout_event_kind k)
{
	switch (k) {
	case OSDFS_LAYOUT_EV_UP: return LOG_NOTICE;
	case OSDFS_LAYOUT_EV_RESYNC_STARTED: return LOG_NOTICE;
	case OSDFS_LAYOUT_EV_RESYNC_FINISHED: return LOG_NOTICE;
	case OSDFS_LAYOUT_EV_RETURNED: return LOG_WARNING;
	case OSDFS_LAYOUT_EV_REPAIRED: return LOG_WARNING;
	case OSDFS_LAYOUT_EV_UNRECOVERABLE: return LOG_CRIT;
	default: return LOG_ERR;
	}
}

OSD_EXTERN const char *osdfs_layout_event_name(enum osdfs_layout_event_kind kind)
{
	static const char *const names[] = { "?", "down", "up", "repaired", "repair-failed",
					     "unrecoverable", "mismatch", "returned",
					     "resync-started", "resync-finished" };

	return kind >= OSDFS_LAYOUT_EV_DOWN && kind <= OSDFS_LAYOUT_EV_RESYNC_FINISHED
		       ? names[kind] : names[0];
}

/* Whether @p e says again what @p last said (same kind, device, object and
 * reason) within a minute. */
static int repeats(const struct osdfs_layout_event *last, const struct osdfs_layout_event *e)
{
	return last->kind == e->kind && last->slot == e->slot && last->oid == e->oid &&
	       last->offset == e->offset && e->time - last->time < 60 &&
	       e->time >= last->time && strcmp(last->reason, e->reason) == 0;
}

void lay_event(struct lay *L, enum osdfs_layout_event_kind kind, int slot, uint64_t oid,
	       uint64_t off, const char *fmt, ...)
{
	struct osdfs_layout_event e = { .time = (int64_t)time(NULL), .kind = kind,
					.severity = severity_of(kind), .slot = slot,
					.oid = oid, .offset = off };
	struct lay_health *h = &L->health;
	void (*fn)(const struct osdfs_layout_event *, void *);
	void *payload;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e.reason, sizeof(e.reason), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&L->mu);
	if (h->nev && repeats(&h->ev[h->nev - 1], &e)) {
		pthread_mutex_unlock(&L->mu);
		return; /* a read retried in a loop must not push every other event out */
	}
	if (h->nev == LAY_HEALTH_EVENTS)
		memmove(h->ev, h->ev + 1, (LAY_HEALTH_EVENTS - 1) * sizeof(h->ev[0]));
	else
		h->nev++;
	h->ev[h->nev - 1] = e;
	L->health_dirty = 1;
	fn = L->on_event;
	payload = L->on_event_payload;
	pthread_mutex_unlock(&L->mu);
	if (fn)
		fn(&e, payload);
}

void lay_repair_note(struct lay *L, unsigned s, uint64_t oid, uint64_t off, int rc,
		     const char *what)
{
	pthread_mutex_lock(&L->mu);
	if (rc == 0)
		L->dev[s].repairs++;
	else
		L->dev[s].unrepaired++;
	pthread_mutex_unlock(&L->mu);
	if (rc == 0)
		lay_event(L, OSDFS_LAYOUT_EV_REPAIRED, (int)s, oid, off,
			  "%s rewritten from redundancy", what);
	else
		lay_event(L, OSDFS_LAYOUT_EV_REPAIR_FAILED, (int)s, oid, off, "%s: %s", what,
			  rc == -EROFS ? "read-only, not rewritten" : strerror(-rc));
}

void lay_health_load(struct lay *L, const struct lay_health *h)
{
	L->health = *h;
	L->health.ndev = L->table.ndev;
	for (unsigned s = 0; s < L->table.ndev && s < h->ndev; s++) {
		L->dev[s].medium = h->medium[s];
		L->dev[s].repairs = h->repairs[s];
		L->dev[s].unrepaired = h->unrepaired[s];
	}
	for (unsigned i = 0; i < L->health.nev; i++)
		if (L->health.ev[i].slot >= (int)L->table.ndev)
			L->health.ev[i].slot = -1;
}

/* Encode the record under the mutex (counters from dev[]); NULL if clean. */
static uint8_t *snapshot(struct lay *L, uint32_t *len)
{
	uint8_t *buf = NULL;

	pthread_mutex_lock(&L->mu);
	if (L->health_dirty && L->formatted && !L->readonly) {
		struct lay_health *h = &L->health;

		h->ndev = L->table.ndev;
		for (unsigned s = 0; s < h->ndev; s++) {
			h->medium[s] = L->dev[s].medium;
			h->repairs[s] = L->dev[s].repairs;
			h->unrepaired[s] = L->dev[s].unrepaired;
		}
		h->generation++;
		*len = (uint32_t)lay_health_len(h);
		buf = malloc(*len);
		if (buf) {
			lay_health_encode(buf, h);
			L->health_dirty = 0;
		}
	}
	pthread_mutex_unlock(&L->mu);
	return buf;
}

void lay_health_sync(struct lay *L)
{
	struct osdfs_attr a = { OSDFS_LAYOUT_PAGE, LAY_ATTR_HEALTH, NULL, 0 };
	struct lay_copv v = { 0 };
	uint8_t *buf;
	if (!atomic_load_explicit(&L->health_dirty, memory_order_relaxed))
		return; /* the common case: a read that met no medium error */
	pthread_mutex_lock(&L->health_mu); /* stores in generation order */
	buf = snapshot(L, &a.len);
	a.value = buf;
	for (unsigned s = 0; buf && s < L->table.ndev; s++) {
		struct lay_cop *c;

		if (!lay_readable(L, s))
			continue;
		c = lay_copv_add(&v, LAY_SETATTR, s, OSDFS_LAYOUT_TABLE_OID);
		if (!c)
			break;
		c->attrs = &a;
		c->nattrs = 1;
	}
	if (v.n)
		lay_copv_run(L, &v);
	lay_copv_free(&v);
	free(buf);
	pthread_mutex_unlock(&L->health_mu);
}

OSD_EXTERN int osdfs_layout_events(const osdfs_backend *be, struct osdfs_layout_event *out,
				   size_t max)
{
	struct lay *L = lay_of(be);
	size_t n;

	if (!L || (max && !out))
		return -EINVAL;
	pthread_mutex_lock(&L->mu);
	n = L->health.nev < max ? L->health.nev : max;
	memcpy(out, L->health.ev + (L->health.nev - n), n * sizeof(*out));
	pthread_mutex_unlock(&L->mu);
	return (int)n;
}

OSD_EXTERN int osdfs_layout_set_event_handler(osdfs_backend *be,
					      void (*fn)(const struct osdfs_layout_event *ev,
							 void *payload),
					      void *payload)
{
	struct lay *L = lay_of(be);

	if (!L)
		return -EINVAL;
	pthread_mutex_lock(&L->mu);
	L->on_event = fn;
	L->on_event_payload = payload;
	pthread_mutex_unlock(&L->mu);
	return 0;
}
