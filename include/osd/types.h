/**
 * @file osd/types.h
 * @brief Basic types, constants and conventions shared by every libosd header.
 *
 * Conventions used throughout libosd:
 * - Functions return 0 (or a non-negative count) on success and a negative
 *   errno value on failure. Codec functions use -EBADMSG for malformed input,
 *   -ENOBUFS when a caller's buffer is too small, -EINVAL for bad arguments
 *   and -ENOTSUP for something the chosen OSD version does not have.
 * - Multi-byte protocol integers are big-endian on the wire; the structures in
 *   these headers hold host-order values, never wire images.
 * - Timestamps are milliseconds since 1970-01-01 UTC (48 bits on the wire).
 *
 * @defgroup osd_types Basic types
 * @{
 */
#ifndef OSD_TYPES_H
#define OSD_TYPES_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
/** Marks a function exported from the shared library (hidden is the default). */
#define OSD_EXTERN __attribute__((visibility("default")))
#else
#define OSD_EXTERN /**< no visibility control on this compiler */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** OSD command-set version spoken by a device. */
enum osd_version {
	OSD_V1 = 1, /**< T10/1355-D, ANSI INCITS 400-2004: 200-byte CDBs */
	OSD_V2 = 2  /**< T10/1729-D, ANSI INCITS 458-2011: 236-byte CDBs */
};

#define OSD_CDB_V1_LEN 200 /**< OSD-1 CDB length in bytes */
#define OSD_CDB_V2_LEN 236 /**< OSD-2 CDB length in bytes */
#define OSD_CDB_MAX_LEN 236 /**< longest CDB of any version */
#define OSD_CAP_V1_LEN 80  /**< OSD-1 capability length */
#define OSD_CAP_V2_LEN 104 /**< OSD-2 capability length */
#define OSD_ICV_V1_LEN 20  /**< OSD-1 integrity check value field length */
#define OSD_ICV_V2_LEN 32  /**< OSD-2 integrity check value field length */
#define OSD_ICV_MAX_LEN 32 /**< largest ICV field */
#define OSD_NONCE_LEN 12   /**< request nonce length */
#define OSD_SYSTEM_ID_LEN 20 /**< OSD system id (root information 0x3) */
#define OSD_KEY_ID_LEN 7   /**< key identifier length */
#define OSD_SEED_LEN 20    /**< SET KEY seed length */
#define OSD_SENSE_MAX_LEN 252 /**< largest sense buffer a target returns */

/** First partition and user object id a filesystem may use; 1..0xFFFF are reserved. */
#define OSD_FIRST_ID 0x10000ULL

/**
 * Service actions. The enumerator value is the OSD-2 code; osd_action_code()
 * gives the code for either version.
 */
