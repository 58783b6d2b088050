/*
 * Striped file I/O: reads fan out to one copy of each data unit and fall
 * back to other copies or parity (degraded reads); writes go to every live
 * copy, with P/Q recomputed per row (a partial row by read-modify-write or
 * reconstruct-write, whichever reads less). The caller holds the object's
 * lock (shared for reads, exclusive for changes).
 *
 * Glossary (the members of struct lay_map and the names used below):
 *   su    stripe unit: bytes of one unit, the piece of a row on one device
 *   W     group width: positions in a row; Wd data units plus P parity units
 *   Wd    data units per row; P parity units per row (0, 1 = P, 2 = P and Q)
 *   M     copies of each position (mirroring); G groups; D rows per group
 *   R     logical row: bytes [R * Wd * su, (R + 1) * Wd * su) of the file
 *   g     group a logical row lives in; row: its row on the group's
 *         components, at component offset row * su (struct lay_row)
 *   pos   position in a row, 0..W-1, rotating between data and parity
 *   k     data index in a row, 0..Wd-1 (lay_data_pos() maps it to pos)
 *   j     parity index, 0..P-1 (lay_parity_pos() maps it to pos)
 *   m     copy, 0..M-1; c: component, lay_comp(g, pos, m); nc of them
 *   s     slot: the device holding component c of an object (lay_slot())
 *   a     byte offset inside a unit
 *   skip  a slot not to read from (UINT32_MAX: none)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lebytes.h"
#include "layout/layout_int.h"

#define CHUNK_MAX (16u << 20) /* bytes of one write batch */

/* Bytes [a, a + len) of unit (g, row, pos): a stripe coordinate, as ORE's
 * struct ore_striping_info is. */
struct unit_span {
	unsigned g;   /* group */
	uint64_t row; /* row on the group's components */
	unsigned pos; /* position in the row */
	uint64_t a;   /* byte offset in the unit */
	size_t len;   /* bytes, a + len <= su */
};

struct rng {
	uint64_t off;
	size_t len;
	uint8_t *dst;
};

struct piece {
	struct unit_span u;
	uint8_t *dst;
	long op;         /* index in the batch, -1 = no readable copy */
};

/* The first readable copy of unit @p u (rotating with the row), not @p skip. */
static int pick_copy(struct lay *L, const struct lay_map *lm, uint64_t oid,
		     const struct unit_span *u, unsigned skip, unsigned *comp)
{
	for (unsigned i = 0; i < lm->M; i++) {
		unsigned c = lay_comp(lm, u->g, u->pos, (unsigned)((u->row + i) % lm->M));
		unsigned s = lay_slot(lm, oid, c);

		if (s != skip && lay_readable(L, s)) {
			*comp = c;
			return 0;
		}
	}
	return -EIO;
}

/* Add @p io at component offset @p coff of component @p c to the batch,
 * extending the component's last op when contiguous; returns its index. */
static long add_io(struct lay_copv *v, long *last, enum lay_op_kind kind, const struct lay_map *lm,
		   uint64_t oid, unsigned c, uint64_t coff, struct iovec io)
{
	struct lay_cop *op;
	void *p = io.iov_base;
	size_t len = io.iov_len;

	if (last && last[c] >= 0) {
		op = &v->v[last[c]];
		if (op->kind == kind && op->off + op->len == coff)
			return lay_cop_iov(op, p, len) < 0 ? -1 : last[c];
	}
	op = lay_copv_add(v, kind, lay_slot(lm, oid, c), oid);
	if (!op)
		return -1;
	op->comp = c;
	op->off = coff;
	if (lay_cop_iov(op, p, len) < 0)
		return -1;
	if (last)
		last[c] = (long)(v->n - 1);
	return (long)(v->n - 1);
}

/* Index of a row's positions in the recovery order: data 0..Wd-1, then P, Q. */
static unsigned unit_index(const struct lay_map *lm, uint64_t row, unsigned pos)
{
	for (unsigned p = 0; p < lm->P; p++)
		if (lay_parity_pos(lm, row, p) == pos)
			return lm->Wd + p;
	for (unsigned k = 0; k < lm->Wd; k++)
		if (lay_data_pos(lm, row, k) == pos)
			return k;
	return 0;
}

/* Bytes of unit span @p us, from the other units of its row and parity. */
static int unit_from_parity(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
			    const struct unit_span *us, unsigned skip, int heal, uint8_t *out)
{
	uint64_t row = us->row, a = us->a;
	unsigned pos = us->pos;
	size_t len = us->len;
	uint8_t *buf = calloc(lm->W, len), *u[OSDFS_LAYOUT_MAX_DEVICES];
	unsigned lost[3], nlost = 0, idx[OSDFS_LAYOUT_MAX_DEVICES];
	struct lay_copv v = { 0 };
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (unsigned p = 0; p < lm->W && rc == 0; p++) {
		unsigned c;

		struct unit_span other = { us->g, row, p, a, len };

		idx[p] = unit_index(lm, row, p);
		u[idx[p]] = buf + (size_t)p * len;
		if (p == pos || pick_copy(L, lm, fi->oid, &other, skip, &c) < 0)
			lost[nlost < 3 ? nlost++ : 2] = idx[p];
		else if (add_io(&v, NULL, LAY_READ, lm, fi->oid, c, row * lm->su + a,
				(struct iovec){ u[idx[p]], len }) < 0)
			rc = -ENOMEM;
	}
	if (rc == 0)
		lay_copv_run(L, &v);
	for (size_t i = 0; rc == 0 && i < v.n; i++) {
		if (v.v[i].rc >= 0)
			continue;
		if (!lay_is_dev_error(v.v[i].rc))
			rc = (int)v.v[i].rc;
		else
			lost[nlost < 3 ? nlost++ : 2] = idx[v.v[i].comp / lm->M % lm->W];
	}
	if (rc == 0)
		rc = lay_gf_recover(u, lm->Wd, lm->P, len, lost, nlost);
	if (rc == 0)
		memcpy(out, u[idx[pos]], len);
	/* healing a whole unit: the other units that failed on a device that
	 * answered (RAID 6: a second bad unit in the row) are rewritten too */
	for (size_t i = 0; rc == 0 && heal && a == 0 && i < v.n; i++)
		if (v.v[i].medium)
			lay_heal_write(L, fi, lm, v.v[i].comp, row,
				       u[idx[v.v[i].comp / lm->M % lm->W]], len);
	lay_copv_free(&v);
	free(buf);
	return rc;
}

