/**
 * @file osd/sense.h
 * @brief Descriptor-format sense data: decoding for initiators, building for targets.
 *
 * @defgroup osd_sense Sense data
 * @{
 */
#ifndef OSD_SENSE_H
#define OSD_SENSE_H

#include <osd/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** SCSI sense keys used by OSD. */
enum osd_sense_key {
	OSD_SK_NO_SENSE = 0x0,
	OSD_SK_RECOVERED_ERROR = 0x1,
	OSD_SK_NOT_READY = 0x2,
	OSD_SK_MEDIUM_ERROR = 0x3,
	OSD_SK_HARDWARE_ERROR = 0x4,
	OSD_SK_ILLEGAL_REQUEST = 0x5,
	OSD_SK_UNIT_ATTENTION = 0x6,
	OSD_SK_DATA_PROTECT = 0x7,
	OSD_SK_ABORTED_COMMAND = 0xB
};

/** @name ASC/ASCQ pairs as (ASC << 8 | ASCQ) */
/** @{ */
#define OSD_ASC_NONE 0x0000 /**< no additional sense information */
#define OSD_ASC_UNRECOVERED_READ_ERROR 0x1100 /**< UNRECOVERED READ ERROR (with MEDIUM ERROR) */
#define OSD_ASC_INVALID_OPCODE 0x2000 /**< INVALID COMMAND OPERATION CODE */
#define OSD_ASC_INVALID_FIELD_IN_CDB 0x2400 /**< INVALID FIELD IN CDB */
#define OSD_ASC_SECURITY_AUDIT_FROZEN 0x2404 /**< SECURITY AUDIT VALUE FROZEN */
#define OSD_ASC_SECURITY_WORKING_KEY_FROZEN 0x2405 /**< SECURITY WORKING KEY FROZEN */
#define OSD_ASC_NONCE_NOT_UNIQUE 0x2406 /**< NONCE NOT UNIQUE */
#define OSD_ASC_NONCE_TIMESTAMP_OUT_OF_RANGE 0x2407 /**< NONCE TIMESTAMP OUT OF RANGE */
#define OSD_ASC_INVALID_FIELD_IN_PARAM_LIST 0x2600 /**< INVALID FIELD IN PARAMETER LIST */
#define OSD_ASC_INVALID_DATA_OUT_ICV 0x260F /**< INVALID DATA-OUT BUFFER INTEGRITY CHECK VALUE */
#define OSD_ASC_PARAM_LIST_LENGTH_ERROR 0x1A00 /**< PARAMETER LIST LENGTH ERROR */
#define OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY 0x2C0A /**< PARTITION OR COLLECTION CONTAINS USER OBJECTS */
#define OSD_ASC_READ_PAST_END_OF_OBJECT 0x3B17 /**< READ PAST END OF USER OBJECT */
#define OSD_ASC_QUOTA_ERROR 0x5507 /**< QUOTA ERROR */
#define OSD_ASC_SYSTEM_RESOURCE_FAILURE 0x5500 /**< SYSTEM RESOURCE FAILURE */
#define OSD_ASC_SPACE_ALLOC_FAILED 0x2707 /**< SPACE ALLOCATION FAILED WRITE PROTECT (device full) */
#define OSD_ASC_FORMAT_IN_PROGRESS 0x0404 /**< LOGICAL UNIT NOT READY, FORMAT IN PROGRESS */
#define OSD_ASC_POWER_ON_RESET 0x2900 /**< POWER ON, RESET, OR BUS DEVICE RESET OCCURRED */
/** @} */

/**
 * @name Command-function bits of the OSD object identification descriptor
 * Bytes 8-11 / 12-15 of descriptor 06h read as a big-endian 32-bit value.
 */
/** @{ */
#define OSD_CFUNC_VALIDATION 0x80000000u /**< validation (byte 8 bit 7) */
#define OSD_CFUNC_CMD_CAP_V 0x20000000u /**< command capability verified (byte 8 bit 5) */
#define OSD_CFUNC_COMMAND 0x10000000u /**< the command itself (byte 8 bit 4) */
#define OSD_CFUNC_IMP_ST_ATT 0x00100000u /**< implicit/standard attribute updates (byte 9 bit 4) */
#define OSD_CFUNC_SA_CAP_V 0x00002000u /**< set-attributes capability verified (byte 10 bit 5) */
#define OSD_CFUNC_SET_ATT 0x00001000u /**< set attributes (byte 10 bit 4) */
#define OSD_CFUNC_GA_CAP_V 0x00000020u /**< get-attributes capability verified (byte 11 bit 5) */
#define OSD_CFUNC_GET_ATT 0x00000010u /**< get attributes (byte 11 bit 4) */
/** @} */

#define OSD_SENSE_MAX_ATTRS 16 /**< attribute ids kept from descriptor 08h */

