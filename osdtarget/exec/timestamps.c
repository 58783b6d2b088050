/*
 * Timestamps pages (relative page 3): created, attributes accessed/modified,
 * data accessed/modified, kept as stored attributes and updated as commands
 * touch objects, unless TIMESTAMPS CONTROL is 7Fh (bypass) (osd2r03 §5.2.10;
 * pages: osd2r01 §7.1.2.15-§7.1.2.18, docs/protocol.md). Accessed times are
 * kept lazily (OSD_STORE_LAZY): in memory and reported at once, logged with
 * the object's next logged change, so reads never write the store
 * (docs/target-store.md "Access times").
 */
#include "exec/exec.h"

#include "proto/byteorder.h"

static uint32_t ts_page(uint64_t pid, uint64_t oid)
{
	struct osd_obj_id o = { pid, oid };

	switch (osd_obj_type_of(&o)) {
	case OSD_OBJ_ROOT:
		return OSD_APAGE_ROOT_BASE + OSD_APAGE_TIMESTAMPS;
	case OSD_OBJ_PARTITION:
		return OSD_APAGE_PARTITION_BASE + OSD_APAGE_TIMESTAMPS;
	default:
		return OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS; /* collections: fixed below */
	}
}

static uint32_t page_for(struct osd__cmd *c, uint64_t pid, uint64_t oid)
{
	enum osd_obj_type t;

	if (pid && oid && osd__object_type(c, pid, oid, &t) == 0 &&
	    t == OSD_OBJ_COLLECTION)
		return OSD_APAGE_COLLECTION_BASE + OSD_APAGE_TIMESTAMPS;
	return ts_page(pid, oid);
}

static void put_ts(struct osd__cmd *c, uint64_t pid, uint64_t oid, uint32_t page,
		   uint32_t num, unsigned flags)
{
	uint8_t v[OSD__TS_LEN];

	osd__put_be48(v, c->now);
	osd_store_attr_set(c->st, pid, oid, page, num, v, OSD__TS_LEN, flags);
}

int osd__ts_attr_write(struct osd__cmd *c, uint64_t pid, uint64_t oid,
		       struct osd_store_attr *a, uint8_t v[OSD__TS_LEN])
{
	if (c->bypass_ts)
		return 0;
	osd__put_be48(v, c->now);
	*a = (struct osd_store_attr){ page_for(c, pid, oid), OSD_ATTR_TS_ATTR_MODIFIED, v,
				      OSD__TS_LEN };
	return 1;
}

void osd__stamp_created(struct osd__cmd *c, uint64_t pid, uint64_t oid)
{
	uint32_t page = page_for(c, pid, oid);

	/* The root has no created time; every other object gets all of them. */
	if (pid)
		put_ts(c, pid, oid, page, OSD_ATTR_TS_CREATED, 0);
	put_ts(c, pid, oid, page, OSD_ATTR_TS_ATTR_MODIFIED, 0);
	if (pid)
		put_ts(c, pid, oid, page, OSD_ATTR_TS_DATA_MODIFIED, 0);
}

void osd__touch(struct osd__cmd *c, uint64_t pid, uint64_t oid, enum osd__ts_event ev)
{
	static const uint32_t num[] = {
		[OSD__TS_ATTR_READ] = OSD_ATTR_TS_ATTR_ACCESSED,
		[OSD__TS_ATTR_WRITE] = OSD_ATTR_TS_ATTR_MODIFIED,
		[OSD__TS_DATA_READ] = OSD_ATTR_TS_DATA_ACCESSED,
		[OSD__TS_DATA_WRITE] = OSD_ATTR_TS_DATA_MODIFIED,
	};

	if (c->bypass_ts)
		return;
	/* The root only has attribute timestamps. */
	if (!pid && (ev == OSD__TS_DATA_READ || ev == OSD__TS_DATA_WRITE))
		return;
	put_ts(c, pid, oid, page_for(c, pid, oid), num[ev],
	       ev == OSD__TS_ATTR_READ || ev == OSD__TS_DATA_READ ? OSD_STORE_LAZY : 0);
}
