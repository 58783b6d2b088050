/* The iSCSI server: listening socket, accept loop, connection threads. */
#include "iscsi/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

void osd__tgt_iscsi_log(struct osd_target_iscsi *srv, int level, const char *fmt, ...)
{
	if (!srv->log)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	srv->log(srv->log_payload, level, msg);
}

uint64_t osd__tgt_iscsi_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void osd__tgt_iscsi_refused(struct osd_target_iscsi *srv, const char *fmt, ...)
{
	uint64_t sec = osd__tgt_iscsi_now_ms() / 1000u;
	unsigned dropped = 0;
	int log_it;

	if (!srv->log)
		return;
	/* A flood of refusals must not become a flood of log lines. */
	pthread_mutex_lock(&srv->lock);
	if (sec != srv->refuse_sec) {
		dropped = srv->refuse_dropped;
		srv->refuse_sec = sec;
		srv->refuse_logged = srv->refuse_dropped = 0;
	}
	log_it = srv->refuse_logged < ISCSI_REFUSALS_PER_S;
	if (log_it)
		srv->refuse_logged++;
	else
		srv->refuse_dropped++;
	pthread_mutex_unlock(&srv->lock);
	if (dropped)
		osd__tgt_iscsi_log(srv, OSD_TARGET_ISCSI_LOG_WARNING,
				   "%u more refusals not logged", dropped);
	if (!log_it)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	osd__tgt_iscsi_log(srv, OSD_TARGET_ISCSI_LOG_WARNING, "refused: %s", msg);
}

int osd__tgt_iscsi_budget_take(struct osd_target_iscsi *srv, size_t n)
{
	size_t used = atomic_load(&srv->budget_used);
	do {
		if (n > srv->budget || used > srv->budget - n)
			return -ENOBUFS;
	} while (!atomic_compare_exchange_weak(&srv->budget_used, &used, used + n));
	return 0;
}

void osd__tgt_iscsi_budget_put(struct osd_target_iscsi *srv, size_t n)
{
	atomic_fetch_sub(&srv->budget_used, n);
}

/* The record of @p host, or a free (or the oldest) one taken over; with lock. */
static struct iscsi_auth_rec *auth_rec(struct osd_target_iscsi *srv, const char *host,
				       uint64_t now, int create)
{
	struct iscsi_auth_rec *victim = NULL;
	for (size_t i = 0; i < ISCSI_AUTH_HOSTS; i++) {
		struct iscsi_auth_rec *r = &srv->auth[i];
		if (r->host[0] && now - r->last_ms > ISCSI_AUTH_FORGET_MS)
			r->host[0] = 0;
		if (r->host[0] && !strcmp(r->host, host))
			return r;
		if (!victim || !r->host[0] || (victim->host[0] && r->last_ms < victim->last_ms))
			victim = r;
	}
	if (!create)
		return NULL;
	memset(victim, 0, sizeof(*victim));
	snprintf(victim->host, sizeof(victim->host), "%s", host);
	return victim;
}

static unsigned auth_delay(const struct osd_target_iscsi *srv, unsigned fails)
{
	uint64_t d = srv->auth_delay_ms;
	for (unsigned i = 1; i < fails && d < srv->auth_delay_max_ms; i++)
		d *= 2;
	return (unsigned)(d < srv->auth_delay_max_ms ? d : srv->auth_delay_max_ms);
}

