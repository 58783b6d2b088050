/*
 * Concurrent execution of the commands of one connection.
 *
 * A connection thread reads PDUs, collects each command's Data-Out and
 * hands commands whose data is in to a worker pool shared by the server; it
 * keeps reading meanwhile, so NOP-Outs, task management and logout are
 * answered while commands run, and responses may go out in any order
 * (RFC 7143 3.2.2.1: commands are delivered in CmdSN order, the target
 * completes them as the task attributes allow).
 *
 * Task attributes (SAM-5 8.6): SIMPLE (and untagged) commands may run in
 * any order; ORDERED, HEAD OF QUEUE and ACA ones run here as barriers of
 * their LUN: after every earlier command and before every later one. On
 * top of that, and so that an initiator never sees two commands on the
 * same data reordered, a command waits for every earlier command of its
 * connection that it conflicts with: one that addresses the same object
 * (or its partition, or the whole LUN) where either of them modifies it.
 * READ and WRITE without attribute lists conflict only where their byte
 * ranges can interact. Commands that change the namespace or keys as a
 * whole (FORMAT OSD, CREATE/REMOVE PARTITION, SET KEY, SET MASTER KEY,
 * FLUSH OSD) are barriers whatever their attribute.
 */
#include "iscsi/server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <osd/cdb.h>

#define OP_OSD 0x7F                     /* OSD variable-length CDB, osd2r05 5.2.1 */
#define OP_TEST_UNIT_READY 0x00
#define OP_REQUEST_SENSE 0x03
#define OP_INQUIRY 0x12
#define OP_REPORT_LUNS 0xA0
#define BLOCKING_XFER (1u << 20)        /* larger transfers count as blocking */

/* Whether the CDB carries attribute lists or values (osd2r05 5.2.2). */
static int has_attrs(const struct osd_cdb *d)
{
	switch (d->attr_mode) {
	case OSD_ATTR_MODE_PAGE:
		return d->attr.page.get_page || d->attr.page.set_page;
	case OSD_ATTR_MODE_LIST:
		return d->attr.list.get_list_length || d->attr.list.set_list_length;
	case OSD_ATTR_MODE_CDB:
		return 1;
	default:
		return 0;
	}
}

static int has_set(const struct osd_cdb *d)
{
	switch (d->attr_mode) {
	case OSD_ATTR_MODE_PAGE:
		return d->attr.page.set_page != 0;
	case OSD_ATTR_MODE_LIST:
		return d->attr.list.set_list_length != 0;
	case OSD_ATTR_MODE_CDB:
		return 1;
	default:
		return 0;
	}
}

/* The scope of an OSD command from its service action (osd2r05 6). */
static void classify_osd(struct iscsi_task *t, const struct osd_cdb *d)
{
	int set = has_set(d);

	t->pid = d->obj.partition;
	t->oid = d->obj.id;
	t->modifies = 1;
	switch (d->action) {
	case OSD_ACT_READ:
	case OSD_ACT_WRITE:
		t->scope = SCOPE_OBJECT;
		t->modifies = d->action == OSD_ACT_WRITE || set;
		/* A scatter/gather list or attributes: not a plain byte range */
		t->ranged = !has_attrs(d) && !d->cont_length && d->length &&
			    d->start + d->length > d->start;
		t->start = d->start;
		t->end = d->start + d->length;
		break;
	case OSD_ACT_GET_ATTRIBUTES:
		t->scope = SCOPE_OBJECT;
		t->modifies = set;
		break;
	case OSD_ACT_APPEND:
	case OSD_ACT_CLEAR:
	case OSD_ACT_PUNCH:
	case OSD_ACT_REMOVE:
	case OSD_ACT_SET_ATTRIBUTES:
	case OSD_ACT_FLUSH:
		t->scope = SCOPE_OBJECT;
		break;
	case OSD_ACT_CREATE:
	case OSD_ACT_CREATE_AND_WRITE:
		/* object id 0: the target picks it, anywhere in the partition */
		t->scope = SCOPE_OBJECT;
		break;
	case OSD_ACT_LIST:
	case OSD_ACT_LIST_COLLECTION:
	case OSD_ACT_GET_MEMBER_ATTRIBUTES:
		t->scope = SCOPE_PARTITION;
		t->modifies = set;
		break;
	case OSD_ACT_CREATE_COLLECTION:
	case OSD_ACT_REMOVE_COLLECTION:
	case OSD_ACT_SET_MEMBER_ATTRIBUTES:
	case OSD_ACT_REMOVE_MEMBER_OBJECTS:
	case OSD_ACT_FLUSH_COLLECTION:
	case OSD_ACT_FLUSH_PARTITION:
	case OSD_ACT_QUERY:
		t->scope = SCOPE_PARTITION;
		break;
	default: /* FORMAT OSD, partitions, keys, FLUSH OSD, anything else */
		t->scope = SCOPE_ALL;
		return;
	}
	/* The root object addresses the LUN, a partition object its partition. */
	if (t->pid == 0)
		t->scope = SCOPE_ALL;
	else if (t->oid == 0 && t->scope == SCOPE_OBJECT)
		t->scope = SCOPE_PARTITION;
	if (t->scope != SCOPE_OBJECT)
		t->ranged = 0;
}

