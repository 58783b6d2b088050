/* The standard attribute pages: table, identification strings, page formats. */
#include "exec/attr_pages.h"

#include <stdio.h>
#include <string.h>
#include <osd/attr.h>
#include <osd/attributes.h>

#define ALL_T (OSD__T_ROOT | OSD__T_PART | OSD__T_COLL | OSD__T_USER)
#define OBJ_T (OSD__T_COLL | OSD__T_USER)
#define RO OSD__SET_REFUSE
#define RW OSD__SET_STORE
#define CMP OSD__SRC_COMPUTED
#define STO OSD__SRC_STORED
#define ND OSD__NO_DEFAULT

#define P_INFO OSD_APAGE_INFORMATION
#define P_QUOTA OSD_APAGE_QUOTAS
#define P_TS OSD_APAGE_TIMESTAMPS
#define P_POL OSD_APAGE_POLICY_SECURITY

/* Nonce window defaults (docs/security.md section 4). */
#define DEFAULT_OLDEST_NONCE 60000
#define DEFAULT_NEWEST_NONCE 10000
#define DEFAULT_NONCE_DEPTH 1024
#define SUPPORTED_METHODS 0x000F /* NOSEC, CAPKEY, CMDRSP, ALLDATA */

/* Sorted by rel_page (osd__std_next searches it), then by number within each object type. */
static const struct osd__std_attr table[] = {
	/* Information pages */
	{ ALL_T, P_INFO, OSD_ATTR_PAGE_ID, 40, RO, CMP, ND },
	{ OSD__T_PART | OBJ_T, P_INFO, OSD_ATTR_PI_PARTITION_ID, 8, RO, CMP, ND },
	{ OBJ_T, P_INFO, OSD_ATTR_UI_OBJECT_ID, 8, RO, CMP, ND },
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_SYSTEM_ID, 20, RO, STO, ND },
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_VENDOR_ID, 8, RO, CMP, ND },
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_PRODUCT_ID, 16, RO, CMP, ND },
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_PRODUCT_MODEL, 32, RO, CMP, ND },
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_PRODUCT_REVISION, 4, RO, CMP, ND },
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_SERIAL, 0, RO, CMP, ND },
	{ ALL_T, P_INFO, OSD_ATTR_RI_OSD_NAME, 0, RW, STO, ND }, /* OSD name / username */
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_MAX_CONT_LEN, 4, RO, CMP, ND },
	{ OSD__T_COLL, P_INFO, OSD_ATTR_CI_TYPE, 1, RO, CMP, ND },
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_TOTAL_CAPACITY, 8, RO, CMP, ND },
	{ ALL_T, P_INFO, OSD_ATTR_RI_USED_CAPACITY, 8, RO, CMP, ND },
	{ OSD__T_USER, P_INFO, OSD_ATTR_UI_LOGICAL_LENGTH, 8, OSD__SET_LENGTH, CMP, ND },
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_NUM_PARTITIONS, 8, RO, CMP, ND },
	{ OSD__T_PART, P_INFO, OSD_ATTR_PI_NUM_OBJECTS, 8, RO, CMP, ND },
	{ OSD__T_ROOT, P_INFO, OSD_ATTR_RI_CLOCK, 6, RO, CMP, ND },
	/* Quotas pages */
	{ OSD__T_ROOT | OSD__T_PART | OSD__T_USER, P_QUOTA, OSD_ATTR_PAGE_ID, 40, RO, CMP, ND },
	{ OSD__T_ROOT | OSD__T_PART, P_QUOTA, OSD_ATTR_Q_MAX_OBJECT_LENGTH, 8, RW, STO, ND },
	{ OSD__T_USER, P_QUOTA, OSD_ATTR_Q_MAX_OBJECT_LENGTH, 8, OSD__SET_QUOTA, CMP, ND },
	{ OSD__T_ROOT, P_QUOTA, OSD_ATTR_Q_PARTITION_CAPACITY, 8, RW, STO, ND },
	{ OSD__T_PART, P_QUOTA, OSD_ATTR_Q_PARTITION_CAPACITY, 8, OSD__SET_QUOTA, CMP, ND },
	{ OSD__T_ROOT | OSD__T_PART, P_QUOTA, OSD_ATTR_Q_PARTITION_OBJECT_COUNT, 8, RW, STO, ND },
	{ OSD__T_ROOT | OSD__T_PART, P_QUOTA, OSD_ATTR_Q_COLLECTIONS_PER_OBJECT, 4, RW, STO, ND },
	{ OSD__T_ROOT, P_QUOTA, OSD_ATTR_Q_PARTITION_COUNT, 8, RW, STO, ND },
	/* Timestamps pages */
	{ ALL_T, P_TS, OSD_ATTR_PAGE_ID, 40, RO, CMP, ND },
	{ OSD__T_PART | OBJ_T, P_TS, OSD_ATTR_TS_CREATED, 6, RO, STO, ND },
	{ ALL_T, P_TS, OSD_ATTR_TS_ATTR_ACCESSED, 6, RO, STO, ND },
	{ ALL_T, P_TS, OSD_ATTR_TS_ATTR_MODIFIED, 6, RO, STO, ND },
	{ OSD__T_PART | OBJ_T, P_TS, OSD_ATTR_TS_DATA_ACCESSED, 6, RO, STO, ND },
	{ OSD__T_PART | OBJ_T, P_TS, OSD_ATTR_TS_DATA_MODIFIED, 6, RO, STO, ND },
	{ OSD__T_ROOT | OSD__T_PART, P_TS, OSD_ATTR_TS_BYPASS, 1, RW, STO, ND },
	/* User object collections page */
	{ OSD__T_USER, OSD_APAGE_COLLECTIONS, OSD_ATTR_PAGE_ID, 40, RO, CMP, ND },
	/* Policy/security pages */
	{ ALL_T, P_POL, OSD_ATTR_PAGE_ID, 40, RO, CMP, ND },
	{ OSD__T_ROOT | OSD__T_PART, P_POL, OSD_ATTR_PS_DEFAULT_METHOD, 1, RW, STO, 0 },
	{ OSD__T_ROOT, P_POL, OSD_ATTR_PS_OLDEST_NONCE, 6, RW, STO, DEFAULT_OLDEST_NONCE },
	{ OSD__T_ROOT, P_POL, OSD_ATTR_PS_NEWEST_NONCE, 6, RW, STO, DEFAULT_NEWEST_NONCE },
	{ OSD__T_PART, P_POL, OSD_ATTR_PS_NONCE_LIST_DEPTH, 2, RW, STO, DEFAULT_NONCE_DEPTH },
	{ OSD__T_PART, P_POL, OSD_ATTR_PS_FROZEN_WORKING_KEYS, 2, RW, STO, 0 },
	{ OSD__T_ROOT, P_POL, OSD_ATTR_PS_PARTITION_DEFAULT_METHOD, 1, RW, STO, 0 },
	{ OSD__T_ROOT, P_POL, OSD_ATTR_PS_SUPPORTED_METHODS, 2, RO, STO, SUPPORTED_METHODS },
	{ OSD__T_ROOT, P_POL, OSD_ATTR_PS_MASTER_KEY_ID, 7, RO, STO, ND },
	{ OSD__T_ROOT, P_POL, OSD_ATTR_PS_ROOT_KEY_ID, 7, RO, STO, ND },
	{ OSD__T_PART, P_POL, OSD_ATTR_PS_PARTITION_KEY_ID, 7, RO, STO, ND },
	{ ALL_T, P_POL, OSD_ATTR_PS_POLICY_ACCESS_TAG, 4, RW, STO, ND },
	{ OSD__T_PART, P_POL, OSD_ATTR_PS_USER_POLICY_ACCESS_TAG, 4, RW, STO, ND },
	{ OSD__T_ROOT, P_POL, 0x80000000u, 1, RO, STO, 1 /* HMAC-SHA1 */ },
};

