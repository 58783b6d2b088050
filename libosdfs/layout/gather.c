/*
 * Write gathering for parity layouts. A write that covers whole rows
 * computes P/Q from its own bytes; one that ends inside a row must first read
 * that row's other units (or old data and parity) and wait for them. osdfs
 * writes what it is given (1 MiB from osd-bench, 128 KiB to 1 MiB from
 * osdfs-mount), rarely a multiple of a row (Wd x su: 192 KiB for RAID 5 over
 * 4 devices at 64 KiB units), so a sequential writer paid a read round trip
 * per write. Here the partial last row of a write that extends the file is
 * held back in memory and completed by the next write when it continues
 * where this one ended; the two then go out as whole rows.
 *
 * What is held: at most one partial row per file, for up to GATHER_SLOTS
 * files; changed only under the object's exclusive lock. It is written by
 * the next write that does not continue it, a truncate, flush() of the
 * object or of everything (fsync, unmount), closing the backend, and by a
 * thread once it has waited its age (GATHER_AGE_MS). Reads lay it over what
 * the devices return, and size() counts it. Until written it is in memory only, as a
 * page cache's dirty page: the dirty-region log records it when it is
 * written, so what an fsync acknowledged is on the devices and logged.
 *
 * Space: a device that fills up must fail the write() that filled it, not a
 * later fsync. As ext4 stops delaying allocation when free blocks run low,
 * nothing is held back unless every device reported at least GATHER_ROOM
 * bytes free at the last look, taken at most GATHER_LOOK_MS ago and before
 * at most GATHER_LOOK_BYTES of writes through here: what this handle wrote
 * since, plus all it can hold (GATHER_SLOTS rows), stays well under it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layout/layout_int.h"

#define GATHER_SLOTS 16
#define GATHER_ROW_MAX (4u << 20) /* larger rows are written as they come */
#define GATHER_AGE_MS 200 /* OSDFS_LAYOUT_GATHER_AGE_MS overrides, 1 to 600000 */
#define GATHER_ROOM (256ull << 20)
#define GATHER_LOOK_MS 1000
#define GATHER_LOOK_BYTES (64u << 20)

struct gent {
	uint64_t oid;  /* 0: free */
	uint64_t off;  /* file offset of buf[0] */
	size_t len;    /* bytes held, all in the row of off */
	size_t cap;
	uint8_t *buf;
	uint64_t since; /* CLOCK_MONOTONIC ns when first held */
};

