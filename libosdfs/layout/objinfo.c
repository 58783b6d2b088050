/*
 * What an object is: a striped regular file (its components carry its data
 * map) or mirrored metadata. Learnt at create() or from the map attribute
 * of its first readable component, and kept in a bounded direct-mapped cache.
 */
#include <errno.h>
#include <string.h>

#include "layout/layout_int.h"

static struct lay_info *slot_of(struct lay *L, uint64_t oid)
{
	return &L->cache[(oid * 0x9E3779B97F4A7C15ULL) >> 32 & (LAY_CACHE_SIZE - 1)];
}

void lay_info_put(struct lay *L, const struct lay_info *in)
{
	pthread_mutex_lock(&L->mu);
	*slot_of(L, in->oid) = *in;
	pthread_mutex_unlock(&L->mu);
}

void lay_info_drop(struct lay *L, uint64_t oid)
{
	struct lay_info *e;

	pthread_mutex_lock(&L->mu);
	e = slot_of(L, oid);
	if (e->oid == oid)
		memset(e, 0, sizeof(*e));
	pthread_mutex_unlock(&L->mu);
}

unsigned lay_meta_copies(const struct lay *L, uint64_t oid)
{
	unsigned n = L->defmap.tol + 1;

	if (oid == OSDFS_LAYOUT_TABLE_OID || n > L->table.ndev)
		return L->table.ndev;
	return n;
}

unsigned lay_holders(const struct lay_map *lm)
{
	return lm->tol + 1 < lm->nc ? lm->tol + 1 : lm->nc;
}

/* Ask slot @p s what @p oid is: 1 = answered, 0 = try another slot, < 0 error. */
static int probe_slot(struct lay *L, unsigned s, uint64_t oid, struct lay_info *out)
{
	uint8_t buf[LAY_MAP_LEN + 8];
	struct osdfs_attr a = { OSDFS_LAYOUT_PAGE, LAY_ATTR_MAP, buf, sizeof(buf) };
	int rc = L->dev[s].ops->get_attrs(L->dev[s].impl, oid, &a, 1);

	if (rc < 0) {
		lay_dev_failed(L, s, rc);
		return lay_is_dev_error(rc) ? 0 : rc;
	}
	memset(out, 0, sizeof(*out));
	out->oid = oid;
	if (a.len == 0)
		return 1;
	if (lay_map_decode(&out->map, buf, a.len) < 0)
		return -EUCLEAN;
	out->file = 1;
	return 1;
}

int lay_info_get(struct lay *L, uint64_t oid, struct lay_info *out)
{
	unsigned ndev = L->table.ndev, authoritative = lay_meta_copies(L, oid);
	int rc;

	pthread_mutex_lock(&L->mu);
	*out = *slot_of(L, oid);
	pthread_mutex_unlock(&L->mu);
	if (out->oid == oid)
		return 0;
	/* component 0 and the first metadata copy share slot oid % ndev */
	for (unsigned j = 0; j < ndev; j++) {
		unsigned s = (unsigned)((oid + j) % ndev);

		if (!lay_readable(L, s))
			continue;
		rc = probe_slot(L, s, oid, out);
		if (rc == -ENOENT && j >= authoritative)
			continue;
		if (rc < 0)
			return rc;
		if (rc == 1) {
			lay_info_put(L, out);
			return 0;
		}
	}
	return -EIO;
}