#define TABLE_LEN (sizeof(table) / sizeof(table[0]))

unsigned osd__type_bit(enum osd_obj_type t)
{
	switch (t) {
	case OSD_OBJ_ROOT:
		return OSD__T_ROOT;
	case OSD_OBJ_PARTITION:
		return OSD__T_PART;
	case OSD_OBJ_COLLECTION:
		return OSD__T_COLL;
	default:
		return OSD__T_USER;
	}
}

uint32_t osd__page_base(enum osd_obj_type t)
{
	switch (t) {
	case OSD_OBJ_ROOT:
		return OSD_APAGE_ROOT_BASE;
	case OSD_OBJ_PARTITION:
		return OSD_APAGE_PARTITION_BASE;
	case OSD_OBJ_COLLECTION:
		return OSD_APAGE_COLLECTION_BASE;
	default:
		return OSD_APAGE_USER_BASE;
	}
}

#define RANGE_SIZE 0x30000000u

int osd__page_applies(enum osd_obj_type t, uint32_t page)
{
	uint32_t base = osd__page_base(t);

	if (page >= OSD_APAGE_ANY_BASE && page < OSD_APAGE_CURRENT_COMMAND)
		return 1;
	return page >= base && page - base < RANGE_SIZE;
}

/* Relative standard pages per type. */
size_t osd__std_pages(enum osd_obj_type t, uint32_t *pages, size_t max)
{
	static const uint32_t user[] = { 0, 1, 2, 3, 4, 5 };
	static const uint32_t part[] = { 0, 1, 2, 3, 5 };
	static const uint32_t coll[] = { 0, 1, 3, 5 };
	const uint32_t *v = t == OSD_OBJ_USER ? user : t == OSD_OBJ_COLLECTION ? coll : part;
	size_t n = t == OSD_OBJ_USER ? 6 : t == OSD_OBJ_COLLECTION ? 4 : 5;

	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		pages[i] = osd__page_base(t) + v[i];
	return n;
}

