/*
 * iSCSI (RFC 7143) PDU codec shared by the initiator transport in libosd and
 * the target in libosdtarget.
 *
 * Internal: every function is prefixed osd__iscsi_ and hidden. The sources
 * (with CRC32C and the iovec helpers) are compiled into libosd and, as the
 * internal static library osd_wire, linked into libosdtarget.so and
 * libosdfs.so: no library exports them, each carries the code it was built
 * with. It does no I/O: callers read the 48-byte BHS, decode it, learn from
 * osd__iscsi_pdu_rest_len() how many bytes follow, read them and check them
 * with osd__iscsi_pdu_parse().
 *
 * Every decoder is bounds-checked: malformed input gives -EBADMSG (bad
 * lengths, bad digests, malformed text) or -EPROTO (a field the protocol
 * does not allow), never a read outside the buffer.
 */
#ifndef OSD_ISCSI_PDU_H
#define OSD_ISCSI_PDU_H

#include <osd/iscsi.h>
#include <osd/types.h>
#include <stddef.h>
#include <stdint.h>
#include "checksum/crc32c.h"

#define OSD_ISCSI_BHS_LEN 48           /* Basic Header Segment */
#define OSD_ISCSI_DIGEST_LEN 4         /* CRC32C header/data digest */
#define OSD_ISCSI_MAX_AHS_LEN (255 * 4) /* TotalAHSLength is in words */
#define OSD_ISCSI_MAX_DLEN 0xFFFFFF     /* DataSegmentLength is 24 bits */
#define OSD_ISCSI_RSVD_TAG 0xFFFFFFFFu  /* the reserved task tag */
#define OSD_ISCSI_DEFAULT_PORT 3260

/* Opcodes (byte 0, low 6 bits). */
enum osd__iscsi_opcode {
	OSD_ISCSI_OP_NOP_OUT = 0x00,
	OSD_ISCSI_OP_SCSI_CMD = 0x01,
	OSD_ISCSI_OP_TMF_REQ = 0x02,
	OSD_ISCSI_OP_LOGIN_REQ = 0x03,
	OSD_ISCSI_OP_TEXT_REQ = 0x04,
	OSD_ISCSI_OP_DATA_OUT = 0x05,
	OSD_ISCSI_OP_LOGOUT_REQ = 0x06,
	OSD_ISCSI_OP_SNACK_REQ = 0x10,
	OSD_ISCSI_OP_NOP_IN = 0x20,
	OSD_ISCSI_OP_SCSI_RSP = 0x21,
	OSD_ISCSI_OP_TMF_RSP = 0x22,
	OSD_ISCSI_OP_LOGIN_RSP = 0x23,
	OSD_ISCSI_OP_TEXT_RSP = 0x24,
	OSD_ISCSI_OP_DATA_IN = 0x25,
	OSD_ISCSI_OP_LOGOUT_RSP = 0x26,
	OSD_ISCSI_OP_R2T = 0x31,
	OSD_ISCSI_OP_ASYNC_MSG = 0x32,
	OSD_ISCSI_OP_REJECT = 0x3F,
};

/* Byte 1 flag bits. */
#define OSD_ISCSI_F_FINAL 0x80      /* F: final PDU of a sequence */
#define OSD_ISCSI_F_READ 0x40       /* SCSI Command R */
#define OSD_ISCSI_F_WRITE 0x20      /* SCSI Command W */
#define OSD_ISCSI_F_ATTR_MASK 0x07  /* SCSI Command task attributes */
#define OSD_ISCSI_F_CONTINUE 0x40   /* Login/Text C */
#define OSD_ISCSI_F_TRANSIT 0x80    /* Login T */
#define OSD_ISCSI_F_ACK 0x40        /* Data-In A */
#define OSD_ISCSI_F_BIDI_OVER 0x10  /* SCSI Response o: bidi read overflow */
#define OSD_ISCSI_F_BIDI_UNDER 0x08 /* SCSI Response u */
#define OSD_ISCSI_F_OVER 0x04       /* O: residual overflow */
#define OSD_ISCSI_F_UNDER 0x02      /* U: residual underflow */
#define OSD_ISCSI_F_STATUS 0x01     /* Data-In S: status included */
#define OSD_ISCSI_LOGIN_CSG(f) (((f) >> 2) & 3)
#define OSD_ISCSI_LOGIN_NSG(f) ((f) & 3)
#define OSD_ISCSI_LOGIN_FLAGS(t, c, csg, nsg) \
	(uint8_t)(((t) ? 0x80 : 0) | ((c) ? 0x40 : 0) | (((csg) & 3) << 2) | ((nsg) & 3))

