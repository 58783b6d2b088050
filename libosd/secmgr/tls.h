/* The client's TLS 1.3 channel to a security manager (tls_client.c). */
#ifndef OSD_SECMGR_TLS_H
#define OSD_SECMGR_TLS_H

#include <stddef.h>
#include <openssl/ssl.h>
#include <osd/secmgr.h>

struct osd__sectls {
	SSL_CTX *ctx;
	SSL *ssl;
	int fd;
	char host[256];
	char port[8];
	unsigned timeout_ms;
};

/* Parses the URL and loads certificate, key and CA (no connection yet). */
int osd__sectls_init(struct osd__sectls *t, const struct osd_secmgr_options *o, char *err,
		     size_t errlen);
/* Connects and completes the handshake (the manager's certificate checked). */
int osd__sectls_connect(struct osd__sectls *t, char *err, size_t errlen);
void osd__sectls_disconnect(struct osd__sectls *t);
void osd__sectls_free(struct osd__sectls *t);
/* Writes all @p len bytes / reads exactly @p len bytes: 0 or -errno. */
int osd__sectls_write(struct osd__sectls *t, const void *buf, size_t len);
int osd__sectls_read(struct osd__sectls *t, void *buf, size_t len);

#endif