static const char *type_name(enum osd_obj_type t)
{
	switch (t) {
	case OSD_OBJ_ROOT:
		return "Root";
	case OSD_OBJ_PARTITION:
		return "Partition";
	case OSD_OBJ_COLLECTION:
		return "Collection";
	default:
		return "User Object";
	}
}

static const char *page_name(enum osd_obj_type t, uint32_t rel)
{
	static const char *const names[] = { "Directory", "Information", "Quotas", "Timestamps",
					     "Collections", "Policy/Security" };

	if (rel == OSD_APAGE_COLLECTIONS && t != OSD_OBJ_USER)
		return NULL;
	return rel < 6 ? names[rel] : NULL;
}

int osd__std_page_ident(enum osd_obj_type t, uint32_t page, uint8_t out[40])
{
	uint32_t pages[8];
	size_t n = osd__std_pages(t, pages, 8), i;
	const char *name;

	if (page == OSD_APAGE_CURRENT_COMMAND) {
		name = "Current Command";
	} else {
		for (i = 0; i < n && pages[i] != page; i++)
			;
		if (i == n)
			return 0;
		name = page_name(t, page - osd__page_base(t));
	}
	memset(out, 0, 40);
	memcpy(out, "INCITS  ", 8);
	if (page == OSD_APAGE_CURRENT_COMMAND)
		snprintf((char *)out + 8, 32, "T10 %s", name);
	else
		snprintf((char *)out + 8, 32, "T10 %s %s", type_name(t), name);
	return 1;
}

