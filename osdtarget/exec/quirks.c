/*
 * Quirk emulation (osd_target_options.quirks): the target behaves like
 * another one seen in the field, one behaviour at a time, so that initiators
 * can be tested against it (docs/target.md, "Quirk emulation"). None of this
 * runs for a standard target.
 */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "response.h"

#define SHIFT_CHUNK (1u << 20) /* PUNCH_SHIFTS moves the tail in pieces this large */

/* Which command a quirk makes unimplemented; 0 for none. */
static unsigned refusing_quirk(const struct osd_cdb *cdb)
{
	switch (cdb->action) {
	case OSD_ACT_FLUSH:
		return OSD_TARGET_QUIRK_NO_FLUSH_OBJECT;
	case OSD_ACT_FLUSH_PARTITION:
		return OSD_TARGET_QUIRK_NO_FLUSH_PARTITION;
	case OSD_ACT_FLUSH_OSD:
		return OSD_TARGET_QUIRK_NO_FLUSH_OSD;
	case OSD_ACT_FLUSH_COLLECTION:
		return OSD_TARGET_QUIRK_NO_FLUSH_COLLECTION;
	case OSD_ACT_PUNCH:
		return OSD_TARGET_QUIRK_NO_PUNCH;
	default:
		return 0;
	}
}

int osd__quirk_refuses(const osd_target *tgt, struct osd__cmd *c)
{
	if (!tgt->quirks)
		return 0;
	/* An OSD-2-only target that claims OSD-1: the 200-byte CDB is not an
	 * operation it knows, INVALID COMMAND OPERATION CODE (SPC-3 r23 §4.5.6). */
	if ((tgt->quirks & OSD_TARGET_QUIRK_OSD1_DESCRIPTOR) && c->cdb.version == OSD_V1) {
		osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_OPCODE);
		return 1;
	}
	/* An unimplemented service action: as for an unknown one, INVALID
	 * COMMAND OPERATION CODE at the SERVICE ACTION field (CDB byte 8). */
	if (tgt->quirks & refusing_quirk(&c->cdb)) {
		osd__fail_field(c, OSD_ASC_INVALID_OPCODE, 8);
		return 1;
	}
	return 0;
}

int osd__quirk_hides_attr(const struct osd__cmd *c, enum osd_obj_type t, uint32_t page,
			  uint32_t number)
{
	return (c->tgt->quirks & OSD_TARGET_QUIRK_NO_OBJECT_COUNT) && t == OSD_OBJ_PARTITION &&
	       page == OSD_APAGE_PARTITION_BASE + OSD_APAGE_INFORMATION &&
	       number == OSD_ATTR_PI_NUM_OBJECTS;
}

/* Move [from, length) of the object down to @p to, piece by piece from the
 * front (to < from: a piece never overwrites what is still to be moved). */
static int move_down(struct osd__cmd *c, uint64_t to, uint64_t from, uint64_t length)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	uint8_t *buf = malloc(SHIFT_CHUNK);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	while (rc == 0 && from < length) {
		struct iovec iov = { buf, SHIFT_CHUNK };
		size_t got = 0;

		if (length - from < SHIFT_CHUNK)
			iov.iov_len = (size_t)(length - from);
		rc = osd_store_read(c->st, o->partition, o->id, from, &iov, 1, &got);
		if (rc == 0 && got != iov.iov_len)
			rc = -EIO;
		if (rc == 0)
			rc = osd_store_write(c->st, o->partition, o->id, to, &iov, 1, c->fua);
		from += got;
		to += got;
	}
	free(buf);
	return rc;
}

/*
 * OSD_TARGET_QUIRK_PUNCH_SHIFTS: the range is cut out of the object, the data
 * after it moves down and the logical length shrinks: a collapse, not the
 * deallocation of the PUNCH clause of osd2r03 (docs/protocol.md §4). Not
 * atomic against other commands on the object: emulation only.
 */
static int punch_shift(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	uint64_t length, end;
	int rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_USER);

	if (rc)
		return rc;
	if (c->cdb.start > UINT64_MAX - c->cdb.length)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_start(c));
	rc = osd_store_length(c->st, o->partition, o->id, &length);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_OBJECT);
	if (c->cdb.start >= length || !c->cdb.length)
		return 0;
	end = c->cdb.start + c->cdb.length < length ? c->cdb.start + c->cdb.length : length;
	rc = move_down(c, c->cdb.start, end, length);
	if (rc == 0)
		rc = osd_store_truncate(c->st, o->partition, o->id, length - (end - c->cdb.start),
					c->fua);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_OBJECT);
	osd__touch(c, o->partition, o->id, OSD__TS_DATA_WRITE);
	return 0;
}

int osd__cmd_punch_entry(struct osd__cmd *c)
{
	if (c->tgt->quirks & OSD_TARGET_QUIRK_PUNCH_SHIFTS)
		return punch_shift(c);
	return osd__cmd_punch(c);
}