/* Login stages (CSG/NSG). */
enum {
	OSD_ISCSI_STAGE_SECURITY = 0,
	OSD_ISCSI_STAGE_OPERATIONAL = 1,
	OSD_ISCSI_STAGE_FULL_FEATURE = 3,
};

/* Task attributes. */
enum { OSD_ISCSI_ATTR_UNTAGGED = 0, OSD_ISCSI_ATTR_SIMPLE = 1,
       OSD_ISCSI_ATTR_ORDERED = 2, OSD_ISCSI_ATTR_HEAD = 3, OSD_ISCSI_ATTR_ACA = 4 };

/* Task management functions: enum osd_iscsi_tmf in osd/iscsi.h. */

/* Task management responses. */
enum {
	OSD_ISCSI_TMF_RSP_COMPLETE = 0,
	OSD_ISCSI_TMF_RSP_NO_TASK = 1,
	OSD_ISCSI_TMF_RSP_NO_LUN = 2,
	OSD_ISCSI_TMF_RSP_ALLEGIANT = 3,
	OSD_ISCSI_TMF_RSP_NO_REASSIGN = 4,
	OSD_ISCSI_TMF_RSP_NOT_SUPPORTED = 5,
	OSD_ISCSI_TMF_RSP_AUTH_FAILED = 6,
	OSD_ISCSI_TMF_RSP_REJECTED = 255,
};

/* Reject reasons. */
enum {
	OSD_ISCSI_REJECT_DIGEST = 0x02,
	OSD_ISCSI_REJECT_SNACK = 0x03,
	OSD_ISCSI_REJECT_PROTOCOL = 0x04,
	OSD_ISCSI_REJECT_NOT_SUPPORTED = 0x05,
	OSD_ISCSI_REJECT_IMMEDIATE = 0x06,
	OSD_ISCSI_REJECT_TASK_IN_PROGRESS = 0x07,
	OSD_ISCSI_REJECT_INVALID_ACK = 0x08,
	OSD_ISCSI_REJECT_INVALID_FIELD = 0x09,
	OSD_ISCSI_REJECT_OUT_OF_RESOURCES = 0x0A,
	OSD_ISCSI_REJECT_WAITING_LOGOUT = 0x0C,
};

/* Login status: class << 8 | detail. */
enum {
	OSD_ISCSI_LOGIN_SUCCESS = 0x0000,
	OSD_ISCSI_LOGIN_INITIATOR_ERROR = 0x0200,
	OSD_ISCSI_LOGIN_AUTH_FAILED = 0x0201,
	OSD_ISCSI_LOGIN_FORBIDDEN = 0x0202,
	OSD_ISCSI_LOGIN_NOT_FOUND = 0x0203,
	OSD_ISCSI_LOGIN_UNSUPPORTED_VERSION = 0x0205,
	OSD_ISCSI_LOGIN_TOO_MANY_CONNECTIONS = 0x0206,
	OSD_ISCSI_LOGIN_MISSING_PARAMETER = 0x0207,
	OSD_ISCSI_LOGIN_SESSION_TYPE = 0x0209,
	OSD_ISCSI_LOGIN_NO_SESSION = 0x020A,
	OSD_ISCSI_LOGIN_INVALID_REQUEST = 0x020B,
	OSD_ISCSI_LOGIN_TARGET_ERROR = 0x0300,
	OSD_ISCSI_LOGIN_OUT_OF_RESOURCES = 0x0302,
};

/* Logout reasons and responses. */
enum { OSD_ISCSI_LOGOUT_SESSION = 0, OSD_ISCSI_LOGOUT_CONNECTION = 1,
       OSD_ISCSI_LOGOUT_RECOVERY = 2 };