/* First table index whose rel_page is >= @p rel (the table is sorted by rel_page). */
static size_t page_start(uint32_t rel)
{
	size_t lo = 0, hi = TABLE_LEN;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (table[mid].rel_page < rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct osd__std_attr *osd__std_next(enum osd_obj_type t, uint32_t page, size_t *i)
{
	unsigned bit = osd__type_bit(t);
	uint32_t base = osd__page_base(t), rel;

	if (page < base || page - base > 0x7F)
		return NULL;
	rel = page - base;
	if (*i == 0)
		*i = page_start(rel);
	for (; *i < TABLE_LEN && table[*i].rel_page == rel; (*i)++) {
		const struct osd__std_attr *a = &table[*i];

		if (a->types & bit) {
			(*i)++;
			return a;
		}
	}
	*i = TABLE_LEN;
	return NULL;
}

const struct osd__std_attr *osd__std_find(enum osd_obj_type t, uint32_t page, uint32_t number)
{
	unsigned bit = osd__type_bit(t);
	uint32_t base = osd__page_base(t), rel;

	if (page < base || page - base > 0x7F)
		return NULL;
	rel = page - base;
	for (size_t i = page_start(rel); i < TABLE_LEN && table[i].rel_page == rel; i++)
		if (table[i].number == number && (table[i].types & bit))
			return &table[i];
	return NULL;
}

enum osd__set_rule osd__set_rule_of(enum osd_obj_type t, uint32_t page, uint32_t number,
				    uint16_t *len)
{
	uint32_t base = osd__page_base(t), rel;

	*len = 0;
	if (page == OSD_APAGE_ALL || number == OSD_ATTR_ALL || page == OSD_APAGE_CURRENT_COMMAND)
		return OSD__SET_REFUSE;
	if (page >= OSD_APAGE_ANY_BASE)
		return OSD__SET_STORE;
	if (!osd__page_applies(t, page))
		return OSD__SET_REFUSE;
	rel = page - base;
	if (rel <= 0x7F) {
		const struct osd__std_attr *a = osd__std_find(t, page, number);

		if (t == OSD_OBJ_USER && rel == OSD_APAGE_COLLECTIONS && number != 0) {
			*len = 8;
			return number <= 0xFFFFFF00u ? OSD__SET_MEMBERSHIP : OSD__SET_REFUSE;
		}
		/* The partition attribute-access page (v2) is kept as given. */
		if (t == OSD_OBJ_PARTITION && rel == OSD_APAGE_ATTR_ACCESS && number != 0)
			return OSD__SET_STORE;
		if (!a)
			return OSD__SET_REFUSE;
		*len = a->length;
		return (enum osd__set_rule)a->rule;
	}
	/* 0x80-0x7FFF is reserved; the rest (other standards, public, application,
	 * vendor) is the client's. */
	return rel < 0x8000 ? OSD__SET_REFUSE : OSD__SET_STORE;
}

/* ---- page formats ---- */

static const struct osd__page_field cc_v2[] = {
	{ OSD_ATTR_CC_RESPONSE_ICV, 32 }, { OSD_ATTR_CC_OBJECT_TYPE, 1 }, { 0, 3 },
	{ OSD_ATTR_CC_PARTITION_ID, 8 }, { OSD_ATTR_CC_OBJECT_ID, 8 },
	{ OSD_ATTR_CC_APPEND_OFFSET, 8 },
};
static const struct osd__page_field cc_v1[] = {
	{ OSD_ATTR_CC_RESPONSE_ICV, 20 }, { OSD_ATTR_CC_OBJECT_TYPE, 1 }, { 0, 3 },
	{ OSD_ATTR_CC_PARTITION_ID, 8 }, { OSD_ATTR_CC_OBJECT_ID, 8 },
	{ OSD_ATTR_CC_APPEND_OFFSET, 8 },
};
static const struct osd__page_field ts_obj[] = {
	{ OSD_ATTR_TS_CREATED, 6 }, { OSD_ATTR_TS_ATTR_ACCESSED, 6 },
	{ OSD_ATTR_TS_ATTR_MODIFIED, 6 }, { OSD_ATTR_TS_DATA_ACCESSED, 6 },
	{ OSD_ATTR_TS_DATA_MODIFIED, 6 }, { OSD_ATTR_TS_BYPASS, 1 },
};
static const struct osd__page_field ts_root[] = {
	{ OSD_ATTR_TS_ATTR_ACCESSED, 6 }, { OSD_ATTR_TS_ATTR_MODIFIED, 6 },
	{ OSD_ATTR_TS_BYPASS, 1 },
};
static const struct osd__page_field quota[] = {
	{ OSD_ATTR_Q_MAX_OBJECT_LENGTH, 8 }, { OSD_ATTR_Q_PARTITION_CAPACITY, 8 },
	{ OSD_ATTR_Q_PARTITION_OBJECT_COUNT, 8 }, { OSD_ATTR_Q_COLLECTIONS_PER_OBJECT, 4 },
	{ OSD_ATTR_Q_PARTITION_COUNT, 8 },
};

size_t osd__page_layout(enum osd_obj_type t, enum osd_version v, uint32_t page,
			const struct osd__page_field **fields)
{
	uint32_t base = osd__page_base(t);

	if (page == OSD_APAGE_CURRENT_COMMAND) {
		*fields = v == OSD_V1 ? cc_v1 : cc_v2;
		return 6;
	}
	if (page == base + OSD_APAGE_TIMESTAMPS) {
		*fields = t == OSD_OBJ_ROOT ? ts_root : ts_obj;
		/* Only the root and partitions have the bypass byte. */
		return t == OSD_OBJ_ROOT ? 3 : t == OSD_OBJ_PARTITION ? 6 : 5;
	}
	if (page == base + OSD_APAGE_QUOTAS && t != OSD_OBJ_COLLECTION) {
		*fields = quota;
		return t == OSD_OBJ_USER ? 1 : t == OSD_OBJ_PARTITION ? 4 : 5;
	}
	return 0;
}
