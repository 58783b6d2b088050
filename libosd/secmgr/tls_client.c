/*
 * The client side of the credential protocol's channel: TLS 1.3 only
 * (RFC 8446), the client's certificate sent for the manager to verify, the
 * manager's checked against the CA file and the URL's host (RFC 6125).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include "keys/keys.h"
#include "tls.h"

#define URL_SCHEME "osdsec://"

static int fail(char *err, size_t errlen, int rc, const char *what, const char *arg)
{
	char ossl[160] = "";
	unsigned long e = ERR_get_error();

	if (e)
		ERR_error_string_n(e, ossl, sizeof(ossl));
	ERR_clear_error();
	if (err && errlen)
		snprintf(err, errlen, "%s%s%s%s%s", what, arg ? " " : "", arg ? arg : "",
			 *ossl ? ": " : "", ossl);
	return rc;
}

/* osdsec://host[:port] or osdsec://[v6addr][:port]; nothing after. */
static int parse_url(struct osd__sectls *t, const char *url)
{
	const char *h, *end, *p;
	size_t hl;

	if (!url || strncmp(url, URL_SCHEME, strlen(URL_SCHEME)))
		return -EINVAL;
	h = url + strlen(URL_SCHEME);
	if (*h == '[') {
		end = strchr(++h, ']');
		if (!end)
			return -EINVAL;
		p = end + 1;
	} else {
		end = h + strcspn(h, ":/");
		p = end;
	}
	hl = (size_t)(end - h);
	if (hl == 0 || hl >= sizeof(t->host))
		return -EINVAL;
	memcpy(t->host, h, hl);
	t->host[hl] = 0;
	snprintf(t->port, sizeof(t->port), "%d", OSD_SECMGR_DEFAULT_PORT);
	if (*p == ':') {
		char *e;
		unsigned long v = strtoul(p + 1, &e, 10);

		if (e == p + 1 || v == 0 || v > 65535)
			return -EINVAL;
		snprintf(t->port, sizeof(t->port), "%lu", v);
		p = e;
	}
	if (*p == '/')
		p++;
	return *p ? -EINVAL : 0;
}

/* A private key other users may read is refused, as ssh refuses one. */
static int key_private(const char *path, char *err, size_t errlen)
{
	struct stat sb;

	if (stat(path, &sb) != 0)
		return fail(err, errlen, -errno, "cannot read the private key", path);
	return osd__secret_mode_private(sb.st_mode, path, "private key", err, errlen);
}

int osd__sectls_init(struct osd__sectls *t, const struct osd_secmgr_options *o, char *err,
		     size_t errlen)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->timeout_ms = o->timeout_ms;
	if (parse_url(t, o->url) < 0)
		return fail(err, errlen, -EINVAL, "not a security manager URL "
			    "(osdsec://host[:port]):", o->url ? o->url : "(none)");
	if (!o->cert_file || !o->key_file || !o->ca_file)
		return fail(err, errlen, -EINVAL, "a certificate, its key and a CA file are all "
			    "needed", NULL);
	if ((rc = key_private(o->key_file, err, errlen)) < 0)
		return rc;
	t->ctx = SSL_CTX_new(TLS_client_method());
	if (!t->ctx)
		return fail(err, errlen, -ENOMEM, "cannot make a TLS context", NULL);
	SSL_CTX_set_min_proto_version(t->ctx, TLS1_3_VERSION);
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_load_verify_locations(t->ctx, o->ca_file, NULL) != 1)
		return fail(err, errlen, -ENOENT, "cannot load the CA file", o->ca_file);
	if (SSL_CTX_use_certificate_chain_file(t->ctx, o->cert_file) != 1)
		return fail(err, errlen, -ENOENT, "cannot load the certificate", o->cert_file);
	if (SSL_CTX_use_PrivateKey_file(t->ctx, o->key_file, SSL_FILETYPE_PEM) != 1)
		return fail(err, errlen, -ENOENT, "cannot load the private key", o->key_file);
	if (SSL_CTX_check_private_key(t->ctx) != 1)
		return fail(err, errlen, -EINVAL, "the private key does not match the "
			    "certificate", o->key_file);
	return 0;
}