int osd__tgt_iscsi_auth_wait(struct iscsi_conn *c)
{
	struct osd_target_iscsi *srv = c->srv;
	uint64_t now = osd__tgt_iscsi_now_ms(), at = now;

	/* Verifications from one address after a failure are spaced by the
	 * delay, also across parallel connections: each takes the next turn. */
	pthread_mutex_lock(&srv->lock);
	struct iscsi_auth_rec *r = auth_rec(srv, c->host, now, 0);
	if (r && r->fails) {
		at = r->next_ms > now ? r->next_ms : now;
		r->next_ms = at + auth_delay(srv, r->fails);
	}
	pthread_mutex_unlock(&srv->lock);
	if (at == now)
		return 0;
	if (at > c->deadline_ms) {
		osd__tgt_iscsi_refused(srv, "%s: CHAP attempt throttled past the login deadline",
				       c->peer);
		return -ETIMEDOUT;
	}
	struct timespec ts = { (time_t)((at - now) / 1000u), (long)((at - now) % 1000u) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return 0;
}

void osd__tgt_iscsi_auth_result(struct iscsi_conn *c, int ok)
{
	struct osd_target_iscsi *srv = c->srv;
	uint64_t now = osd__tgt_iscsi_now_ms();
	pthread_mutex_lock(&srv->lock);
	struct iscsi_auth_rec *r = auth_rec(srv, c->host, now, !ok);
	if (r && ok) {
		r->host[0] = 0;
	} else if (r) {
		r->fails++;
		r->last_ms = now;
		uint64_t next = now + auth_delay(srv, r->fails);
		if (next > r->next_ms)
			r->next_ms = next;
	}
	pthread_mutex_unlock(&srv->lock);
}

int osd__tgt_iscsi_initiator_allowed(struct osd_target_iscsi *srv, const char *name)
{
	if (!srv->nallowed)
		return 1;
	for (size_t i = 0; i < srv->nallowed; i++)
		if (!strcmp(srv->allowed[i], name))
			return 1;
	return 0;
}

static int set_error(struct osd_target_iscsi *srv, int err, const char *what)
{
	pthread_mutex_lock(&srv->lock);
	snprintf(srv->error, sizeof(srv->error), "%s: %s", what, strerror(-err));
	pthread_mutex_unlock(&srv->lock);
	osd__tgt_iscsi_log(srv, OSD_TARGET_ISCSI_LOG_ERROR, "%s: %s", what, strerror(-err));
	return err;
}

/* The limits the server negotiates with (see docs/iscsi.md). */
static void our_params(struct osd__iscsi_params *p, int digests)
{
	osd__iscsi_params_default(p);
	p->header_digest = digests;
	p->data_digest = digests;
	p->max_recv_dsl_target = ISCSI_MAX_RECV_DSL;
	p->first_burst = 1u << 20;
	p->max_burst = 1u << 20;
	p->immediate_data = 1;
	p->initial_r2t = 0;         /* OR: the initiator decides */
	p->max_outstanding_r2t = 1;
	p->max_connections = 1;
	p->time2wait = 0;           /* MAX: the initiator decides */
	p->time2retain = 0;         /* nothing is kept after a failure (ERL 0) */
	p->error_recovery_level = 0;
	p->data_pdu_in_order = 1;
	p->data_sequence_in_order = 1;
}

static int parse_address(const char *addr, int port, struct sockaddr_storage *ss,
			 socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

static int open_listener(struct osd_target_iscsi *srv, const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (parse_address(addr, port, &ss, &len))
		return set_error(srv, -EINVAL, "bad listen address");
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return set_error(srv, -errno, "socket");
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		int err = -errno;
		close(fd);
		return set_error(srv, err, "bind/listen");
	}
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len)) {
		int err = -errno;
		close(fd);
		return set_error(srv, err, "getsockname");
	}
	srv->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						  : ((struct sockaddr_in6 *)&ss)->sin6_port);
	srv->listen_fd = fd;
	return 0;
}

static char *dup_or_null(const char *s, int *failed)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*failed = 1;
	return d;
}

static unsigned or_default(unsigned v, unsigned dflt)
{
	return v ? v : dflt;
}

static int copy_allowed(struct osd_target_iscsi *srv, const struct osd_target_iscsi_options *o)
{
	if (!o->allowed_initiators || !o->nallowed_initiators)
		return 0;
	srv->allowed = calloc(o->nallowed_initiators, sizeof(*srv->allowed));
	if (!srv->allowed)
		return -ENOMEM;
	srv->nallowed = o->nallowed_initiators;
	for (size_t i = 0; i < srv->nallowed; i++)
		if (!(srv->allowed[i] = strdup(o->allowed_initiators[i])))
			return -ENOMEM;
	return 0;
}

