/**
 * @file osd/cdb.h
 * @brief Encoding and decoding of OSD-1 (200-byte) and OSD-2 (236-byte) CDBs.
 *
 * struct osd_cdb is the decoded, version-independent form of a CDB. The
 * encoder places each field at the offset of the chosen version; the decoder
 * reads a CDB of either version, tells which one it was and validates it.
 *
 * @defgroup osd_cdb CDBs
 * @{
 */
#ifndef OSD_CDB_H
#define OSD_CDB_H

#include <osd/types.h>
#include <osd/capability.h>
#include <osd/offset.h>

#ifdef __cplusplus
extern "C" {
#endif

/** GET/SET CDBFMT (byte 11, bits 5-4). */
enum osd_attr_mode {
	OSD_ATTR_MODE_NONE = 0, /**< encoder writes list mode with zero lengths */
	OSD_ATTR_MODE_CDB = 1,  /**< OSD-2: set one attribute from CDB fields */
	OSD_ATTR_MODE_PAGE = 2, /**< get one page / set one attribute value */
	OSD_ATTR_MODE_LIST = 3  /**< get and set attribute lists */
};

/** Byte 10 option bits. */
#define OSD_OPT_DPO 0x10 /**< disable page out */
#define OSD_OPT_FUA 0x08 /**< force unit access */

/** TIMESTAMPS CONTROL values (byte 12). */
#define OSD_TIMESTAMPS_NORMAL 0x00 /**< update timestamps as usual */
#define OSD_TIMESTAMPS_BYPASS 0x7F /**< do not update timestamps */

/** Key to set (SET KEY, byte 11 bits 1-0). */
enum osd_key_to_set {
	OSD_KEY_ROOT = 1,
	OSD_KEY_PARTITION = 2,
	OSD_KEY_WORKING = 3
};

/** Get/set attribute parameters in page mode (byte offsets, host order). */
struct osd_cdb_attr_page {
	uint32_t get_page;        /**< page to retrieve; 0 = none */
	uint32_t get_alloc;       /**< bytes reserved in data-in for the page */
	uint64_t retrieved_offset;/**< data-in offset, OSD_OFFSET_NONE if unused */
	uint32_t set_page;        /**< page of the attribute to set; 0 = none */
	uint32_t set_number;      /**< attribute number to set */
	uint32_t set_length;      /**< value length */
	uint64_t set_offset;      /**< data-out offset of the raw value */
};

/** Get/set attribute parameters in list mode (byte offsets, host order). */
struct osd_cdb_attr_list {
	uint32_t get_list_length; /**< bytes of the type-01h list in data-out; 0 = none */
	uint64_t get_list_offset; /**< data-out offset */
	uint32_t get_alloc;       /**< bytes reserved in data-in for the retrieved list */
	uint64_t retrieved_offset;/**< data-in offset */
	uint32_t set_list_length; /**< bytes of the type-09h list in data-out; 0 = none */
	uint64_t set_list_offset; /**< data-out offset */
};

/** Set one attribute from CDB fields (OSD-2 CDB mode). */
struct osd_cdb_attr_one {
	uint32_t page;      /**< SET ATTRIBUTES PAGE */
	uint32_t number;    /**< SET ATTRIBUTE NUMBER */
	uint16_t length;    /**< 0..18 */
	uint8_t value[18];  /**< left-justified value */
};

/**
 * A decoded CDB. Zero-initialise, then fill what the command uses; fields a
 * command does not use must stay zero (the decoder leaves them zero).
 */
struct osd_cdb {
	enum osd_version version;  /**< which layout */
	enum osd_action action;    /**< service action (OSD-2 numbering) */
	uint8_t options;           /**< byte 10: OSD_OPT_DPO/FUA, ISOLATION (bits 2-0, v2) */
	uint8_t flush_scope;       /**< FLUSH family: byte 10 bits 1-0 */
	uint8_t cmd_options;       /**< byte 11 without CDBFMT: sort order, FCR, key to set,
				        DH step, LIST_ATTR (0x40), IMMED_TR (0x80), remove scope */
	uint8_t timestamps_control;/**< byte 12 */
	uint8_t duplication_method;/**< v2 byte 14 (COPY USER OBJECTS) */
	struct osd_obj_id obj;     /**< bytes 16-31 */
	uint64_t length;           /**< LENGTH / ALLOCATION LENGTH / FORMATTED CAPACITY */
	uint64_t start;            /**< STARTING BYTE ADDRESS / INITIAL OBJECT_ID /
				        MATCHES or SOURCE COLLECTION_OBJECT_ID */
	uint32_t list_id;          /**< LIST IDENTIFIER (LIST, LIST COLLECTION) */
	uint32_t cont_length;      /**< v2 CDB CONTINUATION LENGTH (other commands) */
	uint16_t num_objects;      /**< CREATE: NUMBER OF USER OBJECTS (0 means 1) */
	uint16_t map_type;         /**< v2 READ MAP: REQUESTED MAP TYPE */
	/* SET KEY / SET MASTER KEY */
	uint8_t key_version;       /**< SET KEY: byte 24 bits 3-0 */
	uint8_t key_id[OSD_KEY_ID_LEN]; /**< SET KEY: bytes 25-31; SET MASTER KEY: 25-31 */
	uint8_t seed[OSD_SEED_LEN];     /**< SET KEY: bytes 32-51 */
	uint32_t param_list_length;/**< SET MASTER KEY: bytes 32-35 */
	uint32_t alloc_length;     /**< SET MASTER KEY: bytes 36-39 */
	/* Attributes (bytes 52-79) */
	enum osd_attr_mode attr_mode; /**< selects the member of @ref attr */
	union {
		struct osd_cdb_attr_page page;
		struct osd_cdb_attr_list list;
		struct osd_cdb_attr_one one;
	} attr;                     /**< get/set attribute parameters */
	/* Security */
	struct osd_capability cap; /**< capability */
	uint8_t req_icv[OSD_ICV_MAX_LEN]; /**< REQUEST INTEGRITY CHECK VALUE (20 used in v1) */
	uint8_t nonce[OSD_NONCE_LEN];     /**< REQUEST NONCE */
	uint64_t data_in_icv_offset;  /**< OSD_OFFSET_NONE if unused */
	uint64_t data_out_icv_offset; /**< OSD_OFFSET_NONE if unused */
};

/**
 * Initialise @p cdb for @p action in @p version: zero everything, set every
 * offset to OSD_OFFSET_NONE and list mode with no lists.
 */
OSD_EXTERN void osd_cdb_init(struct osd_cdb *cdb, enum osd_version version,
			     enum osd_action action);

/**
 * Encode @p cdb.
 * @param      cdb    the fields to encode
 * @param[out] out    receives 200 (v1) or 236 (v2) bytes
 * @param      outlen size of @p out
 * @return the CDB length, -ENOBUFS if @p outlen is short, -ENOTSUP if the
 *         action or a field does not exist in the version, -EINVAL if a field
 *         is out of range (e.g. an offset that cannot be encoded exactly).
 */
OSD_EXTERN int osd_cdb_encode(const struct osd_cdb *cdb, uint8_t *out, size_t outlen);

/**
 * Decode and validate a CDB of either version.
 * @param in  the CDB bytes
 * @param len bytes at @p in: exactly 200 or 236
 * @param[out] cdb the decoded fields
 * @param[out] field_offset on -EBADMSG, the byte offset of the offending field
 *                          (for the sense FIELD POINTER); may be NULL
 * @return 0; -EBADMSG for a bad opcode/length/action (field_offset 0, 7 or 8) or
 *         any invalid field; -ENOTSUP for a valid but unknown service action.
 */
OSD_EXTERN int osd_cdb_decode(const uint8_t *in, size_t len, struct osd_cdb *cdb,
			      uint16_t *field_offset);

/** Byte offset of the capability in a CDB of @p version (80 in both). */
OSD_EXTERN size_t osd_cdb_cap_offset(enum osd_version version);
/** Byte offset of the REQUEST INTEGRITY CHECK VALUE (160 v1, 184 v2). */
OSD_EXTERN size_t osd_cdb_icv_offset(enum osd_version version);
/** Length of the request ICV field (20 v1, 32 v2). */
OSD_EXTERN size_t osd_cdb_icv_len(enum osd_version version);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
