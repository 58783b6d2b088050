/* A fault-injecting TCP proxy for iSCSI, run in a thread of the test. It
 * listens on 127.0.0.1 (ephemeral port), forwards each accepted connection
 * to the target, frames the PDUs of both directions and, from a seeded
 * schedule, passes, delays, drops, truncates or corrupts them. */
#ifndef OSD_TEST_FAULT_PROXY_H
#define OSD_TEST_FAULT_PROXY_H

#include <stdint.h>

enum fault_kind {
	FAULT_PASS,
	FAULT_DELAY,        /* hold the PDU (and those behind it) up to max_delay_ms */
	FAULT_DROP,         /* drop the PDU, then close the connection */
	FAULT_TRUNCATE,     /* forward a prefix of the PDU, then close */
	FAULT_CORRUPT_HDR,  /* flip one byte of BHS, AHS or header digest */
	FAULT_CORRUPT_DATA, /* flip one byte of the data segment, padding or digest */
	FAULT_CLOSE,        /* forward the PDU, then close (its answer is lost) */
	FAULT_KINDS
};

#define FAULT_DIR_TO_TARGET 1u
#define FAULT_DIR_TO_INITIATOR 2u

struct fault_proxy_config {
	const char *target_host;     /* IPv4 address of the real target */
	unsigned target_port;
	uint64_t seed;
	unsigned weight[FAULT_KINDS];/* relative odds per full-feature PDU; 0 = never */
	unsigned max_delay_ms;
	unsigned dirs;               /* FAULT_DIR_* mask of directions faults apply to */
	int header_digest, data_digest; /* as negotiated: frames full-feature PDUs */
	int data_in_only;            /* corrupt only Data-In segments (digests-off demo) */
};

struct fault_proxy_stats {
	uint64_t pdus;               /* full-feature PDUs seen, both directions */
	uint64_t faults[FAULT_KINDS];/* faults[FAULT_PASS] = PDUs passed unchanged */
	unsigned accepted;           /* connections accepted */
	unsigned logins_failed;      /* logins ended by fault_proxy_fail_logins() */
	unsigned closed;             /* connection pairs ended, for any reason */
};

struct fault_proxy;

/* Starts the proxy thread; *port receives its listening port. 0 or -errno. */
int fault_proxy_start(struct fault_proxy **out, const struct fault_proxy_config *cfg,
		      unsigned *port);
/* Turns fault injection on or off (off: every PDU passes). */
void fault_proxy_enable(struct fault_proxy *p, int on);
/* The next @p n connections are closed when their first Login Request
 * arrives (the initiator's re-login fails). */
void fault_proxy_fail_logins(struct fault_proxy *p, unsigned n);
/* Closes every connection, and returns once that is done (the initiator
 * must reconnect). 0 or -errno. */
int fault_proxy_close_all(struct fault_proxy *p);
void fault_proxy_stats(struct fault_proxy *p, struct fault_proxy_stats *st);
/* Faults that end a connection (drop, truncate, close) in @p st. */
uint64_t fault_proxy_closing(const struct fault_proxy_stats *st);
/* Injected faults of any kind but PASS. */
uint64_t fault_proxy_injected(const struct fault_proxy_stats *st);
const char *fault_kind_name(enum fault_kind k);
/* Stops the thread and closes every socket. NULL is ignored. */
void fault_proxy_stop(struct fault_proxy *p);

#endif
