/*
 * The OSD command engine (internal): one struct osd__cmd per executing
 * command, carrying the decoded CDB, the data buffers, the current-command
 * page values and the pending sense.
 *
 * Error convention inside exec/: a function that fails fills cmd->sense via
 * one of the osd__fail* helpers and returns OSD__FAILED; callers propagate it.
 */
#ifndef OSDTARGET_EXEC_EXEC_H
#define OSDTARGET_EXEC_EXEC_H

#include <stdint.h>
#include <sys/uio.h>
#include <osd/attr.h>
#include <osd/attributes.h>
#include <osd/cdb.h>
#include <osd/security.h>
#include <osd/sense.h>

#include "target_internal.h"

#define OSD__FAILED (-1)

/* Private pages (never visible through GET/SET ATTRIBUTES) holding keys. */
#define OSD__PRIV_PAGE_ROOT 0xBFFFFFF0u
#define OSD__PRIV_PAGE_PARTITION 0x5FFFFFF0u

/* One scatter/gather extent from a CDB continuation segment. */
struct osd__extent {
	uint64_t offset;
	uint64_t length;
};

struct osd__capkey;

struct osd__cmd {
	osd_target *tgt;
	struct osd_store *st;
	struct osd_xfer *x;
	const uint8_t *raw;          /* the CDB as received */
	size_t raw_len;
	struct osd_cdb cdb;
	enum osd_version ver;
	uint64_t now;                /* OSD clock at start, ms */
	int bypass_ts;               /* TIMESTAMPS CONTROL 7Fh */
	unsigned fua;                /* OSD_STORE_FUA or 0 */
	/* CDB continuation (v2) */
	size_t cont_len;             /* bytes of data-out it occupies */
	struct osd__extent *sg;      /* scatter/gather list, NULL if none */
	size_t nsg;
	uint8_t *query;              /* query list contents */
	size_t query_len;
	/* Data-in bookkeeping */
	size_t data_len;             /* command data placed at data-in offset 0 */
	size_t attr_len;             /* retrieved attribute bytes written */
	uint64_t attr_off;           /* where they went */
	/* Current command page */
	uint8_t cc_type;
	uint64_t cc_pid, cc_oid, cc_append;
	int has_append;
	uint64_t used_before;        /* for CHANGE IN USED CAPACITY */
	uint8_t ricv[OSD_HMAC_LEN];
	int has_ricv;
	/* Objects the attribute lists apply to (created ones, or the addressed one) */
	struct osd_obj_id *aobjs;
	size_t naobjs;
	int multi;                   /* >1 created objects: multi-object retrieval */
	/* One remembered object type lookup (osd__object_type), used only while
	 * the command holds the target lock shared: the namespace cannot change. */
	int ns_shared;
	int memo_have, memo_rc;
	struct osd_obj_id memo_obj;
	enum osd_obj_type memo_type;
	/* Security */
	osd_key *capkey;             /* NULL under NOSEC; owned by capent */
	struct osd__capkey *capent;  /* checked-out cache entry (security/capkey_cache.h) */
	uint8_t method;
	/* Checks before data-out (exec/precheck.h): no nonce is used up and
	 * nothing that needs data-out is checked; the execution does both. */
	int precheck;
	/* Outcome */
	int failed;
	struct osd_sense sense;
	uint32_t done_funcs;         /* OSD_CFUNC_* completed */
	int recovered;               /* RECOVERED ERROR pending (short read) */
	uint64_t csi;
	/* Descriptor 06h names this object instead of the addressed one
	 * (OBJECT STRUCTURE CHECK of a partition: the damaged object). */
	int has_sense_obj;
	struct osd_obj_id sense_obj;
};

/* ---- dispatch (exec/command.c) ---- */
/* Whether the target runs action @p a: 1 yes, 0 listed as unsupported,
 * -ENOENT no OSD command, -EINVAL a descriptor the dispatch table forgot. */
