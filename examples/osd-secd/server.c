/*
 * The TLS 1.3 server (RFC 8446): every client presents a certificate that
 * chains to the CA file; its subject CN (or, without one, its first DNS or
 * e-mail SAN) is the identity the policy names. One thread per connection,
 * at most max_clients of them; a connection idle for idle_ms is closed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include "secd.h"

#define HANDSHAKE_MS 10000

struct secd_server {
	SSL_CTX *ctx;
	int lfd;
	unsigned max_clients, idle_ms;
	pthread_mutex_t lock;
	unsigned nclients;
};

struct conn {
	struct secd_server *srv;
	int fd;
	char peer[64];
};

static const char *ossl_reason(char *buf, size_t len)
{
	unsigned long e = ERR_get_error();

	if (!e)
		snprintf(buf, len, "connection closed or timed out");
	else
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return buf;
}

static void set_timeout(int fd, unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A printable identity without blanks, as the policy file can name it. */
static int usable_identity(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

static int identity_of(SSL *ssl, char *out, size_t outlen)
{
	X509 *cert = SSL_get0_peer_certificate(ssl);
	GENERAL_NAMES *sans;
	int n, rc = -1;

	if (!cert)
		return -1;
	n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, out,
				      (int)outlen);
	if (n > 0 && (size_t)n < outlen && usable_identity(out, (size_t)n))
		return 0;
	sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans) && rc < 0; i++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);
		ASN1_IA5STRING *s = g->type == GEN_DNS ? g->d.dNSName :
				    g->type == GEN_EMAIL ? g->d.rfc822Name : NULL;

		if (s && (size_t)s->length < outlen &&
		    usable_identity((const char *)s->data, (size_t)s->length)) {
			memcpy(out, s->data, (size_t)s->length);
			out[s->length] = 0;
			rc = 0;
		}
	}
	GENERAL_NAMES_free(sans);
	return rc;
}

static int read_exact(SSL *ssl, uint8_t *buf, size_t len)
{
	size_t got = 0, n;

	while (got < len) {
		if (SSL_read_ex(ssl, buf + got, len - got, &n) != 1)
			return -1;
		got += n;
	}
	return 0;
}

static int send_msg(SSL *ssl, const struct osd_secmsg *a)
{
	uint8_t buf[OSD_SECMSG_MAX_LEN];
	int n = osd_secmsg_encode(a, buf, sizeof(buf));
	size_t done;

	if (n < 0) {
		secd_log(SECD_ERR, "cannot encode an answer: %s", strerror(-n));
		return -1;
	}
	return SSL_write_ex(ssl, buf, (size_t)n, &done) == 1 ? 0 : -1;
}