void osd__tgt_iscsi_task_classify(struct osd_target_iscsi *srv, struct iscsi_task *t,
				  unsigned attr)
{
	(void)srv;
	t->lun_index = osd__iscsi_lun_decode(t->lun);
	t->scope = SCOPE_ALL;
	t->modifies = 1;
	t->ranged = 0;
	t->may_block = 1;
	if (attr != OSD_ISCSI_ATTR_UNTAGGED && attr != OSD_ISCSI_ATTR_SIMPLE)
		return; /* ORDERED, HEAD OF QUEUE, ACA: a barrier */
	if (t->cdb[0] != OP_OSD) {
		if (t->cdb[0] == OP_INQUIRY || t->cdb[0] == OP_REPORT_LUNS ||
		    t->cdb[0] == OP_TEST_UNIT_READY || t->cdb[0] == OP_REQUEST_SENSE) {
			t->scope = SCOPE_NONE;
			t->modifies = 0;
			t->may_block = 0;
		}
		return;
	}
	struct osd_cdb d;
	uint16_t field = 0;
	memset(&d, 0, sizeof(d));
	if (osd_cdb_decode(t->cdb, t->cdb_len, &d, &field) == 0) {
		classify_osd(t, &d);
		/* Small commands on one object run from the page cache; FLUSH,
		 * REMOVE, FUA and large transfers wait on the disk. */
		t->may_block = t->scope != SCOPE_OBJECT || d.action == OSD_ACT_FLUSH ||
			       d.action == OSD_ACT_REMOVE || (d.options & OSD_OPT_FUA) ||
			       t->out_len > BLOCKING_XFER || t->in_len > BLOCKING_XFER;
	}
	/* an undecodable CDB stays a barrier: its execution reports the error */
}

/* Whether @p w (a plain WRITE) and @p b (a plain READ or WRITE) on the same
 * object can affect each other. Two writes: where they overlap. A read: a
 * write ending after the read's start can change its bytes or, by moving
 * the logical length, how many come back. */
static int ranges_interact(const struct iscsi_task *a, const struct iscsi_task *b)
{
	if (a->modifies && b->modifies)
		return a->start < b->end && b->start < a->end;
	const struct iscsi_task *w = a->modifies ? a : b, *r = a->modifies ? b : a;
	return w->end > r->start;
}

static int conflicts(const struct iscsi_task *a, const struct iscsi_task *b)
{
	if (a->lun_index != b->lun_index)
		return 0; /* task sets are per LUN (SAM-5 4.6.19) */
	if (a->scope == SCOPE_ALL || b->scope == SCOPE_ALL)
		return 1;
	if (a->scope == SCOPE_NONE || b->scope == SCOPE_NONE)
		return 0;
	if (!a->modifies && !b->modifies)
		return 0;
	if (a->pid != b->pid)
		return 0;
	if (a->scope == SCOPE_PARTITION || b->scope == SCOPE_PARTITION)
		return 1;
	if (a->oid != b->oid)
		return 0;
	if (a->ranged && b->ranged)
		return ranges_interact(a, b);
	return 1;
}

/* With c->mu: no earlier task that is still to run conflicts with @p t. */
static int runnable(const struct iscsi_conn *c, const struct iscsi_task *t)
{
	for (const struct iscsi_task *e = c->order; e && e != t; e = e->onext)
		if (e->state != TS_DONE && !e->aborted && conflicts(e, t))
			return 0;
	return 1;
}

/*
 * Queue @p t for the workers. A sleeping worker is woken only for tasks
 * that no worker already woken (or, with @p by_worker, the calling worker,
 * which goes back to the queue next) will take: a wake-up costs a context
 * switch, which on few cores is the price of a small command.
 */