enum { OSD_ISCSI_LOGOUT_RSP_OK = 0, OSD_ISCSI_LOGOUT_RSP_NO_CID = 1,
       OSD_ISCSI_LOGOUT_RSP_NO_RECOVERY = 2, OSD_ISCSI_LOGOUT_RSP_FAILED = 3 };

/* SCSI Response byte 2. */
enum { OSD_ISCSI_RSP_COMPLETED = 0x00, OSD_ISCSI_RSP_TARGET_FAILURE = 0x01 };

/*
 * A decoded BHS. Fields are named for what they carry; each opcode uses only
 * some of them (the rest are zero after decoding and ignored by encoding).
 * Which opcode uses which field, by BHS byte offset:
 *   flags (1)      all; raw byte 1 incl. F/R/W/C/T/CSG/NSG/S/U/O bits,
 *                  the TMF function and the logout reason (low 7 bits)
 *   response (2)   SCSI Rsp, TMF Rsp, Logout Rsp; reject reason (Reject);
 *                  version-max (Login Req), version-max (Login Rsp)
 *   status (3)     SCSI Rsp, Data-In (with S); version-min (Login Req),
 *                  version-active (Login Rsp)
 *   lun (8-15)     SCSI Cmd, Data-Out/In, R2T, NOP, TMF, Async, Text (raw)
 *   isid/tsih (8-15) Login Req/Rsp
 *   itt (16-19)    all but Async (0xFFFFFFFF) and Reject (0xFFFFFFFF)
 *   ttt (20-23)    Data-Out/In, R2T, NOP-Out/In, Text; EDTL (SCSI Cmd);
 *                  referenced task tag (TMF Req); SNACK tag (SCSI Rsp)
 *   cid (20-21)    Login Req, Logout Req
 *   cmd_sn (24-27) requests; stat_sn (24-27) responses
 *   exp_stat_sn (28-31) requests; exp_cmd_sn (28-31) responses
 *   max_cmd_sn (32-35) responses; ref_cmd_sn (32-35) TMF Req
 *   cdb (32-47)    SCSI Cmd
 *   data_sn (36-39) Data-Out/In, R2T (R2TSN), SCSI Rsp/TMF Req (ExpDataSN),
 *                  Reject (DataSN/R2TSN); Login Rsp uses status_class/detail
 *   offset (40-43) Data-Out/In, R2T; bidi read residual (SCSI Rsp);
 *                  Time2Wait/Time2Retain (Logout Rsp, 40-41/42-43)
 *   length (44-47) R2T desired length; residual (SCSI Rsp, Data-In)
 *   async event/vcode/params (36-43) Async Message
 */
struct osd__iscsi_bhs {
	uint8_t opcode;        /* enum osd__iscsi_opcode */
	uint8_t immediate;     /* I bit (requests) */
	uint8_t flags;         /* byte 1 */
	uint8_t response;      /* byte 2 */
	uint8_t status;        /* byte 3 */
	uint8_t ahs_words;     /* TotalAHSLength, in 4-byte words */
	uint32_t data_len;     /* DataSegmentLength (bytes, before padding) */
	uint8_t lun[8];        /* LUN, as on the wire */
	uint8_t isid[6];       /* Login */
	uint16_t tsih;         /* Login */
	uint32_t itt;
	uint32_t ttt;
	uint16_t cid;
	uint32_t cmd_sn;
	uint32_t stat_sn;
	uint32_t exp_stat_sn;
	uint32_t exp_cmd_sn;
	uint32_t max_cmd_sn;
	uint32_t ref_cmd_sn;
	uint32_t data_sn;
	uint32_t offset;
	uint32_t length;
	uint8_t cdb[16];
	uint8_t status_class;  /* Login Rsp byte 36 */
	uint8_t status_detail; /* Login Rsp byte 37 */
	uint16_t time2wait;    /* Logout Rsp */
	uint16_t time2retain;  /* Logout Rsp */
	uint8_t async_event;   /* Async byte 36 */
	uint8_t async_vcode;   /* Async byte 37 */
	uint16_t async_param[3]; /* Async bytes 38-43 */
};

/* Encode @p h into 48 bytes. Returns 0 or -EINVAL (unknown opcode,
 * data_len over 24 bits). */
int osd__iscsi_bhs_encode(const struct osd__iscsi_bhs *h,
				     uint8_t out[OSD_ISCSI_BHS_LEN]);