static void set_timeouts(int fd, unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* also bounds connect() */
}

static int tcp_connect(struct osd__sectls *t, char *err, size_t errlen)
{
	struct addrinfo hints, *ai = NULL, *a;
	int rc = -ECONNREFUSED, one = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(t->host, t->port, &hints, &ai) != 0)
		return fail(err, errlen, -EHOSTUNREACH, "cannot resolve", t->host);
	for (a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);

		if (fd < 0)
			continue;
		set_timeouts(fd, t->timeout_ms);
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			t->fd = fd;
			rc = 0;
			break;
		}
		rc = errno == EINPROGRESS || errno == EAGAIN ? -ETIMEDOUT : -errno;
		close(fd);
	}
	freeaddrinfo(ai);
	if (rc < 0 && err && errlen)
		snprintf(err, errlen, "cannot connect to %s port %s: %s", t->host, t->port,
			 strerror(-rc));
	return rc;
}

/* Checks the manager's name: an IP address literal against its IP SANs, a
 * name against its DNS SANs (CN only when it has none). */
static int expect_host(SSL *ssl, const char *host)
{
	X509_VERIFY_PARAM *vp = SSL_get0_param(ssl);
	unsigned char buf[16];

	if (inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1)
		return X509_VERIFY_PARAM_set1_ip_asc(vp, host) == 1 ? 0 : -ENOMEM;
	return SSL_set1_host(ssl, host) == 1 ? 0 : -ENOMEM;
}

int osd__sectls_connect(struct osd__sectls *t, char *err, size_t errlen)
{
	int rc;

	osd__sectls_disconnect(t);
	if ((rc = tcp_connect(t, err, errlen)) < 0)
		return rc;
	t->ssl = SSL_new(t->ctx);
	if (!t->ssl || expect_host(t->ssl, t->host) < 0 || SSL_set_fd(t->ssl, t->fd) != 1) {
		osd__sectls_disconnect(t);
		return fail(err, errlen, -ENOMEM, "cannot set up TLS", NULL);
	}
	if (SSL_connect(t->ssl) != 1) {
		long v = SSL_get_verify_result(t->ssl);

		if (v != X509_V_OK && err && errlen) {
			snprintf(err, errlen, "the security manager's certificate was refused: %s",
				 X509_verify_cert_error_string(v));
			ERR_clear_error();
		} else {
			fail(err, errlen, 0, "TLS handshake with the security manager failed", NULL);
		}
		osd__sectls_disconnect(t);
		return -EPROTO;
	}
	return 0;
}

void osd__sectls_disconnect(struct osd__sectls *t)
{
	if (t->ssl) {
		SSL_shutdown(t->ssl);
		SSL_free(t->ssl);
		t->ssl = NULL;
	}
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

void osd__sectls_free(struct osd__sectls *t)
{
	osd__sectls_disconnect(t);
	SSL_CTX_free(t->ctx);
	t->ctx = NULL;
}

static int io_error(struct osd__sectls *t, int r)
{
	int e = SSL_get_error(t->ssl, r);

	ERR_clear_error();
	if (e == SSL_ERROR_ZERO_RETURN)
		return -ECONNRESET;
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return -ETIMEDOUT; /* SO_RCVTIMEO/SO_SNDTIMEO ran out */
	if (e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -ETIMEDOUT;
	return -EPIPE;
}

int osd__sectls_write(struct osd__sectls *t, const void *buf, size_t len)
{
	size_t done;

	if (!t->ssl)
		return -ENOTCONN;
	if (SSL_write_ex(t->ssl, buf, len, &done) != 1)
		return io_error(t, 0);
	return done == len ? 0 : -EPIPE;
}

int osd__sectls_read(struct osd__sectls *t, void *buf, size_t len)
{
	size_t got = 0, n;

	if (!t->ssl)
		return -ENOTCONN;
	while (got < len) {
		if (SSL_read_ex(t->ssl, (char *)buf + got, len - got, &n) != 1)
			return io_error(t, 0);
		got += n;
	}
	return 0;
}
