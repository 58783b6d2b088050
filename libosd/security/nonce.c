/*
 * Request nonces and the wall clock they are stamped with.
 * Format (docs/security.md section 4): 6-byte big-endian ms timestamp in the
 * OSD's clock domain, then 6 random bytes.
 *
 * RAND_bytes() costs ~1.5 us per call whatever the size, three times the
 * HMAC of a whole CDB, so each thread draws random bytes in blocks and hands
 * them out 6 at a time. The bytes need to be unique and unguessable, not
 * secret. A forked child must not reuse its parent's unused bytes (the two
 * processes would send identical nonces), so an atfork handler empties the
 * buffer of the thread that forked, the only thread the child has.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <openssl/rand.h>

#include <osd/security.h>

#include "proto/byteorder.h"

#define OSD_NONCE_TIME_LEN 6
#define OSD_NONCE_RAND_LEN (OSD_NONCE_LEN - OSD_NONCE_TIME_LEN)
#define OSD_NONCE_POOL (170 * OSD_NONCE_RAND_LEN) /* ~1 KiB per thread */

struct osd_nonce_pool {
	size_t used; /* bytes already handed out; == OSD_NONCE_POOL when empty */
	uint8_t bytes[OSD_NONCE_POOL];
};

static _Thread_local struct osd_nonce_pool osd_nonce__pool = { OSD_NONCE_POOL, { 0 } };
static pthread_once_t osd_nonce__once = PTHREAD_ONCE_INIT;
static int osd_nonce__atfork_ok;

static void osd_nonce__forget_in_child(void)
{
	osd_nonce__pool.used = OSD_NONCE_POOL;
}

static void osd_nonce__register_atfork(void)
{
	osd_nonce__atfork_ok = pthread_atfork(NULL, NULL, osd_nonce__forget_in_child) == 0;
}

/* 6 random bytes; direct RAND_bytes() if fork safety could not be arranged. */
static int osd_nonce__random(uint8_t out[OSD_NONCE_RAND_LEN])
{
	struct osd_nonce_pool *p = &osd_nonce__pool;
	size_t i;

	pthread_once(&osd_nonce__once, osd_nonce__register_atfork);
	if (!osd_nonce__atfork_ok)
		return RAND_bytes(out, OSD_NONCE_RAND_LEN) == 1 ? 0 : -EIO;
	if (p->used + OSD_NONCE_RAND_LEN > OSD_NONCE_POOL) {
		if (RAND_bytes(p->bytes, OSD_NONCE_POOL) != 1)
			return -EIO;
		p->used = 0;
	}
	for (i = 0; i < OSD_NONCE_RAND_LEN; i++)
		out[i] = p->bytes[p->used + i];
	p->used += OSD_NONCE_RAND_LEN;
	return 0;
}

int osd_nonce_make(uint8_t nonce[OSD_NONCE_LEN], uint64_t now_ms)
{
	int rc;

	if (nonce == NULL)
		return -EINVAL;
	rc = osd_nonce__random(nonce + OSD_NONCE_TIME_LEN);
	if (rc < 0)
		return rc;
	osd__put_be48(nonce, now_ms);
	return 0;
}

uint64_t osd_nonce_time(const uint8_t nonce[OSD_NONCE_LEN])
{
	return osd__get_be48(nonce);
}

uint64_t osd_now_ms(void)
{
	struct timespec ts;

	/* CLOCK_REALTIME cannot fail with a valid pointer. */
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
