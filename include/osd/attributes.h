/**
 * @file osd/attributes.h
 * @brief Standard attribute pages and numbers.
 *
 * @defgroup osd_attributes Standard attribute pages
 * @{
 */
#ifndef OSD_ATTRIBUTES_H
#define OSD_ATTRIBUTES_H

/** @name Page ranges per object type */
/** @{ */
#define OSD_APAGE_USER_BASE 0x00000000u
#define OSD_APAGE_PARTITION_BASE 0x30000000u
#define OSD_APAGE_COLLECTION_BASE 0x60000000u
#define OSD_APAGE_ROOT_BASE 0x90000000u
#define OSD_APAGE_ANY_BASE 0xF0000000u      /**< usable with any object type */
#define OSD_APAGE_APP_FIRST 0x10000u        /**< first application-defined relative page */
#define OSD_APAGE_CURRENT_COMMAND 0xFFFFFFFEu
#define OSD_APAGE_ALL 0xFFFFFFFFu
/** @} */

/** @name Relative standard pages (add to a base) */
/** @{ */
#define OSD_APAGE_DIRECTORY 0x0u
#define OSD_APAGE_INFORMATION 0x1u
#define OSD_APAGE_QUOTAS 0x2u
#define OSD_APAGE_TIMESTAMPS 0x3u
#define OSD_APAGE_COLLECTIONS 0x4u       /**< user object: collections it belongs to */
#define OSD_APAGE_ATTR_ACCESS 0x4u       /**< partition: attribute access (v2) */
#define OSD_APAGE_COMMAND_TRACKING 0x4u  /**< collection: command tracking (v2) */
#define OSD_APAGE_POLICY_SECURITY 0x5u
/** @} */

/** Attribute number 0 of every page: the 40-byte page identification. */
#define OSD_ATTR_PAGE_ID 0x0u
#define OSD_ATTR_PAGE_ID_LEN 40 /**< length of the page identification value */

/** @name Root information page (0x90000001) */
/** @{ */
#define OSD_ATTR_RI_SYSTEM_ID 0x3u /**< OSD SYSTEM ID (20 bytes) */
#define OSD_ATTR_RI_VENDOR_ID 0x4u /**< VENDOR IDENTIFICATION (8 bytes) */
#define OSD_ATTR_RI_PRODUCT_ID 0x5u /**< PRODUCT IDENTIFICATION (16 bytes) */
#define OSD_ATTR_RI_PRODUCT_MODEL 0x6u /**< PRODUCT MODEL (32 bytes) */
#define OSD_ATTR_RI_PRODUCT_REVISION 0x7u /**< PRODUCT REVISION LEVEL (4 bytes) */
#define OSD_ATTR_RI_SERIAL 0x8u /**< PRODUCT SERIAL NUMBER (variable) */
#define OSD_ATTR_RI_OSD_NAME 0x9u /**< OSD NAME (variable, settable) */
#define OSD_ATTR_RI_MAX_CONT_LEN 0xAu /**< MAXIMUM CDB CONTINUATION LENGTH (OSD-2, 4 bytes) */
#define OSD_ATTR_RI_TOTAL_CAPACITY 0x80u /**< TOTAL CAPACITY in bytes (8 bytes) */
#define OSD_ATTR_RI_USED_CAPACITY 0x81u /**< USED CAPACITY in bytes (8 bytes) */
#define OSD_ATTR_RI_NUM_PARTITIONS 0xC0u /**< NUMBER OF PARTITIONS (8 bytes) */
#define OSD_ATTR_RI_CLOCK 0x100u /**< CLOCK, ms timestamp (6 bytes) */
#define OSD_ATTR_RI_DEFAULT_ISOLATION 0x110u /**< DEFAULT ISOLATION METHOD (OSD-2, 1 byte) */
/** @} */

/** @name Partition information page (0x30000001) */
/** @{ */
#define OSD_ATTR_PI_PARTITION_ID 0x1u /**< PARTITION_ID (8 bytes) */
#define OSD_ATTR_PI_USERNAME 0x9u /**< USERNAME (variable) */
#define OSD_ATTR_PI_USED_CAPACITY 0x81u /**< USED CAPACITY in bytes (8 bytes) */
#define OSD_ATTR_PI_NUM_OBJECTS 0xC1u /**< NUMBER OF OBJECTS (8 bytes) */
/** @} */