/* Bytes [a, a+len) of unit @p pos: from another copy, else from parity.
 * With @p heal (a whole unit, a = 0), copies and units that failed with a
 * medium error on the way are rewritten from the result. */
static int unit_degraded(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
			 const struct unit_span *us, unsigned skip, int heal, uint8_t *out)
{
	unsigned g = us->g, pos = us->pos;
	uint64_t row = us->row, a = us->a;
	size_t len = us->len;
	unsigned bad[OSDFS_LAYOUT_MAX_DEVICES], nbad = 0;
	int rc = -EIO;

	for (unsigned m = 0; m < lm->M && rc < 0; m++) {
		unsigned c = lay_comp(lm, g, pos, m), s = lay_slot(lm, fi->oid, c);
		struct lay_copv v = { 0 };
		struct lay_cop *op;

		if (s == skip || !lay_readable(L, s))
			continue;
		op = lay_copv_add(&v, LAY_READ, s, fi->oid);
		if (!op || lay_cop_iov(op, out, len) < 0) {
			lay_copv_free(&v);
			return -ENOMEM;
		}
		op->off = row * lm->su + a;
		lay_copv_run(L, &v);
		rc = v.v[0].rc >= 0 ? 0 : (int)v.v[0].rc;
		if (v.v[0].medium)
			bad[nbad++] = c;
		lay_copv_free(&v);
		if (rc < 0 && !lay_is_dev_error(rc))
			return rc;
	}
	if (rc < 0 && lm->P)
		rc = unit_from_parity(L, fi, lm, us, skip, heal, out);
	for (unsigned i = 0; rc == 0 && heal && a == 0 && i < nbad; i++)
		lay_heal_write(L, fi, lm, bad[i], row, out, len);
	return rc;
}

size_t lay_row_extent(const struct lay_map *lm, unsigned g, uint64_t row, uint64_t size)
{
	uint64_t ext = 0, off = row * lm->su;

	for (unsigned pos = 0; pos < lm->W; pos++) {
		uint64_t cl = lay_comp_len(lm, lay_comp(lm, g, pos, 0), size);

		if (cl > off && cl - off > ext)
			ext = cl - off;
	}
	return (size_t)(ext < lm->su ? ext : lm->su);
}

/* Logical offset of unit row @p row of component @p c (a parity unit: its row). */
static uint64_t comp_logical(const struct lay_map *lm, unsigned c, uint64_t row)
{
	unsigned g = c / lm->M / lm->W, pos = c / lm->M % lm->W;
	uint64_t R = lay_row_logical(lm, g, row), rowlen = lm->Wd * lm->su;

	for (unsigned k = 0; k < lm->Wd; k++)
		if (lay_data_pos(lm, row, k) == pos)
			return R * rowlen + (uint64_t)k * lm->su;
	return R * rowlen;
}

int lay_heal_write(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
		   unsigned c, uint64_t row, const uint8_t *unit, size_t ext)
{
	uint64_t cl = lay_comp_len(lm, c, fi->size), off = row * lm->su;
	unsigned s = lay_slot(lm, fi->oid, c);
	size_t n = cl > off ? (size_t)(cl - off < ext ? cl - off : ext) : 0;
	struct lay_copv v = { 0 };
	struct lay_cop *op;
	int rc = L->readonly ? -EROFS : 0;
	char what[80];

	if (n == 0)
		return 0;
	if (rc == 0) {
		op = lay_copv_add(&v, LAY_WRITE, s, fi->oid);
		rc = op ? lay_cop_iov(op, (void *)unit, n) : -ENOMEM;
		if (rc == 0) {
			op->comp = c;
			op->off = off;
			lay_copv_run(L, &v);
			rc = (int)op->rc;
		}
		lay_copv_free(&v);
	}
	snprintf(what, sizeof(what), "component %u bytes %llu+%zu", c, (unsigned long long)off, n);
	lay_repair_note(L, s, fi->oid, comp_logical(lm, c, row), rc, what);
	return rc;
}

/* A piece whose read failed on a device that answered: read it alone again
 * (the failed read may have covered other units), else rebuild its whole
 * unit from redundancy, copy the piece out and rewrite the unit. */