/* Reads and answers requests until the peer leaves, idles or misbehaves. */
static void serve(struct conn *c, SSL *ssl, const char *identity)
{
	uint8_t buf[OSD_SECMSG_MAX_LEN];
	struct osd_secmsg q, a;
	char why[200];

	for (;;) {
		int n;

		if (read_exact(ssl, buf, OSD_SECMSG_HDR_LEN) < 0)
			return;
		n = osd_secmsg_decode(buf, OSD_SECMSG_HDR_LEN, &q, why, sizeof(why));
		if (n == 0) {
			size_t body = (size_t)buf[8] << 24 | (size_t)buf[9] << 16 |
				      (size_t)buf[10] << 8 | buf[11]; /* checked by decode */

			if (read_exact(ssl, buf + OSD_SECMSG_HDR_LEN, body) < 0)
				return;
			n = osd_secmsg_decode(buf, OSD_SECMSG_HDR_LEN + body, &q, why, sizeof(why));
		}
		if (n > 0 && q.type != OSD_SECMSG_REQUEST) {
			snprintf(why, sizeof(why), "a client sends only REQUEST messages");
			n = -EBADMSG;
		}
		if (n < 0) {
			memset(&a, 0, sizeof(a));
			a.type = OSD_SECMSG_REFUSE;
			a.reason = OSD_SECREF_BAD_REQUEST;
			snprintf(a.text, sizeof(a.text), "%.*s", OSD_SECMSG_REASON_MAX, why);
			secd_log(SECD_WARNING, "refuse client=%s peer=%s: malformed message: %s; "
				 "closing the connection", identity, c->peer, why);
			send_msg(ssl, &a);
			return;
		}
		secd_answer(identity, &q, &a);
		n = send_msg(ssl, &a);
		memset(&a, 0, sizeof(a));
		if (n < 0)
			return;
	}
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct secd_server *s = c->srv;
	SSL *ssl = SSL_new(s->ctx);
	char identity[128], err[160];

	set_timeout(c->fd, HANDSHAKE_MS);
	if (!ssl || SSL_set_fd(ssl, c->fd) != 1 || SSL_accept(ssl) != 1) {
		secd_log(SECD_WARNING, "refuse peer=%s: TLS handshake failed: %s", c->peer,
			 ossl_reason(err, sizeof(err)));
	} else if (identity_of(ssl, identity, sizeof(identity)) < 0) {
		secd_log(SECD_WARNING, "refuse peer=%s: the client certificate names no usable "
			 "identity (subject CN or DNS/e-mail SAN, printable, no blanks)", c->peer);
	} else {
		secd_log(SECD_NOTICE, "client=%s peer=%s connected", identity, c->peer);
		set_timeout(c->fd, s->idle_ms);
		serve(c, ssl, identity);
		secd_log(SECD_NOTICE, "client=%s peer=%s disconnected", identity, c->peer);
		SSL_shutdown(ssl);
	}
	ERR_clear_error();
	SSL_free(ssl);
	close(c->fd);
	pthread_mutex_lock(&s->lock);
	s->nclients--;
	pthread_mutex_unlock(&s->lock);
	free(c);
	return NULL;
}

static void peer_name(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
	}
	snprintf(out, len, "%s:%u", host, port);
}

static void accept_one(struct secd_server *s)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct conn *c;
	pthread_t t;
	int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC), one = 1;

	if (fd < 0)
		return;
	c = calloc(1, sizeof(*c));
	if (c)
		peer_name(&ss, c->peer, sizeof(c->peer));
	pthread_mutex_lock(&s->lock);
	if (!c || s->nclients >= s->max_clients) {
		pthread_mutex_unlock(&s->lock);
		secd_log(SECD_WARNING, "refuse peer=%s: %u clients connected already (--max-clients)",
			 c ? c->peer : "?", s->max_clients);
		free(c);
		close(fd);
		return;
	}
	s->nclients++;
	pthread_mutex_unlock(&s->lock);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->srv = s;
	c->fd = fd;
	if (pthread_create(&t, NULL, conn_thread, c) != 0) {
		pthread_mutex_lock(&s->lock);
		s->nclients--;
		pthread_mutex_unlock(&s->lock);
		close(fd);
		free(c);
		return;
	}
	pthread_detach(t);
}

/* host:port, [v6]:port or :port (all addresses). */
static int listen_on(struct secd_server *s, const char *spec, char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints, *ai = NULL;
	size_t hl;
	int one = 1, rc;

	if (!colon || !colon[1] || (size_t)(colon - spec) >= sizeof(host)) {
		snprintf(err, errlen, "--listen %s: expected HOST:PORT", spec);
		return -EINVAL;
	}
	hl = (size_t)(colon - spec);
	memcpy(host, spec, hl);
	host[hl] = 0;
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if ((rc = getaddrinfo(*host ? host : NULL, colon + 1, &hints, &ai)) != 0) {
		snprintf(err, errlen, "--listen %s: %s", spec, gai_strerror(rc));
		return -EINVAL;
	}
	s->lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd >= 0)
		setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s->lfd < 0 || bind(s->lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(s->lfd, 128) < 0) {
		rc = -errno;
		snprintf(err, errlen, "--listen %s: %s", spec, strerror(errno));
		freeaddrinfo(ai);
		return rc;
	}
	freeaddrinfo(ai);
	return 0;
}