static void copy_bounds(struct osd_target_iscsi *srv, const struct osd_target_iscsi_options *o)
{
	srv->max_connections = or_default(o->max_connections, ISCSI_DEF_MAX_CONN);
	srv->max_per_addr = or_default(o->max_connections_per_address, ISCSI_DEF_PER_ADDR);
	srv->reserved = o->reserved_connections ? o->reserved_connections
						: srv->max_connections / 8;
	if (srv->reserved >= srv->max_connections)
		srv->reserved = srv->max_connections - 1;
	srv->login_ms = or_default(o->login_timeout_ms, ISCSI_DEF_LOGIN_MS);
	srv->idle_ms = or_default(o->idle_timeout_ms, ISCSI_DEF_IDLE_MS);
	srv->nop_ms = or_default(o->nop_timeout_ms, ISCSI_DEF_NOP_MS);
	srv->dataout_ms = or_default(o->dataout_timeout_ms, ISCSI_DEF_DATAOUT_MS);
	srv->max_pending = or_default(o->max_pending_tasks, ISCSI_DEF_PENDING);
	srv->budget = o->dataout_budget ? o->dataout_budget : ISCSI_DEF_BUDGET;
	srv->auth_delay_ms = or_default(o->auth_fail_delay_ms, ISCSI_DEF_AUTH_DELAY_MS);
	srv->auth_delay_max_ms = or_default(o->auth_fail_delay_max_ms, ISCSI_DEF_AUTH_DELAY_MAX_MS);
	if (srv->auth_delay_max_ms < srv->auth_delay_ms)
		srv->auth_delay_max_ms = srv->auth_delay_ms;
}

static int copy_options(struct osd_target_iscsi *srv, const struct osd_target_iscsi_options *o)
{
	int failed = copy_allowed(srv, o) != 0;
	srv->target_name = dup_or_null(o->target_name ? o->target_name
						      : OSD_TARGET_ISCSI_DEFAULT_NAME, &failed);
	srv->target_alias = dup_or_null(o->target_alias, &failed);
	if (o->chap_secret) {
		srv->chap_user = dup_or_null(o->chap_user ? o->chap_user : "", &failed);
		srv->chap_secret = malloc(o->chap_secret_len ? o->chap_secret_len : 1);
		if (!srv->chap_secret)
			failed = 1;
		else
			memcpy(srv->chap_secret, o->chap_secret, o->chap_secret_len);
		srv->chap_secret_len = o->chap_secret_len;
	}
	srv->allow_digests = o->allow_digests;
	copy_bounds(srv, o);
	srv->log = o->log;
	srv->log_payload = o->log_payload;
	srv->on_execute = o->on_execute;
	srv->on_execute_payload = o->on_execute_payload;
	return failed ? -ENOMEM : 0;
}

static void free_server(struct osd_target_iscsi *srv)
{
	if (srv->listen_fd >= 0)
		close(srv->listen_fd);
	for (int i = 0; i < 2; i++)
		if (srv->stop_pipe[i] >= 0)
			close(srv->stop_pipe[i]);
	free(srv->luns);
	free(srv->target_name);
	free(srv->target_alias);
	free(srv->chap_user);
	if (srv->chap_secret)
		memset(srv->chap_secret, 0, srv->chap_secret_len);
	free(srv->chap_secret);
	for (size_t i = 0; srv->allowed && i < srv->nallowed; i++)
		free(srv->allowed[i]);
	free(srv->allowed);
	osd__tgt_iscsi_pool_stop(srv);
	osd__tgt_iscsi_ports_free(srv);
	pthread_mutex_destroy(&srv->lock);
	pthread_cond_destroy(&srv->conn_done);
	pthread_mutex_destroy(&srv->pool_mu);
	pthread_cond_destroy(&srv->pool_cv);
	free(srv);
}