/** Decoded sense data. Flags say which descriptors were present. */
struct osd_sense {
	uint8_t response_code;   /**< 0x72 current or 0x73 deferred */
	uint8_t key;             /**< enum osd_sense_key */
	uint16_t asc;            /**< ASC << 8 | ASCQ */
	unsigned has_info : 1;   /**< descriptor 00h */
	unsigned has_csi : 1;    /**< descriptor 01h */
	unsigned has_field : 1;  /**< descriptor 02h with SKSV */
	unsigned has_object : 1; /**< descriptor 06h */
	unsigned has_ricv : 1;   /**< descriptor 07h */
	uint64_t information;    /**< descriptor 00h */
	uint64_t csi;            /**< descriptor 01h, e.g. bytes read by a short READ */
	unsigned field_in_cdb : 1; /**< descriptor 02h C/D */
	uint16_t field_pointer;  /**< descriptor 02h: offending byte */
	uint8_t bit_pointer;     /**< descriptor 02h, valid when bpv */
	unsigned bpv : 1;        /**< bit pointer valid */
	uint32_t not_initiated;  /**< descriptor 06h command functions (OSD_CFUNC_*) */
	uint32_t completed;      /**< descriptor 06h */
	struct osd_obj_id object;/**< descriptor 06h */
	uint8_t ricv_len;        /**< descriptor 07h */
	uint8_t ricv[32];        /**< descriptor 07h */
	unsigned num_attrs;      /**< descriptor 08h pairs kept */
	struct { uint32_t page, number; } attrs[OSD_SENSE_MAX_ATTRS]; /**< descriptor 08h */
};

/**
 * Decode sense bytes. Fixed-format sense (70h/71h) is decoded into key/ASC
 * only; unknown descriptors are skipped.
 * @return 0, -EBADMSG for an empty buffer, an unknown response code or a
 *         descriptor that runs past the end.
 */
OSD_EXTERN int osd_sense_decode(const uint8_t *buf, size_t len, struct osd_sense *sense);

/**
 * The errno this condition means: 0 for NO SENSE and RECOVERED ERROR;
 * -ENOENT for a missing object (24h/00h naming the object id or partition id);
 * -EACCES for capability/ICV/permission failures and nonce errors;
 * -EEXIST for CREATE of an existing id; -ENOTEMPTY for 2Ch/0Ah;
 * -ENOSPC for QUOTA ERROR; -EOPNOTSUPP for an unimplemented command or
 * service action (ILLEGAL REQUEST with 20h/00h, with 00h/00h, or with 24h/00h
 * pointing at the SERVICE ACTION); -EINVAL for other ILLEGAL REQUESTs;
 * -EAGAIN for UNIT ATTENTION / NOT READY; else -EIO.
 * Sense data alone cannot tell a missing object from an existing one named
 * by a CREATE; this function reports -ENOENT for both and
 * osd_sense_errno_cmd() turns it into -EEXIST for the CREATE family.
 * "Missing object" means 24h/00h with a field pointer at PARTITION_ID (16) or
 * the object id (24) only: without a field pointer it is -EINVAL, even with
 * an object identification descriptor (06h), which names the command's
 * object in any sense. A field pointer into the capability or request ICV
 * gives -EACCES.
 */
OSD_EXTERN int osd_sense_errno(const struct osd_sense *sense);

/**
 * osd_sense_errno() for the command that received @p sense: -EEXIST instead
 * of -ENOENT when @p action is CREATE, CREATE AND WRITE, CREATE PARTITION,
 * CREATE COLLECTION or CREATE USER TRACKING COLLECTION; -EOPNOTSUPP instead
 * of -EINVAL when @p action is GET ATTRIBUTES and the sense is INVALID FIELD
 * IN PARAMETER LIST naming attributes (descriptor 08h): the target does not
 * provide them.
 */
OSD_EXTERN int osd_sense_errno_cmd(const struct osd_sense *sense, enum osd_action action);

/**
 * A human-readable description, e.g. "ILLEGAL REQUEST: INVALID FIELD IN CDB:
 * object 0x10005 in partition 0x10000 does not exist": sense key, ASC text
 * (or "ASC xxh ASCQ yyh" when unknown), then the object, field pointer,
 * attributes and command-specific information the descriptors carry.
 * @param sense the decoded sense
 * @param buf   receives the NUL-terminated message, truncated to @p len; may
 *              be NULL when @p len is 0
 * @param len   size of @p buf
 * @return the length the full message needs (like snprintf).
 */
OSD_EXTERN int osd_sense_describe(const struct osd_sense *sense, char *buf, size_t len);

/** ASC/ASCQ description, e.g. "INVALID FIELD IN CDB"; static storage, never NULL. */
OSD_EXTERN const char *osd_asc_string(uint16_t asc);

/**
 * Encode @p sense as descriptor-format sense (target side): header plus the
 * descriptors its flags select (00h, 01h, 02h, 06h, 07h, 08h).
 * @return bytes written, -ENOBUFS if @p len is too small.
 */
OSD_EXTERN int osd_sense_encode(const struct osd_sense *sense, uint8_t *buf, size_t len);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
