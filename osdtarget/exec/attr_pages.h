/*
 * Knowledge of the standard attribute pages (internal to exec/): which pages
 * an object type has, their identification strings, the attributes the
 * target computes or maintains, which ones a client may set and how long
 * they must be, and the fixed "page format" layouts used by page mode.
 */
#ifndef OSDTARGET_EXEC_ATTR_PAGES_H
#define OSDTARGET_EXEC_ATTR_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include <osd/types.h>

/* How a client may set an attribute. */
enum osd__set_rule {
	OSD__SET_REFUSE = 0,   /* read-only or not settable on this object */
	OSD__SET_STORE,        /* stored as given */
	OSD__SET_LENGTH,       /* user object logical length: truncate/extend */
	OSD__SET_QUOTA,        /* enforced quota kept by the store */
	OSD__SET_MEMBERSHIP    /* user object collections page */
};

/* Where a standard attribute's value comes from. */
enum osd__attr_src {
	OSD__SRC_STORED = 0,   /* the store (with an optional default) */
	OSD__SRC_COMPUTED      /* the engine computes it */
};

struct osd__std_attr {
	uint8_t types;         /* bitmask of OSD__T_* */
	uint8_t rel_page;      /* page relative to the object's base */
	uint32_t number;
	uint16_t length;       /* fixed value length; 0 = variable */
	uint8_t rule;          /* enum osd__set_rule */
	uint8_t src;           /* enum osd__attr_src */
	uint64_t dflt;         /* default of a stored numeric value; OSD__NO_DEFAULT if none */
};

#define OSD__NO_DEFAULT UINT64_MAX

/* Object type bits for struct osd__std_attr.types. */
#define OSD__T_ROOT 0x1
#define OSD__T_PART 0x2
#define OSD__T_COLL 0x4
#define OSD__T_USER 0x8

unsigned osd__type_bit(enum osd_obj_type t);
uint32_t osd__page_base(enum osd_obj_type t);
/* 1 if @p page belongs to objects of type @p t (its range or the any-object range). */
int osd__page_applies(enum osd_obj_type t, uint32_t page);
/* Standard relative pages present on an object of type @p t, ascending. */
size_t osd__std_pages(enum osd_obj_type t, uint32_t *pages, size_t max);
/* The 40-byte identification of standard page @p page (0 if not standard for @p t). */
int osd__std_page_ident(enum osd_obj_type t, uint32_t page, uint8_t out[40]);
/* The table entry for (t, page, number), NULL if none. */
const struct osd__std_attr *osd__std_find(enum osd_obj_type t, uint32_t page, uint32_t number);
/* Iterate the table entries of (t, page) in ascending number: pass *i = 0 first. */
const struct osd__std_attr *osd__std_next(enum osd_obj_type t, uint32_t page, size_t *i);
/* The set rule of (t, page, number); *len receives a required length (0 = any). */
enum osd__set_rule osd__set_rule_of(enum osd_obj_type t, uint32_t page, uint32_t number,
				    uint16_t *len);

/* One fixed-position field of a page format. */
struct osd__page_field {
	uint32_t number;       /* 0 with size = reserved bytes */
	uint16_t size;
};

/* The page-format layout of @p page for @p t, or 0 if the page has none. */
size_t osd__page_layout(enum osd_obj_type t, enum osd_version v, uint32_t page,
			const struct osd__page_field **fields);

#endif