static void pool_push(struct osd_target_iscsi *srv, struct iscsi_task *t, int by_worker)
{
	pthread_mutex_lock(&srv->pool_mu);
	t->qnext = NULL;
	if (srv->ready_tail)
		srv->ready_tail->qnext = t;
	else
		srv->ready_head = t;
	srv->ready_tail = t;
	srv->nqueued++;
	/* no more workers up than CPUs: on few cores more only take turns */
	if (srv->nidle > srv->nwaking && srv->nqueued > srv->nwaking + (by_worker ? 1u : 0u) &&
	    srv->nawake + srv->nwaking < srv->max_awake) {
		srv->nwaking++;
		pthread_cond_signal(&srv->pool_cv);
	}
	pthread_mutex_unlock(&srv->pool_mu);
}

/* With pool_mu: wake workers for queued tasks, at most @p cap up in all. */
static void wake_for_queue(struct osd_target_iscsi *srv, unsigned cap)
{
	while (srv->nidle > srv->nwaking && srv->nqueued > srv->nwaking &&
	       srv->nawake + srv->nwaking < cap) {
		srv->nwaking++;
		pthread_cond_signal(&srv->pool_cv);
	}
}

void osd__tgt_iscsi_pool_blocking(struct osd_target_iscsi *srv, int on)
{
	pthread_mutex_lock(&srv->pool_mu);
	if (on) {
		srv->nawake--;
		wake_for_queue(srv, srv->max_awake);
	} else {
		srv->nawake++;
	}
	pthread_mutex_unlock(&srv->pool_mu);
}

void osd__tgt_iscsi_pool_kick(struct osd_target_iscsi *srv)
{
	pthread_mutex_lock(&srv->pool_mu);
	wake_for_queue(srv, srv->nawake + srv->nwaking + 1);
	pthread_mutex_unlock(&srv->pool_mu);
}

int osd__tgt_iscsi_conn_queued(struct iscsi_conn *c)
{
	pthread_mutex_lock(&c->mu);
	int queued = c->nready > 0;
	pthread_mutex_unlock(&c->mu);
	return queued;
}

/* With c->mu: queue every waiting task that may run now. */
static void schedule(struct iscsi_conn *c, int by_worker)
{
	if (!c->nwait)
		return;
	for (struct iscsi_task *t = c->order; t; t = t->onext) {
		if (t->state != TS_WAIT || !runnable(c, t))
			continue;
		t->state = TS_READY;
		c->nwait--;
		c->nbusy++;
		c->nready++;
		pool_push(c->srv, t, by_worker);
	}
}

uint32_t osd__tgt_iscsi_max_cmd_sn(const struct iscsi_conn *c)
{
	/* Arrival raises ExpCmdSN and nwindow together and execution lowers
	 * nwindow: MaxCmdSN never goes back. Full: ExpCmdSN - 1. */
	return c->exp_cmd_sn + ISCSI_CMD_WINDOW - 1 - c->nwindow;
}

