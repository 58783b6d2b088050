/**
 * @file osd/list.h
 * @brief LIST, LIST COLLECTION and QUERY result parameter data.
 *
 * @defgroup osd_list LIST results
 * @{
 */
#ifndef OSD_LIST_H
#define OSD_LIST_H

#include <osd/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OSD_LIST_HEADER_LEN 24 /**< LIST / LIST COLLECTION header bytes */

/** OSD-2 object descriptor formats (LIST header byte 23, bits 7-2). */
enum osd_list_format {
	OSD_LIST_FMT_PARTITIONS = 0x01,
	OSD_LIST_FMT_PARTITIONS_ATTRS = 0x02,
	OSD_LIST_FMT_COLLECTIONS = 0x11,
	OSD_LIST_FMT_COLLECTIONS_ATTRS = 0x12,
	OSD_LIST_FMT_USER_OBJECTS = 0x21,
	OSD_LIST_FMT_USER_OBJECTS_ATTRS = 0x22
};

/** A decoded LIST / LIST COLLECTION / QUERY result header. */
struct osd_list_result {
	uint64_t additional_length; /**< bytes the complete answer needs after byte 8 */
	uint64_t continuation_id;   /**< 0 = complete, else the next INITIAL OBJECT_ID */
	uint32_t list_id;           /**< echo into the next command */
	uint8_t format;             /**< v2 object descriptor format (0 in v1) */
	unsigned lstchg : 1;        /**< the listed set changed since the list began */
	unsigned root : 1;          /**< v1 ROOT/COLTN bit */
	size_t num_ids;             /**< ids present in the buffer */
	const uint8_t *ids;         /**< borrowed: num_ids big-endian 8-byte ids */
};

/**
 * Decode LIST or LIST COLLECTION data-in of @p len bytes (ids-only formats).
 * num_ids is bounded by both ADDITIONAL LENGTH and the bytes present.
 * @return 0, -EBADMSG if shorter than the header, misaligned (ADDITIONAL
 *         LENGTH not 16 + 8n, unless saturated at all-ones) or (v2) an unknown
 *         object descriptor format; -ENOTSUP for a v2 format with attributes.
 */
OSD_EXTERN int osd_list_decode(enum osd_version version, const uint8_t *buf, size_t len,
			       struct osd_list_result *res);

/** The i-th id of a decoded result (i < num_ids). */
OSD_EXTERN uint64_t osd_list_id(const struct osd_list_result *res, size_t i);

/**
 * Encode a LIST result (target side): header for @p total_ids ids of which
 * the first @p n are written from @p ids, as far as @p len allows.
 * @p format is the v2 object descriptor format (ignored in v1); @p root_bit
 * the v1 ROOT/COLTN bit (ignored in v2).
 * @return bytes written, -ENOBUFS if @p len < OSD_LIST_HEADER_LEN, -EINVAL if
 *         @p n > @p total_ids or @p format does not fit in 6 bits.
 */
OSD_EXTERN int osd_list_encode(enum osd_version version, uint8_t format, int root_bit,
			       uint64_t continuation_id, uint32_t list_id,
			       const uint64_t *ids, size_t n, size_t total_ids,
			       uint8_t *buf, size_t len);

/**
 * Decode QUERY data-in (v2): ADDITIONAL LENGTH (8), reserved, format byte at 11,
 * then 8-byte ids from byte 12 (the header choice is documented in docs/).
 * @return 0, -EBADMSG if shorter than 12 bytes, the format is not 21h or
 *         ADDITIONAL LENGTH is not 4 + 8n.
 */
OSD_EXTERN int osd_query_result_decode(const uint8_t *buf, size_t len,
				       struct osd_list_result *res);

/**
 * Encode QUERY data-in (target side): the first @p n of @p total_ids ids, as
 * far as @p len allows.
 * @return bytes written, -ENOBUFS if @p len < 12, -EINVAL if @p n > @p total_ids.
 */
OSD_EXTERN int osd_query_result_encode(const uint64_t *ids, size_t n, size_t total_ids,
				       uint8_t *buf, size_t len);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