static int heal_piece(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
		      const struct piece *p, const struct lay_cop *failed)
{
	const struct unit_span *us = &p->u;
	size_t ext = lay_row_extent(lm, us->g, us->row, fi->size);
	struct unit_span whole = { us->g, us->row, us->pos, 0, ext };
	uint8_t *u;
	int rc;

	if (failed->len > us->len) {
		struct lay_copv v = { 0 };
		struct lay_cop *op = lay_copv_add(&v, LAY_READ, failed->slot, fi->oid);

		rc = op ? lay_cop_iov(op, p->dst, us->len) : -ENOMEM;
		if (rc == 0) {
			op->comp = failed->comp;
			op->off = us->row * lm->su + us->a;
			op->recheck = 1; /* the failure was counted once */
			lay_copv_run(L, &v);
			rc = op->rc >= 0 ? 0 : op->medium ? -EIO : (int)op->rc;
		}
		lay_copv_free(&v);
		if (rc == 0 || rc == -ENOMEM)
			return rc;
	}
	u = malloc(ext ? ext : 1);
	if (!u)
		return -ENOMEM;
	rc = unit_degraded(L, fi, lm, &whole, failed->slot, 1, u);
	if (rc == 0) {
		memcpy(p->dst, u + us->a, us->len);
		lay_heal_write(L, fi, lm, failed->comp, us->row, u, ext);
	}
	free(u);
	return rc;
}

int lay_unit_rebuild(struct lay *L, const struct lay_info *fi, unsigned g, uint64_t row,
		     unsigned pos, unsigned skip, uint8_t *out)
{
	struct lay_map lm;
	struct unit_span us = { g, row, pos, 0, 0 };

	if (lay_map_resolve(&lm, &fi->map, L->table.ndev) < 0)
		return -EUCLEAN;
	us.len = lm.su;
	return unit_degraded(L, fi, &lm, &us, skip, 0, out);
}

/* The reads of some logical ranges: their unit pieces and the batch. */
struct read_plan {
	struct piece *pc;
	size_t n;
	struct lay_copv v;
	long *last; /* per component: its last op in v, -1 = none */
};

/* Split the ranges into unit pieces, one readable copy each. */
static int plan_reads(struct lay *L, const struct lay_map *lm, uint64_t oid,
		      const struct rng *r, size_t nr, struct read_plan *rp)
{
	uint64_t rowlen = lm->Wd * lm->su;
	struct piece *pc = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < nr; i++) {
		for (uint64_t off = r[i].off, end = r[i].off + r[i].len; off < end;) {
			uint64_t R = off / rowlen, in = off % rowlen, a = in % lm->su;
			struct lay_row lr = lay_row_of(lm, R);
			size_t len = (size_t)(lm->su - a < end - off ? lm->su - a : end - off);
			unsigned c;

			if (n == cap) {
				struct piece *np2 = realloc(pc, (cap = cap ? cap * 2 : 16) * sizeof(*pc));

				if (!np2) {
					free(pc);
					return -ENOMEM;
				}
				pc = np2;
			}
			pc[n] = (struct piece){
				{ lr.g, lr.row, lay_data_pos(lm, lr.row, (unsigned)(in / lm->su)), a, len },
				r[i].dst + (off - r[i].off), -1 };
			if (pick_copy(L, lm, oid, &pc[n].u, UINT32_MAX, &c) == 0) {
				pc[n].op = add_io(&rp->v, rp->last, LAY_READ, lm, oid, c, lr.row * lm->su + a,
						  (struct iovec){ pc[n].dst, len });
				if (pc[n].op < 0) {
					free(pc);
					return -ENOMEM;
				}
			}
			n++;
			off += len;
		}
	}
	rp->pc = pc;
	rp->n = n;
	return 0;
}

/* Read logical ranges of a file (no clamping to its length). */
static int read_ranges(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
		       const struct rng *r, size_t nr)
{
	struct read_plan rp = { .last = malloc(lm->nc * sizeof(long)) };
	struct lay_copv *v = &rp.v;
	int rc;

	if (!rp.last)
		return -ENOMEM;
	for (unsigned c = 0; c < lm->nc; c++)
		rp.last[c] = -1;
	rc = plan_reads(L, lm, fi->oid, r, nr, &rp);
	if (rc == 0)
		lay_copv_run(L, v);
	for (size_t i = 0; rc == 0 && i < rp.n; i++) {
		struct piece *pc = rp.pc;
		long orc = pc[i].op >= 0 ? v->v[pc[i].op].rc : -EIO;

		if (orc >= 0)
			continue;
		if (!lay_is_dev_error(orc))
			rc = (int)orc;
		else if (pc[i].op >= 0 && v->v[pc[i].op].medium)
			rc = heal_piece(L, fi, lm, &pc[i], &v->v[pc[i].op]);
		else
			rc = unit_degraded(L, fi, lm, &pc[i].u, UINT32_MAX, 0, pc[i].dst);
		if (rc == -EIO)
			lay_event(L, OSDFS_LAYOUT_EV_UNRECOVERABLE, -1, fi->oid,
				  lay_row_logical(lm, pc[i].u.g, pc[i].u.row) * lm->Wd * lm->su,
				  "a unit of row %llu can be read from no device nor rebuilt",
				  (unsigned long long)lay_row_logical(lm, pc[i].u.g, pc[i].u.row));
	}
	lay_copv_free(v);
	free(rp.pc);
	free(rp.last);
	return rc;
}

/* The file's logical length, from the cache or its attribute holders. */
static int file_size(struct lay *L, struct lay_info *fi, const struct lay_map *lm)
{
	uint8_t buf[8];
	struct osdfs_attr a = { OSDFS_LAYOUT_PAGE, LAY_ATTR_SIZE, buf, sizeof(buf) };

	if (fi->size_known)
		return 0;
	for (unsigned h = 0; h < lay_holders(lm); h++) {
		unsigned s = lay_slot(lm, fi->oid, h);
		int rc;

		if (!lay_readable(L, s))
			continue;
		rc = L->dev[s].ops->get_attrs(L->dev[s].impl, fi->oid, &a, 1);
		lay_dev_failed(L, s, rc);
		if (rc < 0 && lay_is_dev_error(rc))
			continue;
		if (rc < 0)
			return rc;
		fi->size = a.len == 8 ? osdfs__get_le64(buf) : 0;
		fi->size_known = 1;
		lay_info_put(L, fi);
		return 0;
	}
	return -EIO;
}

