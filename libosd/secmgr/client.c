/*
 * libosd as a client of a security manager (docs/security-manager.md
 * section 4): one TLS connection, a cache of the credentials the device
 * asked for, and a refresher thread that renews each one before it expires,
 * so that the device's requests wait on the manager only for an object's
 * first credential.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "proto/byteorder.h"
#include "request/private.h"
#include "tls.h"

#define TICK_MAX_MS 1000   /* the refresher looks at the cache at least this often */
#define RETRY_MS 1000      /* after a failed renewal, try again this much later */

struct entry {
	struct osd_cred_request key; /* version, obj, is_collection, permissions, method */
	struct osd_credential cred;
	uint64_t issued;             /* OSD clock when received */
	uint64_t last_used;
	uint64_t retry_at;           /* no renewal before this */
	int refused;                 /* the manager refused the last renewal */
};

struct osd_secmgr {
	pthread_mutex_t lock;        /* cache, stats, err */
	pthread_mutex_t io;          /* the connection */
	pthread_cond_t wake;
	pthread_t thread;
	int running, stop;
	struct osd__sectls tls;
	unsigned lifetime_ms, refresh_ms, cache_max;
	uint32_t next_id;
	char err[256];
	osd_dev *dev;
	int64_t clock_offset;        /* OSD clock - osd_now_ms(), learned from the device */
	uint8_t system_id[OSD_SYSTEM_ID_LEN];
	struct entry *ent;
	unsigned n;
	struct osd_secmgr_stats st;
};

static void set_err(osd_secmgr *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_err(osd_secmgr *m, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&m->lock);
	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&m->lock);
}

