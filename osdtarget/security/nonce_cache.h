/*
 * Request nonce freshness and replay detection (CMDRSP / ALLDATA), as
 * docs/security.md section 4 fixes it.
 *
 * A nonce is accepted once: its timestamp must fall inside the window
 * [now - oldest, now + newest] and it must not repeat one remembered for the
 * same partition. Memory is bounded: each partition keeps at most `depth`
 * nonces in a libosd osd_nonce_cache; when full, the one with the oldest
 * timestamp T is evicted and the partition's floor becomes T (timestamps <=
 * floor are refused as stale; a nonce older than everything a full list
 * holds is refused too), so eviction never reopens a replay. At most 256
 * partitions have a list; dropping the least recently used one raises the
 * global floor to its newest timestamp. The cache is not persistent: the
 * global floor starts at the target's start time.
 */
#ifndef OSDTARGET_SECURITY_NONCE_CACHE_H
#define OSDTARGET_SECURITY_NONCE_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <osd/types.h>

struct osd__nonce_part;

/** All partitions' nonce lists; internally locked. */
struct osd__nonce_cache {
	pthread_mutex_t lock;
	struct osd__nonce_part *parts;
	size_t nparts;
	size_t max_parts;   /* partitions remembered before the least recent is dropped */
	uint64_t tick;      /* LRU clock */
	uint64_t global_floor; /* raised when a partition's list is dropped */
};

enum osd__nonce_verdict {
	OSD__NONCE_OK = 0,
	OSD__NONCE_STALE = 1,   /* outside the window or below the floor */
	OSD__NONCE_REPLAY = 2   /* seen before */
};

/* @p start_ms: nonces stamped before it are refused (restart protection). */
int osd__nonce_cache_init(struct osd__nonce_cache *c, uint64_t start_ms);
void osd__nonce_cache_destroy(struct osd__nonce_cache *c);

/*
 * Check and (when fresh) remember @p nonce for @p partition.
 * @p oldest / @p newest are the window limits in ms around @p now;
 * @p depth the number of nonces to remember (>= 1).
 */
enum osd__nonce_verdict osd__nonce_check(struct osd__nonce_cache *c, uint64_t partition,
					 const uint8_t nonce[OSD_NONCE_LEN], uint64_t now,
					 uint64_t oldest, uint64_t newest, size_t depth);

#endif
