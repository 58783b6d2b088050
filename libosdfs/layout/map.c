/*
 * Data maps (RFC 5664 section 5): the text syntax, the 32-byte attribute
 * image, resolution against a device count, and the placement arithmetic
 * (logical row -> group and component row, data and parity positions).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lebytes.h"
#include "layout/layout_int.h"

/* -EINVAL with the reason in the caller's err/errlen. */
#define BAD(...) lay_errf(err, errlen, -EINVAL, __VA_ARGS__)

int lay_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static const struct {
	const char *name;
	enum osdfs_raid raid;
	uint32_t mirrors;
} raid_names[] = {
	{ "raid0", OSDFS_RAID_0, 0 }, { "raid1", OSDFS_RAID_0, 1 },
	{ "raid10", OSDFS_RAID_0, 1 }, { "raid4", OSDFS_RAID_4, 0 },
	{ "raid5", OSDFS_RAID_5, 0 }, { "raid6", OSDFS_RAID_PQ, 0 },
};

/* A decimal count with an optional K/M/G suffix (powers of 1024). */
static int parse_size(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0, mul = 1;
	size_t i = 0;

	for (; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	if (i == 0)
		return -1;
	if (i + 1 == n) {
		const char *s = strchr("KkMmGg", v[i]);

		if (!s)
			return -1;
		mul = (uint64_t)1 << (10 * (1 + (s - "KkMmGg") / 2));
	} else if (i != n) {
		return -1;
	}
	if (x > UINT64_MAX / mul)
		return -1;
	*out = x * mul;
	return 0;
}

static int parse_setting(struct osdfs_data_map *map, const char *s, size_t n, char *err,
			 size_t errlen)
{
	static const char *const keys[] = { "su", "width", "depth", "comps", "mirrors" };
	const char *eq = memchr(s, '=', n);
	uint64_t v;
	size_t k, klen;

	if (!eq)
		return BAD("setting '%.*s' has no '='", (int)n, s);
	klen = (size_t)(eq - s);
	for (k = 0; k < 5; k++)
		if (strlen(keys[k]) == klen && memcmp(keys[k], s, klen) == 0)
			break;
	if (k == 5)
		return BAD("unknown setting '%.*s'", (int)klen, s);
	if (parse_size(eq + 1, n - klen - 1, &v) < 0 || (k > 0 && v > UINT32_MAX))
		return BAD("bad value in '%.*s'", (int)n, s);
	if (k == 0)
		map->stripe_unit = v;
	else if (k == 1)
		map->group_width = (uint32_t)v;
	else if (k == 2)
		map->group_depth = (uint32_t)v;
	else if (k == 3)
		map->num_comps = (uint32_t)v;
	else
		map->mirror_cnt = (uint32_t)v;
	return 0;
}

OSD_EXTERN int osdfs_data_map_parse(struct osdfs_data_map *map, const char *spec, char *err,
				    size_t errlen)
{
	const char *p, *end;
	size_t i, n;

	if (!map || !spec)
		return BAD("no map given");
	memset(map, 0, sizeof(*map));
	map->stripe_unit = 65536;
	n = strcspn(spec, ",");
	for (i = 0; i < sizeof(raid_names) / sizeof(raid_names[0]); i++)
		if (strlen(raid_names[i].name) == n && memcmp(raid_names[i].name, spec, n) == 0)
			break;
	if (i == sizeof(raid_names) / sizeof(raid_names[0]))
		return BAD("unknown RAID level '%.*s' (raid0, raid1, raid10, "
			   "raid4, raid5, raid6)", (int)n, spec);
	map->raid = raid_names[i].raid;
	map->mirror_cnt = raid_names[i].mirrors;
	for (p = spec + n; *p; p = end) {
		p++;
		end = p + strcspn(p, ",");
		if (parse_setting(map, p, (size_t)(end - p), err, errlen) < 0)
			return -EINVAL;
	}
	if (map->stripe_unit == 0 || map->stripe_unit % 512)
		return BAD("stripe unit %" PRIu64 " is not a positive multiple of 512",
			   map->stripe_unit);
	return 0;
}

static const char *raid_name(enum osdfs_raid r)
{
	switch (r) {
	case OSDFS_RAID_0: return "raid0";
	case OSDFS_RAID_4: return "raid4";
	case OSDFS_RAID_5: return "raid5";
	case OSDFS_RAID_PQ: return "raid6";
	}
	return NULL;
}

OSD_EXTERN int osdfs_data_map_format(const struct osdfs_data_map *map, char *buf, size_t len)
{
	char su[32];
	const char *name = map ? raid_name(map->raid) : NULL;

	if (!name || (len && !buf))
		return -EINVAL;
	if (map->stripe_unit % (1u << 20) == 0)
		snprintf(su, sizeof(su), "%" PRIu64 "M", map->stripe_unit >> 20);
	else if (map->stripe_unit % 1024 == 0)
		snprintf(su, sizeof(su), "%" PRIu64 "K", map->stripe_unit >> 10);
	else
		snprintf(su, sizeof(su), "%" PRIu64, map->stripe_unit);
	return snprintf(buf, len, "%s,su=%s,width=%u,depth=%u,comps=%u,mirrors=%u", name, su,
			map->group_width, map->group_depth, map->num_comps, map->mirror_cnt);
}

static unsigned parity_units(enum osdfs_raid r)
{
	return r == OSDFS_RAID_PQ ? 2 : r == OSDFS_RAID_0 ? 0 : 1;
}

/* Group width and group count from the map and device count (0 = invalid). */
static int resolve_shape(struct lay_map *lm, const struct osdfs_data_map *m, unsigned ndev,
			 char *err, size_t errlen)
{
	unsigned per = m->num_comps ? m->num_comps / lm->M : ndev / lm->M;

	if (m->num_comps && m->num_comps % lm->M)
		return BAD("%u components are not a multiple of %u copies",
			   m->num_comps, lm->M);
	lm->W = m->group_width ? m->group_width : per;
	if (lm->W == 0)
		return BAD("%u devices cannot hold %u copies", ndev, lm->M);
	if (m->num_comps)
		lm->G = per / lm->W;
	else
		lm->G = m->group_depth ? per / lm->W : 1;
	if (lm->G == 0 || (m->num_comps && per % lm->W))
		return BAD("%u components do not make whole groups of %u", per, lm->W);
	if (lm->G > 1 && m->group_depth == 0)
		return BAD("%u groups need a group depth", lm->G);
	return 0;
}

static int resolve(struct lay_map *lm, const struct osdfs_data_map *m, unsigned ndev, char *err,
		   size_t errlen)
{
	memset(lm, 0, sizeof(*lm));
	if (!raid_name(m->raid))
		return BAD("unknown RAID algorithm %d", (int)m->raid);
	if (m->stripe_unit == 0 || m->stripe_unit % 512 || m->stripe_unit > (1u << 30))
		return BAD("bad stripe unit %" PRIu64, m->stripe_unit);
	if (ndev == 0 || ndev > OSDFS_LAYOUT_MAX_DEVICES)
		return BAD("%u devices (1 to %u)", ndev, OSDFS_LAYOUT_MAX_DEVICES);
	if (m->mirror_cnt >= OSDFS_LAYOUT_MAX_DEVICES)
		return BAD("%u mirrors", m->mirror_cnt);
	lm->M = m->mirror_cnt + 1;
	lm->P = parity_units(m->raid);
	if (resolve_shape(lm, m, ndev, err, errlen) < 0)
		return -EINVAL;
	if (lm->W <= lm->P || (lm->P && lm->W < 2))
		return BAD("a group of %u cannot hold %u parity units and data",
			   lm->W, lm->P);
	if ((uint64_t)lm->G * lm->W * lm->M > ndev)
		return BAD("%u components need %u devices, there are %u",
			   lm->G * lm->W * lm->M, lm->G * lm->W * lm->M, ndev);
	lm->ndev = ndev;
	lm->Wd = lm->W - lm->P;
	lm->su = m->stripe_unit;
	lm->D = lm->G > 1 ? m->group_depth : 0;
	lm->nc = lm->G * lm->W * lm->M;
	lm->tol = lm->M * (lm->P + 1) - 1;
	lm->m = *m;
	lm->m.num_comps = lm->nc;
	lm->m.group_width = lm->W;
	lm->m.group_depth = (uint32_t)lm->D;
	return 0;
}

int lay_map_resolve(struct lay_map *lm, const struct osdfs_data_map *m, unsigned ndev)
{
	return resolve(lm, m, ndev, NULL, 0);
}

OSD_EXTERN int osdfs_data_map_check(const struct osdfs_data_map *map, unsigned ndevices,
				    char *err, size_t errlen)
{
	struct lay_map lm;

	if (!map)
		return BAD("no map given");
	return resolve(&lm, map, ndevices, err, errlen);
}

void lay_map_encode(uint8_t out[LAY_MAP_LEN], const struct osdfs_data_map *m)
{
	memset(out, 0, LAY_MAP_LEN);
	out[0] = 1;
	out[1] = (uint8_t)m->raid;
	osdfs__put_le16(out + 2, LAY_MAP_LEN);
	osdfs__put_le32(out + 4, m->num_comps);
	osdfs__put_le32(out + 8, m->group_width);
	osdfs__put_le32(out + 12, m->group_depth);
	osdfs__put_le32(out + 16, m->mirror_cnt);
	osdfs__put_le64(out + 24, m->stripe_unit);
}

int lay_map_decode(struct osdfs_data_map *m, const uint8_t *in, size_t len)
{
	if (len < LAY_MAP_LEN || in[0] != 1 || osdfs__get_le16(in + 2) < LAY_MAP_LEN)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->raid = (enum osdfs_raid)in[1];
	m->num_comps = osdfs__get_le32(in + 4);
	m->group_width = osdfs__get_le32(in + 8);
	m->group_depth = osdfs__get_le32(in + 12);
	m->mirror_cnt = osdfs__get_le32(in + 16);
	m->stripe_unit = osdfs__get_le64(in + 24);
	if (!raid_name(m->raid) || m->stripe_unit == 0 || m->stripe_unit % 512)
		return -EINVAL;
	return 0;
}

struct lay_row lay_row_of(const struct lay_map *lm, uint64_t R)
{
	struct lay_row r = { 0, R };
	uint64_t cyc, in;

	if (lm->G > 1) {
		cyc = R / ((uint64_t)lm->G * lm->D);
		in = R % ((uint64_t)lm->G * lm->D);
		r.g = (unsigned)(in / lm->D);
		r.row = cyc * lm->D + in % lm->D;
	}
	return r;
}

uint64_t lay_row_logical(const struct lay_map *lm, unsigned g, uint64_t row)
{
	if (lm->G <= 1)
		return row;
	return (row / lm->D) * lm->G * lm->D + (uint64_t)g * lm->D + row % lm->D;
}

unsigned lay_parity_pos(const struct lay_map *lm, uint64_t row, unsigned p)
{
	unsigned p0;

	if (lm->m.raid == OSDFS_RAID_4)
		return lm->W - 1;
	p0 = lm->W - 1 - (unsigned)(row % lm->W); /* rotates left, row by row */
	return (p0 + p) % lm->W;
}

unsigned lay_data_pos(const struct lay_map *lm, uint64_t row, unsigned k)
{
	unsigned pos = 0, left = k;

	if (lm->P == 0)
		return k;
	for (pos = 0; pos < lm->W; pos++) {
		int parity = pos == lay_parity_pos(lm, row, 0) ||
			     (lm->P == 2 && pos == lay_parity_pos(lm, row, 1));

		if (!parity && left-- == 0)
			break;
	}
	return pos;
}

/* The last component row of group @p g at or before logical row @p Rl; 0
 * with *none set when the group has no row there. */
static uint64_t last_row_in_group(const struct lay_map *lm, unsigned g, uint64_t Rl, int *none)
{
	uint64_t cyc, in, gl;

	*none = 0;
	if (lm->G <= 1)
		return Rl;
	cyc = Rl / ((uint64_t)lm->G * lm->D);
	in = Rl % ((uint64_t)lm->G * lm->D);
	gl = in / lm->D;
	if (g == gl)
		return cyc * lm->D + in % lm->D;
	if (g < gl)
		return cyc * lm->D + lm->D - 1;
	if (cyc == 0) {
		*none = 1;
		return 0;
	}
	return (cyc - 1) * lm->D + lm->D - 1;
}

uint64_t lay_comp_len(const struct lay_map *lm, unsigned c, uint64_t size)
{
	uint64_t rowlen = lm->Wd * lm->su, Rl, r, b, ext = 0;
	unsigned g = c / lm->M / lm->W, pos = c / lm->M % lm->W;
	int none;

	if (size == 0)
		return 0;
	Rl = (size - 1) / rowlen;
	r = last_row_in_group(lm, g, Rl, &none);
	if (none)
		return 0;
	if (lay_row_logical(lm, g, r) < Rl)
		return (r + 1) * lm->su;
	b = size - Rl * rowlen; /* bytes of the last row, 1..rowlen */
	if (lm->P && (pos == lay_parity_pos(lm, r, 0) ||
		      (lm->P == 2 && pos == lay_parity_pos(lm, r, 1)))) {
		ext = b < lm->su ? b : lm->su;
	} else {
		for (unsigned k = 0; k < lm->Wd; k++) {
			if (lay_data_pos(lm, r, k) != pos)
				continue;
			ext = b <= (uint64_t)k * lm->su ? 0 : b - (uint64_t)k * lm->su;
			if (ext > lm->su)
				ext = lm->su;
		}
	}
	return r * lm->su + ext;
}
