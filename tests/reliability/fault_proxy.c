/* The fault-injecting iSCSI proxy (fault_proxy.h): one poll loop thread.
 * PDUs are framed from the BHS alone (AHS words, data length, digests as
 * configured once the login reaches full feature phase); the framing is
 * independent of libosd's codec on purpose. */
#include "fault_proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 16
#define BHS_LEN 48
#define OUT_HIGH (512u << 10)   /* stop framing while this much waits to go out */
#define READ_CHUNK 65536
#define CLOSE_FLUSH_MS 2000     /* a closing pair gets this long to flush */
#define OP_LOGIN_REQ 0x03
#define OP_LOGIN_RSP 0x23
#define OP_DATA_IN 0x25

struct dir {
	uint8_t *in, *out;
	size_t in_len, in_cap, out_off, out_len, out_cap;
	uint64_t hold_until;      /* a delayed PDU at the head of in waits until then */
	int held;
};

/* fd[0] is the initiator side, fd[1] the target side; d[i] reads fd[i]
 * and writes fd[1 - i]. */
struct pair {
	int used, ffp, closing;
	int login_seen;           /* its first Login Request was looked at */
	int fd[2];
	struct dir d[2];
	uint64_t close_by;
};

struct fault_proxy {
	struct fault_proxy_config cfg;
	pthread_t thread;
	pthread_mutex_t lock;     /* guards st */
	struct fault_proxy_stats st;
	atomic_int enabled;
	atomic_uint fail_logins;  /* connections whose login still has to fail */
	atomic_uint closes_done;  /* fault_proxy_close_all() requests carried out */
	int listen_fd, stop_pipe[2]; /* the pipe carries 'c' (close all) or 'x' (stop) */
	uint64_t rng;
	struct pair pairs[MAX_PAIRS];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* splitmix64: the schedule is reproducible from the seed. */
static uint64_t rnd(struct fault_proxy *p)
{
	uint64_t z = (p->rng += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

const char *fault_kind_name(enum fault_kind k)
{
	static const char *const names[FAULT_KINDS] = { "pass", "delay", "drop", "truncate",
							"corrupt_hdr", "corrupt_data", "close" };

	return (unsigned)k < FAULT_KINDS ? names[k] : "?";
}

static void count(struct fault_proxy *p, enum fault_kind k)
{
	pthread_mutex_lock(&p->lock);
	p->st.pdus++;
	p->st.faults[k]++;
	pthread_mutex_unlock(&p->lock);
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 4096;
	uint8_t *b;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	b = realloc(*buf, c);
	if (!b)
		return -ENOMEM;
	*buf = b;
	*cap = c;
	return 0;
}

static int set_nonblock(int fd)
{
	int one = 1, fl = fcntl(fd, F_GETFL);

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---- framing ---- */

static size_t pad4(size_t n)
{
	return (4 - (n & 3)) & 3;
}

/* Whole length of the PDU whose BHS is at @p b, with the digests of phase @p ffp. */
static size_t pdu_len(const struct fault_proxy *p, const uint8_t *b, int ffp, size_t *head)
{
	size_t dlen = (size_t)b[5] << 16 | (size_t)b[6] << 8 | b[7];
	size_t h = BHS_LEN + (size_t)b[4] * 4 + (ffp && p->cfg.header_digest ? 4 : 0);

	*head = h;
	return h + dlen + pad4(dlen) + (ffp && p->cfg.data_digest && dlen ? 4 : 0);
}

static int is_final_login_rsp(const uint8_t *b)
{
	/* Login Response, T bit, NSG = full feature, Status-Class 0 */
	return (b[0] & 0x3F) == OP_LOGIN_RSP && (b[1] & 0x80) && (b[1] & 3) == 3 && b[36] == 0;
}

/* ---- the schedule ---- */

static enum fault_kind choose(struct fault_proxy *p, const struct pair *pr, int i,
			      const uint8_t *b)
{
	unsigned total = 0;
	uint64_t r;

	if (!atomic_load(&p->enabled) || !pr->ffp || !(p->cfg.dirs & (i ? 2u : 1u)))
		return FAULT_PASS;
	if (p->cfg.data_in_only && ((b[0] & 0x3F) != OP_DATA_IN || !(b[5] | b[6] | b[7])))
		return FAULT_PASS;
	for (int k = 0; k < FAULT_KINDS; k++)
		total += p->cfg.weight[k];
	if (!total)
		return FAULT_PASS;
	r = rnd(p) % total;
	for (int k = 0; k < FAULT_KINDS; k++) {
		if (r < p->cfg.weight[k])
			return (enum fault_kind)k;
		r -= p->cfg.weight[k];
	}
	return FAULT_PASS;
}

static int emit(struct dir *d, const uint8_t *b, size_t n)
{
	if (grow(&d->out, &d->out_cap, d->out_len + n))
		return -ENOMEM;
	memcpy(d->out + d->out_len, b, n);
	d->out_len += n;
	return 0;
}

static void start_close(struct pair *pr)
{
	if (!pr->closing)
		pr->close_by = now_ms() + CLOSE_FLUSH_MS;
	pr->closing = 1;
}

/* Applies fault @p k to the PDU [b, b + len) going out through @p d. */
static int apply(struct fault_proxy *p, struct pair *pr, struct dir *d, enum fault_kind k,
		 uint8_t *b, size_t len, size_t head)
{
	size_t at;

	if (k == FAULT_CORRUPT_DATA && len == head)
		k = FAULT_CORRUPT_HDR; /* no data segment: the header takes it */
	count(p, k);
	switch (k) {
	case FAULT_DROP:
		start_close(pr);
		return 0;
	case FAULT_TRUNCATE:
		start_close(pr);
		return emit(d, b, 1 + (size_t)(rnd(p) % (len - 1)));
	case FAULT_CLOSE:
		start_close(pr);
		return emit(d, b, len);
	case FAULT_CORRUPT_HDR:
	case FAULT_CORRUPT_DATA:
		at = k == FAULT_CORRUPT_HDR ? (size_t)(rnd(p) % head)
					    : head + (size_t)(rnd(p) % (len - head));
		b[at] ^= (uint8_t)(1 + rnd(p) % 255);
		return emit(d, b, len);
	default:
		return emit(d, b, len);
	}
}

/* The first Login Request of a connection: fails it when asked to. */
static int login_fails(struct fault_proxy *p, struct pair *pr, int i, const uint8_t *b)
{
	unsigned n;

	if (i != 0 || pr->login_seen || (b[0] & 0x3F) != OP_LOGIN_REQ)
		return 0;
	pr->login_seen = 1;
	n = atomic_load(&p->fail_logins);
	while (n && !atomic_compare_exchange_weak(&p->fail_logins, &n, n - 1))
		;
	if (!n)
		return 0;
	pthread_mutex_lock(&p->lock);
	p->st.logins_failed++;
	pthread_mutex_unlock(&p->lock);
	start_close(pr);
	return 1;
}

/* Frames and forwards the complete PDUs read on side @p i. */
static int frame(struct fault_proxy *p, struct pair *pr, int i)
{
	struct dir *d = &pr->d[i];
	size_t off = 0;
	int rc = 0;

	while (!rc && !pr->closing && d->out_len < OUT_HIGH && d->in_len - off >= BHS_LEN) {
		uint8_t *b = d->in + off;
		size_t head, len = pdu_len(p, b, pr->ffp, &head);
		enum fault_kind k;

		if (d->in_len - off < len)
			break;
		if (login_fails(p, pr, i, b))
			break;
		if (d->held && now_ms() < d->hold_until)
			break;
		k = d->held ? FAULT_PASS : choose(p, pr, i, b);
		if (k == FAULT_DELAY) {
			count(p, k);
			d->held = 1;
			d->hold_until = now_ms() + 1 + rnd(p) % (p->cfg.max_delay_ms + 1u);
			break;
		}
		if (d->held) {
			d->held = 0;
			rc = emit(d, b, len);
		} else {
			rc = apply(p, pr, d, k, b, len, head);
		}
		if (i == 1 && is_final_login_rsp(b))
			pr->ffp = 1;
		off += len;
	}
	if (off) {
		d->in_len -= off;
		memmove(d->in, d->in + off, d->in_len);
	}
	return rc;
}

/* ---- sockets ---- */

static void pair_close(struct fault_proxy *p, struct pair *pr)
{
	for (int i = 0; i < 2; i++) {
		close(pr->fd[i]);
		free(pr->d[i].in);
		free(pr->d[i].out);
	}
	memset(pr, 0, sizeof(*pr));
	pthread_mutex_lock(&p->lock);
	p->st.closed++;
	pthread_mutex_unlock(&p->lock);
}

static int connect_target(const struct fault_proxy *p)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p->cfg.target_port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (inet_pton(AF_INET, p->cfg.target_host, &sa.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || set_nonblock(fd) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void on_accept(struct fault_proxy *p)
{
	int c = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC), t;
	struct pair *pr = NULL;

	if (c < 0)
		return;
	for (int i = 0; i < MAX_PAIRS && !pr; i++)
		if (!p->pairs[i].used)
			pr = &p->pairs[i];
	t = pr ? connect_target(p) : -1;
	if (t < 0 || set_nonblock(c) < 0) {
		close(c);
		if (t >= 0)
			close(t);
		return;
	}
	memset(pr, 0, sizeof(*pr));
	pr->used = 1;
	pr->fd[0] = c;
	pr->fd[1] = t;
	pthread_mutex_lock(&p->lock);
	p->st.accepted++;
	pthread_mutex_unlock(&p->lock);
}

/* Reads what side @p i has; EOF or an error ends the pair (after a flush). */
static void pump_in(struct pair *pr, int i)
{
	struct dir *d = &pr->d[i];
	ssize_t n;

	if (grow(&d->in, &d->in_cap, d->in_len + READ_CHUNK)) {
		start_close(pr);
		return;
	}
	n = recv(pr->fd[i], d->in + d->in_len, READ_CHUNK, 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		start_close(pr);
	else if (n > 0)
		d->in_len += (size_t)n;
}

/* Writes what waits for side @p i's peer. Returns -1 when that fails. */
static int pump_out(struct pair *pr, int i)
{
	struct dir *d = &pr->d[i];
	ssize_t n;

	if (d->out_off == d->out_len)
		return 0;
	n = send(pr->fd[1 - i], d->out + d->out_off, d->out_len - d->out_off, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	d->out_off += (size_t)n;
	if (d->out_off == d->out_len)
		d->out_off = d->out_len = 0;
	return 0;
}

static int flushed(const struct pair *pr)
{
	return pr->d[0].out_len == 0 && pr->d[1].out_len == 0;
}

/* One round for a pair: read, frame, write, maybe close. */
static void pair_step(struct fault_proxy *p, struct pair *pr, const struct pollfd *pf)
{
	for (int i = 0; i < 2; i++) {
		if (!pr->closing && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
			pump_in(pr, i);
		if (frame(p, pr, i))
			start_close(pr);
	}
	for (int i = 0; i < 2; i++) {
		if (pump_out(pr, i)) { /* the peer is gone: nothing more can go out */
			pr->d[0].out_len = pr->d[1].out_len = 0;
			start_close(pr);
		}
	}
	if (pr->closing && (flushed(pr) || now_ms() >= pr->close_by))
		pair_close(p, pr);
}

/* Until the first delayed PDU is due, at most 100 ms. */
static int poll_timeout(const struct fault_proxy *p)
{
	uint64_t now = now_ms(), until = now + 100;

	for (int i = 0; i < MAX_PAIRS; i++) {
		for (int j = 0; j < 2 && p->pairs[i].used; j++) {
			const struct dir *d = &p->pairs[i].d[j];

			if (d->held && d->hold_until < until)
				until = d->hold_until;
		}
	}
	return until <= now ? 0 : (int)(until - now);
}

/* A byte from the test: 'c' closes every connection (returns 1), anything
 * else stops the thread (returns 0). */
static int on_command(struct fault_proxy *p)
{
	char c = 'x';

	if (read(p->stop_pipe[0], &c, 1) != 1 || c != 'c')
		return 0;
	for (int i = 0; i < MAX_PAIRS; i++)
		if (p->pairs[i].used)
			pair_close(p, &p->pairs[i]);
	atomic_fetch_add(&p->closes_done, 1);
	return 1;
}

static void *proxy_main(void *arg)
{
	struct fault_proxy *p = arg;

	for (;;) {
		struct pollfd pf[2 + 2 * MAX_PAIRS];
		int n = 2;

		pf[0] = (struct pollfd){ .fd = p->stop_pipe[0], .events = POLLIN };
		pf[1] = (struct pollfd){ .fd = p->listen_fd, .events = POLLIN };
		for (int i = 0; i < MAX_PAIRS; i++) {
			struct pair *pr = &p->pairs[i];

			for (int j = 0; j < 2; j++, n++)
				pf[n] = (struct pollfd){
					.fd = pr->used ? pr->fd[j] : -1,
					.events = (short)((pr->used && !pr->closing ? POLLIN : 0) |
							  (pr->used && pr->d[1 - j].out_len ? POLLOUT : 0)) };
		}
		if (poll(pf, (nfds_t)n, poll_timeout(p)) < 0 && errno != EINTR)
			break;
		if (pf[0].revents && !on_command(p))
			break;
		if (pf[1].revents & POLLIN)
			on_accept(p);
		for (int i = 0; i < MAX_PAIRS; i++)
			if (p->pairs[i].used)
				pair_step(p, &p->pairs[i], &pf[2 + 2 * i]);
	}
	return NULL;
}

static int listen_local(unsigned *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

int fault_proxy_start(struct fault_proxy **out, const struct fault_proxy_config *cfg,
		      unsigned *port)
{
	struct fault_proxy *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	p->rng = cfg->seed;
	atomic_init(&p->enabled, 1);
	atomic_init(&p->fail_logins, 0);
	atomic_init(&p->closes_done, 0);
	pthread_mutex_init(&p->lock, NULL);
	p->listen_fd = listen_local(port);
	if (p->listen_fd < 0 || pipe2(p->stop_pipe, O_CLOEXEC) < 0) {
		rc = p->listen_fd < 0 ? p->listen_fd : -errno;
		if (p->listen_fd >= 0)
			close(p->listen_fd);
		free(p);
		return rc;
	}
	rc = pthread_create(&p->thread, NULL, proxy_main, p);
	if (rc) {
		close(p->listen_fd);
		close(p->stop_pipe[0]);
		close(p->stop_pipe[1]);
		free(p);
		return -rc;
	}
	*out = p;
	return 0;
}

void fault_proxy_enable(struct fault_proxy *p, int on)
{
	atomic_store(&p->enabled, on);
}

void fault_proxy_fail_logins(struct fault_proxy *p, unsigned n)
{
	atomic_store(&p->fail_logins, n);
}

#define CLOSE_WAIT_MS 5000

int fault_proxy_close_all(struct fault_proxy *p)
{
	unsigned before = atomic_load(&p->closes_done);
	uint64_t end = now_ms() + CLOSE_WAIT_MS;

	if (write(p->stop_pipe[1], "c", 1) != 1)
		return -EIO;
	while (atomic_load(&p->closes_done) == before) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		poll(NULL, 0, 1); /* waiting for the proxy thread, bounded above */
	}
	return 0;
}

void fault_proxy_stats(struct fault_proxy *p, struct fault_proxy_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	pthread_mutex_unlock(&p->lock);
}

uint64_t fault_proxy_closing(const struct fault_proxy_stats *st)
{
	return st->faults[FAULT_DROP] + st->faults[FAULT_TRUNCATE] + st->faults[FAULT_CLOSE];
}

uint64_t fault_proxy_injected(const struct fault_proxy_stats *st)
{
	uint64_t n = 0;

	for (int k = FAULT_PASS + 1; k < FAULT_KINDS; k++)
		n += st->faults[k];
	return n;
}

void fault_proxy_stop(struct fault_proxy *p)
{
	if (!p)
		return;
	if (write(p->stop_pipe[1], "x", 1) != 1)
		return; /* cannot happen on an empty pipe; leaking beats hanging */
	pthread_join(p->thread, NULL);
	for (int i = 0; i < MAX_PAIRS; i++)
		if (p->pairs[i].used)
			pair_close(p, &p->pairs[i]);
	close(p->listen_fd);
	close(p->stop_pipe[0]);
	close(p->stop_pipe[1]);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