int osd_secmgr_open(osd_secmgr **out, const struct osd_secmgr_options *opts, char *err,
		    size_t errlen)
{
	osd_secmgr *m;
	int rc;

	if (!out || !opts || opts->version != OSD_SECMGR_OPTIONS_VERSION) {
		if (err && errlen)
			snprintf(err, errlen, "bad security manager options");
		return -EINVAL;
	}
	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->io, NULL);
	pthread_cond_init(&m->wake, NULL);
	m->lifetime_ms = opts->lifetime_ms;
	m->refresh_ms = opts->refresh_ms;
	m->cache_max = opts->cache_max ? opts->cache_max : 1;
	m->ent = calloc(m->cache_max, sizeof(*m->ent));
	rc = m->ent ? osd__sectls_init(&m->tls, opts, err, errlen) : -ENOMEM;
	if (rc == 0)
		rc = osd__sectls_connect(&m->tls, err, errlen);
	if (rc < 0) {
		osd_secmgr_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

void osd_secmgr_close(osd_secmgr *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_cond_broadcast(&m->wake);
	pthread_mutex_unlock(&m->lock);
	if (m->running)
		pthread_join(m->thread, NULL);
	osd__sectls_free(&m->tls);
	if (m->ent)
		memset(m->ent, 0, m->cache_max * sizeof(*m->ent)); /* capability keys */
	free(m->ent);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->io);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

const char *osd_secmgr_error(osd_secmgr *m)
{
	return m ? m->err : "no security manager";
}

void osd_secmgr_get_stats(osd_secmgr *m, struct osd_secmgr_stats *st)
{
	pthread_mutex_lock(&m->lock);
	*st = m->st;
	pthread_mutex_unlock(&m->lock);
}

/* Sends @p req and reads the answer, on the current connection. */
static int exchange(osd_secmgr *m, const struct osd_secmsg *req, struct osd_secmsg *ans,
		    char *why, size_t whylen)
{
	uint8_t buf[OSD_SECMSG_MAX_LEN];
	int n = osd_secmsg_encode(req, buf, sizeof(buf)), rc;

	if (n < 0)
		return n;
	if ((rc = osd__sectls_write(&m->tls, buf, (size_t)n)) < 0 ||
	    (rc = osd__sectls_read(&m->tls, buf, OSD_SECMSG_HDR_LEN)) < 0)
		return rc;
	n = osd_secmsg_decode(buf, OSD_SECMSG_HDR_LEN, ans, why, whylen);
	if (n < 0)
		return -EPROTO;
	n = (int)osd__get_be32(buf + 8); /* the header decoded: it fits the type */
	if ((rc = osd__sectls_read(&m->tls, buf + OSD_SECMSG_HDR_LEN, (size_t)n)) < 0)
		return rc;
	if (osd_secmsg_decode(buf, OSD_SECMSG_HDR_LEN + (size_t)n, ans, why, whylen) <= 0)
		return -EPROTO;
	if (ans->id != req->id || ans->type == OSD_SECMSG_REQUEST) {
		snprintf(why, whylen, "the answer does not match the request");
		return -EPROTO;
	}
	return 0;
}

/* A connection error is retried once on a new connection: asking again for
 * a credential is harmless. */
static int round_trip(osd_secmgr *m, const struct osd_secmsg *req, struct osd_secmsg *ans)
{
	char why[256] = "";
	int rc, tries = 0;

	pthread_mutex_lock(&m->io);
	do {
		if (!m->tls.ssl && (rc = osd__sectls_connect(&m->tls, why, sizeof(why))) < 0)
			continue;
		rc = exchange(m, req, ans, why, sizeof(why));
		if (rc < 0) {
			osd__sectls_disconnect(&m->tls);
			if (!*why)
				snprintf(why, sizeof(why), "the connection to the security manager "
					 "failed: %s", strerror(-rc));
		}
	} while (rc < 0 && rc != -EPROTO && ++tries < 2);
	pthread_mutex_unlock(&m->io);
	if (rc < 0)
		set_err(m, "%s", why);
	return rc;
}

int osd_secmgr_request(osd_secmgr *m, const uint8_t system_id[OSD_SYSTEM_ID_LEN],
		       const struct osd_cred_request *want, unsigned lifetime_ms,
		       struct osd_credential *out)
{
	struct osd_secmsg q, a;
	int rc;

	if (!m || !system_id || !want || !out)
		return -EINVAL;
	memset(&q, 0, sizeof(q));
	q.type = OSD_SECMSG_REQUEST;
	memcpy(q.system_id, system_id, OSD_SYSTEM_ID_LEN);
	q.req = *want;
	q.lifetime_ms = lifetime_ms;
	pthread_mutex_lock(&m->lock);
	q.id = ++m->next_id;
	m->st.round_trips++;
	pthread_mutex_unlock(&m->lock);
	rc = round_trip(m, &q, &a);
	if (rc < 0)
		return rc;
	if (a.type == OSD_SECMSG_REFUSE) {
		pthread_mutex_lock(&m->lock);
		m->st.refusals++;
		pthread_mutex_unlock(&m->lock);
		set_err(m, "the security manager refused: %s", a.text);
		return a.reason == OSD_SECREF_DENIED ? -EACCES :
		       a.reason == OSD_SECREF_UNKNOWN_SYSTEM || a.reason == OSD_SECREF_NO_KEY ?
		       -ENOKEY : a.reason == OSD_SECREF_BAD_REQUEST ? -EINVAL : -EAGAIN;
	}
	if (memcmp(a.cred.system_id, system_id, OSD_SYSTEM_ID_LEN) ||
	    a.cred.version != want->version) {
		set_err(m, "the security manager granted a credential for another OSD or version");
		return -EPROTO;
	}
	*out = a.cred;
	memset(&a, 0, sizeof(a));
	return 0;
}

/* ---- the cache and the device's credential source ---- */

/* The OSD clock as the device tracks it (expirations are OSD clock times);
 * the refresher must not touch the device, which may close first. */
static uint64_t clock_now(const osd_secmgr *m)
{
	return (uint64_t)((int64_t)osd_now_ms() + m->clock_offset);
}

static int same_key(const struct osd_cred_request *a, const struct osd_cred_request *b)
{
	return a->version == b->version && a->obj.partition == b->obj.partition &&
	       a->obj.id == b->obj.id && !a->is_collection == !b->is_collection &&
	       a->permissions == b->permissions && a->method == b->method;
}

static struct entry *find(osd_secmgr *m, const struct osd_cred_request *key)
{
	for (unsigned i = 0; i < m->n; i++)
		if (same_key(&m->ent[i].key, key))
			return &m->ent[i];
	return NULL;
}

static uint64_t lifetime(const struct entry *e)
{
	uint64_t exp = e->cred.cap.expiration;

	return exp > e->issued ? exp - e->issued : 0;
}

/* Renew this long before expiry: the configured margin, at most half the life. */
static uint64_t ahead(const osd_secmgr *m, const struct entry *e)
{
	uint64_t half = lifetime(e) / 2;

	return m->refresh_ms < half ? m->refresh_ms : half;
}

/* Still valid for a command about to be sent (a tenth of its life in hand). */
static int valid(const struct entry *e, uint64_t now)
{
	uint64_t exp = e->cred.cap.expiration, guard = lifetime(e) / 10;

	if (guard > 1000)
		guard = 1000;
	return exp == 0 || exp > now + guard;
}

/* Stores a credential (evicting the least recently used entry when full). */
static void store(osd_secmgr *m, const struct osd_cred_request *key,
		  const struct osd_credential *cred, uint64_t now)
{
	struct entry *e = find(m, key);

	if (!e && m->n < m->cache_max)
		e = &m->ent[m->n++];
	if (!e) {
		e = &m->ent[0];
		for (unsigned i = 1; i < m->n; i++)
			if (m->ent[i].last_used < e->last_used)
				e = &m->ent[i];
	}
	memset(e, 0, sizeof(*e));
	e->key = *key;
	e->cred = *cred;
	e->issued = e->last_used = now;
	pthread_cond_broadcast(&m->wake);
}

static void cache_key(struct osd_cred_request *k, const struct osd_cred_request *want)
{
	memset(k, 0, sizeof(*k));
	k->version = want->version;
	k->obj = want->obj;
	k->is_collection = want->is_collection;
	k->permissions = want->permissions;
	k->method = want->method;
}

static int source(const struct osd_cred_request *want, struct osd_credential *out, void *payload)
{
	osd_secmgr *m = payload;
	struct osd_cred_request k;
	struct entry *e;
	uint64_t now;
	int rc;

	pthread_mutex_lock(&m->lock);
	m->clock_offset = (int64_t)osd__dev_clock(m->dev) - (int64_t)osd_now_ms();
	now = clock_now(m);
	pthread_mutex_unlock(&m->lock);
	cache_key(&k, want);
	pthread_mutex_lock(&m->lock);
	e = find(m, &k);
	if (e && valid(e, now)) {
		*out = e->cred;
		e->last_used = now;
		m->st.cache_hits++;
		pthread_mutex_unlock(&m->lock);
		return 0;
	}
	pthread_mutex_unlock(&m->lock);
	rc = osd_secmgr_request(m, m->system_id, &k, m->lifetime_ms, out);
	if (rc == 0) {
		pthread_mutex_lock(&m->lock);
		store(m, &k, out, now);
		pthread_mutex_unlock(&m->lock);
	}
	return rc;
}

/* One pass of the refresher: renews what is due, returns ms to the next due. */
static uint64_t refresh_due(osd_secmgr *m)
{
	uint64_t next = TICK_MAX_MS;

	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < m->n && !m->stop; i++) {
		struct entry *e = &m->ent[i];
		struct osd_cred_request k = e->key;
		struct osd_credential c;
		uint64_t now = clock_now(m), due, exp = e->cred.cap.expiration;
		int rc;

		if (exp == 0 || e->refused)
			continue;
		if (exp <= now || e->last_used + 2 * lifetime(e) < now) {
			/* nobody used it for two lifetimes: stop renewing it */
			memset(e, 0, sizeof(*e));
			*e = m->ent[--m->n];
			memset(&m->ent[m->n], 0, sizeof(*e));
			i--;
			continue;
		}
		due = exp - ahead(m, e);
		if (due > now || e->retry_at > now) {
			due = due > now ? due : e->retry_at;
			if (due - now < next)
				next = due - now;
			continue;
		}
		pthread_mutex_unlock(&m->lock);
		rc = osd_secmgr_request(m, m->system_id, &k, m->lifetime_ms, &c);
		pthread_mutex_lock(&m->lock);
		e = find(m, &k);
		if (!e)
			continue;
		if (rc == 0) {
			uint64_t used = e->last_used;

			store(m, &k, &c, now);
			e->last_used = used;
			m->st.refreshes++;
		} else {
			e->refused = rc == -EACCES; /* kept until it expires: the bound is its life */
			e->retry_at = now + RETRY_MS;
		}
		memset(&c, 0, sizeof(c));
		i = (unsigned)-1; /* the entries may have moved: scan again */
	}
	pthread_mutex_unlock(&m->lock);
	return next ? next : 1;
}

static void *refresher(void *arg)
{
	osd_secmgr *m = arg;

	for (;;) {
		uint64_t wait = refresh_due(m);
		struct timespec ts;

		pthread_mutex_lock(&m->lock);
		if (m->stop) {
			pthread_mutex_unlock(&m->lock);
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(wait / 1000);
		ts.tv_nsec += (long)(wait % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&m->wake, &m->lock, &ts);
		pthread_mutex_unlock(&m->lock);
	}
	return NULL;
}

int osd_secmgr_attach(osd_secmgr *m, osd_dev *dev)
{
	if (!m || !dev)
		return -EINVAL;
	if (m->dev)
		return -EBUSY;
	if (osd_dev_system_id(dev, m->system_id) < 0) {
		set_err(m, "the device does not know its OSD system id");
		return -ENODATA;
	}
	m->dev = dev;
	m->clock_offset = (int64_t)osd__dev_clock(dev) - (int64_t)osd_now_ms();
	if (pthread_create(&m->thread, NULL, refresher, m) != 0) {
		m->dev = NULL;
		return -ENOMEM;
	}
	m->running = 1;
	osd_dev_set_cred_source(dev, source, m);
	return 0;
}
