/* Helpers shared by the security test suites (not part of the library). */
#ifndef OSD_TESTS_SEC_TESTUTIL_H
#define OSD_TESTS_SEC_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Parse @hex (even length, no separators) into @out; returns bytes written or -1. */
int sec_hex(const char *hex, uint8_t *out, size_t outlen);

/* 1 if the openssl command-line tool can be run, else 0. */
int sec_cli_available(void);

/*
 * HMAC-SHA1 of @msg under @key computed independently by
 * `openssl mac -digest SHA1 -macopt hexkey:... HMAC`; 0 on success.
 * The input goes through a file in a private mkdtemp directory under $TMPDIR.
 */
int sec_cli_hmac_sha1(const uint8_t *key, size_t klen, const uint8_t *msg, size_t mlen,
		      uint8_t out[20]);

#endif
