/**
 * @file osd/attr.h
 * @brief Attribute lists (types 01h, 09h, 0Eh, 0Fh) for both OSD versions.
 *
 * Writers build lists into caller memory; readers iterate over received
 * lists and never read outside the bytes given to them. A value of length
 * 0xFFFF (OSD-1) or 0 (OSD-2) reads back as "undefined" (length 0, value NULL).
 *
 * @defgroup osd_attr Attribute lists
 * @{
 */
#ifndef OSD_ATTR_H
#define OSD_ATTR_H

#include <osd/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** List types (list header byte 0, bits 3-0). */
enum osd_list_type {
	OSD_LIST_GET = 0x01,          /**< attribute descriptors to retrieve */
	OSD_LIST_SET = 0x09,          /**< retrieved attributes / attributes to set */
	OSD_LIST_MULTI = 0x0E,        /**< OSD-2 multi-object retrieved attributes */
	OSD_LIST_CREATE_MULTI = 0x0F  /**< OSD-1 CREATE multi-object retrieved attributes */
};

#define OSD_ATTR_LEN_UNDEFINED 0xFFFF /**< OSD-1 "attribute not defined" length */
#define OSD_ATTR_MAX_LEN 0xFFFE       /**< largest attribute value */
#define OSD_ATTR_ALL 0xFFFFFFFFu      /**< page or number meaning "all" (requests only) */

/** One attribute. In get lists only page and number are used. */
struct osd_attr {
	uint32_t page;       /**< ATTRIBUTES PAGE */
	uint32_t number;     /**< ATTRIBUTE NUMBER */
	uint16_t length;     /**< value length; 0 with value NULL = undefined */
	const void *value;   /**< borrowed: points into the list or the caller's value */
	uint64_t object_id;  /**< multi-object lists only: the object the value belongs to */
};

/** Builds one attribute list into a caller-owned buffer. Members are private. */
struct osd_attr_writer {
	enum osd_version version; /**< list layout */
	enum osd_list_type type;  /**< list type being written */
	uint8_t *buf;             /**< caller's buffer */
	size_t cap;               /**< size of @ref buf */
	size_t len;               /**< bytes written so far */
	int err;                  /**< first error, sticky */
	size_t group;             /**< offset of the open 0Eh object group (0: none) */
};

/** Header size of a list: 4 (OSD-1) or 8 (OSD-2). */
OSD_EXTERN size_t osd_attr_header_len(enum osd_version version);

/**
 * Bytes one entry of @p type with a @p value_len value takes in @p version
 * (including OSD-2 padding to 8).
 */
OSD_EXTERN size_t osd_attr_entry_len(enum osd_version version,
				     enum osd_list_type type, uint16_t value_len);

/**
 * Start a list of @p type in @p buf (writes the header).
 * @return 0, -ENOBUFS if the header does not fit, -EINVAL for a type the
 *         version does not have.
 */
OSD_EXTERN int osd_attr_writer_init(struct osd_attr_writer *w, enum osd_version version,
				    enum osd_list_type type, void *buf, size_t cap);

/**
 * Append an entry: page/number for OSD_LIST_GET; page/number/value for
 * OSD_LIST_SET (length 0 deletes the attribute when set); for multi-object
 * lists @p a->object_id too. A set/retrieved entry with length
 * OSD_ATTR_LEN_UNDEFINED and value NULL is written as "undefined" (0xFFFF in
 * OSD-1, length 0 in OSD-2). 0Eh entries go into per-object groups (object
 * id, object type 80h, list length) that start whenever object_id changes.
 * @return 0, -ENOBUFS when full (the writer then stays in error), -EINVAL for
 *         a value longer than OSD_ATTR_MAX_LEN.
 */
OSD_EXTERN int osd_attr_writer_add(struct osd_attr_writer *w, const struct osd_attr *a);

/**
 * Finish the list: writes LIST LENGTH (0 for get lists, as initiators send).
 * @return the total list length in bytes (header included), or the first
 *         error any add returned.
 */
OSD_EXTERN long osd_attr_writer_finish(struct osd_attr_writer *w);

/** Iterates over a received list. Members are private. */
struct osd_attr_reader {
	enum osd_version version; /**< list layout */
	enum osd_list_type type;  /**< list type from the header */
	const uint8_t *buf;       /**< the list */
	size_t pos;               /**< next byte to read */
	size_t end;               /**< end of the readable list */
	uint32_t list_length; /**< LIST LENGTH as the sender wrote it */
	uint64_t cur_object;  /**< multi-object lists: object of the current group */
	size_t group_end;     /**< multi-object lists: end of the current group */
};

/**
 * Start reading a list of @p len bytes. The end is the smaller of @p len and
 * header + LIST LENGTH (a truncated list is read as far as it goes).
 * @return 0, -EBADMSG if the header is short or the type is unknown for
 *         the version.
 */
OSD_EXTERN int osd_attr_reader_init(struct osd_attr_reader *r, enum osd_version version,
				    const void *buf, size_t len);

/**
 * Next entry.
 * @param r the reader
 * @param[out] a the entry; value points into the list buffer
 * @return 1 for an entry, 0 at the end, -EBADMSG for a malformed entry
 *         (truncated header, value past the end, bad padding).
 */
OSD_EXTERN int osd_attr_reader_next(struct osd_attr_reader *r, struct osd_attr *a);

/**
 * Whether the list was cut short by the allocation length (LIST LENGTH
 * promised more bytes than were given to the reader).
 */
OSD_EXTERN int osd_attr_reader_truncated(const struct osd_attr_reader *r);

/** Big-endian value helpers for attribute values. */
OSD_EXTERN uint64_t osd_attr_get_u64(const struct osd_attr *a, uint64_t dflt);
/** Value of a 4-byte attribute, or @p dflt if the length is not 4. */
OSD_EXTERN uint32_t osd_attr_get_u32(const struct osd_attr *a, uint32_t dflt);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
