/* One load client of test_rel_load: a seeded random workload on its own
 * objects and on its slices of shared objects, with an in-memory model of
 * every byte and attribute it wrote. The workload is a pure function of the
 * seed and the number of steps, so a model can be rebuilt without I/O
 * (replay) for clients that ran in another process. */
#ifndef TEST_REL_LOAD_CLIENT_H
#define TEST_REL_LOAD_CLIENT_H

#include <pthread.h>
#include <stdint.h>
#include <osd/osd.h>

#define LOAD_OWN_OBJECTS 3              /* live own objects per client */
#define LOAD_OWN_CAP (3u << 20)         /* bytes an own object may reach */
#define LOAD_SHARED 2                   /* objects every client writes */
#define LOAD_SLICE (256u << 10)         /* a client's byte range of a shared object */
#define LOAD_MAX_CLIENTS 64             /* slices per shared object */
#define LOAD_ATTR_LEN 16
#define LOAD_APP_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_APP_FIRST + 3)
#define LOAD_REMOVED_KEPT 8             /* removed ids checked to stay absent */

/* Credentials for every client: an issuer whose keys the rotation changes. */
struct load_keys {
	pthread_rwlock_t lock;          /* held for writing across a rotation */
	osd_cred_issuer *iss;
};

/* What a client counts; sent through a pipe by process clients. */
struct load_stats {
	uint64_t ops;            /* workload steps done */
	uint64_t commands;       /* OSD commands that completed */
	uint64_t bytes_written;
	uint64_t bytes_verified; /* bytes read back and compared with the model */
	uint64_t rekeys;         /* commands redone with a fresh credential */
	uint64_t errors;         /* failed commands and model mismatches */
	uint64_t losses;         /* bytes or attributes that differed from the model */
	char why[240];           /* the first error */
};

struct load_obj {
	uint64_t id;             /* 0 = slot unused */
	uint64_t len;            /* logical length the model expects */
	uint8_t *data;           /* LOAD_OWN_CAP bytes */
	uint8_t attr[LOAD_ATTR_LEN];
	int has_attr;
};

struct load_client {
	unsigned cid;            /* < LOAD_MAX_CLIENTS: slice index and id range */
	uint64_t rng;            /* draws that shape the model */
	uint64_t read_rng;       /* draws that only shape reads (not replayed) */
	uint64_t partition;
	uint64_t shared[LOAD_SHARED];
	struct load_obj own[LOAD_OWN_OBJECTS];
	uint8_t *slice[LOAD_SHARED];          /* model of this client's slices */
	uint8_t slice_attr[LOAD_SHARED][LOAD_ATTR_LEN];
	int slice_has_attr[LOAD_SHARED];
	uint64_t next_id;
	uint64_t removed[LOAD_REMOVED_KEPT];
	unsigned nremoved;
	osd_dev *dev;            /* NULL: replay (update the model only) */
	uint8_t *buf;            /* read buffer */
	struct load_stats st;
};

/* Set up client @p cid of @p partition with @p seed (no I/O). 0 or -ENOMEM. */
int load_client_init(struct load_client *c, unsigned cid, uint64_t seed, uint64_t partition,
		     const uint64_t shared[LOAD_SHARED]);
void load_client_free(struct load_client *c);

/* Create the own objects, then run steps until @p deadline_ms (monotonic)
 * with a device, or until st.ops reaches @p steps in replay; then flush
 * everything written. Stops at the first error (st.errors != 0). */
void load_client_run(struct load_client *c, uint64_t deadline_ms, uint64_t steps);

/* Read everything the model holds through @p dev and compare: own objects
 * (bytes, length, attribute), removed objects absent, the client's slices. */
void load_client_verify(struct load_client *c, osd_dev *dev);

/* The credential source for osd_dev_options (payload: struct load_keys). */
int load_issue(const struct osd_cred_request *want, struct osd_credential *out, void *payload);

/* Monotonic milliseconds. */
uint64_t load_now_ms(void);

#endif