/* Decode 48 bytes. Returns 0, -EPROTO (unknown opcode), or -EBADMSG. */
int osd__iscsi_bhs_decode(struct osd__iscsi_bhs *h,
				     const uint8_t in[OSD_ISCSI_BHS_LEN]);

/* Whether opcode is one an initiator sends (1) or a target sends (0). */
int osd__iscsi_opcode_is_request(uint8_t opcode);

/* Printable name of an opcode ("SCSI Command"), "unknown" if unknown. */
const char *osd__iscsi_opcode_name(uint8_t opcode);

/* LUN <-> 8-byte SAM LUN (peripheral or flat addressing, up to 16383). */
void osd__iscsi_lun_encode(uint8_t out[8], uint16_t lun);
/* Returns the LUN number or -EINVAL for an address method we do not use. */
int osd__iscsi_lun_decode(const uint8_t in[8]);

/* ---- Whole PDUs ---- */

/* Digests in use on a connection (after login). */
struct osd__iscsi_digests {
	int header; /* HeaderDigest=CRC32C */
	int data;   /* DataDigest=CRC32C */
};

/* Bytes that follow the BHS for @p h: AHS, header digest, data segment
 * padded to 4, data digest (the data digest only when data_len > 0). */
size_t osd__iscsi_pdu_rest_len(const struct osd__iscsi_bhs *h,
					  const struct osd__iscsi_digests *dg);

/* A parsed PDU: pointers into the caller's buffer. */
struct osd__iscsi_pdu {
	struct osd__iscsi_bhs bhs;
	const uint8_t *ahs;     /* NULL when ahs_len is 0 */
	size_t ahs_len;
	const uint8_t *data;    /* NULL when data_len is 0 */
	size_t data_len;
};

/*
 * Parse one complete PDU in @p buf (BHS followed by rest_len bytes).
 * @p max_data caps DataSegmentLength (the MaxRecvDataSegmentLength we
 * declared). Returns the PDU's byte length, or -EBADMSG (truncated, oversized
 * segment, header digest mismatch), -EPROTO (unknown opcode), or -EILSEQ
 * (data digest mismatch: the header was good, out->bhs is valid).
 */
long osd__iscsi_pdu_parse(struct osd__iscsi_pdu *out, const uint8_t *buf,
				     size_t len, const struct osd__iscsi_digests *dg,
				     size_t max_data);

/*
 * Lay out a PDU into @p out (capacity @p cap): BHS from @p h (its ahs_words
 * and data_len are set from @p ahs_len and @p data_len), AHS, header digest,
 * data, zero padding, data digest. Returns the total length, or -ENOSPC /
 * -EINVAL (AHS not a multiple of 4 or over 1020 bytes).
 */
long osd__iscsi_pdu_build(uint8_t *out, size_t cap, struct osd__iscsi_bhs *h,
				     const uint8_t *ahs, size_t ahs_len,
				     const uint8_t *data, size_t data_len,
				     const struct osd__iscsi_digests *dg);

/* Largest tail after a data segment: 3 bytes of padding and a data digest. */
#define OSD_ISCSI_PDU_TAIL_MAX 7

/*
 * The head of a PDU whose data segment the caller sends from its own
 * buffers (scatter-gather, no copy): BHS (ahs_words and data_len set as by
 * osd__iscsi_pdu_build()), AHS, header digest. Returns the head's length, or
 * -ENOSPC / -EINVAL as osd__iscsi_pdu_build().
 */
long osd__iscsi_pdu_build_head(uint8_t *out, size_t cap, struct osd__iscsi_bhs *h,
					  const uint8_t *ahs, size_t ahs_len, size_t data_len,
					  const struct osd__iscsi_digests *dg);

/* What follows @p data_len bytes of @p data on the wire: zero padding and the
 * data digest when in use (nothing for an empty segment). Returns its length. */
size_t osd__iscsi_pdu_build_tail(uint8_t out[OSD_ISCSI_PDU_TAIL_MAX],
					    const uint8_t *data, size_t data_len,
					    const struct osd__iscsi_digests *dg);

/* Padding after a data segment of @p len bytes. */
static inline size_t osd__iscsi_pad(size_t len)
{
	return (4 - (len & 3)) & 3;
}

