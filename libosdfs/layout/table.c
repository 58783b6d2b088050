/*
 * The device table (superblock attribute 0x10000/5) and each device's
 * identity (0x10004/2), little-endian byte images; layout in docs/layout.md.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checksum/crc32c.h"
#include "lebytes.h"
#include "layout/layout_int.h"

/* -EINVAL with the reason in the caller's err/errlen. */
#define BAD(...) lay_errf(err, errlen, -EINVAL, __VA_ARGS__)

size_t lay_table_len(const struct lay_table *t)
{
	size_t n = LAY_TABLE_HDR + 4;

	for (unsigned i = 0; i < t->ndev; i++)
		n += LAY_TABLE_ENT + strlen(t->ent[i].address);
	return n;
}

void lay_table_encode(uint8_t *out, const struct lay_table *t)
{
	size_t len = lay_table_len(t), o = LAY_TABLE_HDR;

	memset(out, 0, LAY_TABLE_HDR);
	memcpy(out, LAY_TABLE_MAGIC, 8);
	osdfs__put_le16(out + 8, LAY_TABLE_VERSION);
	osdfs__put_le16(out + 10, LAY_TABLE_HDR);
	osdfs__put_le32(out + 12, t->ndev);
	osdfs__put_le64(out + 16, t->generation);
	memcpy(out + 24, t->fs_uuid, 16);
	lay_map_encode(out + 40, &t->map);
	osdfs__put_le32(out + 72, (uint32_t)len);
	osdfs__put_le64(out + 80, t->capacity);
	for (unsigned i = 0; i < t->ndev; i++) {
		size_t alen = strlen(t->ent[i].address);

		memcpy(out + o, t->ent[i].uuid, 16);
		out[o + 16] = t->ent[i].state;
		out[o + 17] = 0;
		osdfs__put_le16(out + o + 18, (uint16_t)alen);
		memcpy(out + o + LAY_TABLE_ENT, t->ent[i].address, alen);
		o += LAY_TABLE_ENT + alen;
	}
	osdfs__put_le32(out + o, osd__crc32c(0, out, o));
}

static int decode_entries(struct lay_table *t, const uint8_t *in, size_t end, char *err,
			  size_t errlen)
{
	size_t o = LAY_TABLE_HDR;

	for (unsigned i = 0; i < t->ndev; i++) {
		size_t alen;

		if (o + LAY_TABLE_ENT > end)
			return BAD("device table: entry %u truncated", i);
		alen = osdfs__get_le16(in + o + 18);
		if (alen > LAY_ADDR_MAX || o + LAY_TABLE_ENT + alen > end)
			return BAD("device table: entry %u: bad address length %zu", i,
				   alen);
		memcpy(t->ent[i].uuid, in + o, 16);
		t->ent[i].state = in[o + 16];
		if (t->ent[i].state > OSDFS_LAYOUT_DEV_REBUILDING || in[o + 17] != 0)
			return BAD("device table: entry %u: bad state %u or flags", i,
				   t->ent[i].state);
		memcpy(t->ent[i].address, in + o + LAY_TABLE_ENT, alen);
		t->ent[i].address[alen] = '\0';
		if (memchr(t->ent[i].address, '\0', alen))
			return BAD("device table: entry %u: NUL in address", i);
		o += LAY_TABLE_ENT + alen;
	}
	if (o != end)
		return BAD("device table: %zu bytes after the entries", end - o);
	return 0;
}

int lay_table_decode(struct lay_table *t, const uint8_t *in, size_t len, char *err,
		     size_t errlen)
{
	size_t tlen;

	memset(t, 0, sizeof(*t));
	if (len < LAY_TABLE_HDR + 4)
		return BAD("device table: %zu bytes, too short", len);
	if (memcmp(in, LAY_TABLE_MAGIC, 8) != 0)
		return BAD("device table: bad magic");
	if (osdfs__get_le16(in + 8) != LAY_TABLE_VERSION)
		return BAD("device table: unknown version %u", osdfs__get_le16(in + 8));
	tlen = osdfs__get_le32(in + 72);
	if (osdfs__get_le16(in + 10) != LAY_TABLE_HDR || tlen > len || tlen < LAY_TABLE_HDR + 4 ||
	    osdfs__get_le32(in + 76) != 0)
		return BAD("device table: bad header or length %zu of %zu", tlen, len);
	if (osd__crc32c(0, in, tlen - 4) != osdfs__get_le32(in + tlen - 4))
		return BAD("device table: checksum mismatch");
	t->ndev = osdfs__get_le32(in + 12);
	if (t->ndev == 0 || t->ndev > OSDFS_LAYOUT_MAX_DEVICES)
		return BAD("device table: %u devices", t->ndev);
	t->generation = osdfs__get_le64(in + 16);
	t->capacity = osdfs__get_le64(in + 80);
	memcpy(t->fs_uuid, in + 24, 16);
	if (lay_map_decode(&t->map, in + 40, LAY_MAP_LEN) < 0)
		return BAD("device table: bad default data map");
	return decode_entries(t, in, tlen - 4, err, errlen);
}

void lay_self_encode(uint8_t out[LAY_SELF_LEN], const struct lay_self *s)
{
	memset(out, 0, LAY_SELF_LEN);
	memcpy(out, s->fs_uuid, 16);
	memcpy(out + 16, s->dev_uuid, 16);
	osdfs__put_le32(out + 32, s->slot);
}

int lay_self_decode(struct lay_self *s, const uint8_t *in, size_t len)
{
	if (len != LAY_SELF_LEN)
		return -EINVAL;
	memcpy(s->fs_uuid, in, 16);
	memcpy(s->dev_uuid, in + 16, 16);
	s->slot = osdfs__get_le32(in + 32);
	return s->slot < OSDFS_LAYOUT_MAX_DEVICES ? 0 : -EINVAL;
}
