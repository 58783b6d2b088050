/* A scripted transport for unit tests: records every exchange (CDB and the
 * flattened data-out) and answers with canned data-in, status and sense,
 * either inline (inside submit, like the loopback) or later from service(). */
#ifndef TEST_FAKE_TRANSPORT_H
#define TEST_FAKE_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <osd/sys/transport.h>

#define FAKE_MAX 16
#define FAKE_BUF 8192

struct fake_answer {
	uint8_t status;
	uint8_t sense[252];
	size_t sense_len;
	uint8_t data_in[FAKE_BUF];
	size_t data_in_len;    /* bytes placed at data-in offset 0.. */
	int transport_err;     /* non-zero: done(err) */
	size_t overreport;     /* a lying transport: added to in_xferred */
	unsigned sense_len_report; /* non-zero: the sense_len reported instead */
};

struct fake_sent {
	uint8_t cdb[236];
	size_t cdb_len;
	uint8_t out[FAKE_BUF];
	size_t out_len;
	size_t in_len;
	size_t xfer_size;  /* struct osd_xfer size the submitter declared */
	int resend;        /* its resend class, -1 when its struct has none */
};

struct fake {
	int deferred;                  /* complete from service() instead of submit() */
	int hold;                      /* service() completes nothing (a dead link) */
	int refuse;                    /* submit returns this (negative) */
	int cancellable;               /* cancel() takes back a pending exchange */
	unsigned cancels;              /* exchanges cancel() took back */
	struct fake_answer answers[FAKE_MAX]; /* answer i for the i-th exchange */
	unsigned nanswers;
	struct fake_sent sent[FAKE_MAX];
	unsigned nsent;
	struct osd_xfer *pending[FAKE_MAX];
	unsigned npending;
	int destroyed;
	uint8_t token[64];             /* security token; none while token_len is 0 */
	size_t token_len;
};

/* Fill @p tp to talk to @p f (destroy only marks f->destroyed). */
void fake_transport(struct fake *f, struct osd_transport *tp);
/* The next answer to script (zeroed, status GOOD). */
struct fake_answer *fake_next_answer(struct fake *f);
/* Scatter @p len bytes at data-in offset @p off of the answer. */
void fake_answer_put(struct fake_answer *a, size_t off, const void *p, size_t len);

#endif