static int write_port_file(int fd, const char *path)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char tmp[4096];
	unsigned port;
	FILE *f;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -errno;
	port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
					      ((struct sockaddr_in *)&ss)->sin_port);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		return -errno;
	return 0;
}

static int tls_setup(struct secd_server *s, const struct secd_server_opts *o, char *err,
		     size_t errlen)
{
	STACK_OF(X509_NAME) *cas;
	char r[160];

	s->ctx = SSL_CTX_new(TLS_server_method());
	if (!s->ctx)
		return -ENOMEM;
	SSL_CTX_set_min_proto_version(s->ctx, TLS1_3_VERSION);
	SSL_CTX_set_verify(s->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	SSL_CTX_set_session_cache_mode(s->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(s->ctx, 0);
	if (SSL_CTX_load_verify_locations(s->ctx, o->ca, NULL) != 1) {
		snprintf(err, errlen, "%s: cannot load the CA file: %s", o->ca, ossl_reason(r, sizeof(r)));
		return -EINVAL;
	}
	cas = SSL_load_client_CA_file(o->ca);
	if (cas)
		SSL_CTX_set_client_CA_list(s->ctx, cas);
	if (SSL_CTX_use_certificate_chain_file(s->ctx, o->cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(s->ctx, o->key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(s->ctx) != 1) {
		snprintf(err, errlen, "%s, %s: cannot load the certificate and its key: %s", o->cert,
			 o->key, ossl_reason(r, sizeof(r)));
		return -EINVAL;
	}
	return 0;
}

int secd_server_start(struct secd_server **out, const struct secd_server_opts *o)
{
	struct secd_server *s = calloc(1, sizeof(*s));
	char err[512] = "";
	int rc;

	if (!s)
		return -ENOMEM;
	s->lfd = -1;
	s->max_clients = o->max_clients;
	s->idle_ms = o->idle_ms;
	pthread_mutex_init(&s->lock, NULL);
	rc = tls_setup(s, o, err, sizeof(err));
	if (rc == 0)
		rc = listen_on(s, o->listen, err, sizeof(err));
	if (rc == 0 && o->port_file && (rc = write_port_file(s->lfd, o->port_file)) < 0)
		snprintf(err, sizeof(err), "%s: %s", o->port_file, strerror(-rc));
	if (rc < 0) {
		secd_log(SECD_ERR, "%s", *err ? err : strerror(-rc));
		secd_server_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int secd_server_run(struct secd_server *s, const struct secd_events *ev)
{
	sigset_t none;

	sigemptyset(&none);
	while (!*ev->stop) {
		struct pollfd p = { s->lfd, POLLIN, 0 };
		struct timespec ts, *tp = NULL;
		int ms = ev->timeout_ms();

		if (*ev->reload) {
			*ev->reload = 0;
			ev->do_reload();
			continue;
		}
		if (*ev->rotate || ms == 0) {
			*ev->rotate = 0;
			ev->do_rotate();
			continue;
		}
		if (ms > 0) {
			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (long)(ms % 1000) * 1000000L;
			tp = &ts;
		}
		/* the signals are blocked except inside ppoll(): none is lost */
		if (ppoll(&p, 1, tp, &none) < 0) {
			if (errno == EINTR)
				continue;
			secd_log(SECD_ERR, "poll: %s", strerror(errno));
			return -1;
		}
		if (p.revents & POLLIN)
			accept_one(s);
	}
	return 0;
}

void secd_server_free(struct secd_server *s)
{
	unsigned busy;

	if (!s)
		return;
	if (s->lfd >= 0)
		close(s->lfd);
	s->lfd = -1;
	pthread_mutex_lock(&s->lock);
	busy = s->nclients;
	pthread_mutex_unlock(&s->lock);
	if (busy)
		return; /* connection threads still use it: the process ends with them */
	SSL_CTX_free(s->ctx);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
