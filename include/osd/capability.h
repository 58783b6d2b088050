/**
 * @file osd/capability.h
 * @brief The capability carried in every OSD CDB (80 bytes in OSD-1, 104 in OSD-2).
 *
 * @defgroup osd_capability Capabilities
 * @{
 */
#ifndef OSD_CAPABILITY_H
#define OSD_CAPABILITY_H

#include <osd/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @name Permission bits (capability bytes 49-50 read as one big-endian 16-bit value) */
/** @{ */
#define OSD_PERM_READ 0x8000u /**< READ (byte 49 bit 7) */
#define OSD_PERM_WRITE 0x4000u /**< WRITE */
#define OSD_PERM_GET_ATTR 0x2000u /**< GET_ATTR */
#define OSD_PERM_SET_ATTR 0x1000u /**< SET_ATTR */
#define OSD_PERM_CREATE 0x0800u /**< CREATE */
#define OSD_PERM_REMOVE 0x0400u /**< REMOVE */
#define OSD_PERM_OBJ_MGMT 0x0200u /**< OBJ_MGMT (object management) */
#define OSD_PERM_APPEND 0x0100u /**< APPEND (byte 49 bit 0) */
#define OSD_PERM_DEV_MGMT 0x0080u /**< DEV_MGMT (device management, byte 50 bit 7) */
#define OSD_PERM_GLOBAL 0x0040u /**< GLOBAL */
#define OSD_PERM_POL_SEC 0x0020u /**< POL/SEC (policy/security) */
#define OSD_PERM_M_OBJECT 0x0010u /**< OSD-2 */
#define OSD_PERM_QUERY 0x0008u    /**< OSD-2 */
#define OSD_PERM_GBL_REM 0x0004u  /**< OSD-2 */
#define OSD_PERM_ALL_V1 0xFFE0u   /**< every OSD-1 permission */
#define OSD_PERM_ALL_V2 0xFFFCu   /**< every OSD-2 permission */
/** @} */

/** Object descriptor types (capability byte 55, bits 7-4). */
enum osd_cap_desc_type {
	OSD_CAP_DESC_NONE = 0, /**< descriptor ignored */
	OSD_CAP_DESC_USER = 1, /**< v1: one user object or collection; v2: one user object */
	OSD_CAP_DESC_PAR = 2,  /**< one partition (partition 0 = the root) */
	OSD_CAP_DESC_COL = 3   /**< v2: one collection */
};

/** ICV algorithm code for HMAC-SHA1 (capability byte 1, bits 3-0). */
#define OSD_ICV_ALG_HMAC_SHA1 1

/**
 * A decoded capability, host order. Fields that exist only in one version are
 * ignored when encoding for the other.
 */
struct osd_capability {
	uint8_t format;          /**< 0 none, 1 OSD-1 layout, 2 OSD-2 layout */
	uint8_t key_version;     /**< working key 0..15 */
	uint8_t icv_algorithm;   /**< OSD_ICV_ALG_HMAC_SHA1 */
	uint8_t security_method; /**< enum osd_sec_method */
	uint64_t expiration;     /**< ms timestamp; 0 = never */
	uint8_t audit[20];       /**< opaque to the OSD */
	uint8_t discriminator[12]; /**< opaque; distinguishes otherwise equal capabilities */
	uint64_t object_created; /**< ms timestamp that must match the object's; 0 = any */
	uint8_t object_type;     /**< enum osd_obj_type */
	uint16_t permissions;    /**< OSD_PERM_* bits */
	uint8_t desc_type;       /**< enum osd_cap_desc_type */
	uint32_t policy_access_tag; /**< 0 = none */
	uint32_t allowed_attr_access; /**< OSD-2 only */
	uint16_t boot_epoch;     /**< OSD-2 only */
	uint64_t allowed_partition; /**< ALLOWED PARTITION_ID */
	uint64_t allowed_object;    /**< ALLOWED (USER_)OBJECT_ID */
	uint64_t range_length;   /**< OSD-2 only; 0 = whole object */
	uint64_t range_start;    /**< OSD-2 only */
};

/**
 * Encode @p cap in the layout of @p version (format byte forced to 1 for
 * OSD-1 and 2 for OSD-2 when @p cap->format is non-zero).
 * @param      version layout to use
 * @param      cap     the capability
 * @param[out] out    OSD_CAP_V1_LEN or OSD_CAP_V2_LEN bytes
 * @param      outlen size of @p out
 * @return bytes written (80 or 104), -ENOBUFS if @p outlen is too small,
 *         -EINVAL for a field out of range (a 4-bit field above 15, a
 *         timestamp above 48 bits) or an unknown version.
 */
OSD_EXTERN int osd_capability_encode(enum osd_version version,
				     const struct osd_capability *cap,
				     uint8_t *out, size_t outlen);

/**
 * Decode a capability of @p version from @p in.
 * @param version layout to read
 * @param in      the capability bytes
 * @param len     bytes available at @p in
 * @param[out] cap decoded fields
 * @return 0, -EBADMSG if @p len is short or the format byte is inconsistent.
 */
OSD_EXTERN int osd_capability_decode(enum osd_version version,
				     const uint8_t *in, size_t len,
				     struct osd_capability *cap);

/**
 * Fill @p cap with a capability for @p obj allowing @p permissions, with the
 * object type and descriptor type derived from @p obj (root, partition, user
 * object; @p is_collection selects a collection descriptor).
 */
OSD_EXTERN void osd_capability_init(struct osd_capability *cap,
				    enum osd_version version,
				    const struct osd_obj_id *obj,
				    int is_collection,
				    uint16_t permissions,
				    enum osd_sec_method method);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