int osd__target_cmd_state(enum osd_action a);

/* ---- failures (exec/failure.c) ---- */
int osd__fail(struct osd__cmd *c, uint8_t key, uint16_t asc);
int osd__fail_field(struct osd__cmd *c, uint16_t asc, size_t field);
int osd__fail_attr(struct osd__cmd *c, uint16_t asc, uint32_t page, uint32_t number);
/* MEDIUM ERROR, UNRECOVERED READ ERROR: the data of @p obj (NULL: the
 * addressed object) fails its checksum at byte @p offset (information). */
int osd__fail_medium(struct osd__cmd *c, const struct osd_obj_id *obj, uint64_t offset);
/* Map a store errno; @p field is the CDB byte naming the object (16 or 24). */
int osd__fail_store(struct osd__cmd *c, int err, size_t field);

/* Version-dependent CDB field offsets, for field pointers. */
size_t osd__fp_length(const struct osd__cmd *c);
size_t osd__fp_start(const struct osd__cmd *c);
#define OSD__FP_OPTIONS 10
#define OSD__FP_CMD_OPTIONS 11
#define OSD__FP_PARTITION 16
#define OSD__FP_OBJECT 24
#define OSD__FP_ATTR_PARAMS 52
#define OSD__FP_CAP 80

/* ---- object helpers (exec/objects.c) ---- */
/* osd_store_object_type() for the command; repeated lookups of one object are
 * answered from memory while the command holds the namespace stable. */
int osd__object_type(struct osd__cmd *c, uint64_t pid, uint64_t oid, enum osd_obj_type *t);
/* 0 if (pid, oid) exists with the expected type (0 = any), else fails. */
int osd__need_object(struct osd__cmd *c, uint64_t pid, uint64_t oid, enum osd_obj_type type);
/* Stamp created/modified times and defaults on a new object. */
int osd__init_object(struct osd__cmd *c, uint64_t pid, uint64_t oid, enum osd_obj_type type);
void osd__bump_generation(struct osd__cmd *c);

/* ---- timestamps (exec/timestamps.c) ---- */
enum osd__ts_event { OSD__TS_ATTR_READ, OSD__TS_ATTR_WRITE, OSD__TS_DATA_READ, OSD__TS_DATA_WRITE };
void osd__touch(struct osd__cmd *c, uint64_t pid, uint64_t oid, enum osd__ts_event ev);
#define OSD__TS_LEN 6
/* The attributes-modified timestamp osd__touch(OSD__TS_ATTR_WRITE) would set,
 * as an entry of osd_store_attrs_set() (its value in @p v): 0 when it is
 * bypassed, else 1. */
int osd__ts_attr_write(struct osd__cmd *c, uint64_t pid, uint64_t oid,
		       struct osd_store_attr *a, uint8_t v[OSD__TS_LEN]);
/* Flags of a store data call followed by osd__touch(OSD__TS_DATA_WRITE):
 * the stamp, unless bypassed, logs a packed object's new state with it. */
static inline unsigned osd__data_flags(const struct osd__cmd *c)
{
	return (unsigned)c->fua | (c->bypass_ts ? 0u : OSD_STORE_STAMPED);
}
void osd__stamp_created(struct osd__cmd *c, uint64_t pid, uint64_t oid);

/* ---- data-out access (exec/dataout.c) ---- */
/* Copy [off, off+len) of data-out into a new buffer; fails with PARAMETER LIST LENGTH ERROR. */
int osd__dout_copy(struct osd__cmd *c, uint64_t off, size_t len, uint8_t **out);
int osd__parse_continuation(struct osd__cmd *c);

/* ---- attributes (exec/attr_get.c, exec/attr_set.c, exec/attr_pages.c) ---- */
/* Gather one attribute value: returns 1 and fills buf/len, 0 if undefined. */
int osd__attr_value(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
		    uint32_t page, uint32_t number, uint8_t *buf, size_t *len);