/* ---- Additional Header Segments (RFC 7143 11.2.2) ---- */

#define OSD_ISCSI_AHS_EXT_CDB 1   /* Extended CDB */
#define OSD_ISCSI_AHS_BIDI_READ 2 /* Bidirectional Read Expected Data Transfer Length */
#define OSD_ISCSI_MAX_CDB 260     /* 16 + 244, the largest we handle */

/* What a SCSI Command's AHS carried. */
struct osd__iscsi_ahs_info {
	const uint8_t *ext_cdb;  /* CDB bytes 16.. (NULL if none) */
	size_t ext_cdb_len;
	int has_bidi_read;
	uint32_t bidi_read_len;  /* Expected bidirectional read length */
};

/* Walk the AHS. Returns 0, -EBADMSG (lengths overrun, misaligned) or
 * -EPROTO (duplicate or unknown AHS type). */
int osd__iscsi_ahs_parse(struct osd__iscsi_ahs_info *out,
				    const uint8_t *ahs, size_t len);

/*
 * Build the AHS of a SCSI Command: an Extended CDB AHS if @p cdb_len > 16
 * (bytes 16.. of @p cdb), and a Bidirectional Read AHS if @p bidi.
 * Returns the AHS length (multiple of 4) or -ENOSPC / -EINVAL.
 */
long osd__iscsi_ahs_build(uint8_t *out, size_t cap, const uint8_t *cdb,
				     size_t cdb_len, int bidi, uint32_t bidi_read_len);

/* Reassemble a full CDB from the BHS's 16 bytes and the AHS. Returns the
 * CDB length, or -EBADMSG if it would not fit @p cap. */
long osd__iscsi_cdb_join(uint8_t *out, size_t cap, const struct osd__iscsi_bhs *h,
				    const struct osd__iscsi_ahs_info *ahs);

/* ---- Digests ---- */

/* iSCSI digest of a segment, as the 4 wire bytes (least significant first,
 * RFC 7143 Appendix B.4). */
void osd__iscsi_digest(uint8_t out[4], const void *buf, size_t len);

/* ---- Serial number arithmetic (RFC 1982, 32 bits) for CmdSN/StatSN ---- */

static inline int osd__iscsi_sn_lt(uint32_t a, uint32_t b)
{
	return a != b && (uint32_t)(b - a) < 0x80000000u;
}

static inline int osd__iscsi_sn_gt(uint32_t a, uint32_t b)
{
	return osd__iscsi_sn_lt(b, a);
}

static inline int osd__iscsi_sn_le(uint32_t a, uint32_t b)
{
	return a == b || osd__iscsi_sn_lt(a, b);
}

/* Whether @p sn lies in the window [exp, max] (inclusive). */
static inline int osd__iscsi_sn_in_window(uint32_t sn, uint32_t exp, uint32_t max)
{
	return osd__iscsi_sn_le(exp, sn) && osd__iscsi_sn_le(sn, max);
}

/* ---- Text segments: key=value pairs, each NUL-terminated (RFC 7143 6.1) ---- */

#define OSD_ISCSI_MAX_KEY 63          /* key name length */
#define OSD_ISCSI_MAX_VALUE 8192      /* value length (CHAP values are long) */
#define OSD_ISCSI_MAX_TEXT 65536      /* whole negotiation segment we accept */

/* One pair: pointers into the segment, not NUL-terminated copies. */
struct osd__iscsi_kv {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
};

/*
 * Next pair of the segment @p buf[0..len) from *@p pos (start at 0).
 * Returns 1 and fills @p kv, 0 at the end, or -EBADMSG (no '=', missing
 * NUL terminator, bad key characters, oversized key or value). Trailing
 * NUL padding is accepted.
 */
int osd__iscsi_text_next(struct osd__iscsi_kv *kv, const uint8_t *buf, size_t len,
				    size_t *pos);

/* Whether @p kv's key is @p key. */
int osd__iscsi_kv_is(const struct osd__iscsi_kv *kv, const char *key);

/* A growable text segment being built. Zero-initialise; free with _free. */
struct osd__iscsi_text {
	uint8_t *data;
	size_t len;
	size_t cap;
};

