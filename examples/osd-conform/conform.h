/*
 * osd-conform: a command-by-command conformance suite for OSD targets.
 *
 * A run is one OSD version and one security method: it opens the device
 * (examples/common), creates a scratch partition the target names, runs
 * the selected tests in it and removes everything it created. A test
 * returns one result; UNSUPPORTED is decided on the sense data alone
 * (cf_sense_unsupported()), never on an errno.
 */
#ifndef OSD_CONFORM_H
#define OSD_CONFORM_H

#include <stddef.h>
#include <stdint.h>
#include <osd/osd.h>
#include "toolcommon.h"

enum cf_result {
	CF_PASS,
	CF_FAIL,
	CF_UNSUPPORTED, /* ILLEGAL REQUEST on the opcode, service action or option fields */
	CF_NA,          /* not in this version, needs a key or --destructive */
	CF_NOT_RUN,     /* (the runner's) selected, not run yet */
	CF_NOT_SELECTED /* (the runner's) left out by -t */
};

/* Test flags. */
#define CF_V1 0x1u          /* runs in OSD-1 */
#define CF_V2 0x2u          /* runs in OSD-2 */
#define CF_BOTH (CF_V1 | CF_V2)
#define CF_DESTRUCTIVE 0x4u /* changes the whole OSD: only with --destructive */
#define CF_KEYED 0x8u       /* needs the root key (--key-file) */
#define CF_SECURED 0x10u    /* only under CAPKEY, CMDRSP or ALLDATA */
#define CF_NONCE 0x20u      /* only under CMDRSP (a replayed CDB sent by hand) */
#define CF_PRE 0x40u        /* runs before the scratch partition exists */

/* State of one run (version x method). */
struct cf_ctx {
	struct tc_device *d;
	osd_dev *dev;
	enum osd_version ver;
	enum osd_sec_method method;
	uint64_t part;           /* the scratch partition */
	uint64_t next_id;        /* next user object or collection id to ask for */
	int verbose;
	/* the ids of the last cf_list_all() */
	uint64_t *ids;
	size_t nids, ids_cap;
	/* the outcome of the running test */
	enum cf_result res;
	char detail[512];
	struct osd_sense sense;
	int have_sense;
	int sense_checked;       /* a PASS that rests on this sense (shown with it) */
};

struct cf_test {
	const char *name;
	const char *cite;        /* sections of osd2r05 / osd-r10 (or SPC-4) */
	const char *what;        /* the behaviour checked, one line */
	unsigned flags;
	enum cf_result (*run)(struct cf_ctx *c);
};

extern const struct cf_test cf_tests[];
extern const unsigned cf_num_tests;

