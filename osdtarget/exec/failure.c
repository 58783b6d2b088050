/* Recording why a command failed: sense key, ASC/ASCQ and the descriptors. */
#include "exec/exec.h"

#include <errno.h>
#include <string.h>

static void start(struct osd__cmd *c, uint8_t key, uint16_t asc)
{
	memset(&c->sense, 0, sizeof(c->sense));
	c->sense.response_code = 0x72;
	c->sense.key = key;
	c->sense.asc = asc;
	c->failed = 1;
}

int osd__fail(struct osd__cmd *c, uint8_t key, uint16_t asc)
{
	start(c, key, asc);
	return OSD__FAILED;
}

int osd__fail_field(struct osd__cmd *c, uint16_t asc, size_t field)
{
	start(c, OSD_SK_ILLEGAL_REQUEST, asc);
	c->sense.has_field = 1;
	c->sense.field_in_cdb = 1;
	c->sense.field_pointer = (uint16_t)field;
	return OSD__FAILED;
}

int osd__fail_attr(struct osd__cmd *c, uint16_t asc, uint32_t page, uint32_t number)
{
	start(c, OSD_SK_ILLEGAL_REQUEST, asc);
	c->sense.num_attrs = 1;
	c->sense.attrs[0].page = page;
	c->sense.attrs[0].number = number;
	return OSD__FAILED;
}

int osd__fail_medium(struct osd__cmd *c, const struct osd_obj_id *obj, uint64_t offset)
{
	/* spc4r37 §4.5.2.2: the information descriptor holds the first bad byte */
	start(c, OSD_SK_MEDIUM_ERROR, OSD_ASC_UNRECOVERED_READ_ERROR);
	c->sense.has_info = 1;
	c->sense.information = offset;
	if (obj) {
		c->has_sense_obj = 1;
		c->sense_obj = *obj;
	}
	return OSD__FAILED;
}

int osd__fail_store(struct osd__cmd *c, int err, size_t field)
{
	switch (err) {
	case -ENOENT:
	case -EEXIST:
	case -EINVAL:
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, field);
	case -ENOTEMPTY:
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY);
	case -EDQUOT:
		/* an object or partition quota (OSD-2 4.10) */
		return osd__fail(c, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
	case -ENOSPC:
		/* the store's capacity or its filesystem is full: SBC-3's thin
		 * provisioning sense, not a quota (docs/protocol-choices.md) */
		return osd__fail(c, OSD_SK_DATA_PROTECT, OSD_ASC_SPACE_ALLOC_FAILED);
	case -EFBIG:
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	case -EIO:
		/* damaged metadata the store found (its records in the checkpoint) */
		return osd__fail(c, OSD_SK_MEDIUM_ERROR, OSD_ASC_UNRECOVERED_READ_ERROR);
	default:
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	}
}

size_t osd__fp_length(const struct osd__cmd *c)
{
	return c->ver == OSD_V1 ? 36 : 32;
}

size_t osd__fp_start(const struct osd__cmd *c)
{
	return c->ver == OSD_V1 ? 44 : 40;
}
