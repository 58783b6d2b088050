/**
 * @file osd/offset.h
 * @brief The encoded data-in / data-out offset (exponent + mantissa) of OSD CDBs.
 *
 * byte offset = mantissa x 2^(exponent + 8); OSD-1's exponent is unsigned,
 * OSD-2's is signed 4-bit; 0xFFFFFFFF means "not used".
 *
 * @defgroup osd_offset Offsets
 * @{
 */
#ifndef OSD_OFFSET_H
#define OSD_OFFSET_H

#include <osd/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OSD_OFFSET_UNUSED 0xFFFFFFFFu   /**< the wire value for "no offset" */
#define OSD_OFFSET_NONE UINT64_MAX      /**< host-side "no offset" */

/**
 * Encode @p offset, rounding up to the next encodable offset if needed.
 * @param version  OSD-1 (unsigned exponent) or OSD-2 (signed exponent)
 * @param offset   byte offset
 * @param[out] encoded the 32-bit field value (host order)
 * @param[out] rounded the byte offset the encoding actually designates (>= @p offset);
 *                     may be NULL
 * @return 0, -EINVAL if @p offset is OSD_OFFSET_NONE or too large to encode.
 */
OSD_EXTERN int osd_offset_encode(enum osd_version version, uint64_t offset,
				 uint32_t *encoded, uint64_t *rounded);

/**
 * Decode a 32-bit offset field.
 * @param version OSD-1 or OSD-2 rules
 * @param encoded the field value (host order)
 * @param[out] offset byte offset, or OSD_OFFSET_NONE for 0xFFFFFFFF
 * @return 0, -EBADMSG for an exponent the version does not allow.
 */
OSD_EXTERN int osd_offset_decode(enum osd_version version, uint32_t encoded,
				 uint64_t *offset);

/** The smallest encodable offset >= @p offset (the start of the next segment). */
OSD_EXTERN uint64_t osd_offset_align(enum osd_version version, uint64_t offset);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
