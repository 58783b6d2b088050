/* See test_rel_load_client.h. Every random draw happens whether or not a
 * device is attached, so a replay reaches the same model as the run did. */
#include "test_rel_load_client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REKEY_TRIES 3                 /* a rotation costs one retry; allow a spare */
#define VERIFY_TAIL 4096u             /* read this far past an object's end */
#define OWN_ID_BASE 0x100000ull       /* own ids: OWN_ID_BASE * (cid + 1) + n */

enum load_kind { K_CREATE, K_REMOVE, K_WRITE, K_READ, K_SET_ATTR, K_GET_ATTR, K_FLUSH };

/* One command to build (again, after a rekey). */
struct load_cmd {
	enum load_kind kind;
	struct osd_obj_id obj;
	uint64_t off;
	struct iovec iov[4];
	int iovcnt;
	uint32_t number;           /* attribute number for K_*_ATTR */
	const uint8_t *value;      /* K_SET_ATTR */
};

uint64_t load_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int load_issue(const struct osd_cred_request *want, struct osd_credential *out, void *payload)
{
	struct load_keys *k = payload;
	int rc;

	pthread_rwlock_rdlock(&k->lock);
	rc = osd_cred_issue(k->iss, want, out);
	pthread_rwlock_unlock(&k->lock);
	return rc;
}

/* ---- randomness ---- */

static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t draw(uint64_t *state, uint64_t n)
{
	return n ? mix(state) % n : 0;
}

/* A draw that shapes the model (writes, ids, attributes). */
static uint64_t rnd_below(struct load_client *c, uint64_t n)
{
	return draw(&c->rng, n);
}

