/*
 * osdfs_layout_scrub(): read every row of every object from every
 * component, check mirror copies against each other and data against P/Q,
 * and rewrite from redundancy what is bad when the bad unit can be told:
 * a read that failed on a device that answered (a medium error), a copy
 * outvoted by the others, or (RAID 6) the one unit whose replacement makes
 * both P and Q agree. Anything else is reported, never guessed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout_int.h"

#define META_CHUNK (1u << 20)

struct scrub {
	struct lay *L;
	unsigned flags;
	struct osdfs_layout_scrub_stats *st;
};

/* One copy of one position of a row. */
struct copy {
	unsigned comp;
	int state;     /* 0 absent, 1 read, 2 medium error, 3 bad (differs) */
	uint8_t *buf;
};

/* Per position: the value agreed on (NULL: lost or undecided). */
struct unit {
	const uint8_t *val;
	int ambiguous; /* copies disagree without a majority */
};

/* Rewrite a bad copy from @p val, or count it unrepaired in a dry run. */
static void fix_copy(struct scrub *x, const struct lay_info *fi, const struct lay_map *lm,
		     uint64_t row, const struct copy *cp, const uint8_t *val, size_t ext)
{
	if (x->flags & OSDFS_LAYOUT_SCRUB_DRY_RUN) {
		x->st->unrepaired++;
		lay_event(x->L, OSDFS_LAYOUT_EV_REPAIR_FAILED, (int)lay_slot(lm, fi->oid, cp->comp),
			  fi->oid, lay_row_logical(lm, cp->comp / lm->M / lm->W, row) * lm->Wd * lm->su,
			  "component %u row %llu is bad (dry run: not rewritten)", cp->comp,
			  (unsigned long long)row);
		return;
	}
	if (lay_heal_write(x->L, fi, lm, cp->comp, row, val, ext) == 0)
		x->st->repaired++;
	else
		x->st->unrepaired++;
}

/* Decide position @p pos's value from its copies: unanimous, or a strict majority. */
static void vote(struct copy *cp, unsigned M, size_t ext, struct unit *u)
{
	unsigned best = 0, nread = 0;
	int bi = -1;

	memset(u, 0, sizeof(*u));
	for (unsigned m = 0; m < M; m++) {
		unsigned same = 0;

		if (cp[m].state != 1)
			continue;
		nread++;
		for (unsigned k = 0; k < M; k++)
			same += cp[k].state == 1 && memcmp(cp[m].buf, cp[k].buf, ext) == 0;
		if (same > best) {
			best = same;
			bi = (int)m;
		}
	}
	if (bi < 0)
		return;
	if (best * 2 <= nread) {
		u->ambiguous = 1;
		return;
	}
	u->val = cp[bi].buf;
	for (unsigned m = 0; m < M; m++)
		if (cp[m].state == 1 && memcmp(cp[m].buf, u->val, ext) != 0)
			cp[m].state = 3;
}

/* Whether P (and Q) of the data units u[0..Wd-1] equal u[Wd] (and u[Wd+1]). */
static int parity_agrees(const struct lay_map *lm, uint8_t *const *u, size_t ext, uint8_t *tmp)
{
	lay_gf_gen((const uint8_t *const *)u, lm->Wd, ext, tmp, lm->P == 2 ? tmp + ext : NULL);
	return memcmp(tmp, u[lm->Wd], ext) == 0 &&
	       (lm->P < 2 || memcmp(tmp + ext, u[lm->Wd + 1], ext) == 0);
}

/* RAID 6 with every unit read and P/Q not agreeing: the one unit whose
 * replacement by what the others give makes both agree, or -1. */
static int locate_one(const struct lay_map *lm, uint8_t *const *u, size_t ext, uint8_t *work)
{
	uint8_t *v[OSDFS_LAYOUT_MAX_DEVICES], *tmp = work + (size_t)lm->W * ext;
	int found = -1;

	for (unsigned x = 0; x < lm->W; x++) {
		unsigned lost = x;

		for (unsigned i = 0; i < lm->W; i++) {
			v[i] = work + (size_t)i * ext;
			memcpy(v[i], u[i], ext);
		}
		lay_gf_recover(v, lm->Wd, lm->P, ext, &lost, 1);
		if (memcmp(v[x], u[x], ext) == 0 || !parity_agrees(lm, v, ext, tmp))
			continue;
		if (found >= 0)
			return -1;
		found = (int)x;
	}
	return found;
}

