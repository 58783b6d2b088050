/*
 * Per-file data maps: reading a file's map, and laying an empty file out
 * again with another map (osdfs_layout_set_file_map()).
 *
 * Both maps put component c on slot (oid + c) mod N, so the old and new
 * components share the first min(old, new) slots. The re-layout creates the
 * components only the new map has, sets the new map (and the holders'
 * attributes) on the shared ones, component 0 last, then removes the
 * components only the old map had. Component 0's map attribute is what
 * classifies the object, so setting it is the commit point: a crash before it
 * leaves the old map (plus empty components the old map does not use), after
 * it the new one (plus empty components the new map does not use).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout_int.h"

static struct lay *lay_of_be(const osdfs_backend *be)
{
	return osdfs_backend_is_layout(be) ? osdfs_backend_impl(be) : NULL;
}

/* The file's info under its lock; -ENODATA (unlocked) if it is metadata. */
static int file_enter(struct lay *L, uint64_t oid, int excl, struct lay_info *fi)
{
	int rc = lay_obj_enter(L, oid, excl, fi);

	if (rc == 0 && !fi->file)
		rc = lay_obj_leave(L, oid, -ENODATA);
	return rc;
}

OSD_EXTERN int osdfs_layout_file_map(osdfs_backend *be, uint64_t oid, struct osdfs_data_map *out)
{
	struct lay *L = lay_of_be(be);
	struct lay_info fi;
	int rc;

	if (!L || !out)
		return -EINVAL;
	rc = file_enter(L, oid, 0, &fi);
	if (rc < 0)
		return rc;
	*out = fi.map;
	return lay_obj_leave(L, oid, 0);
}

/* Holder attributes for the new map: the old holder's, @p extra over them,
 * the map replaced by @p mbuf. */
static int new_holder_attrs(struct lay_attrset *as, const struct osdfs_attr *extra, int nextra,
			    uint8_t *mbuf)
{
	for (int i = 0; i < nextra; i++) {
		int k = 0;

		while (k < as->n && (as->a[k].page != extra[i].page ||
				     as->a[k].number != extra[i].number))
			k++;
		if (k == LAY_MAX_ATTRS)
			return -E2BIG;
		as->a[k] = extra[i];
		as->n += k == as->n;
	}
	for (int k = 0; k < as->n; k++)
		if (as->a[k].page == OSDFS_LAYOUT_PAGE && as->a[k].number == LAY_ATTR_MAP)
			as->a[k].value = mbuf;
	return 0;
}

/* Every slot either map uses must be up: a re-layout is not done degraded. */
static int all_up(struct lay *L, uint64_t oid, unsigned count)
{
	for (unsigned c = 0; c < count; c++)
		if (!lay_readable(L, (unsigned)((oid + c) % L->table.ndev)))
			return 0;
	return 1;
}

/* Queue component @p c of the new map: create or set its attributes. */
static int queue_comp(struct lay_copv *v, const struct lay_map *nm, const struct lay_map *om,
		      uint64_t oid, unsigned c, const struct lay_attrset *hold,
		      const struct osdfs_attr *map_only)
{
	struct lay_cop *op = lay_copv_add(v, c < om->nc ? LAY_SETATTR : LAY_CREATE,
					  lay_slot(nm, oid, c), oid);

	if (!op)
		return -ENOMEM;
	op->comp = c;
	op->cls = OSDFS_OBJ_DATA;
	op->attrs = c < lay_holders(nm) ? hold->a : map_only;
	op->nattrs = c < lay_holders(nm) ? hold->n : 1;
	return 0;
}

/* Undo a failed first phase: drop the new components, put the old map back. */
static void undo(struct lay *L, const struct lay_copv *v, const struct osdfs_attr *old_map)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct lay_cop *op = &v->v[i];
		struct lay_dev *d = &L->dev[op->slot];

		if (op->rc < 0)
			continue;
		if (op->kind == LAY_CREATE)
			d->ops->remove(d->impl, op->oid);
		else
			d->ops->set_attrs(d->impl, op->oid, old_map, 1);
	}
}

/* Run one batch; the first error of its operations. */
static int run_batch(struct lay *L, struct lay_copv *v)
{
	lay_copv_run(L, v);
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].rc < 0)
			return (int)v->v[i].rc;
	return 0;
}