struct lay_gather {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* the thread waits here (CLOCK_MONOTONIC) */
	pthread_t thread;
	int started, stop;
	uint64_t age_ns;  /* how long a row is held at most */
	struct gent e[GATHER_SLOTS];
	uint64_t looked;  /* when the devices' free space was last asked */
	uint64_t since_look; /* bytes written through here since */
	int roomy;        /* every device had GATHER_ROOM free then */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The age from the environment: a loaded machine (or a test that counts
 * device commands) can keep rows longer than the default. */
static uint64_t age_from_env(void)
{
	const char *v = getenv("OSDFS_LAYOUT_GATHER_AGE_MS");
	char *end;
	unsigned long ms = v ? strtoul(v, &end, 10) : 0;

	if (!v || !*v || *end || ms < 1 || ms > 600000)
		ms = GATHER_AGE_MS;
	return (uint64_t)ms * 1000000u;
}

static struct gent *find(struct lay_gather *g, uint64_t oid)
{
	for (unsigned i = 0; i < GATHER_SLOTS; i++)
		if (g->e[i].oid == oid && oid)
			return &g->e[i];
	return NULL;
}

/* On unless @p off (the configuration's no_write_gathering) or
 * OSDFS_LAYOUT_GATHER=0 in the environment (diagnosis: the same run with
 * and without, no rebuild). */
int lay_gather_new(struct lay *L, int off)
{
	const char *env = getenv("OSDFS_LAYOUT_GATHER");
	struct lay_gather *g;
	pthread_condattr_t ca;

	if (off || (env && strcmp(env, "0") == 0))
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->age_ns = age_from_env();
	pthread_mutex_init(&g->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	L->gather = g;
	return 0;
}

static void drop(struct lay_gather *g, struct gent *e)
{
	pthread_mutex_lock(&g->mu);
	e->oid = 0;
	e->len = 0;
	pthread_mutex_unlock(&g->mu);
}

/* Write entry @p e of a file locked exclusively; freed once written. An
 * object removed meanwhile loses its bytes with it. */
static int write_entry(struct lay *L, struct lay_info *fi, struct gent *e)
{
	int rc = lay_file_write_held(L, fi, e->off, e->buf, e->len);

	if (rc == 0 || rc == -ENOENT)
		drop(L->gather, e);
	return rc == -ENOENT ? 0 : rc;
}

int lay_gather_flush_locked(struct lay *L, struct lay_info *fi)
{
	struct lay_gather *g = L->gather;
	struct gent *e;

	if (!g)
		return 0;
	pthread_mutex_lock(&g->mu);
	e = find(g, fi->oid);
	pthread_mutex_unlock(&g->mu);
	return e ? write_entry(L, fi, e) : 0;
}

static int flush_one(struct lay *L, uint64_t oid)
{
	struct lay_info fi;
	int rc = lay_obj_enter(L, oid, 1, &fi);

	if (rc < 0) { /* gone (removed) or unreadable: nothing to write it to */
		struct gent *e;

		pthread_mutex_lock(&L->gather->mu);
		e = find(L->gather, oid);
		if (e && rc == -ENOENT)
			e->oid = 0;
		pthread_mutex_unlock(&L->gather->mu);
		return rc == -ENOENT ? 0 : rc;
	}
	rc = fi.file ? lay_gather_flush_locked(L, &fi) : 0;
	return lay_obj_leave(L, oid, rc);
}

int lay_gather_flush(struct lay *L, uint64_t oid)
{
	struct lay_gather *g = L->gather;
	uint64_t ids[GATHER_SLOTS];
	unsigned n = 0;
	int rc = 0;

	if (!g)
		return 0;
	pthread_mutex_lock(&g->mu);
	for (unsigned i = 0; i < GATHER_SLOTS; i++)
		if (g->e[i].oid && (oid == 0 || g->e[i].oid == oid))
			ids[n++] = g->e[i].oid;
	pthread_mutex_unlock(&g->mu);
	for (unsigned i = 0; i < n; i++) {
		int r = flush_one(L, ids[i]);

		rc = rc ? rc : r;
	}
	return rc;
}

/* The thread: writes what has been held its age, so that bytes of a
 * file nobody writes further (closed, or paused) reach the devices soon. */
static void *ager(void *arg)
{
	struct lay *L = arg;
	struct lay_gather *g = L->gather;

	pthread_mutex_lock(&g->mu);
	while (!g->stop) {
		uint64_t t = now_ns(), first = UINT64_MAX, oid = 0;
		struct timespec ts;

		for (unsigned i = 0; i < GATHER_SLOTS; i++) {
			uint64_t due = g->e[i].since + g->age_ns;

			if (!g->e[i].oid)
				continue;
			if (due <= t && !oid)
				oid = g->e[i].oid;
			first = due < first ? due : first;
		}
		if (oid) {
			struct gent *e;
			int rc;

			pthread_mutex_unlock(&g->mu);
			rc = flush_one(L, oid);
			pthread_mutex_lock(&g->mu);
			e = find(g, oid);
			if (e && rc < 0) /* kept for the next flush(), which reports it */
				e->since = now_ns();
			continue;
		}
		if (first == UINT64_MAX) {
			pthread_cond_wait(&g->cv, &g->mu);
			continue;
		}
		ts.tv_sec = (time_t)(first / 1000000000u);
		ts.tv_nsec = (long)(first % 1000000000u);
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

void lay_gather_free(struct lay *L)
{
	struct lay_gather *g = L->gather;

	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	if (g->started)
		pthread_join(g->thread, NULL);
	lay_gather_flush(L, 0); /* a failure here has nobody left to tell */
	for (unsigned i = 0; i < GATHER_SLOTS; i++)
		free(g->e[i].buf);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
	L->gather = NULL;
}

/* Bytes a device can still take: the least of its capacity left (if it has
 * one) and the free space under it (if it says). */
static uint64_t dev_room(const struct osdfs_backend_stat *st)
{
	uint64_t r = UINT64_MAX;

	if (st->capacity)
		r = st->capacity > st->used ? st->capacity - st->used : 0;
	if (st->device_free && st->device_free < r)
		r = st->device_free;
	return r;
}

/* Whether every up device has GATHER_ROOM free (asked again when stale). */
static int roomy(struct lay *L, size_t more)
{
	struct lay_gather *g = L->gather;
	uint64_t t = now_ns();
	int ok = 1;

	pthread_mutex_lock(&g->mu);
	g->since_look += more;
	if (g->looked && t - g->looked < (uint64_t)GATHER_LOOK_MS * 1000000u &&
	    g->since_look < GATHER_LOOK_BYTES) {
		ok = g->roomy;
		pthread_mutex_unlock(&g->mu);
		return ok;
	}
	pthread_mutex_unlock(&g->mu);
	for (unsigned s = 0; s < L->table.ndev && ok; s++) {
		struct osdfs_backend_stat st = { 0 };
		const struct osdfs_backend_ops *ops;
		void *impl;

		if (!lay_writable(L, s))
			continue;
		pthread_mutex_lock(&L->mu);
		ops = L->dev[s].ops;
		impl = L->dev[s].impl;
		pthread_mutex_unlock(&L->mu);
		ok = ops && ops->statfs(impl, &st) == 0 && dev_room(&st) >= GATHER_ROOM;
	}
	pthread_mutex_lock(&g->mu);
	g->looked = t;
	g->since_look = 0;
	g->roomy = ok;
	pthread_mutex_unlock(&g->mu);
	return ok;
}

/* A free entry with room for a row (NULL: write without holding back). */
static struct gent *take(struct lay *L, uint64_t oid, size_t rowlen)
{
	struct lay_gather *g = L->gather;
	struct gent *e = NULL;

	if (!roomy(L, 0))
		return NULL;
	pthread_mutex_lock(&g->mu);
	if (!g->started && !g->stop)
		g->started = pthread_create(&g->thread, NULL, ager, L) == 0;
	for (unsigned i = 0; g->started && i < GATHER_SLOTS && !e; i++)
		if (!g->e[i].oid)
			e = &g->e[i];
	if (e && e->cap < rowlen) {
		uint8_t *b = realloc(e->buf, rowlen);

		if (b) {
			e->buf = b;
			e->cap = rowlen;
		}
	}
	if (e && e->cap >= rowlen) {
		/* stamped now: the thread may look before hold() (the first
		 * take() starts it), and an old stamp made the row due at once */
		e->oid = oid;
		e->len = 0;
		e->since = now_ns();
	} else {
		e = NULL;
	}
	pthread_mutex_unlock(&g->mu);
	return e;
}

/* Hold file bytes [at, end) in @p e (whose own bytes end at @p at when it
 * is continued), and wake the thread for their age. */
static void hold(struct lay_gather *g, struct gent *e, int cont, uint64_t at, const uint8_t *p,
		 size_t n)
{
	pthread_mutex_lock(&g->mu);
	if (cont) {
		memcpy(e->buf + e->len, p, n);
		e->len += n;
	} else {
		e->off = at;
		memcpy(e->buf, p, n);
		e->len = n;
		e->since = now_ns();
	}
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

int lay_gather_write(struct lay *L, struct lay_info *fi, const struct lay_map *lm, uint64_t off,
		     const uint8_t *buf, size_t len, const struct osdfs_attr *attrs, int nattrs)
{
	struct lay_gather *g = L->gather;
	uint64_t rowlen = lm->Wd * lm->su, end = off + len, start = off, ts = end, size;
	struct lay_wsrc src = { off, UINT64_MAX, buf, NULL };
	struct gent *e = NULL;
	int rc = 0;

	if (!g || rowlen > GATHER_ROW_MAX)
		return lay_write_range(L, fi, lm, &src, off, len, attrs, nattrs);
	pthread_mutex_lock(&g->mu);
	e = find(g, fi->oid);
	g->since_look += len;
	pthread_mutex_unlock(&g->mu);
	if (e && e->off + e->len != off) { /* not a continuation: write it first */
		rc = write_entry(L, fi, e);
		e = NULL;
	}
	if (rc < 0)
		return rc;
	start = e ? e->off : off;
	size = e && e->off + e->len > fi->size ? e->off + e->len : fi->size;
	if (end % rowlen && end >= size && (e || (e = take(L, fi->oid, (size_t)rowlen)))) {
		ts = end - end % rowlen; /* the partial last row is held back */
		ts = ts < start ? start : ts;
	}
	if (ts > start) {
		if (e && e->len) {
			/* complete the held row in its buffer: no unit straddles split */
			uint64_t rend = (e->off / rowlen + 1) * rowlen, hend = ts < rend ? ts : rend;

			memcpy(e->buf + e->len, buf, (size_t)(hend - off));
			src = (struct lay_wsrc){ e->off, hend, e->buf, buf + (hend - off) };
		}
		rc = lay_write_range(L, fi, lm, &src, start, (size_t)(ts - start), attrs, nattrs);
		if (rc < 0)
			return rc; /* what e held is still held: its length is unchanged */
	}
	if (ts < end) {
		int cont = ts == start && e->len;

		/* continued: the new bytes go after e's; else e holds [ts, end) */
		hold(g, e, cont, ts, buf + (cont ? 0 : ts - off), (size_t)(end - (cont ? off : ts)));
		if (ts == start && nattrs) /* nothing went out to carry them */
			rc = lay_file_setattrs(L, fi, attrs, nattrs);
	} else if (e) {
		drop(g, e);
	}
	return rc;
}

void lay_gather_drop(struct lay *L, uint64_t oid)
{
	struct lay_gather *g = L->gather;
	struct gent *e;

	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	e = find(g, oid);
	if (e)
		e->oid = 0;
	pthread_mutex_unlock(&g->mu);
}

uint64_t lay_gather_size(struct lay *L, uint64_t oid, uint64_t size)
{
	struct lay_gather *g = L->gather;
	struct gent *e;

	if (!g)
		return size;
	pthread_mutex_lock(&g->mu);
	e = find(g, oid);
	if (e && e->off + e->len > size)
		size = e->off + e->len;
	pthread_mutex_unlock(&g->mu);
	return size;
}

void lay_gather_overlay(struct lay *L, uint64_t oid, uint64_t off, uint8_t *buf, size_t len)
{
	struct lay_gather *g = L->gather;
	struct gent *e;

	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	e = find(g, oid);
	if (e) {
		uint64_t s = e->off > off ? e->off : off;
		uint64_t t = e->off + e->len < off + len ? e->off + e->len : off + len;

		if (s < t)
			memcpy(buf + (s - off), e->buf + (s - e->off), (size_t)(t - s));
	}
	pthread_mutex_unlock(&g->mu);
}