/** @name Collection information page (0x60000001) */
/** @{ */
#define OSD_ATTR_CI_PARTITION_ID 0x1u /**< PARTITION_ID (8 bytes) */
#define OSD_ATTR_CI_COLLECTION_ID 0x2u /**< COLLECTION_OBJECT_ID (8 bytes) */
#define OSD_ATTR_CI_USERNAME 0x9u /**< USERNAME, the collection name (variable) */
#define OSD_ATTR_CI_TYPE 0xAu /**< COLLECTION TYPE: 00h linked, 01h tracking, EFh spontaneous (1 byte) */
#define OSD_ATTR_CI_USED_CAPACITY 0x81u /**< USED CAPACITY in bytes (8 bytes) */
/** @} */

/** @name User object information page (0x00000001) */
/** @{ */
#define OSD_ATTR_UI_PARTITION_ID 0x1u
#define OSD_ATTR_UI_OBJECT_ID 0x2u
#define OSD_ATTR_UI_USERNAME 0x9u
#define OSD_ATTR_UI_USED_CAPACITY 0x81u
#define OSD_ATTR_UI_LOGICAL_LENGTH 0x82u /**< settable: truncates or extends */
/** @} */

/** @name Quotas pages (root 0x90000002, partition 0x30000002, user 0x00000002) */
/** @{ */
#define OSD_ATTR_Q_MAX_OBJECT_LENGTH 0x1u
#define OSD_ATTR_Q_PARTITION_CAPACITY 0x10001u /**< 0 = unlimited */
#define OSD_ATTR_Q_PARTITION_OBJECT_COUNT 0x10002u
#define OSD_ATTR_Q_COLLECTIONS_PER_OBJECT 0x10081u
#define OSD_ATTR_Q_PARTITION_COUNT 0x20002u
/** @} */

/** @name Timestamps pages (0x3 relative; 6-byte ms values) */
/** @{ */
#define OSD_ATTR_TS_CREATED 0x1u /**< object created */
#define OSD_ATTR_TS_ATTR_ACCESSED 0x2u /**< attributes accessed */
#define OSD_ATTR_TS_ATTR_MODIFIED 0x3u /**< attributes modified */
#define OSD_ATTR_TS_DATA_ACCESSED 0x4u /**< data accessed */
#define OSD_ATTR_TS_DATA_MODIFIED 0x5u /**< data modified */
#define OSD_ATTR_TS_BYPASS 0xFFFFFFFEu /**< timestamp bypass flag (root and partition, 1 byte) */
/** @} */

/** @name Policy/security pages (0x5 relative) */
/** @{ */
#define OSD_ATTR_PS_DEFAULT_METHOD 0x1u
#define OSD_ATTR_PS_OLDEST_NONCE 0x2u
#define OSD_ATTR_PS_NEWEST_NONCE 0x3u
#define OSD_ATTR_PS_NONCE_LIST_DEPTH 0x4u      /**< partition */
#define OSD_ATTR_PS_FROZEN_WORKING_KEYS 0x5u   /**< partition */
#define OSD_ATTR_PS_PARTITION_DEFAULT_METHOD 0x6u /**< root */
#define OSD_ATTR_PS_SUPPORTED_METHODS 0x7u     /**< root */
#define OSD_ATTR_PS_MASTER_KEY_ID 0x7FFDu      /**< root */
#define OSD_ATTR_PS_ROOT_KEY_ID 0x7FFEu        /**< root */
#define OSD_ATTR_PS_PARTITION_KEY_ID 0x7FFFu   /**< partition */
#define OSD_ATTR_PS_WORKING_KEY_ID(v) (0x8000u + (v)) /**< partition, v = 0..15 */
#define OSD_ATTR_PS_POLICY_ACCESS_TAG 0x40000001u
#define OSD_ATTR_PS_USER_POLICY_ACCESS_TAG 0x40000002u
/** @} */

/** @name Current command page (0xFFFFFFFE) */
/** @{ */
#define OSD_ATTR_CC_RESPONSE_ICV 0x1u /**< RESPONSE INTEGRITY CHECK VALUE */
#define OSD_ATTR_CC_OBJECT_TYPE 0x2u /**< OBJECT TYPE the command acted on (1 byte) */
#define OSD_ATTR_CC_PARTITION_ID 0x3u /**< PARTITION_ID, e.g. the one CREATE PARTITION picked (8 bytes) */
#define OSD_ATTR_CC_OBJECT_ID 0x4u /**< object id, e.g. the one CREATE picked (8 bytes) */
#define OSD_ATTR_CC_APPEND_OFFSET 0x5u /**< STARTING BYTE ADDRESS OF APPEND (8 bytes) */
#define OSD_ATTR_CC_USED_CAPACITY_CHANGE 0x6u /**< CHANGE IN USED CAPACITY (OSD-2, 8 bytes) */
/** @} */

#endif
/** @} */