/* Values of the lost units from parity, checked against the spare parity. */
static int solve_row(struct scrub *x, const struct lay_info *fi, const struct lay_map *lm,
		     unsigned g, uint64_t row, struct copy *cp, struct unit *un, size_t ext,
		     uint8_t *work)
{
	uint8_t *u[OSDFS_LAYOUT_MAX_DEVICES], *tmp = work + (size_t)(2 * lm->W) * ext;
	unsigned lost[OSDFS_LAYOUT_MAX_DEVICES], nlost = 0, idx[OSDFS_LAYOUT_MAX_DEVICES];
	uint64_t off = lay_row_logical(lm, g, row) * lm->Wd * lm->su;

	for (unsigned p = 0; p < lm->W; p++) {
		unsigned k;

		for (k = 0; k < lm->Wd && lay_data_pos(lm, row, k) != p; k++)
			;
		for (unsigned j = 0; k == lm->Wd && j < lm->P; j++)
			if (lay_parity_pos(lm, row, j) == p)
				k = lm->Wd + j;
		idx[p] = k;
		u[k] = work + (size_t)k * ext;
		if (un[p].val)
			memcpy(u[k], un[p].val, ext);
		else
			lost[nlost++] = k;
	}
	if (nlost > lm->P) {
		x->st->unrepaired++;
		lay_event(x->L, OSDFS_LAYOUT_EV_UNRECOVERABLE, -1, fi->oid, off,
			  "row %llu: %u units unreadable, parity covers %u",
			  (unsigned long long)row, nlost, lm->P);
		return -EIO;
	}
	lay_gf_recover(u, lm->Wd, lm->P, ext, lost, nlost);
	if (nlost < lm->P && !parity_agrees(lm, u, ext, tmp)) {
		int bad = nlost == 0 && lm->P == 2 ? locate_one(lm, u, ext, work + (size_t)lm->W * ext)
						    : -1;

		if (bad < 0) {
			x->st->mismatches++;
			x->st->unrepaired++;
			lay_event(x->L, OSDFS_LAYOUT_EV_MISMATCH, -1, fi->oid, off,
				  "row %llu: parity does not match the data and the bad unit "
				  "cannot be determined", (unsigned long long)row);
			return -EIO;
		}
		lost[0] = (unsigned)bad;
		lay_gf_recover(u, lm->Wd, lm->P, ext, lost, 1);
		for (unsigned p = 0; p < lm->W; p++)
			if (idx[p] == (unsigned)bad)
				for (unsigned m = 0; m < lm->M; m++)
					if (cp[p * lm->M + m].state == 1)
						cp[p * lm->M + m].state = 3;
	}
	for (unsigned p = 0; p < lm->W; p++) {
		unsigned agree = 0;

		un[p].val = u[idx[p]];
		for (unsigned m = 0; un[p].ambiguous && m < lm->M; m++) {
			struct copy *c = &cp[p * lm->M + m];

			if (c->state == 1 && memcmp(c->buf, un[p].val, ext) != 0)
				c->state = 3;
			agree += c->state == 1;
		}
		if (un[p].ambiguous && agree == 0) {
			/* parity agrees with no copy: two sources never agree */
			x->st->mismatches++;
			x->st->unrepaired++;
			lay_event(x->L, OSDFS_LAYOUT_EV_MISMATCH, -1, fi->oid, off,
				  "row %llu: copies of a unit disagree and parity matches none",
				  (unsigned long long)row);
			return -EIO;
		}
	}
	return 0;
}

/* Read every copy of every position of one row. */
static int read_row(struct scrub *x, const struct lay_info *fi, const struct lay_map *lm,
		    unsigned g, uint64_t row, size_t ext, struct copy *cp, uint8_t *bufs)
{
	struct lay_copv v = { 0 };
	int rc = 0;

	for (unsigned i = 0; i < lm->W * lm->M; i++) {
		unsigned c = lay_comp(lm, g, i / lm->M, i % lm->M);
		struct lay_cop *op;

		cp[i] = (struct copy){ c, 0, bufs + (size_t)i * ext };
		if (!lay_readable(x->L, lay_slot(lm, fi->oid, c)))
			continue;
		op = lay_copv_add(&v, LAY_READ, lay_slot(lm, fi->oid, c), fi->oid);
		if (!op || lay_cop_iov(op, cp[i].buf, ext) < 0) {
			rc = -ENOMEM;
			break;
		}
		op->comp = i; /* index into cp */
		op->off = row * lm->su;
	}
	if (rc == 0)
		lay_copv_run(x->L, &v);
	for (size_t i = 0; rc == 0 && i < v.n; i++) {
		struct copy *c = &cp[v.v[i].comp];

		if (v.v[i].rc >= 0) {
			c->state = 1;
			x->st->bytes += ext;
		} else if (v.v[i].medium) {
			c->state = 2;
			x->st->medium++;
		} else if (!lay_is_dev_error(v.v[i].rc)) {
			rc = (int)v.v[i].rc;
		}
	}
	lay_copv_free(&v);
	return rc;
}