/* ---- outcomes (exec.c) ---- */
/* Sets the test's outcome and detail (printf format); returns @p r. */
enum cf_result cf_set(struct cf_ctx *c, enum cf_result r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Whether @p s refuses a command the target does not implement: ILLEGAL
 * REQUEST with 20h/00h, with 00h/00h, or with 24h/00h whose field pointer is
 * at the operation code, ADDITIONAL CDB LENGTH, SERVICE ACTION or option
 * bytes (0-11). */
int cf_sense_unsupported(const struct osd_sense *s);
/* "KEY/ASC/ASCQ" of @p s, e.g. "5/24/00", into @p buf. */
const char *cf_sense_code(const struct osd_sense *s, char *buf, size_t len);

/* ---- requests (exec.c) ---- */
/*
 * Executes @p req (built with @p build_rc; freed by the caller) and returns
 * 0 on GOOD. Otherwise records the outcome (UNSUPPORTED per the sense,
 * else FAIL naming @p what and the target's answer) and returns -1.
 */
int cf_exec(struct cf_ctx *c, osd_req *req, int build_rc, const char *what);
/*
 * Executes a command that must fail with @p key and @p asc; a field pointer,
 * when the target gives one, must lie in [@p field_lo, @p field_hi]
 * (field_hi 0: any). Returns the test's result.
 */
enum cf_result cf_expect(struct cf_ctx *c, osd_req *req, int build_rc, const char *what,
			 uint8_t key, uint16_t asc, unsigned field_lo, unsigned field_hi);
/*
 * For a PASS of cf_expect() on a missing partition: the field pointer, if
 * any, must be at PARTITION_ID or, under a security method, in the
 * capability or request ICV (a missing partition has no keys, and the
 * capability is checked before the command). Returns the result.
 */
enum cf_result cf_missing_partition_field(struct cf_ctx *c, enum cf_result r);
/* A new object id in the scratch partition (not created). */
struct osd_obj_id cf_new_id(struct cf_ctx *c);
/* CREATE of @p obj (a fresh id when obj->id is 0, filled in). 0 or -1. */
int cf_create(struct cf_ctx *c, struct osd_obj_id *obj);
/* CREATE COLLECTION of a fresh id into *col. 0 or -1. */
int cf_create_collection(struct cf_ctx *c, struct osd_obj_id *col);
int cf_write(struct cf_ctx *c, const struct osd_obj_id *obj, uint64_t off, const void *buf,
	     size_t len);
/* READ of @p len bytes at @p off; *got: bytes the target read (may be NULL). */
int cf_read(struct cf_ctx *c, const struct osd_obj_id *obj, uint64_t off, void *buf,
	    size_t len, uint64_t *got);
int cf_remove(struct cf_ctx *c, const struct osd_obj_id *obj);
/* One attribute into @p buf; *got its length, 0 if undefined. 0 or -1. */
int cf_get_attr(struct cf_ctx *c, const struct osd_obj_id *obj, uint32_t page, uint32_t num,
		void *buf, size_t len, size_t *got);
/* A 1..8-byte big-endian attribute; -1 (outcome set) if undefined. */
int cf_get_u64(struct cf_ctx *c, const struct osd_obj_id *obj, uint32_t page, uint32_t num,
	       uint64_t *v);
int cf_set_attr(struct cf_ctx *c, const struct osd_obj_id *obj, uint32_t page, uint32_t num,
		const void *val, uint16_t len);
/* Makes obj a member of collection col (user object page 4). 0 or -1. */
int cf_add_member(struct cf_ctx *c, const struct osd_obj_id *obj, const struct osd_obj_id *col);
/* Every id LIST (@p action) returns for @p obj, following continuations
 * with @p alloc-byte answers (0: 64 KiB), into c->ids / c->nids. */
int cf_list_all(struct cf_ctx *c, enum osd_action action, const struct osd_obj_id *obj,
		uint32_t alloc);
/* Whether the last cf_list_all() returned @p id. */
int cf_listed(const struct cf_ctx *c, uint64_t id);
/* A credential for @p obj from the tools' issuer, with @p perms and @p method. */
int cf_credential(struct cf_ctx *c, const struct osd_obj_id *obj, int is_collection,
		  uint16_t perms, enum osd_sec_method method, struct osd_credential *cr);

/* ---- plain SCSI and hand-built OSD CDBs (raw.c) ---- */
struct cf_raw {
	uint8_t status;
	size_t in_xferred;
	struct osd_sense sense;
	int have_sense;
};
/*
 * Sends @p cdb on the device's transport and waits (bounded). Returns 0
 * when the target answered (status in @p r), else the transport's -errno
 * (outcome FAIL recorded).
 */
int cf_raw_exec(struct cf_ctx *c, const uint8_t *cdb, size_t cdb_len, void *in, size_t in_len,
		struct cf_raw *r, const char *what);
/*
 * Encodes an OSD CDB for @p action on @p obj in the run's version, with a
 * credential (permissions @p perms) signed for the run's method; @p code,
 * when not 0, replaces the service action. Returns the CDB length or -1.
 */
int cf_raw_osd_cdb(struct cf_ctx *c, enum osd_action action, uint16_t code,
		   const struct osd_obj_id *obj, uint16_t perms, uint8_t *cdb, size_t len);
/* Records the outcome of a raw command expected GOOD; returns 0 on GOOD. */
int cf_raw_good(struct cf_ctx *c, const struct cf_raw *r, const char *what);

#endif
