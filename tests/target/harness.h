/*
 * Test harness for the target engine suites: a temporary target, and a
 * request builder that encodes real CDBs (osd_cdb_encode), attribute lists
 * (osd_attr_writer) and data-out/data-in layouts, executes them with
 * osd_target_execute and decodes the sense.
 */
#ifndef TESTS_TARGET_HARNESS_H
#define TESTS_TARGET_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <osd/attr.h>
#include <osd/attributes.h>
#include <osd/cdb.h>
#include <osd/offset.h>
#include <osd/security.h>
#include <osd/sense.h>
#include <osdtarget/target.h>

#define H_MAX_ATTRS 32
#define H_OUT_CAP (1u << 20)

/* A temporary directory with a target in it. */
struct h_target {
	char dir[256];
	osd_target *tgt;
};

void h_target_open(struct h_target *ht);
void h_target_reopen(struct h_target *ht);
void h_target_close(struct h_target *ht); /* closes and removes the directory */

struct h_req {
	enum osd_version v;
	struct osd_cdb cdb;
	/* data-out pieces, laid out by h_run */
	const uint8_t *payload;
	size_t payload_len;
	uint8_t *cont;               /* CDB continuation segment (v2) */
	size_t cont_len;
	struct osd_attr set[H_MAX_ATTRS];
	uint8_t set_u64[H_MAX_ATTRS][8]; /* storage for h_set_u64 values */
	size_t nset;
	struct osd_attr get[H_MAX_ATTRS];
	size_t nget;
	uint32_t get_alloc;
	int page_mode;               /* use page mode for the (single) get/set */
	/* data-in */
	size_t data_in;              /* bytes of command data expected at offset 0 */
	int in_fill;                 /* byte data-in is filled with before executing */
	/* security */
	const struct osd_credential *cred;
	uint64_t nonce_time;         /* 0 = now */
	int corrupt_payload;         /* flip a payload byte after signing (ALLDATA) */
	/* results */
	uint8_t cdb_bytes[OSD_CDB_MAX_LEN];
	int cdb_len;
	uint8_t *out;
	size_t out_len;
	uint8_t *in;
	size_t in_len;
	uint64_t ret_off;            /* retrieved attributes offset used */
	struct osd_xfer x;
	struct osd_sense sense;
};

/* Start a request with a NOSEC all-permission capability for (pid, oid). */
void h_req(struct h_req *r, enum osd_version v, enum osd_action a, uint64_t pid, uint64_t oid);
void h_req_free(struct h_req *r);
void h_set(struct h_req *r, uint32_t page, uint32_t num, const void *val, uint16_t len);
void h_set_u64(struct h_req *r, uint32_t page, uint32_t num, uint64_t v);
void h_get(struct h_req *r, uint32_t page, uint32_t num);

/* Build data-out/in, encode, sign, execute. Returns the SCSI status. */
int h_run(struct h_target *ht, struct h_req *r);
/* Re-execute the exact same bytes (replay). */
int h_rerun(struct h_target *ht, struct h_req *r);

/* A retrieved attribute: 1 found (value/len set), 0 not present; fails on a bad list. */
int h_attr(struct h_req *r, uint32_t page, uint32_t num, const uint8_t **val, uint16_t *len);
uint64_t h_attr_u64(struct h_req *r, uint32_t page, uint32_t num);

/* Sense checks (ck_assert inside). */
void h_expect_good(struct h_req *r);
void h_expect_sense(struct h_req *r, uint8_t key, uint16_t asc);
void h_expect_field(struct h_req *r, uint8_t key, uint16_t asc, uint16_t field);

/* Shorthands for setting up state (NOSEC, version @p v). */
void h_create_partition(struct h_target *ht, enum osd_version v, uint64_t pid);
void h_create_object(struct h_target *ht, enum osd_version v, uint64_t pid, uint64_t oid);
void h_write(struct h_target *ht, enum osd_version v, uint64_t pid, uint64_t oid,
	     uint64_t off, const void *buf, size_t len);
/* READ; returns bytes copied into @p buf (the data-in data part). */
size_t h_read(struct h_target *ht, enum osd_version v, uint64_t pid, uint64_t oid,
	      uint64_t off, void *buf, size_t len);

#endif