int osd__attrs_get(struct osd__cmd *c);
int osd__attrs_set(struct osd__cmd *c);
int osd__page_is_private(uint32_t page);

/* The response ICV the command will end with if nothing fails from here (command.c). */
int osd__final_response_icv(struct osd__cmd *c, uint8_t icv[OSD_HMAC_LEN]);

/* ---- members (exec/members.c) ---- */
/* Member user objects of collection (pid, cid), malloc'd ascending. */
int osd__collection_members(struct osd__cmd *c, uint64_t pid, uint64_t cid,
			    uint64_t **ids, size_t *n);

/* Make user object @p oid a member of collection @p cid (no-op if it is one). */
int osd__join_collection(struct osd__cmd *c, uint64_t pid, uint64_t oid, uint64_t cid);
/* Drop every membership of user object @p oid in collection @p cid. */
void osd__leave_collection(struct osd__cmd *c, uint64_t pid, uint64_t oid, uint64_t cid);

/* ---- data (exec/data.c) ---- */
/* Write the command's payload (LENGTH at STARTING BYTE ADDRESS, or the S/G list). */
int osd__write_payload(struct osd__cmd *c, uint64_t pid, uint64_t oid);

/* ---- quirk emulation (exec/quirks.c, osd_target_options.quirks) ---- */
/* 1 (and the failure recorded in @p c) if a quirk makes the decoded command
 * one this target refuses. */
int osd__quirk_refuses(const osd_target *tgt, struct osd__cmd *c);
/* 1 if a quirk hides attribute (page, number) of an object of type @p t. */
int osd__quirk_hides_attr(const struct osd__cmd *c, enum osd_obj_type t, uint32_t page,
			  uint32_t number);

/* ---- commands ---- */
typedef int (*osd__cmd_fn)(struct osd__cmd *c);
int osd__cmd_format(struct osd__cmd *c);
int osd__cmd_create_partition(struct osd__cmd *c);
int osd__cmd_remove_partition(struct osd__cmd *c);
int osd__cmd_create(struct osd__cmd *c);
int osd__cmd_create_and_write(struct osd__cmd *c);
int osd__cmd_remove(struct osd__cmd *c);
int osd__cmd_create_collection(struct osd__cmd *c);
int osd__cmd_remove_collection(struct osd__cmd *c);
int osd__cmd_read(struct osd__cmd *c);
int osd__cmd_write(struct osd__cmd *c);
int osd__cmd_append(struct osd__cmd *c);
int osd__cmd_clear(struct osd__cmd *c);
int osd__cmd_punch(struct osd__cmd *c);
/* PUNCH as the command table runs it: osd__cmd_punch() unless a quirk says otherwise. */
int osd__cmd_punch_entry(struct osd__cmd *c);
int osd__cmd_flush(struct osd__cmd *c);
int osd__cmd_structure_check(struct osd__cmd *c);
int osd__cmd_list(struct osd__cmd *c);
int osd__cmd_list_collection(struct osd__cmd *c);
int osd__cmd_query(struct osd__cmd *c);
int osd__cmd_get_member_attributes(struct osd__cmd *c);
int osd__cmd_set_member_attributes(struct osd__cmd *c);
int osd__cmd_remove_member_objects(struct osd__cmd *c);
int osd__cmd_set_key(struct osd__cmd *c);
int osd__cmd_set_master_key(struct osd__cmd *c);

/* Entry point from osd_target_execute for opcode 7Fh. */
void osd__exec_osd(osd_target *tgt, struct osd_xfer *x, const uint8_t *token, size_t token_len);
/* A command of @p tgt on exchange @p x, before its CDB is decoded into c->cdb
 * (command.c; the execution and the check before data-out share it). */
void osd__cmd_init(struct osd__cmd *c, osd_target *tgt, struct osd_xfer *x);

#endif