int lay_file_size(struct lay *L, struct lay_info *fi, uint64_t *size)
{
	struct lay_map lm;
	int rc = lay_map_resolve(&lm, &fi->map, L->table.ndev);

	if (rc == 0)
		rc = file_size(L, fi, &lm);
	if (rc == 0)
		*size = fi->size;
	return rc < 0 && rc != -EIO && rc != -ENOENT ? -EUCLEAN : rc;
}

int lay_file_length(struct lay *L, struct lay_info *fi, uint64_t *size)
{
	int rc = lay_file_size(L, fi, size);

	if (rc == 0)
		*size = lay_gather_size(L, fi->oid, *size);
	return rc;
}

ssize_t lay_file_read(struct lay *L, const struct lay_info *cfi, uint64_t off, uint8_t *buf,
		      size_t len)
{
	struct lay_info fi = *cfi;
	struct lay_map lm;
	struct rng r;
	uint64_t size;
	int rc;

	if (lay_map_resolve(&lm, &fi.map, L->table.ndev) < 0)
		return -EUCLEAN;
	rc = file_size(L, &fi, &lm);
	if (rc < 0)
		return rc;
	size = lay_gather_size(L, fi.oid, fi.size); /* with the bytes held back */
	if (off >= size)
		return 0;
	if (len > size - off)
		len = (size_t)(size - off);
	/* the devices hold [0, fi.size); held bytes are laid over what they return */
	r = (struct rng){ off, off < fi.size ? (size_t)(fi.size - off < len ? fi.size - off : len) : 0,
			  buf };
	memset(buf + r.len, 0, len - r.len);
	rc = r.len ? read_ranges(L, &fi, &lm, &r, 1) : 0;
	if (rc == 0)
		lay_gather_overlay(L, fi.oid, off, buf, len);
	lay_health_sync(L); /* repairs and events of this read, if any */
	return rc < 0 ? rc : (ssize_t)len;
}

/* Whether every row from @p R0 to @p R1 still has enough live positions. */
static int rows_writable(struct lay *L, const struct lay_map *lm, uint64_t oid, uint64_t R0,
			 uint64_t R1)
{
	uint64_t cycle = lm->G > 1 ? (uint64_t)lm->G * lm->D : 1;

	if (R1 - R0 >= cycle)
		R1 = R0 + cycle - 1; /* the same groups repeat */
	for (uint64_t R = R0; R <= R1; R++) {
		struct lay_row lr = lay_row_of(lm, R);
		unsigned dead = 0;

		for (unsigned p = 0; p < lm->W; p++) {
			unsigned alive = 0;

			for (unsigned m = 0; m < lm->M; m++)
				alive += lay_writable(L, lay_slot(lm, oid, lay_comp(lm, lr.g, p, m)));
			dead += alive == 0;
		}
		if (dead > lm->P)
			return 0;
	}
	return 1;
}