int osd_target_iscsi_create(osd_target_iscsi **out, osd_target *const *luns, size_t nluns,
			    const struct osd_target_iscsi_options *opts)
{
	struct osd_target_iscsi_options o = OSD_TARGET_ISCSI_OPTIONS_INIT;
	*out = NULL;
	if (opts && opts->version == 1) /* the fields up to log_payload; the rest default */
		memcpy(&o, opts, offsetof(struct osd_target_iscsi_options,
					  max_connections_per_address));
	else if (opts && opts->version == 2) /* up to the access list */
		memcpy(&o, opts, offsetof(struct osd_target_iscsi_options, workers));
	else if (opts && opts->version == OSD_TARGET_ISCSI_OPTIONS_VERSION)
		o = *opts;
	else if (opts)
		return -EINVAL;
	opts = &o;
	if (!luns || nluns == 0 || nluns > 256 || opts->port < 0 || opts->port > 65535)
		return -EINVAL;
	if (opts->chap_secret && opts->chap_secret_len < ISCSI_CHAP_SECRET_MIN) {
		if (opts->log)
			opts->log(opts->log_payload, OSD_TARGET_ISCSI_LOG_ERROR,
				  "CHAP secret too short: at least 12 bytes (RFC 7143 12.1.3)");
		return -EINVAL;
	}
	for (size_t i = 0; opts->allowed_initiators && i < opts->nallowed_initiators; i++)
		if (!opts->allowed_initiators[i] || !opts->allowed_initiators[i][0] ||
		    strlen(opts->allowed_initiators[i]) >= ISCSI_NAME_MAX)
			return -EINVAL;
	for (size_t i = 0; i < nluns; i++)
		if (!luns[i])
			return -EINVAL;
	if (opts->target_name && (strlen(opts->target_name) == 0 ||
				  strlen(opts->target_name) >= ISCSI_NAME_MAX))
		return -EINVAL;
	struct osd_target_iscsi *srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->listen_fd = -1;
	srv->stop_pipe[0] = srv->stop_pipe[1] = -1;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->conn_done, NULL);
	pthread_mutex_init(&srv->pool_mu, NULL);
	pthread_cond_init(&srv->pool_cv, NULL);
	atomic_init(&srv->next_tsih, 1);
	srv->luns = calloc(nluns, sizeof(*srv->luns));
	int rc = srv->luns ? copy_options(srv, opts) : -ENOMEM;
	if (rc == 0) {
		memcpy(srv->luns, luns, nluns * sizeof(*luns));
		srv->nluns = nluns;
		our_params(&srv->ours, srv->allow_digests);
		if (pipe2(srv->stop_pipe, O_CLOEXEC | O_NONBLOCK))
			rc = -errno;
	}
	if (rc == 0)
		rc = open_listener(srv, opts->address ? opts->address : "127.0.0.1", opts->port);
	if (rc == 0)
		rc = osd__tgt_iscsi_pool_start(srv, opts->workers);
	if (rc) {
		free_server(srv);
		return rc;
	}
	*out = srv;
	return 0;
}

int osd_target_iscsi_port(osd_target_iscsi *srv)
{
	return srv->port;
}

const char *osd_target_iscsi_error(osd_target_iscsi *srv)
{
	return srv->error[0] ? srv->error : "no error";
}

static struct iscsi_conn *conn_new(void)
{
	struct iscsi_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->send_mu, NULL);
	pthread_cond_init(&c->settled, NULL);
	return c;
}

static void conn_free(struct iscsi_conn *c)
{
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->send_mu);
	pthread_cond_destroy(&c->settled);
	free(c);
}

/* Join connection threads that have finished. With @p all, shut down and
 * join every connection. */