/* The components only the old map has: removed once the new map is in effect. */
static void drop_old(struct lay *L, const struct lay_map *nm, const struct lay_map *om,
		     uint64_t oid)
{
	struct lay_copv v = { 0 };

	for (unsigned c = nm->nc; c < om->nc; c++)
		if (!lay_copv_add(&v, LAY_REMOVE, lay_slot(om, oid, c), oid))
			break;
	lay_copv_run(L, &v); /* one left behind is an empty object, harmless */
	lay_copv_free(&v);
}

static int relayout(struct lay *L, struct lay_info *fi, const struct lay_map *nm,
		    const struct osdfs_attr *extra, int nextra)
{
	uint8_t nbuf[LAY_MAP_LEN], obuf[LAY_MAP_LEN];
	struct osdfs_attr map_only = { OSDFS_LAYOUT_PAGE, LAY_ATTR_MAP, nbuf, LAY_MAP_LEN };
	struct osdfs_attr old_map = { OSDFS_LAYOUT_PAGE, LAY_ATTR_MAP, obuf, LAY_MAP_LEN };
	struct lay_attrset hold = { .n = 0 };
	struct lay_copv v = { 0 }, v0 = { 0 };
	struct lay_map om;
	int rc = lay_map_resolve(&om, &fi->map, L->table.ndev) < 0 ? -EUCLEAN : 0;

	if (rc == 0 && !all_up(L, fi->oid, om.nc > nm->nc ? om.nc : nm->nc))
		rc = -EIO;
	lay_map_encode(nbuf, &nm->m);
	lay_map_encode(obuf, &om.m);
	if (rc == 0)
		rc = lay_attrs_read(L, (unsigned)(fi->oid % L->table.ndev), lay_holders(&om),
				    UINT_MAX, fi->oid, &hold);
	if (rc == 0)
		rc = new_holder_attrs(&hold, extra, nextra, nbuf);
	/* phase 1: every component but 0; phase 2 (the commit): component 0 */
	for (unsigned c = 1; rc == 0 && c < nm->nc; c++)
		rc = queue_comp(&v, nm, &om, fi->oid, c, &hold, &map_only);
	if (rc == 0)
		rc = queue_comp(&v0, nm, &om, fi->oid, 0, &hold, &map_only);
	if (rc == 0) {
		rc = run_batch(L, &v);
		if (rc == 0)
			rc = run_batch(L, &v0);
		if (rc < 0)
			undo(L, &v, &old_map);
	}
	if (rc == 0)
		drop_old(L, nm, &om, fi->oid);
	lay_copv_free(&v);
	lay_copv_free(&v0);
	free(hold.buf);
	return rc;
}

OSD_EXTERN int osdfs_layout_set_file_map(osdfs_backend *be, uint64_t oid,
					 const struct osdfs_data_map *map,
					 const struct osdfs_attr *attrs, int nattrs)
{
	struct lay *L = lay_of_be(be);
	struct lay_info fi;
	struct lay_map nm;
	uint64_t size;
	int rc;

	if (!L || !map || nattrs < 0 || (nattrs && !attrs) || nattrs > LAY_MAX_ATTRS / 2)
		return -EINVAL;
	for (int i = 0; i < nattrs; i++)
		if (attrs[i].page == OSDFS_LAYOUT_PAGE)
			return -EINVAL;
	if (lay_map_resolve(&nm, map, L->table.ndev) < 0)
		return -EINVAL;
	if (L->readonly)
		return -EROFS;
	rc = file_enter(L, oid, 1, &fi);
	if (rc == -ENODATA)
		return -EINVAL; /* not a regular file */
	if (rc < 0)
		return rc;
	rc = lay_file_size(L, &fi, &size);
	if (rc == 0 && size != 0)
		rc = -EBUSY;
	if (rc == 0)
		rc = relayout(L, &fi, &nm, attrs, nattrs);
	if (rc == 0) {
		fi.map = nm.m;
		fi.size = 0;
		fi.size_known = 1;
		lay_info_put(L, &fi);
	} else {
		lay_info_drop(L, oid); /* learn again what the devices say */
	}
	return lay_obj_leave(L, oid, rc);
}
