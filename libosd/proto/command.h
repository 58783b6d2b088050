/*
 * One descriptor per OSD service action: everything the CDB codec, the
 * permission checks of initiator and target, the target's dispatch and the
 * transport's resend decision know about a command. Every per-command table
 * is derived from the one in command.c (docs/architecture.md). Compiled into
 * libosd and into the internal osd_wire library the target links.
 */
#ifndef OSD_PROTO_COMMAND_H
#define OSD_PROTO_COMMAND_H

#include <stddef.h>
#include <stdint.h>
#include <osd/types.h>

/* CDB operand slots a command uses (osd2r03 §5.2.1, docs/protocol.md §3.1). */
enum {
	OSD__U_LEN = 1 << 0,   /* LENGTH / ALLOCATION LENGTH / FORMATTED CAPACITY */
	OSD__U_SBA = 1 << 1,   /* STARTING BYTE ADDRESS and its aliases */
	OSD__U_LID = 1 << 2,   /* LIST IDENTIFIER */
	OSD__U_CCL = 1 << 3,   /* v2 CDB CONTINUATION LENGTH */
	OSD__U_NOBJ = 1 << 4,  /* NUMBER OF USER OBJECTS */
	OSD__U_MAP = 1 << 5,   /* REQUESTED MAP TYPE */
	OSD__U_KEY = 1 << 6,   /* SET KEY: key version, key id, seed (no object id) */
	OSD__U_MKEY = 1 << 7,  /* SET MASTER KEY: key id and the two lengths */
	OSD__U_FLUSH = 1 << 8, /* byte 10 bits 1-0 are FLUSH SCOPE */
	OSD__U_DUP = 1 << 9,   /* v2 byte 14 DUPLICATION METHOD */
};

/* The object the capability must describe (osd2r03 §4.11.2.2, docs/security.md §1). */
enum osd__cap_scope {
	OSD__CAP_SELF,      /* the addressed object */
	OSD__CAP_PARTITION, /* the partition of the addressed object */
	OSD__CAP_ROOT,      /* the root object */
	OSD__CAP_KEY        /* SET KEY: root or partition by the KEY TO SET field */
};

/* Whether a command sent before a connection broke may be sent again. */
enum osd__resend {
	OSD__RESEND_NEVER,     /* a second run differs or fails (CREATE, APPEND, REMOVE) */
	OSD__RESEND_ALWAYS,    /* only reads (or flushes) */
	OSD__RESEND_REPEATABLE /* writes fixed bytes at a fixed place */
};

/* What the command's own data is (attribute lists aside). */
enum osd__data {
	OSD__DATA_NONE,
	OSD__DATA_IN,  /* LENGTH/ALLOCATION LENGTH bytes of data-in */
	OSD__DATA_OUT  /* LENGTH bytes of data-out payload */
};

/* Which byte range capability check 13 applies (docs/target.md, security checks). */
enum osd__range {
	OSD__RANGE_NONE,    /* no range to check */
	OSD__RANGE_BYTES,   /* STARTING BYTE ADDRESS + LENGTH (or the S/G list) */
	OSD__RANGE_FLUSH,   /* like BYTES when FLUSH SCOPE is 2 (a range) */
	OSD__RANGE_REFUSED  /* a capability with a range is refused (APPEND) */
};

struct osd__cmd_desc {
	enum osd_action action; /* the OSD-2 code */
	const char *name;
	uint8_t in_v1;          /* exists in OSD-1 */
	uint16_t uses;          /* OSD__U_* */
	uint8_t opt_v1;         /* byte 11 bits allowed besides CDBFMT, OSD-1 */
	uint8_t opt_v2;         /* same, OSD-2 */
	uint8_t max_scope;      /* FLUSH family: largest FLUSH SCOPE value (v2) */
	uint16_t perms;         /* OSD_PERM_* the command itself needs */
	uint8_t cap_scope;      /* enum osd__cap_scope */
	uint8_t resend;         /* enum osd__resend */
	uint8_t data;           /* enum osd__data */
	uint8_t range;          /* enum osd__range */
};

/* Descriptor slots: 0x8880..0x88B2, then the two PERFORM commands. */
#define OSD__CMD_MAIN_FIRST 0x8880u
#define OSD__CMD_MAIN_SLOTS 0x33u
#define OSD__CMD_PERFORM_FIRST 0x8F7Cu
#define OSD__CMD_PERFORM_SLOTS 2u
#define OSD__CMD_SLOTS (OSD__CMD_MAIN_SLOTS + OSD__CMD_PERFORM_SLOTS)

/* The slot of @p a, a constant expression (for tables keyed by descriptor). */
#define OSD__CMD_INDEX(a)                                                        \
	((unsigned)(a) >= OSD__CMD_PERFORM_FIRST                                 \
		 ? OSD__CMD_MAIN_SLOTS + (unsigned)(a) - OSD__CMD_PERFORM_FIRST  \
		 : (unsigned)(a) - OSD__CMD_MAIN_FIRST)

/* The descriptor of @p action, or NULL when it is no OSD command. */
const struct osd__cmd_desc *osd__cmd_desc_of(enum osd_action action);

/* The descriptor in slot @p index (< OSD__CMD_SLOTS), or NULL for a gap. */
const struct osd__cmd_desc *osd__cmd_desc_at(size_t index);

/* The object a capability for this command must describe, given the
 * addressed object and byte 11 (CDB command options). */
struct osd_obj_id osd__cmd_cap_object(const struct osd__cmd_desc *d,
				      const struct osd_obj_id *obj, uint8_t cmd_options);

#endif