/* Append "key=value\0". Returns 0, -ENOMEM or -EMSGSIZE (over OSD_ISCSI_MAX_TEXT). */
int osd__iscsi_text_add(struct osd__iscsi_text *t, const char *key,
				   const char *value);
/* Append raw segment bytes (e.g. the text of a PDU with the C bit set). */
int osd__iscsi_text_add_raw(struct osd__iscsi_text *t, const uint8_t *data,
				       size_t len);
/* Same with a number value (decimal). */
int osd__iscsi_text_add_num(struct osd__iscsi_text *t, const char *key,
				       uint64_t value);
void osd__iscsi_text_free(struct osd__iscsi_text *t);

/* ---- Operational parameters and their negotiation (RFC 7143 13) ---- */

struct osd__iscsi_params {
	int header_digest;              /* 1 = CRC32C */
	int data_digest;
	uint32_t max_recv_dsl_initiator; /* MaxRecvDataSegmentLength declared by the initiator */
	uint32_t max_recv_dsl_target;    /* ... declared by the target */
	uint32_t first_burst;
	uint32_t max_burst;
	int immediate_data;
	int initial_r2t;
	uint32_t max_outstanding_r2t;
	uint32_t max_connections;
	uint32_t time2wait;
	uint32_t time2retain;
	uint32_t error_recovery_level;
	int data_pdu_in_order;
	int data_sequence_in_order;
	int discovery;                  /* SessionType=Discovery */
};

/* RFC 7143 defaults (8192-byte segments, 64 KiB first burst, ...). */
void osd__iscsi_params_default(struct osd__iscsi_params *p);

/*
 * Target side: the initiator offered @p kv; combine it with the target's
 * own limits in @p ours (the values the target is willing to use) into
 * @p p, and append the answer (if one is due) to @p answer.
 * Keys that are not operational (TargetName, AuthMethod, CHAP_*) return
 * -ENOENT so the caller handles them; unknown keys are answered
 * NotUnderstood; an invalid value gets Reject. Returns 0, -ENOENT, or
 * -ENOMEM / -EMSGSIZE from building the answer.
 */
int osd__iscsi_negotiate_offer(struct osd__iscsi_params *p,
					  const struct osd__iscsi_params *ours,
					  const struct osd__iscsi_kv *kv,
					  struct osd__iscsi_text *answer);

/*
 * Initiator side: apply the target's answer @p kv to a key the initiator
 * offered with the values in @p p (or a key the target declared, e.g. its
 * MaxRecvDataSegmentLength). Returns 0, -ENOENT (not an operational key),
 * or -EPROTO (the answer breaks the negotiation rules, e.g. a larger
 * MaxBurstLength than offered, or Reject/NotUnderstood).
 */
int osd__iscsi_negotiate_answer(struct osd__iscsi_params *p,
					   const struct osd__iscsi_kv *kv);

/* Value of a hex digit, -1 if @p c is not one. */
static inline int osd__iscsi_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse a decimal or 0x-hex number value (up to @p max). -EINVAL if invalid. */
int osd__iscsi_parse_number(const struct osd__iscsi_kv *kv, uint64_t max,
				       uint64_t *out);

/* ---- CHAP (RFC 1994 with MD5, RFC 7143 12.1.3) ---- */

#define OSD_ISCSI_CHAP_MD5 5       /* CHAP_A value */
#define OSD_ISCSI_CHAP_DIGEST_LEN 16

/* MD5(id || secret || challenge). Returns 0 or -EIO (OpenSSL failed). */
int osd__iscsi_chap_response(uint8_t out[OSD_ISCSI_CHAP_DIGEST_LEN], uint8_t id,
					const uint8_t *secret, size_t secret_len,
					const uint8_t *challenge, size_t challenge_len);

/* Decode a CHAP binary value: "0x" hex or "0b" base64. Returns the byte
 * count or -EINVAL (bad encoding, over @p cap). */
long osd__iscsi_binary_decode(uint8_t *out, size_t cap, const char *value,
					 size_t value_len);

/* Encode bytes as "0x" hex into @p out (needs 2 * len + 3 bytes). */
void osd__iscsi_binary_encode(char *out, const uint8_t *in, size_t len);

#endif