int osd__tgt_iscsi_task_enter(struct iscsi_conn *c, struct iscsi_task *t)
{
	pthread_mutex_lock(&c->mu);
	if (c->nactive >= ISCSI_MAX_ACTIVE) {
		pthread_mutex_unlock(&c->mu);
		return -EBUSY;
	}
	struct iscsi_task **pp = &c->order;
	while (*pp)
		pp = &(*pp)->onext;
	*pp = t;
	t->onext = NULL;
	t->conn = c;
	t->state = TS_DATA;
	t->holds_slot = c->cmd_slot;
	c->cmd_slot = 0;
	c->nactive++;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

void osd__tgt_iscsi_task_ready(struct iscsi_conn *c, struct iscsi_task *t)
{
	pthread_mutex_lock(&c->mu);
	t->state = TS_WAIT;
	if (runnable(c, t)) {
		t->state = TS_READY;
		c->nbusy++;
		c->nready++;
		pool_push(c->srv, t, 0);
	} else {
		c->nwait++;
	}
	pthread_mutex_unlock(&c->mu);
}

/* With c->mu: @p t no longer holds a place in the CmdSN window. */
static void release_slot(struct iscsi_conn *c, struct iscsi_task *t)
{
	if (t->holds_slot) {
		t->holds_slot = 0;
		c->nwindow--;
	}
}

/* With c->mu: take @p t out of c->order. */
static void unlink_order(struct iscsi_conn *c, struct iscsi_task *t)
{
	for (struct iscsi_task **pp = &c->order; *pp; pp = &(*pp)->onext) {
		if (*pp == t) {
			*pp = t->onext;
			t->onext = NULL;
			c->nactive--;
			break;
		}
	}
	release_slot(c, t);
	pthread_cond_broadcast(&c->settled);
}

void osd__tgt_iscsi_task_leave(struct iscsi_conn *c, struct iscsi_task *t)
{
	if (!t)
		return;
	if (t->conn) {
		pthread_mutex_lock(&c->mu);
		unlink_order(c, t);
		schedule(c, 0); /* later tasks may have waited for it */
		pthread_mutex_unlock(&c->mu);
	}
	osd__tgt_iscsi_task_free(c, t);
}

void osd__tgt_iscsi_window_release(struct iscsi_conn *c)
{
	pthread_mutex_lock(&c->mu);
	if (c->cmd_slot) {
		c->cmd_slot = 0;
		c->nwindow--;
	}
	pthread_mutex_unlock(&c->mu);
}

int osd__tgt_iscsi_itt_unanswered(struct iscsi_conn *c, uint32_t itt)
{
	int found = 0;

	pthread_mutex_lock(&c->mu);
	/* TS_DONE is set before the answer goes out: a tag seen again after
	 * that may be a legal reuse, one before it cannot */
	for (const struct iscsi_task *t = c->order; t && !found; t = t->onext)
		found = t->itt == itt && t->state < TS_DONE;
	pthread_mutex_unlock(&c->mu);
	return found;
}

void osd__tgt_iscsi_task_executed(struct iscsi_conn *c, struct iscsi_task *t)
{
	pthread_mutex_lock(&c->mu);
	t->state = TS_DONE;
	release_slot(c, t);
	schedule(c, 1);
	pthread_mutex_unlock(&c->mu);
}

static int tmf_covers(const struct iscsi_tmf_wait *w, const struct iscsi_task *t)
{
	if (w->ref_itt != OSD_ISCSI_RSVD_TAG)
		return t->itt == w->ref_itt;
	return !memcmp(t->lun, w->lun, 8);
}

/* With c->mu: whether a task @p w covers is in a worker's hands. */
static int tmf_blocked(const struct iscsi_conn *c, const struct iscsi_tmf_wait *w)
{
	for (const struct iscsi_task *t = c->order; t; t = t->onext)
		if (t->state >= TS_READY && tmf_covers(w, t))
			return 1;
	return 0;
}

static int send_tmf_rsp(struct iscsi_conn *c, uint32_t itt, uint8_t response)
{
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_TMF_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = response;
	h.itt = itt;
	return osd__tgt_iscsi_conn_reply(c, &h, SN_ADVANCE, NULL, 0);
}

/* A worker is done with @p t (answered or aborted): it leaves c->order and
 * the TMF answers that waited for it go out. The connection may be freed
 * as soon as nbusy drops: that is the last thing done with it. */
static void retire(struct iscsi_conn *c, struct iscsi_task *t)
{
	struct iscsi_tmf_wait due[ISCSI_TMF_WAITS];
	size_t ndue = 0;

	pthread_mutex_lock(&c->mu);
	unlink_order(c, t);
	schedule(c, 1);
	for (size_t i = 0; i < ISCSI_TMF_WAITS; i++) {
		struct iscsi_tmf_wait *w = &c->tmf_waits[i];
		if (w->used && !tmf_blocked(c, w)) {
			due[ndue++] = *w;
			w->used = 0;
		}
	}
	pthread_mutex_unlock(&c->mu);
	osd__tgt_iscsi_task_free(c, t);
	for (size_t i = 0; i < ndue; i++)
		send_tmf_rsp(c, due[i].itt, due[i].response);
	pthread_mutex_lock(&c->mu);
	c->nbusy--;
	pthread_cond_broadcast(&c->settled);
	pthread_mutex_unlock(&c->mu);
}

int osd__tgt_iscsi_sched_drop(struct iscsi_conn *c, const uint8_t *lun, uint32_t itt)
{
	int found = 0;
	struct iscsi_task *gone = NULL;

	pthread_mutex_lock(&c->mu);
	struct iscsi_task **pp = &c->order;
	while (*pp) {
		struct iscsi_task *t = *pp;
		int match = (!lun || !memcmp(t->lun, lun, 8)) &&
			    (itt == OSD_ISCSI_RSVD_TAG || t->itt == itt);
		if (match && t->state == TS_WAIT) {
			c->nwait--;
			unlink_order(c, t); /* never ran: no answer (SAM-5 7.2) */
			t->onext = gone;
			gone = t;
			found |= 1;
			continue;
		}
		if (match && t->state >= TS_READY) {
			if (t->state == TS_READY)
				t->aborted = 1; /* the worker skips it */
			found |= 3;
		}
		pp = &t->onext;
	}
	schedule(c, 0);
	pthread_mutex_unlock(&c->mu);
	while (gone) {
		struct iscsi_task *t = gone;
		gone = t->onext;
		t->conn = NULL;
		osd__tgt_iscsi_task_free(c, t);
	}
	return found;
}

int osd__tgt_iscsi_tmf_defer(struct iscsi_conn *c, const struct osd__iscsi_bhs *req,
			     struct osd__iscsi_bhs *h)
{
	int fn = req->flags & 0x7F;

	pthread_mutex_lock(&c->mu);
	struct iscsi_tmf_wait w = { 0 };
	w.used = 1;
	w.itt = req->itt;
	w.ref_itt = fn == OSD_ISCSI_TASK_ABORT ? req->ttt : OSD_ISCSI_RSVD_TAG;
	memcpy(w.lun, req->lun, 8);
	w.response = h->response;
	if (tmf_blocked(c, &w)) {
		for (size_t i = 0; i < ISCSI_TMF_WAITS; i++) {
			if (!c->tmf_waits[i].used) {
				c->tmf_waits[i] = w;
				pthread_mutex_unlock(&c->mu);
				return 0; /* answered by retire() */
			}
		}
		h->response = OSD_ISCSI_TMF_RSP_REJECTED; /* too many waiting */
	}
	pthread_mutex_unlock(&c->mu);
	return osd__tgt_iscsi_conn_reply(c, h, SN_ADVANCE, NULL, 0);
}

void osd__tgt_iscsi_sched_quiesce(struct iscsi_conn *c)
{
	pthread_mutex_lock(&c->mu);
	c->closing = 1;
	while (c->nbusy)
		pthread_cond_wait(&c->settled, &c->mu);
	pthread_mutex_unlock(&c->mu);
}

static void *worker_main(void *arg)
{
	struct osd_target_iscsi *srv = arg;

	pthread_mutex_lock(&srv->pool_mu);
	srv->nawake++;
	for (;;) {
		while (!srv->ready_head && !srv->pool_stop) {
			srv->nawake--;
			srv->nidle++;
			pthread_cond_wait(&srv->pool_cv, &srv->pool_mu);
			srv->nidle--;
			srv->nawake++;
			if (srv->nwaking)
				srv->nwaking--;
		}
		struct iscsi_task *t = srv->ready_head;
		if (!t)
			break; /* stopping, nothing left */
		srv->nqueued--;
		srv->ready_head = t->qnext;
		if (!srv->ready_head)
			srv->ready_tail = NULL;
		pthread_mutex_unlock(&srv->pool_mu);

		struct iscsi_conn *c = t->conn;
		pthread_mutex_lock(&c->mu);
		c->nready--;
		int skip = t->aborted || c->closing;
		t->state = skip ? TS_DONE : TS_RUN;
		if (skip)
			release_slot(c, t);
		pthread_mutex_unlock(&c->mu);
		if (!skip)
			osd__tgt_iscsi_task_run(c, t);
		retire(c, t);
		pthread_mutex_lock(&srv->pool_mu);
	}
	srv->nawake--;
	pthread_mutex_unlock(&srv->pool_mu);
	return NULL;
}

int osd__tgt_iscsi_pool_start(struct osd_target_iscsi *srv, unsigned workers)
{
	if (!workers) {
		/* Commands block on the disk (FLUSH, fsync): more threads than cores. */
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		workers = cpus > 0 ? (unsigned)cpus * 4u : 8u;
		if (workers < 8)
			workers = 8;
	}
	if (workers > ISCSI_MAX_WORKERS)
		workers = ISCSI_MAX_WORKERS;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	srv->max_awake = cpus > 0 ? (unsigned)cpus : 1u;
	srv->workers = calloc(workers, sizeof(*srv->workers));
	if (!srv->workers)
		return -ENOMEM;
	for (unsigned i = 0; i < workers; i++) {
		int rc = pthread_create(&srv->workers[i], NULL, worker_main, srv);
		if (rc)
			return -rc; /* osd__tgt_iscsi_pool_stop() joins those started */
		srv->nworkers++;
	}
	return 0;
}

void osd__tgt_iscsi_pool_stop(struct osd_target_iscsi *srv)
{
	pthread_mutex_lock(&srv->pool_mu);
	srv->pool_stop = 1;
	pthread_cond_broadcast(&srv->pool_cv);
	pthread_mutex_unlock(&srv->pool_mu);
	for (unsigned i = 0; i < srv->nworkers; i++)
		pthread_join(srv->workers[i], NULL);
	free(srv->workers);
	srv->workers = NULL;
	srv->nworkers = 0;
}