/* Pseudo-random bytes from one draw of the client's generator. */
static void fill(struct load_client *c, uint8_t *p, size_t n)
{
	uint64_t s = mix(&c->rng), v;

	for (size_t i = 0; i < n; i += 8) {
		v = mix(&s);
		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

/* Mostly small, some medium, a few multi-MiB lengths, never 0. */
static uint64_t pick_len(struct load_client *c, uint64_t max)
{
	uint64_t r = rnd_below(c, 100), len;

	if (r < 70)
		len = 1 + rnd_below(c, 64u << 10);
	else if (r < 95)
		len = (64u << 10) + rnd_below(c, 448u << 10);
	else
		len = (1u << 20) + rnd_below(c, 2u << 20);
	return len > max ? max : len;
}

/* Split [p, p+len) into 1..4 non-empty iovecs at random points. */
static int split(uint64_t *state, uint8_t *p, uint64_t len, struct iovec *iov)
{
	uint64_t n = 1 + draw(state, 4), left = len;
	int k;

	if (n > len)
		n = len;
	for (k = 0; k < (int)n - 1; k++) {
		uint64_t piece = 1 + draw(state, left - (n - 1 - (uint64_t)k));

		iov[k].iov_base = p;
		iov[k].iov_len = piece;
		p += piece;
		left -= piece;
	}
	iov[k].iov_base = p;
	iov[k].iov_len = left;
	return k + 1;
}

/* ---- commands ---- */

static void fail(struct load_client *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->st.errors++) {
		va_start(ap, fmt);
		vsnprintf(c->st.why, sizeof(c->st.why), fmt, ap);
		va_end(ap);
	}
}

static int cmd_build(osd_dev *dev, const struct load_cmd *m, osd_req **req)
{
	int rc;

	switch (m->kind) {
	case K_CREATE: return osd_req_create(req, dev, &m->obj, 1);
	case K_REMOVE: return osd_req_remove(req, dev, &m->obj);
	case K_WRITE: return osd_req_write(req, dev, &m->obj, m->off, m->iov, m->iovcnt);
	case K_READ: return osd_req_read(req, dev, &m->obj, m->off, m->iov, m->iovcnt);
	case K_FLUSH: return osd_req_flush(req, dev, &m->obj, OSD_FLUSH_DATA_AND_ATTRS, 0, 0);
	case K_SET_ATTR:
		rc = osd_req_set_attributes(req, dev, &m->obj);
		if (rc == 0)
			rc = osd_req_add_set_attr(*req, LOAD_APP_PAGE, m->number, m->value,
						  LOAD_ATTR_LEN);
		break;
	case K_GET_ATTR:
		rc = osd_req_get_attributes(req, dev, &m->obj);
		if (rc == 0)
			rc = osd_req_add_get_attr(*req, LOAD_APP_PAGE, m->number);
		break;
	default:
		return -EINVAL;
	}
	if (rc)
		osd_req_free(*req);
	return rc;
}

/* Build and execute @p m; a command refused for its credential (the key was
 * rotated) is rebuilt with a fresh one. Returns the completed request (the
 * caller frees it) or NULL after recording the error. */
static osd_req *cmd_exec(struct load_client *c, osd_dev *dev, const struct load_cmd *m,
			 int expect)
{
	osd_req *req;
	int rc;

	for (int attempt = 0;; attempt++) {
		rc = cmd_build(dev, m, &req);
		if (rc) {
			fail(c, "client %u: building command %d: %s", c->cid, m->kind, strerror(-rc));
			return NULL;
		}
		rc = osd_req_execute(req);
		if (rc != -EACCES || attempt == REKEY_TRIES)
			break;
		osd_req_free(req);
		osd_dev_forget_credentials(dev, NULL);
		c->st.rekeys++;
	}
	c->st.commands++;
	if (rc != expect) {
		fail(c, "client %u: %s (expected %d, got %d)", c->cid, osd_req_error(req),
		     expect, rc);
		osd_req_free(req);
		return NULL;
	}
	return req;
}

static void cmd_simple(struct load_client *c, osd_dev *dev, const struct load_cmd *m)
{
	osd_req_free(cmd_exec(c, dev, m, 0));
}

/* Read [off, off+len) of @p obj and compare with @p want (bytes past the
 * logical end, which @p have_len gives when known (else UINT64_MAX), must
 * read as zeros and end the READ short). */
static void read_check(struct load_client *c, osd_dev *dev, uint64_t obj_id, uint64_t off,
		       uint64_t len, const uint8_t *want, uint64_t want_n, uint64_t have_len)
{
	struct load_cmd m = { .kind = K_READ, .obj = { c->partition, obj_id }, .off = off };
	uint64_t expect_read = have_len == UINT64_MAX ? len
			       : off >= have_len ? 0 : (have_len - off < len ? have_len - off : len);
	osd_req *req;

	m.iovcnt = split(&c->read_rng, c->buf, len, m.iov);
	memset(c->buf, 0xA5, len); /* the target must overwrite every byte */
	req = cmd_exec(c, dev, &m, 0);
	if (!req)
		return;
	if (have_len != UINT64_MAX && osd_req_bytes_read(req) != expect_read)
		fail(c, "client %u: READ of 0x%llx at %llu: %llu bytes, expected %llu", c->cid,
		     (unsigned long long)obj_id, (unsigned long long)off,
		     (unsigned long long)osd_req_bytes_read(req), (unsigned long long)expect_read);
	osd_req_free(req);
	for (uint64_t i = 0; i < len; i++) {
		uint8_t w = i < want_n ? want[i] : 0;

		if (c->buf[i] != w) {
			c->st.losses++;
			fail(c, "client %u: object 0x%llx byte %llu is %02x, model %02x", c->cid,
			     (unsigned long long)obj_id, (unsigned long long)(off + i), c->buf[i], w);
			return;
		}
	}
	c->st.bytes_verified += len;
}

/* Compare attribute @p number of @p obj_id with the model (undefined when !has). */
static void attr_check(struct load_client *c, osd_dev *dev, uint64_t obj_id, uint32_t number,
		       const uint8_t *want, int has)
{
	struct load_cmd m = { .kind = K_GET_ATTR, .obj = { c->partition, obj_id }, .number = number };
	struct osd_attr a;
	osd_req *req = cmd_exec(c, dev, &m, 0);
	int rc;

	if (!req)
		return;
	rc = osd_req_find_attr(req, LOAD_APP_PAGE, number, &a);
	if (has ? rc != 0 || a.length != LOAD_ATTR_LEN || memcmp(a.value, want, LOAD_ATTR_LEN)
		: rc != -ENOENT) {
		c->st.losses++;
		fail(c, "client %u: attribute %u of 0x%llx differs from the model (rc %d)",
		     c->cid, number, (unsigned long long)obj_id, rc);
	} else {
		c->st.bytes_verified += has ? LOAD_ATTR_LEN : 0;
	}
	osd_req_free(req);
}

/* ---- workload steps ---- */

static void step_write_own(struct load_client *c)
{
	struct load_obj *o = &c->own[rnd_below(c, LOAD_OWN_OBJECTS)];
	uint64_t len = pick_len(c, LOAD_OWN_CAP);
	struct load_cmd m = { .kind = K_WRITE, .obj = { c->partition, o->id } };

	m.off = rnd_below(c, LOAD_OWN_CAP - len + 1);
	fill(c, o->data + m.off, len);
	m.iovcnt = split(&c->rng, o->data + m.off, len, m.iov);
	if (o->len < m.off + len)
		o->len = m.off + len;
	if (!c->dev)
		return;
	cmd_simple(c, c->dev, &m);
	c->st.bytes_written += len;
	read_check(c, c->dev, o->id, m.off, len, o->data + m.off, len, o->len);
}

static void step_read_own(struct load_client *c)
{
	struct load_obj *o = &c->own[rnd_below(c, LOAD_OWN_OBJECTS)];
	uint64_t off = rnd_below(c, o->len + VERIFY_TAIL);
	uint64_t len = 1 + rnd_below(c, 256u << 10), n;

	if (off + len > LOAD_OWN_CAP + VERIFY_TAIL) /* the read buffer's size */
		len = LOAD_OWN_CAP + VERIFY_TAIL - off;
	n = off < o->len ? o->len - off : 0;
	if (c->dev)
		read_check(c, c->dev, o->id, off, len, o->data + (n ? off : 0), n < len ? n : len,
			   o->len);
}

static void step_write_shared(struct load_client *c)
{
	unsigned s = (unsigned)rnd_below(c, LOAD_SHARED);
	uint64_t len = 1 + rnd_below(c, 64u << 10), off;
	struct load_cmd m = { .kind = K_WRITE, .obj = { c->partition, c->shared[s] } };

	off = rnd_below(c, LOAD_SLICE - len + 1);
	m.off = (uint64_t)c->cid * LOAD_SLICE + off;
	fill(c, c->slice[s] + off, len);
	m.iovcnt = split(&c->rng, c->slice[s] + off, len, m.iov);
	if (!c->dev)
		return;
	cmd_simple(c, c->dev, &m);
	c->st.bytes_written += len;
	read_check(c, c->dev, c->shared[s], m.off, len, c->slice[s] + off, len, UINT64_MAX);
}

static void step_read_shared(struct load_client *c)
{
	unsigned s = (unsigned)rnd_below(c, LOAD_SHARED);
	uint64_t off = rnd_below(c, LOAD_SLICE), len = 1 + rnd_below(c, LOAD_SLICE - off);

	if (c->dev)
		read_check(c, c->dev, c->shared[s], (uint64_t)c->cid * LOAD_SLICE + off, len,
			   c->slice[s] + off, len, UINT64_MAX);
}

/* Set (or, odd draws, check) the attribute of an own object or a slice. */
static void step_attr(struct load_client *c, int set)
{
	unsigned which = (unsigned)rnd_below(c, LOAD_OWN_OBJECTS + LOAD_SHARED);
	struct load_cmd m = { .kind = K_SET_ATTR, .obj.partition = c->partition };
	uint8_t *val;
	int *has;

	if (which < LOAD_OWN_OBJECTS) {
		m.obj.id = c->own[which].id;
		m.number = 1;
		val = c->own[which].attr;
		has = &c->own[which].has_attr;
	} else {
		which -= LOAD_OWN_OBJECTS;
		m.obj.id = c->shared[which];
		m.number = c->cid + 1;
		val = c->slice_attr[which];
		has = &c->slice_has_attr[which];
	}
	if (set) {
		fill(c, val, LOAD_ATTR_LEN);
		*has = 1;
		m.value = val;
		if (c->dev)
			cmd_simple(c, c->dev, &m);
	} else if (c->dev) {
		attr_check(c, c->dev, m.obj.id, m.number, val, *has);
	}
}

static void create_own(struct load_client *c, struct load_obj *o)
{
	struct load_cmd m = { .kind = K_CREATE, .obj = { c->partition, c->next_id } };

	o->id = c->next_id++;
	memset(o->data, 0, o->len); /* the model holds zeros past len */
	o->len = 0;
	o->has_attr = 0;
	if (c->dev)
		cmd_simple(c, c->dev, &m);
}

static void step_recreate(struct load_client *c)
{
	struct load_obj *o = &c->own[rnd_below(c, LOAD_OWN_OBJECTS)];
	struct load_cmd m = { .kind = K_REMOVE, .obj = { c->partition, o->id } };

	c->removed[c->nremoved++ % LOAD_REMOVED_KEPT] = o->id;
	if (c->dev)
		cmd_simple(c, c->dev, &m);
	create_own(c, o);
}

struct list_seen {
	struct load_client *c;
	unsigned own_found, removed_found;
};

static int list_cb(uint64_t id, void *payload)
{
	struct list_seen *s = payload;
	unsigned nr = s->c->nremoved < LOAD_REMOVED_KEPT ? s->c->nremoved : LOAD_REMOVED_KEPT;

	for (unsigned i = 0; i < LOAD_OWN_OBJECTS; i++)
		s->own_found += s->c->own[i].id == id;
	for (unsigned i = 0; i < nr; i++)
		s->removed_found += s->c->removed[i] == id;
	return 0;
}

/* LIST the partition: every own object listed, no removed one. */
static void step_list(struct load_client *c)
{
	struct osd_obj_id part = { c->partition, 0 };
	struct list_seen s;
	int rc;

	if (!c->dev)
		return;
	for (int attempt = 0;; attempt++) {
		s = (struct list_seen){ c, 0, 0 };
		rc = osd_list_foreach(c->dev, OSD_ACT_LIST, &part, list_cb, &s);
		if (rc != -EACCES || attempt == REKEY_TRIES)
			break;
		osd_dev_forget_credentials(c->dev, NULL);
		c->st.rekeys++;
	}
	c->st.commands++;
	if (rc)
		fail(c, "client %u: LIST: %s", c->cid, osd_dev_error(c->dev));
	else if (s.own_found != LOAD_OWN_OBJECTS || s.removed_found)
		fail(c, "client %u: LIST shows %u of %u own objects and %u removed ones", c->cid,
		     s.own_found, LOAD_OWN_OBJECTS, s.removed_found);
}

static void step(struct load_client *c)
{
	uint64_t r = rnd_below(c, 100);

	if (r < 30)
		step_write_own(c);
	else if (r < 50)
		step_read_own(c);
	else if (r < 65)
		step_write_shared(c);
	else if (r < 75)
		step_read_shared(c);
	else if (r < 83)
		step_attr(c, 1);
	else if (r < 90)
		step_attr(c, 0);
	else if (r < 95)
		step_recreate(c);
	else
		step_list(c);
	c->st.ops++;
}

static void flush_all(struct load_client *c)
{
	struct load_cmd m = { .kind = K_FLUSH, .obj.partition = c->partition };

	for (unsigned i = 0; i < LOAD_OWN_OBJECTS + LOAD_SHARED && !c->st.errors; i++) {
		m.obj.id = i < LOAD_OWN_OBJECTS ? c->own[i].id : c->shared[i - LOAD_OWN_OBJECTS];
		cmd_simple(c, c->dev, &m);
	}
}

void load_client_run(struct load_client *c, uint64_t deadline_ms, uint64_t steps)
{
	for (unsigned i = 0; i < LOAD_OWN_OBJECTS && !c->st.errors; i++)
		create_own(c, &c->own[i]);
	if (!c->dev) {
		while (c->st.ops < steps)
			step(c);
		return;
	}
	while (!c->st.errors && load_now_ms() < deadline_ms)
		step(c);
	if (!c->st.errors)
		flush_all(c);
}

void load_client_verify(struct load_client *c, osd_dev *dev)
{
	unsigned nr = c->nremoved < LOAD_REMOVED_KEPT ? c->nremoved : LOAD_REMOVED_KEPT;

	for (unsigned i = 0; i < LOAD_OWN_OBJECTS; i++) {
		struct load_obj *o = &c->own[i];

		read_check(c, dev, o->id, 0, o->len + VERIFY_TAIL, o->data, o->len, o->len);
		attr_check(c, dev, o->id, 1, o->attr, o->has_attr);
	}
	for (unsigned i = 0; i < nr; i++) {
		struct load_cmd m = { .kind = K_READ, .obj = { c->partition, c->removed[i] },
				      .iov = { { c->buf, 1 } }, .iovcnt = 1 };

		osd_req_free(cmd_exec(c, dev, &m, -ENOENT));
	}
	for (unsigned s = 0; s < LOAD_SHARED; s++) {
		read_check(c, dev, c->shared[s], (uint64_t)c->cid * LOAD_SLICE, LOAD_SLICE,
			   c->slice[s], LOAD_SLICE, UINT64_MAX);
		attr_check(c, dev, c->shared[s], c->cid + 1, c->slice_attr[s],
			   c->slice_has_attr[s]);
	}
}

int load_client_init(struct load_client *c, unsigned cid, uint64_t seed, uint64_t partition,
		     const uint64_t shared[LOAD_SHARED])
{
	memset(c, 0, sizeof(*c));
	c->cid = cid;
	c->rng = seed;
	c->read_rng = ~seed;
	c->partition = partition;
	c->next_id = OWN_ID_BASE * (cid + 1);
	memcpy(c->shared, shared, sizeof(c->shared));
	c->buf = malloc(LOAD_OWN_CAP + VERIFY_TAIL);
	for (unsigned i = 0; i < LOAD_OWN_OBJECTS; i++)
		c->own[i].data = calloc(1, LOAD_OWN_CAP);
	for (unsigned s = 0; s < LOAD_SHARED; s++)
		c->slice[s] = calloc(1, LOAD_SLICE);
	for (unsigned i = 0; i < LOAD_OWN_OBJECTS; i++)
		if (!c->own[i].data)
			return -ENOMEM;
	for (unsigned s = 0; s < LOAD_SHARED; s++)
		if (!c->slice[s])
			return -ENOMEM;
	return c->buf ? 0 : -ENOMEM;
}

void load_client_free(struct load_client *c)
{
	free(c->buf);
	for (unsigned i = 0; i < LOAD_OWN_OBJECTS; i++)
		free(c->own[i].data);
	for (unsigned s = 0; s < LOAD_SHARED; s++)
		free(c->slice[s]);
}