enum osd_action {
	OSD_ACT_OBJECT_STRUCTURE_CHECK = 0x8880, /**< v2 only */
	OSD_ACT_FORMAT_OSD = 0x8881,
	OSD_ACT_CREATE = 0x8882,
	OSD_ACT_LIST = 0x8883,
	OSD_ACT_PUNCH = 0x8884, /**< v2 only */
	OSD_ACT_READ = 0x8885,
	OSD_ACT_WRITE = 0x8886,
	OSD_ACT_APPEND = 0x8887,
	OSD_ACT_FLUSH = 0x8888,
	OSD_ACT_CLEAR = 0x8889, /**< v2 only */
	OSD_ACT_REMOVE = 0x888A,
	OSD_ACT_CREATE_PARTITION = 0x888B,
	OSD_ACT_REMOVE_PARTITION = 0x888C,
	OSD_ACT_GET_ATTRIBUTES = 0x888E,
	OSD_ACT_SET_ATTRIBUTES = 0x888F,
	OSD_ACT_CREATE_AND_WRITE = 0x8892,
	OSD_ACT_COPY_USER_OBJECTS = 0x8893, /**< v2 only */
	OSD_ACT_CREATE_USER_TRACKING_COLLECTION = 0x8894, /**< v2 only */
	OSD_ACT_CREATE_COLLECTION = 0x8895,
	OSD_ACT_REMOVE_COLLECTION = 0x8896,
	OSD_ACT_LIST_COLLECTION = 0x8897,
	OSD_ACT_SET_KEY = 0x8898,
	OSD_ACT_SET_MASTER_KEY = 0x8899,
	OSD_ACT_FLUSH_COLLECTION = 0x889A,
	OSD_ACT_FLUSH_PARTITION = 0x889B,
	OSD_ACT_FLUSH_OSD = 0x889C,
	OSD_ACT_QUERY = 0x88A0, /**< v2 only */
	OSD_ACT_REMOVE_MEMBER_OBJECTS = 0x88A1, /**< v2 only */
	OSD_ACT_GET_MEMBER_ATTRIBUTES = 0x88A2, /**< v2 only */
	OSD_ACT_SET_MEMBER_ATTRIBUTES = 0x88A3, /**< v2 only */
	OSD_ACT_CREATE_CLONE = 0x88A8, /**< v2 only */
	OSD_ACT_CREATE_SNAPSHOT = 0x88A9, /**< v2 only */
	OSD_ACT_DETACH_CLONE = 0x88AA, /**< v2 only */
	OSD_ACT_REFRESH_SNAPSHOT_OR_CLONE = 0x88AB, /**< v2 only */
	OSD_ACT_RESTORE_PARTITION_FROM_SNAPSHOT = 0x88AC, /**< v2 only */
	OSD_ACT_READ_MAP = 0x88B1, /**< v2 only */
	OSD_ACT_READ_MAPS_AND_COMPARE = 0x88B2, /**< v2 only */
	OSD_ACT_PERFORM_SCSI_COMMAND = 0x8F7C, /**< v1 code 0x8F7E */
	OSD_ACT_PERFORM_TASK_MGMT = 0x8F7D    /**< v1 code 0x8F7F */
};

/** Object types (capability byte 48, current-command attribute 2). */
enum osd_obj_type {
	OSD_OBJ_ROOT = 0x01,
	OSD_OBJ_PARTITION = 0x02,
	OSD_OBJ_COLLECTION = 0x40,
	OSD_OBJ_USER = 0x80
};

/** Security methods (capability byte 2). */
enum osd_sec_method {
	OSD_SEC_NOSEC = 0,
	OSD_SEC_CAPKEY = 1,
	OSD_SEC_CMDRSP = 2,
	OSD_SEC_ALLDATA = 3
};

/** An object address: partition id and object id (0,0 is the root; P,0 a partition). */
struct osd_obj_id {
	uint64_t partition; /**< PARTITION_ID */
	uint64_t id;        /**< USER_OBJECT_ID or COLLECTION_OBJECT_ID; 0 for root/partition */
};

/**
 * The service-action code of @p action in @p version.
 * @return the code, or -ENOTSUP if the action does not exist in @p version.
 */
OSD_EXTERN int osd_action_code(enum osd_version version, enum osd_action action);

/**
 * The action for a service-action code and the version that code belongs to.
 * @param code the SERVICE ACTION field (CDB bytes 8-9)
 * @param[out] action  the action (OSD-2 code value)
 * @param[out] version the version the code belongs to
 * @return 0, or -EBADMSG for an unknown code.
 */
OSD_EXTERN int osd_action_from_code(uint16_t code, enum osd_action *action,
				    enum osd_version *version);

/** The command's name, e.g. "READ", or "UNKNOWN". Never NULL; static storage. */
OSD_EXTERN const char *osd_action_name(enum osd_action action);

/** The object type an id pair addresses: root, partition or user object. */
OSD_EXTERN enum osd_obj_type osd_obj_type_of(const struct osd_obj_id *obj);

/**
 * libosd's version as text, e.g. "0.1.0": the OSD_VERSION_STRING it was
 * built with (osd/version.h has the application's). Static storage.
 */
OSD_EXTERN const char *osd_version_string(void);

/**
 * libosd's version as one number (OSD_VERSION_NUMBER of osd/version.h when
 * it was built): at least OSD_VERSION_NUMBER of an application's headers
 * when the library is as new as they are.
 */
OSD_EXTERN long osd_version_number(void);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