/* Add a write of @p p to unit span @p us on every live copy. */
static int add_unit_write(struct lay *L, struct lay_copv *v, long *last, const struct lay_map *lm,
			  uint64_t oid, const struct unit_span *us, const uint8_t *p)
{
	for (unsigned m = 0; m < lm->M; m++) {
		unsigned c = lay_comp(lm, us->g, us->pos, m);

		if (!lay_writable(L, lay_slot(lm, oid, c)))
			continue;
		if (add_io(v, last, LAY_WRITE, lm, oid, c, us->row * lm->su + us->a,
			   (struct iovec){ (void *)p, us->len }) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* One row of a parity write: its data units over [a, b) and scratch. */
struct prow {
	uint64_t R, a, b;
	int partial;
	int rmw;          /* parity from old parity and the data's change */
	uint8_t *scratch; /* partial rows: Wd units of b - a bytes (rmw: the changes) */
	uint8_t *oldpar;  /* rmw: the old P (and Q) over [a, b) */
};

/* The rows of one parity write and the buffer of their parity units. */
struct prows {
	struct prow *pr;
	unsigned n;
	uint8_t *pbuf; /* P units (and Q after each) of every row */
	unsigned P;    /* parity units per row, and the unit: pbuf's size */
	uint64_t su;
};

static void prow_span(struct prow *pr, const struct lay_map *lm, uint64_t off, uint64_t end)
{
	uint64_t rowlen = lm->Wd * lm->su, rs = pr->R * rowlen;
	uint64_t cs = off > rs ? off : rs, ce = end < rs + rowlen ? end : rs + rowlen;

	pr->partial = !(cs == rs && ce == rs + rowlen);
	pr->a = 0;
	pr->b = lm->su;
	if (pr->partial && (cs - rs) / lm->su == (ce - 1 - rs) / lm->su) {
		pr->a = (cs - rs) % lm->su;
		pr->b = pr->a + (ce - cs);
	}
}

/* Whether unit k of row @p pr overlaps [off, end). */
static int touched(const struct lay_map *lm, const struct prow *pr, unsigned k, uint64_t off,
		   uint64_t end)
{
	uint64_t ls = pr->R * lm->Wd * lm->su + (uint64_t)k * lm->su + pr->a;

	return ls < end && ls + (pr->b - pr->a) > off;
}

/* Read-modify-write (old data of the touched units and old parity) when it
 * reads fewer units than reconstruct-write (the untouched units), and every
 * parity unit has a readable copy. */
static int choose_rmw(struct lay *L, const struct lay_map *lm, uint64_t oid,
		      const struct prow *pr, uint64_t off, uint64_t end)
{
	struct lay_row lr = lay_row_of(lm, pr->R);
	unsigned t = 0, c;

	for (unsigned k = 0; k < lm->Wd; k++)
		t += (unsigned)touched(lm, pr, k, off, end);
	if (t + lm->P >= lm->Wd - t)
		return 0;
	for (unsigned j = 0; j < lm->P; j++) {
		struct unit_span par = { lr.g, lr.row, lay_parity_pos(lm, lr.row, j), 0, 0 };

		if (pick_copy(L, lm, oid, &par, UINT32_MAX, &c) < 0)
			return 0;
	}
	return 1;
}

/* The ranges a partial row must read: the units it keeps (reconstruct-write)
 * or the units it changes (read-modify-write, plus the parity read apart). */
static int prow_plan(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
		     struct prow *pr, uint64_t off, uint64_t end, struct rng *r, size_t *nr)
{
	uint64_t rowlen = lm->Wd * lm->su;
	size_t w = (size_t)(pr->b - pr->a);

	pr->rmw = choose_rmw(L, lm, fi->oid, pr, off, end);
	pr->scratch = calloc(lm->Wd, w);
	pr->oldpar = pr->rmw ? malloc(lm->P * w) : NULL;
	if (!pr->scratch || (pr->rmw && !pr->oldpar))
		return -ENOMEM;
	for (unsigned k = 0; k < lm->Wd; k++) {
		uint64_t ls = pr->R * rowlen + (uint64_t)k * lm->su + pr->a;
		int t = touched(lm, pr, k, off, end);

		if (pr->rmw ? !t : ls >= off && ls + w <= end)
			continue; /* not needed: unchanged (rmw) or overwritten entirely */
		r[(*nr)++] = (struct rng){ ls, w, pr->scratch + (size_t)k * w };
	}
	return 0;
}

/* Overlay the new data on a partial row's units; with rmw, keep only the change. */
static void prow_overlay(const struct lay_map *lm, struct prow *pr, uint64_t off,
			 const struct lay_wsrc *src, size_t len)
{
	uint64_t rowlen = lm->Wd * lm->su, end = off + len;
	size_t w = (size_t)(pr->b - pr->a);

	for (unsigned k = 0; k < lm->Wd; k++) {
		uint64_t ls = pr->R * rowlen + (uint64_t)k * lm->su + pr->a;
		uint64_t s = ls > off ? ls : off, e = ls + w < end ? ls + w : end;
		uint8_t *u = pr->scratch + (size_t)k * w;

		if (s >= e)
			continue;
		if (!pr->rmw) {
			memcpy(u + (s - ls), lay_src_at(src, s), e - s);
			continue;
		}
		lay_gf_xor(u + (s - ls), lay_src_at(src, s), e - s);
		memset(u, 0, s - ls);
		memset(u + (e - ls), 0, w - (e - ls));
	}
}

/* The old P (and Q) over [a, b) of every read-modify-write row, all in one
 * batch (not a round trip per parity unit); a unit whose read fails on a
 * device comes from another copy or the rest of its row. */
static int old_parity(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
		      struct prow *pr, unsigned npr)
{
	struct unit_span par[4]; /* 2 partial rows (the first and last) x P */
	uint8_t *dst[4];
	long op[4];
	unsigned n = 0;
	struct lay_copv v = { 0 };
	int rc = 0;

	for (unsigned i = 0; i < npr && rc == 0; i++) {
		struct lay_row lr = lay_row_of(lm, pr[i].R);
		size_t w = (size_t)(pr[i].b - pr[i].a);

		for (unsigned j = 0; pr[i].rmw && j < lm->P && n < 4; j++, n++) {
			unsigned c;

			par[n] = (struct unit_span){ lr.g, lr.row, lay_parity_pos(lm, lr.row, j),
						     pr[i].a, w };
			dst[n] = pr[i].oldpar + j * w;
			op[n] = -1; /* no readable copy: from the rest of the row */
			if (pick_copy(L, lm, fi->oid, &par[n], UINT32_MAX, &c) == 0) {
				op[n] = add_io(&v, NULL, LAY_READ, lm, fi->oid, c,
					       lr.row * lm->su + pr[i].a, (struct iovec){ dst[n], w });
				rc = op[n] < 0 ? -ENOMEM : 0;
			}
		}
	}
	if (rc == 0)
		lay_copv_run(L, &v);
	for (unsigned k = 0; rc == 0 && k < n; k++) {
		long orc = op[k] >= 0 ? v.v[op[k]].rc : -EIO;

		if (orc >= 0)
			continue;
		if (!lay_is_dev_error(orc))
			rc = (int)orc;
		else
			rc = unit_degraded(L, fi, lm, &par[k], UINT32_MAX, 0, dst[k]);
	}
	lay_copv_free(&v);
	return rc;
}

/* Read what each partial row needs and merge in the new data. */
static int prow_fill(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
		     struct prow *pr, unsigned npr, uint64_t off, const struct lay_wsrc *src,
		     size_t len)
{
	struct rng r[2 * OSDFS_LAYOUT_MAX_DEVICES] = { { 0, 0, NULL } };
	size_t nr = 0;
	int rc = 0;

	for (unsigned i = 0; i < npr && rc == 0; i++)
		if (pr[i].partial)
			rc = prow_plan(L, fi, lm, &pr[i], off, off + len, r, &nr);
	if (rc == 0)
		rc = read_ranges(L, fi, lm, r, nr);
	if (rc == 0)
		rc = old_parity(L, fi, lm, pr, npr);
	for (unsigned i = 0; rc == 0 && i < npr; i++)
		if (pr[i].partial)
			prow_overlay(lm, &pr[i], off, src, len);
	return rc;
}

/* Compute the parity units of each row into rows->pbuf (P, then Q at P + w). */
static void compute_parity(const struct lay_map *lm, const struct prows *rows,
			   const struct lay_wsrc *src)
{
	struct prow *pr = rows->pr;
	uint64_t rowlen = lm->Wd * lm->su;
	const uint8_t *d[OSDFS_LAYOUT_MAX_DEVICES];

	for (unsigned i = 0; i < rows->n; i++) {
		size_t w = (size_t)(pr[i].b - pr[i].a);
		uint8_t *p = rows->pbuf + (size_t)i * lm->P * lm->su, *q = lm->P == 2 ? p + w : NULL;

		for (unsigned k = 0; k < lm->Wd; k++)
			d[k] = pr[i].partial ? pr[i].scratch + (size_t)k * w
					     : lay_src_at(src, pr[i].R * rowlen + (uint64_t)k * lm->su);
		lay_gf_gen(d, lm->Wd, w, p, q);
		if (pr[i].rmw) /* parity of the change, added to the old parity */
			lay_gf_xor(p, pr[i].oldpar, (q ? 2 : 1) * w);
	}
}

/* Queue the data and parity of [off, off + len) on every live copy, row by
 * row and position by position, so that what a component receives is one
 * contiguous range (one operation with an iovec list) rather than its data
 * and parity units as separate commands. */
static int queue_rows(struct lay *L, struct lay_copv *v, long *last, const struct lay_map *lm,
		      uint64_t oid, const struct prows *rows, uint64_t off,
		      const struct lay_wsrc *wsrc, size_t len)
{
	uint64_t rowlen = lm->Wd * lm->su, end = off + len, R0 = off / rowlen;
	uint64_t R1 = (end - 1) / rowlen;

	for (uint64_t R = R0; R <= R1; R++) {
		struct lay_row lr = lay_row_of(lm, R);
		const struct prow *pr = rows->pr ? &rows->pr[R - R0] : NULL;

		for (unsigned pos = 0; pos < lm->W; pos++) {
			unsigned k = unit_index(lm, lr.row, pos);
			uint64_t us = R * rowlen + (uint64_t)k * lm->su;
			uint64_t s = us > off ? us : off, e = us + lm->su < end ? us + lm->su : end;
			struct unit_span u = { lr.g, lr.row, pos, 0, 0 };
			const uint8_t *src;

			if (k >= lm->Wd) { /* parity j = k - Wd, over the row's span [a, b) */
				size_t w = (size_t)(pr->b - pr->a);

				u.a = pr->a;
				u.len = w;
				src = rows->pbuf + (size_t)(R - R0) * lm->P * lm->su + (k - lm->Wd) * w;
			} else if (s < e) {
				u.a = s - us;
				u.len = (size_t)(e - s);
				src = lay_src_at(wsrc, s);
			} else {
				continue;
			}
			if (add_unit_write(L, v, last, lm, oid, &u, src) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Attach @p attrs to a write on each live holder, or add a set-attributes op. */
static int queue_attrs(struct lay *L, struct lay_copv *v, const struct lay_map *lm,
		       uint64_t oid, const struct osdfs_attr *attrs, int nattrs)
{
	size_t nops = v->n;

	for (unsigned h = 0; nattrs > 0 && h < lay_holders(lm); h++) {
		unsigned s = lay_slot(lm, oid, h);
		size_t i;
		struct lay_cop *op;

		if (!lay_writable(L, s))
			continue;
		for (i = 0; i < nops; i++)
			if (v->v[i].comp == h && v->v[i].kind == LAY_WRITE && !v->v[i].attrs)
				break;
		if (i < nops) {
			v->v[i].attrs = attrs;
			v->v[i].nattrs = nattrs;
			continue;
		}
		op = lay_copv_add(v, LAY_SETATTR, s, oid);
		if (!op)
			return -ENOMEM;
		op->comp = h;
		op->attrs = attrs;
		op->nattrs = nattrs;
	}
	return 0;
}

/* Result of a batch of changes: a real error, or -EIO if the rows lost too much. */
static int batch_result(struct lay *L, const struct lay_copv *v, const struct lay_map *lm,
			uint64_t oid, uint64_t R0, uint64_t R1)
{
	int dev = 0;

	for (size_t i = 0; i < v->n; i++) {
		long rc = v->v[i].rc;

		if (rc >= 0)
			continue;
		if (!lay_is_dev_error(rc)) {
			pthread_mutex_lock(&L->mu);
			enum osdfs_layout_dev_state st = L->dev[v->v[i].slot].state;
			pthread_mutex_unlock(&L->mu);
			/* a rebuilding slot may lack the object yet; a slot that
			 * went down during this batch (a reset: it may have lost
			 * the object's create) does not count, its answer no more
			 * than its data, and what it missed is logged */
			if (st == OSDFS_LAYOUT_DEV_REBUILDING && rc == -ENOENT)
				rc = 0;
			else if (st == OSDFS_LAYOUT_DEV_DOWN)
				rc = -ECONNRESET;
		}
		if (rc < 0 && !lay_is_dev_error(rc))
			return (int)rc;
		dev |= rc < 0;
	}
	if (dev && !rows_writable(L, lm, oid, R0, R1))
		return -EIO;
	return 0;
}

/* Combined attribute list: the caller's plus the new logical length. */
static struct osdfs_attr *attrs_with_size(const struct osdfs_attr *attrs, int nattrs,
					  int with_size, uint8_t sbuf[8], uint64_t size, int *n)
{
	struct osdfs_attr *a = calloc((size_t)nattrs + 1, sizeof(*a));

	if (!a)
		return NULL;
	if (nattrs)
		memcpy(a, attrs, (size_t)nattrs * sizeof(*a));
	*n = nattrs;
	if (with_size) {
		osdfs__put_le64(sbuf, size);
		a[(*n)++] = (struct osdfs_attr){ OSDFS_LAYOUT_PAGE, LAY_ATTR_SIZE, sbuf, 8 };
	}
	return a;
}

static int parity_rows(struct lay *L, const struct lay_info *fi, const struct lay_map *lm,
		       uint64_t off, const struct lay_wsrc *src, size_t len,
		       struct prows *rows)
{
	uint64_t rowlen = lm->Wd * lm->su, R0 = off / rowlen, R1 = (off + len - 1) / rowlen;
	unsigned npr = (unsigned)(R1 - R0 + 1);
	struct prow *pr = calloc(npr, sizeof(*pr));
	uint8_t *pbuf = lay_scratch_get((size_t)npr * lm->P * lm->su);
	int rc = pr && pbuf ? 0 : -ENOMEM;

	*rows = (struct prows){ pr, npr, pbuf, lm->P, lm->su };
	for (unsigned i = 0; rc == 0 && i < npr; i++) {
		pr[i].R = R0 + i;
		prow_span(&pr[i], lm, off, off + len);
	}
	if (rc == 0)
		rc = prow_fill(L, fi, lm, pr, npr, off, src, len);
	if (rc == 0)
		compute_parity(lm, rows, src);
	return rc;
}

static void free_prows(struct prows *rows)
{
	for (unsigned i = 0; rows->pr && i < rows->n; i++) {
		free(rows->pr[i].scratch);
		free(rows->pr[i].oldpar);
	}
	lay_scratch_put(rows->pbuf, (size_t)rows->n * rows->P * rows->su);
	free(rows->pr);
}

/* One batch: data, parity and attributes of [off, off + len). */
static int write_chunk(struct lay *L, struct lay_info *fi, const struct lay_map *lm,
		       uint64_t off, const struct lay_wsrc *src, size_t len,
		       const struct osdfs_attr *attrs, int nattrs)
{
	uint64_t rowlen = lm->Wd * lm->su, R0 = off / rowlen, R1 = (off + len - 1) / rowlen;
	uint64_t newsize = off + len > fi->size ? off + len : fi->size;
	struct lay_copv v = { 0 };
	struct prows rows = { NULL, 0, NULL, 0, 0 };
	uint8_t sbuf[8];
	long *last = malloc(lm->nc * sizeof(*last));
	struct osdfs_attr *all;
	int rc = 0, nall = 0;

	all = attrs_with_size(attrs, nattrs, newsize != fi->size, sbuf, newsize, &nall);
	if (!last || !all)
		rc = -ENOMEM;
	else if (!rows_writable(L, lm, fi->oid, R0, R1))
		rc = -EIO;
	for (unsigned c = 0; rc == 0 && c < lm->nc; c++)
		last[c] = -1;
	if (rc == 0 && lm->P)
		rc = parity_rows(L, fi, lm, off, src, len, &rows);
	if (rc == 0)
		rc = queue_rows(L, &v, last, lm, fi->oid, &rows, off, src, len);
	if (rc == 0)
		rc = queue_attrs(L, &v, lm, fi->oid, all, nall);
	if (rc == 0) {
		lay_copv_run(L, &v);
		rc = batch_result(L, &v, lm, fi->oid, R0, R1);
	}
	if (rc == 0 && newsize != fi->size) {
		fi->size = newsize;
		lay_info_put(L, fi);
	}
	free_prows(&rows);
	lay_copv_free(&v);
	free(all);
	free(last);
	return rc;
}

int lay_write_range(struct lay *L, struct lay_info *fi, const struct lay_map *lm,
		    const struct lay_wsrc *src, uint64_t off, size_t len,
		    const struct osdfs_attr *attrs, int nattrs)
{
	uint64_t rowlen = lm->Wd * lm->su;
	size_t done = 0;
	int rc = lay_dirty_note_file(L, fi, off, len); /* logged before it is written */

	while (done < len && rc == 0) {
		uint64_t o = off + done;
		size_t n = len - done, cap = CHUNK_MAX / rowlen * rowlen + rowlen - o % rowlen;

		if (n > cap)
			n = cap;
		rc = write_chunk(L, fi, lm, o, src, n, done + n == len ? attrs : NULL,
				 done + n == len ? nattrs : 0);
		if (rc == 0)
			done += n;
	}
	if (rc == 0) /* a slot that failed during the write: logged before the ack */
		rc = lay_dirty_note_file(L, fi, off, len);
	return rc;
}

/* The file's resolved map and known size, as a write needs them. */
static int write_map(struct lay *L, struct lay_info *fi, struct lay_map *lm)
{
	if (lay_map_resolve(lm, &fi->map, L->table.ndev) < 0)
		return -EUCLEAN;
	return file_size(L, fi, lm);
}

ssize_t lay_file_write(struct lay *L, struct lay_info *fi, uint64_t off, const uint8_t *buf,
		       size_t len, const struct osdfs_attr *attrs, int nattrs)
{
	struct lay_wsrc src = { off, UINT64_MAX, buf, NULL };
	struct lay_map lm;
	int rc;

	rc = write_map(L, fi, &lm);
	if (rc < 0)
		return rc;
	if (len == 0)
		return nattrs ? lay_file_setattrs(L, fi, attrs, nattrs) : 0;
	if (lm.P) /* whole rows need no reads: gather sequential writes into them */
		rc = lay_gather_write(L, fi, &lm, off, buf, len, attrs, nattrs);
	else
		rc = lay_write_range(L, fi, &lm, &src, off, len, attrs, nattrs);
	return rc < 0 ? rc : (ssize_t)len;
}

int lay_file_write_held(struct lay *L, struct lay_info *fi, uint64_t off, const uint8_t *buf,
			size_t len)
{
	struct lay_wsrc src = { off, UINT64_MAX, buf, NULL };
	struct lay_map lm;
	int rc;

	rc = write_map(L, fi, &lm);
	return rc < 0 ? rc : lay_write_range(L, fi, &lm, &src, off, len, NULL, 0);
}

int lay_file_setattrs(struct lay *L, struct lay_info *fi, const struct osdfs_attr *attrs,
		      int nattrs)
{
	struct lay_map lm;
	struct lay_copv v = { 0 };
	int rc;

	if (lay_map_resolve(&lm, &fi->map, L->table.ndev) < 0)
		return -EUCLEAN;
	rc = lay_dirty_note(L, fi->oid, LAY_DIRTY_ATTRS, LAY_DIRTY_ATTRS);
	if (rc == 0)
		rc = queue_attrs(L, &v, &lm, fi->oid, attrs, nattrs);
	if (rc == 0 && v.n == 0)
		rc = -EIO;
	if (rc == 0) {
		lay_copv_run(L, &v);
		rc = batch_result(L, &v, &lm, fi->oid, 0, 0);
	}
	lay_copv_free(&v);
	if (rc == 0)
		rc = lay_dirty_note(L, fi->oid, LAY_DIRTY_ATTRS, LAY_DIRTY_ATTRS);
	return rc;
}

/* Parity of the last row after a shrink to @p size, whose kept data is @p row. */
static int truncate_parity(struct lay *L, struct lay_copv *v, const struct lay_map *lm,
			   uint64_t oid, uint64_t size, const uint8_t *row, uint8_t *pbuf)
{
	uint64_t rowlen = lm->Wd * lm->su, R = size / rowlen, b = size % rowlen;
	size_t w = (size_t)(b < lm->su ? b : lm->su);
	const uint8_t *d[OSDFS_LAYOUT_MAX_DEVICES];
	struct lay_row lr = lay_row_of(lm, R);

	for (unsigned k = 0; k < lm->Wd; k++)
		d[k] = row + (size_t)k * lm->su;
	lay_gf_gen(d, lm->Wd, w, pbuf, lm->P == 2 ? pbuf + w : NULL);
	for (unsigned j = 0; j < lm->P; j++) {
		struct unit_span par = { lr.g, lr.row, lay_parity_pos(lm, lr.row, j), 0, w };

		if (add_unit_write(L, v, NULL, lm, oid, &par, pbuf + j * w) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int truncate_comps(struct lay *L, const struct lay_map *lm, uint64_t oid, uint64_t size,
			  uint64_t R)
{
	struct lay_copv v = { 0 };
	int rc = 0;

	for (unsigned c = 0; c < lm->nc && rc == 0; c++) {
		struct lay_cop *op;

		if (!lay_writable(L, lay_slot(lm, oid, c)))
			continue;
		op = lay_copv_add(&v, LAY_TRUNC, lay_slot(lm, oid, c), oid);
		if (!op)
			rc = -ENOMEM;
		else
			op->off = lay_comp_len(lm, c, size);
	}
	if (rc == 0) {
		lay_copv_run(L, &v);
		rc = batch_result(L, &v, lm, oid, R, R);
	}
	lay_copv_free(&v);
	return rc;
}

int lay_file_truncate(struct lay *L, struct lay_info *fi, uint64_t size)
{
	struct lay_map lm;
	struct lay_copv v = { 0 };
	uint64_t rowlen, R;
	uint8_t *row = NULL, *pbuf = NULL, sbuf[8];
	struct osdfs_attr a = { OSDFS_LAYOUT_PAGE, LAY_ATTR_SIZE, sbuf, 8 };
	int rc, fix;

	if (lay_map_resolve(&lm, &fi->map, L->table.ndev) < 0)
		return -EUCLEAN;
	rc = lay_gather_flush_locked(L, fi); /* held bytes first: the new length cuts them */
	if (rc == 0)
		rc = file_size(L, fi, &lm);
	if (rc < 0)
		return rc;
	rowlen = lm.Wd * lm.su;
	R = size / rowlen;
	fix = lm.P && size % rowlen && size < fi->size;
	if (fix) {
		struct rng r = { R * rowlen, (size_t)(size - R * rowlen), NULL };

		row = calloc(1, (size_t)rowlen);
		pbuf = malloc((size_t)(lm.P * lm.su));
		r.dst = row;
		rc = row && pbuf ? read_ranges(L, fi, &lm, &r, 1) : -ENOMEM;
	}
	if (rc == 0)
		rc = truncate_comps(L, &lm, fi->oid, size, R);
	if (rc == 0 && fix)
		rc = truncate_parity(L, &v, &lm, fi->oid, size, row, pbuf);
	osdfs__put_le64(sbuf, size);
	if (rc == 0)
		rc = queue_attrs(L, &v, &lm, fi->oid, &a, 1);
	if (rc == 0) {
		lay_copv_run(L, &v);
		rc = batch_result(L, &v, &lm, fi->oid, R, R);
	}
	if (rc == 0) {
		fi->size = size;
		fi->size_known = 1;
		lay_info_put(L, fi);
	}
	lay_copv_free(&v);
	free(row);
	free(pbuf);
	return rc;
}
