/*
 * Capability codec. Bytes 0-55 are common to both versions; the object
 * descriptor that follows is 24 bytes in OSD-1 (80 total) and 48 bytes in
 * OSD-2 (104 total). Format 1 marks the OSD-1 layout and 2 the OSD-2 layout
 * (docs/protocol-choices.md explains why we do not send 1 in OSD-2 as K does).
 */
#include <errno.h>
#include <string.h>
#include <osd/capability.h>
#include "proto/byteorder.h"

#define MAX48 0xFFFFFFFFFFFFULL

static size_t cap_len(enum osd_version version)
{
	return version == OSD_V1 ? OSD_CAP_V1_LEN : OSD_CAP_V2_LEN;
}

static int cap_fields_valid(const struct osd_capability *cap)
{
	return cap->key_version <= 0xF && cap->icv_algorithm <= 0xF &&
	       cap->security_method <= 0xF && cap->desc_type <= 0xF &&
	       cap->expiration <= MAX48 && cap->object_created <= MAX48;
}

static void encode_common(const struct osd_capability *cap, uint8_t *out, uint8_t format)
{
	out[0] = format;
	out[1] = (uint8_t)(cap->key_version << 4 | cap->icv_algorithm);
	out[2] = cap->security_method;
	osd__put_be48(out + 4, cap->expiration);
	memcpy(out + 10, cap->audit, sizeof(cap->audit));
	memcpy(out + 30, cap->discriminator, sizeof(cap->discriminator));
	osd__put_be48(out + 42, cap->object_created);
	out[48] = cap->object_type;
	osd__put_be16(out + 49, cap->permissions);
	out[55] = (uint8_t)(cap->desc_type << 4);
}

int osd_capability_encode(enum osd_version version, const struct osd_capability *cap,
			  uint8_t *out, size_t outlen)
{
	size_t len;

	if (version != OSD_V1 && version != OSD_V2)
		return -EINVAL;
	len = cap_len(version);
	if (outlen < len)
		return -ENOBUFS;
	if (!cap_fields_valid(cap))
		return -EINVAL;
	memset(out, 0, len);
	encode_common(cap, out, cap->format ? (uint8_t)version : 0);
	if (version == OSD_V1) {
		osd__put_be32(out + 56, cap->policy_access_tag);
		osd__put_be64(out + 60, cap->allowed_partition);
		osd__put_be64(out + 68, cap->allowed_object);
	} else {
		osd__put_be32(out + 56, cap->allowed_attr_access);
		osd__put_be32(out + 60, cap->policy_access_tag);
		osd__put_be16(out + 64, cap->boot_epoch);
		osd__put_be64(out + 72, cap->allowed_partition);
		osd__put_be64(out + 80, cap->allowed_object);
		osd__put_be64(out + 88, cap->range_length);
		osd__put_be64(out + 96, cap->range_start);
	}
	return (int)len;
}

int osd_capability_decode(enum osd_version version, const uint8_t *in, size_t len,
			  struct osd_capability *cap)
{
	uint8_t format;

	if (version != OSD_V1 && version != OSD_V2)
		return -EINVAL;
	if (len < cap_len(version))
		return -EBADMSG;
	format = in[0] & 0x0F;
	if (format != 0 && format != (uint8_t)version)
		return -EBADMSG;
	memset(cap, 0, sizeof(*cap));
	cap->format = format;
	cap->key_version = in[1] >> 4;
	cap->icv_algorithm = in[1] & 0x0F;
	cap->security_method = in[2] & 0x0F;
	cap->expiration = osd__get_be48(in + 4);
	memcpy(cap->audit, in + 10, sizeof(cap->audit));
	memcpy(cap->discriminator, in + 30, sizeof(cap->discriminator));
	cap->object_created = osd__get_be48(in + 42);
	cap->object_type = in[48];
	cap->permissions = osd__get_be16(in + 49);
	cap->desc_type = in[55] >> 4;
	if (version == OSD_V1) {
		cap->policy_access_tag = osd__get_be32(in + 56);
		cap->allowed_partition = osd__get_be64(in + 60);
		cap->allowed_object = osd__get_be64(in + 68);
	} else {
		cap->allowed_attr_access = osd__get_be32(in + 56);
		cap->policy_access_tag = osd__get_be32(in + 60);
		cap->boot_epoch = osd__get_be16(in + 64);
		cap->allowed_partition = osd__get_be64(in + 72);
		cap->allowed_object = osd__get_be64(in + 80);
		cap->range_length = osd__get_be64(in + 88);
		cap->range_start = osd__get_be64(in + 96);
	}
	return 0;
}

void osd_capability_init(struct osd_capability *cap, enum osd_version version,
			 const struct osd_obj_id *obj, int is_collection,
			 uint16_t permissions, enum osd_sec_method method)
{
	enum osd_obj_type type = osd_obj_type_of(obj);

	memset(cap, 0, sizeof(*cap));
	cap->format = (uint8_t)version;
	cap->security_method = (uint8_t)method;
	if (method != OSD_SEC_NOSEC)
		cap->icv_algorithm = OSD_ICV_ALG_HMAC_SHA1;
	if (type == OSD_OBJ_USER && is_collection)
		type = OSD_OBJ_COLLECTION;
	cap->object_type = (uint8_t)type;
	cap->permissions = permissions;
	if (type == OSD_OBJ_ROOT || type == OSD_OBJ_PARTITION)
		cap->desc_type = OSD_CAP_DESC_PAR;
	else if (type == OSD_OBJ_COLLECTION && version == OSD_V2)
		cap->desc_type = OSD_CAP_DESC_COL;
	else
		cap->desc_type = OSD_CAP_DESC_USER;
	cap->allowed_partition = obj->partition;
	cap->allowed_object = obj->id;
}