static int scrub_row(struct scrub *x, const struct lay_info *fi, const struct lay_map *lm,
		     unsigned g, uint64_t row, size_t ext, uint8_t *bufs, uint8_t *work)
{
	struct copy cp[OSDFS_LAYOUT_MAX_DEVICES];
	struct unit un[OSDFS_LAYOUT_MAX_DEVICES];
	int rc = read_row(x, fi, lm, g, row, ext, cp, bufs);

	if (rc < 0)
		return rc;
	x->st->rows++;
	for (unsigned p = 0; p < lm->W; p++)
		vote(&cp[p * lm->M], lm->M, ext, &un[p]);
	if (lm->P)
		rc = solve_row(x, fi, lm, g, row, cp, un, ext, work);
	for (unsigned p = 0; rc == 0 && p < lm->W; p++) {
		if (un[p].ambiguous && !un[p].val) {
			/* copies disagree, no majority, no parity: report, never guess */
			x->st->mismatches++;
			x->st->unrepaired++;
			lay_event(x->L, OSDFS_LAYOUT_EV_MISMATCH, -1, fi->oid,
				  lay_row_logical(lm, g, row) * lm->Wd * lm->su,
				  "row %llu: the copies of a unit disagree, no majority",
				  (unsigned long long)row);
			continue;
		}
		for (unsigned m = 0; m < lm->M; m++) {
			struct copy *c = &cp[p * lm->M + m];

			if (c->state < 2)
				continue;
			x->st->mismatches += c->state == 3;
			if (un[p].val) {
				fix_copy(x, fi, lm, row, c, un[p].val, ext);
				continue;
			}
			x->st->unrepaired++;
			lay_event(x->L, OSDFS_LAYOUT_EV_UNRECOVERABLE, -1, fi->oid,
				  lay_row_logical(lm, g, row) * lm->Wd * lm->su,
				  "row %llu: no good copy of a unit", (unsigned long long)row);
		}
	}
	return 0;
}

static int scrub_file(struct scrub *x, struct lay_info *fi)
{
	struct lay_map lm;
	uint64_t size;
	uint8_t *bufs, *work;
	int rc = lay_map_resolve(&lm, &fi->map, x->L->table.ndev) < 0 ? -EUCLEAN : 0;

	if (rc == 0)
		rc = lay_file_size(x->L, fi, &size);
	if (rc < 0)
		return rc;
	bufs = malloc((size_t)lm.W * lm.M * lm.su);
	work = malloc((size_t)(2 * lm.W + 2) * lm.su);
	rc = bufs && work ? 0 : -ENOMEM;
	for (unsigned g = 0; rc == 0 && g < lm.G; g++) {
		uint64_t rows = 0;

		for (unsigned p = 0; p < lm.W; p++) {
			uint64_t cl = lay_comp_len(&lm, lay_comp(&lm, g, p, 0), size);
			uint64_t r = (cl + lm.su - 1) / lm.su;

			rows = r > rows ? r : rows;
		}
		for (uint64_t row = 0; rc == 0 && row < rows; row++) {
			size_t ext = lay_row_extent(&lm, g, row, size);

			if (ext)
				rc = scrub_row(x, fi, &lm, g, row, ext, bufs, work);
		}
	}
	free(bufs);
	free(work);
	return rc;
}

/* One chunk of every copy of metadata object @p oid: majority wins, bad or
 * unreadable copies get the majority's bytes. */