static void reap(struct osd_target_iscsi *srv, int all)
{
	pthread_mutex_lock(&srv->lock);
	struct iscsi_conn **pp = &srv->conns;
	struct iscsi_conn *done = NULL;
	while (*pp) {
		struct iscsi_conn *c = *pp;
		if (all && !atomic_load(&c->finished))
			shutdown(c->fd, SHUT_RDWR);
		if (all || atomic_load(&c->finished)) {
			*pp = c->next;
			c->next = done;
			done = c;
			srv->nconns--;
		} else {
			pp = &c->next;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	while (done) {
		struct iscsi_conn *c = done;
		done = c->next;
		pthread_join(c->thread, NULL);
		close(c->fd);
		conn_free(c);
	}
}

#define REINSTATE_WAIT_S 30 /* longest a replaced connection's command may run on */

/* Whether @p o is a live connection of the same session as @p c. */
static int same_session(const struct iscsi_conn *c, const struct iscsi_conn *o)
{
	return o != c && !atomic_load(&o->finished) && atomic_load(&o->in_session) &&
	       !memcmp(o->isid, c->isid, sizeof(c->isid)) &&
	       !strcmp(o->initiator_name, c->initiator_name);
}

/* Only the session's own initiator may replace it: with CHAP one that
 * authenticated as the same user, without CHAP (nobody is authenticated)
 * one from the same address. Anyone else presenting its InitiatorName and
 * ISID would otherwise kill it. */
static int may_replace(const struct iscsi_conn *c, const struct iscsi_conn *o)
{
	if (c->srv->chap_secret)
		return c->chap_user[0] && !strcmp(o->chap_user, c->chap_user);
	return !strcmp(o->host, c->host);
}

int osd__tgt_iscsi_reinstate(struct iscsi_conn *c)
{
	struct osd_target_iscsi *srv = c->srv;
	struct timespec until;
	int waiting = 1;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += REINSTATE_WAIT_S;
	pthread_mutex_lock(&srv->lock);
	for (struct iscsi_conn *o = srv->conns; o; o = o->next) {
		if (same_session(c, o) && !atomic_load(&o->superseded) && !may_replace(c, o)) {
			pthread_mutex_unlock(&srv->lock);
			osd__tgt_iscsi_refused(srv, "%s: may not reinstate the session of %s (%s)",
					       c->peer, o->peer, c->initiator_name);
			return -EPERM;
		}
	}
	while (waiting) {
		waiting = 0;
		/* the list is walked afresh each time: reap() may free finished ones */
		for (struct iscsi_conn *o = srv->conns; o; o = o->next) {
			if (!same_session(c, o))
				continue;
			if (!atomic_exchange(&o->superseded, 1)) {
				osd__tgt_iscsi_log(srv, OSD_TARGET_ISCSI_LOG_INFO,
					       "%s: session reinstated by %s", o->peer, c->peer);
				shutdown(o->fd, SHUT_RDWR);
			}
			waiting = 1;
		}
		if (waiting && pthread_cond_timedwait(&srv->conn_done, &srv->lock, &until)) {
			osd__tgt_iscsi_log(srv, OSD_TARGET_ISCSI_LOG_WARNING,
				       "%s: replaced connection still busy", c->peer);
			break;
		}
	}
	atomic_store(&c->in_session, 1); /* under the lock: two racing logins see each other */
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

void osd__tgt_iscsi_conn_finished(struct iscsi_conn *c)
{
	pthread_mutex_lock(&c->srv->lock);
	atomic_store(&c->finished, 1);
	pthread_cond_broadcast(&c->srv->conn_done);
	pthread_mutex_unlock(&c->srv->lock);
}

static void describe_peer(char *buf, size_t len, char *host_out, const struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
	}
	snprintf(buf, len, "%s:%d", host, port);
	memcpy(host_out, host, sizeof(host));
}

/*
 * Room for a new connection from @p c->host (with srv->lock): at most
 * max_per_addr from one address; connections still logging in may hold at
 * most max_connections - reserved slots, and when they hold them all (or
 * every slot is taken) the oldest of them is evicted for the newcomer, so
 * a flood of idle or slow logins cannot keep an initiator out. Returns
 * NULL when the connection may come in, else why not; @p evicted gets the
 * peer that made room ("" if none), to be logged without the lock.
 */
static const char *make_room(struct osd_target_iscsi *srv, struct iscsi_conn *c, char *evicted)
{
	unsigned live = 0, login = 0, same = 0;
	struct iscsi_conn *oldest = NULL;
	for (struct iscsi_conn *o = srv->conns; o; o = o->next) {
		if (atomic_load(&o->finished) || atomic_load(&o->evicted))
			continue;
		live++;
		if (!strcmp(o->host, c->host))
			same++;
		if (atomic_load(&o->logging_in)) {
			login++;
			/* newest first in the list: on a tie the later one is older */
			if (!oldest || o->accepted_ms <= oldest->accepted_ms)
				oldest = o;
		}
	}
	if (same >= srv->max_per_addr)
		return "too many connections from this address";
	if (live < srv->max_connections && login < srv->max_connections - srv->reserved)
		return NULL;
	if (!oldest)
		return "too many connections";
	atomic_store(&oldest->evicted, 1);
	shutdown(oldest->fd, SHUT_RDWR);
	memcpy(evicted, oldest->peer, sizeof(oldest->peer));
	return NULL;
}

static void accept_one(struct osd_target_iscsi *srv)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = accept4(srv->listen_fd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
	if (fd < 0)
		return; /* transient (ECONNABORTED, EMFILE...): keep serving */
	reap(srv, 0);
	struct iscsi_conn *c = conn_new();
	if (!c) {
		close(fd);
		return;
	}
	c->srv = srv;
	c->fd = fd;
	c->accepted_ms = osd__tgt_iscsi_now_ms();
	atomic_init(&c->logging_in, 1);
	describe_peer(c->peer, sizeof(c->peer), c->host, &ss);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	char evicted[sizeof(c->peer)] = "";
	pthread_mutex_lock(&srv->lock);
	const char *full = make_room(srv, c, evicted);
	if (!full && pthread_create(&c->thread, NULL, osd__tgt_iscsi_conn_main, c) == 0) {
		c->next = srv->conns;
		srv->conns = c;
		srv->nconns++;
		c = NULL;
	}
	pthread_mutex_unlock(&srv->lock);
	if (evicted[0])
		osd__tgt_iscsi_refused(srv, "%s: evicted (the oldest login) for a new connection",
				       evicted);
	if (c) {
		osd__tgt_iscsi_refused(srv, "%s: connection (%s)", c->peer, full ? full : "no thread");
		close(fd);
		conn_free(c);
	}
}

int osd_target_iscsi_run(osd_target_iscsi *srv)
{
	osd__tgt_iscsi_log(srv, OSD_TARGET_ISCSI_LOG_INFO, "serving %s on port %d (%zu LUN%s)",
		       srv->target_name, srv->port, srv->nluns, srv->nluns == 1 ? "" : "s");
	for (;;) {
		struct pollfd p[2] = { { srv->listen_fd, POLLIN, 0 }, { srv->stop_pipe[0], POLLIN, 0 } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return set_error(srv, -errno, "poll");
		}
		if (p[1].revents)
			return 0;
		if (p[0].revents & POLLIN)
			accept_one(srv);
	}
}

static void *run_thread(void *arg)
{
	osd_target_iscsi_run(arg);
	return NULL;
}

int osd_target_iscsi_start(osd_target_iscsi *srv)
{
	if (srv->run_thread_started)
		return -EALREADY;
	int rc = pthread_create(&srv->run_thread, NULL, run_thread, srv);
	if (rc)
		return set_error(srv, -rc, "pthread_create");
	srv->run_thread_started = 1;
	return 0;
}

void osd_target_iscsi_stop(osd_target_iscsi *srv)
{
	char b = 1;
	ssize_t n = write(srv->stop_pipe[1], &b, 1);
	(void)n; /* a full pipe already holds a stop request */
}

void osd_target_iscsi_free(osd_target_iscsi *srv)
{
	if (!srv)
		return;
	osd_target_iscsi_stop(srv);
	if (srv->run_thread_started)
		pthread_join(srv->run_thread, NULL);
	reap(srv, 1);
	free_server(srv);
}
