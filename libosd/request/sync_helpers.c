/* Short synchronous helpers built on the request API. Errors land in
 * osd_dev_error() like any synchronous call. */
#include <errno.h>
#include <string.h>
#include "proto/byteorder.h"
#include "request/private.h"

#define LIST_STEP_ALLOC (64u * 1024u)

static int run(osd_req *req)
{
	int rc = osd_req_execute(req);

	if (rc && req->state == OSD__REQ_DONE)
		osd__dev_copy_req_error(req->dev, req);
	return rc;
}

int osd_list_foreach(osd_dev *dev, enum osd_action action, const struct osd_obj_id *obj,
		     osd_list_cb cb, void *payload)
{
	struct osd_list_cursor cur = { 0, 0 };
	struct osd_list_result res;
	osd_req *req;
	int rc;

	if (!dev || !obj || !cb || (action != OSD_ACT_LIST && action != OSD_ACT_LIST_COLLECTION))
		return -EINVAL;
	do {
		if (action == OSD_ACT_LIST)
			rc = osd_req_list(&req, dev, obj->partition, &cur, LIST_STEP_ALLOC);
		else
			rc = osd_req_list_collection(&req, dev, obj, &cur, LIST_STEP_ALLOC);
		if (rc)
			return rc;
		rc = run(req);
		if (rc == 0)
			rc = osd_req_list_result(req, &res, &cur);
		for (size_t i = 0; rc == 0 && i < res.num_ids; i++)
			rc = cb(osd_list_id(&res, i), payload);
		/* A continuation that does not move forward would loop forever. */
		if (rc == 0 && cur.next_id && res.num_ids == 0) {
			osd__dev_set_error(dev, "LIST: continuation without progress");
			rc = -EBADMSG;
		}
		osd_req_free(req);
	} while (rc == 0 && cur.next_id);
	return rc;
}

int osd_get_attr(osd_dev *dev, const struct osd_obj_id *obj, uint32_t page, uint32_t number,
		 void *buf, size_t len, size_t *got)
{
	struct osd_attr a;
	osd_req *req;
	int rc;

	if (!dev || !obj || (len && !buf))
		return -EINVAL;
	rc = osd_req_get_attributes(&req, dev, obj);
	if (rc)
		return rc;
	rc = osd_req_add_get_attr(req, page, number);
	/* Room for the largest value, so nothing is ever truncated. */
	if (rc == 0)
		rc = osd_req_set_get_alloc(req, (uint32_t)(osd_attr_header_len(dev->version) +
					   osd_attr_entry_len(dev->version, OSD_LIST_SET,
							      OSD_ATTR_MAX_LEN)));
	if (rc == 0)
		rc = run(req);
	if (rc == 0) {
		rc = osd_req_find_attr(req, page, number, &a);
		if (rc == -ENOENT)
			osd__dev_set_error(dev, "attribute 0x%x/0x%x of 0x%llx/0x%llx is not defined",
					   page, number, (unsigned long long)obj->partition,
					   (unsigned long long)obj->id);
	}
	if (rc == 0) {
		if (len)
			memcpy(buf, a.value, len < a.length ? len : a.length);
		if (got)
			*got = a.length;
	}
	osd_req_free(req);
	return rc;
}

int osd_get_attr_u64(osd_dev *dev, const struct osd_obj_id *obj, uint32_t page,
		     uint32_t number, uint64_t *value)
{
	uint8_t buf[8];
	size_t got = 0;
	uint64_t v = 0;
	int rc;

	if (!value)
		return -EINVAL;
	rc = osd_get_attr(dev, obj, page, number, buf, sizeof(buf), &got);
	if (rc)
		return rc;
	if (got != 1 && got != 2 && got != 4 && got != 6 && got != 8) {
		osd__dev_set_error(dev, "attribute 0x%x/0x%x has %zu bytes, not a number",
				   page, number, got);
		return -EBADMSG;
	}
	for (size_t i = 0; i < got; i++)
		v = v << 8 | buf[i];
	*value = v;
	return 0;
}

int osd_set_attr(osd_dev *dev, const struct osd_obj_id *obj, uint32_t page, uint32_t number,
		 const void *value, uint16_t len)
{
	osd_req *req;
	int rc;

	if (!dev || !obj)
		return -EINVAL;
	rc = osd_req_set_attributes(&req, dev, obj);
	if (rc)
		return rc;
	rc = osd_req_add_set_attr(req, page, number, value, len);
	if (rc == 0)
		rc = run(req);
	osd_req_free(req);
	return rc;
}

int osd_set_attr_u64(osd_dev *dev, const struct osd_obj_id *obj, uint32_t page,
		     uint32_t number, uint64_t value)
{
	uint8_t be[8];

	osd__put_be64(be, value);
	return osd_set_attr(dev, obj, page, number, be, sizeof(be));
}