static int scrub_meta_chunk(struct scrub *x, uint64_t oid, unsigned first, unsigned count,
			    uint64_t off, size_t len, uint8_t *bufs)
{
	struct copy cp[OSDFS_LAYOUT_MAX_DEVICES];
	struct unit un;
	struct lay_copv v = { 0 };
	int rc = 0;

	for (unsigned j = 0; j < count; j++) {
		unsigned s = (first + j) % x->L->table.ndev;
		struct lay_cop *op;

		cp[j] = (struct copy){ s, 0, bufs + (size_t)j * len };
		if (!lay_readable(x->L, s))
			continue;
		op = lay_copv_add(&v, LAY_READ, s, oid);
		if (!op || lay_cop_iov(op, cp[j].buf, len) < 0) {
			lay_copv_free(&v);
			return -ENOMEM;
		}
		op->comp = j;
		op->off = off;
	}
	lay_copv_run(x->L, &v);
	for (size_t i = 0; i < v.n && rc == 0; i++) {
		struct copy *c = &cp[v.v[i].comp];

		c->state = v.v[i].rc >= 0 ? 1 : v.v[i].medium ? 2 : 0;
		x->st->bytes += v.v[i].rc >= 0 ? len : 0;
		x->st->medium += (uint64_t)v.v[i].medium;
		if (v.v[i].rc < 0 && !v.v[i].medium && !lay_is_dev_error(v.v[i].rc))
			rc = (int)v.v[i].rc;
	}
	lay_copv_free(&v);
	if (rc < 0)
		return rc;
	vote(cp, count, len, &un);
	if (un.ambiguous) {
		/* copies disagree without a majority: report, never guess */
		x->st->mismatches++;
		x->st->unrepaired++;
		lay_event(x->L, OSDFS_LAYOUT_EV_MISMATCH, -1, oid, off,
			  "metadata copies of bytes %llu+%zu disagree, no majority",
			  (unsigned long long)off, len);
	}
	for (unsigned j = 0; j < count; j++) {
		struct iovec iov = { (void *)un.val, len };
		unsigned s = cp[j].comp;

		if (cp[j].state < 2)
			continue;
		x->st->mismatches += cp[j].state == 3;
		if (!un.val) {
			x->st->unrepaired++;
			lay_event(x->L, OSDFS_LAYOUT_EV_UNRECOVERABLE, (int)s, oid, off,
				  "metadata copy bytes %llu+%zu bad and no good copy",
				  (unsigned long long)off, len);
		} else if (x->flags & OSDFS_LAYOUT_SCRUB_DRY_RUN) {
			x->st->unrepaired++;
			lay_event(x->L, OSDFS_LAYOUT_EV_REPAIR_FAILED, (int)s, oid, off,
				  "metadata copy bytes %llu+%zu bad (dry run: not rewritten)",
				  (unsigned long long)off, len);
		} else if (lay_heal_meta(x->L, s, oid, off, &iov, 1, len) == 0) {
			x->st->repaired++;
		} else {
			x->st->unrepaired++;
		}
	}
	return 0;
}

static int scrub_meta(struct scrub *x, uint64_t oid)
{
	struct lay *L = x->L;
	unsigned first = (unsigned)(oid % L->table.ndev), count = lay_meta_copies(L, oid);
	uint64_t size = 0, sz;
	uint8_t *bufs;
	int rc = 0, sized = 0;

	for (unsigned j = 0; j < count; j++) {
		unsigned s = (first + j) % L->table.ndev;

		if (!lay_readable(L, s) || L->dev[s].ops->size(L->dev[s].impl, oid, &sz) < 0)
			continue;
		if (sized && sz != size) {
			x->st->mismatches++;
			x->st->unrepaired++;
			lay_event(L, OSDFS_LAYOUT_EV_MISMATCH, (int)s, oid, 0,
				  "metadata copy is %llu bytes, another %llu",
				  (unsigned long long)sz, (unsigned long long)size);
		}
		size = sz > size ? sz : size;
		sized = 1;
	}
	x->st->rows++;
	bufs = size ? malloc((size_t)count * META_CHUNK) : NULL;
	if (size && !bufs)
		return -ENOMEM;
	for (uint64_t off = 0; rc == 0 && off < size; off += META_CHUNK)
		rc = scrub_meta_chunk(x, oid, first, count, off,
				      size - off < META_CHUNK ? (size_t)(size - off) : META_CHUNK,
				      bufs);
	free(bufs);
	return rc;
}

/* One object under its lock: shared, since repairs only write back what the
 * devices should hold (writers, which change it, take the lock exclusive). */
static int scrub_object(struct scrub *x, uint64_t oid)
{
	pthread_rwlock_t *lk = lay_lock_of(x->L, oid);
	struct lay_info fi;
	int rc;

	pthread_rwlock_rdlock(lk);
	rc = lay_info_get(x->L, oid, &fi);
	if (rc == 0)
		rc = fi.file ? scrub_file(x, &fi) : scrub_meta(x, oid);
	pthread_rwlock_unlock(lk);
	return rc == -ENOENT ? 0 : rc; /* removed meanwhile */
}

OSD_EXTERN int osdfs_layout_scrub(osdfs_backend *be, unsigned flags,
				  struct osdfs_layout_scrub_stats *st,
				  void (*progress)(const struct osdfs_layout_scrub_stats *st,
						   void *payload),
				  void *payload)
{
	struct osdfs_layout_scrub_stats local;
	struct scrub x = { lay_of(be), flags, st ? st : &local };
	uint64_t ids[256], start = 0, next = 0;
	size_t n;
	int rc;

	memset(x.st, 0, sizeof(*x.st));
	if (!x.L || !x.L->formatted || (flags & ~OSDFS_LAYOUT_SCRUB_DRY_RUN))
		return -EINVAL;
	do {
		rc = lay_be_list(x.L, start, ids, 256, &n, &next);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			rc = scrub_object(&x, ids[i]);
			x.st->objects++;
			if (progress)
				progress(x.st, payload);
		}
		start = next;
	} while (rc == 0 && next);
	lay_health_sync(x.L);
	if (rc == 0 && x.st->unrepaired)
		rc = -EIO;
	return rc;
}
