/*
 * fsck: reading one directory (format in docs/osdfs-format.md, code in
 * core/dir.c). The core's block walker is private to dir.c and stops at the
 * first bad record; fsck needs to salvage what is valid around a bad one,
 * so it parses the records itself with the same layout and rules:
 * an index header, a table of block numbers (one attribute chunk per 1024
 * slots), and blocks of records {ino le64, rec_len le16, name_len, ft,
 * coll, 3 zero bytes, name}. With a sound index a record counts only if the
 * table routes its name's hash to its block (others are stale leftovers of
 * an interrupted split); with a corrupt index every valid record counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lebytes.h"
#include "fsck/fsck_state.h"

#define HBITS OSDFS__HASH_BITS

struct dscan {
	struct fsck *f;
	struct fsck_inode *dp;
	struct osdfs__dirhdr dh;
	uint32_t *table;      /* NULL when the index is unusable */
	uint32_t bsize;
	size_t block_first;   /* first entry taken from the block being scanned */
	char path[512];
};

static void corrupt(struct dscan *s, const char *fmt, const char *detail, uint64_t n)
{
	char what[160];

	if (s->dp->dir_bad)
		return; /* one finding per directory: it is rebuilt as a whole */
	snprintf(what, sizeof(what), fmt, detail, (unsigned long long)n);
	fsck__finding(s->f, OSDFS_FSCK_CORRUPT_DIR, "directory %s (inode %llu): %s", s->path,
		      (unsigned long long)s->dp->ino, what);
	s->dp->dir_bad = 1;
}

static uint32_t chunk_attr(unsigned int depth, uint32_t chunk)
{
	return OSDFS__ATTR_DIRTAB0 + (depth << 12) + chunk;
}

/* Loads header and table; on any inconsistency s->table stays NULL. */
static int load_index(struct dscan *s)
{
	uint8_t hbuf[64], *buf;
	struct osdfs_attr a = { OSDFS__PAGE_DIR, OSDFS__ATTR_DIRHDR, hbuf, sizeof(hbuf) };
	uint64_t oid = OSDFS__OID_BASE + s->dp->ino;
	size_t n;
	int rc = s->f->ops->get_attrs(s->f->impl, oid, &a, 1);

	if (rc < 0)
		return rc;
	if (a.len > sizeof(hbuf) || osdfs__dirhdr_decode(&s->dh, hbuf, a.len) < 0) {
		corrupt(s, "%s", "missing or corrupt index header", 0);
		return 0;
	}
	n = (size_t)1 << s->dh.depth;
	s->table = malloc(n * sizeof(uint32_t));
	buf = malloc(OSDFS__DIRTAB_CHUNK * 4);
	if (!s->table || !buf) {
		free(buf);
		return -ENOMEM;
	}
	for (uint32_t c = 0; (size_t)c * OSDFS__DIRTAB_CHUNK < n; c++) {
		size_t cnt = n - (size_t)c * OSDFS__DIRTAB_CHUNK;

		if (cnt > OSDFS__DIRTAB_CHUNK)
			cnt = OSDFS__DIRTAB_CHUNK;
		a = (struct osdfs_attr){ OSDFS__PAGE_DIR, chunk_attr(s->dh.depth, c), buf,
					 OSDFS__DIRTAB_CHUNK * 4 };
		rc = s->f->ops->get_attrs(s->f->impl, oid, &a, 1);
		if (rc < 0)
			break;
		if (a.len != cnt * 4) {
			corrupt(s, "%s %llu", "wrong length of index table chunk", c);
			goto bad;
		}
		for (size_t i = 0; i < cnt; i++) {
			uint32_t b = osdfs__get_le32(buf + 4 * i);

			if (b >= s->dh.nblocks) {
				corrupt(s, "%s %llu", "index names a block past the end:", b);
				goto bad;
			}
			s->table[(size_t)c * OSDFS__DIRTAB_CHUNK + i] = b;
		}
	}
	if (rc == 0 && (uint64_t)s->dh.nblocks * s->bsize > s->dp->objlen) {
		corrupt(s, "%s (%llu bytes)", "object shorter than its blocks", s->dp->objlen);
		goto bad;
	}
	free(buf);
	return rc;
bad:
	free(buf);
	free(s->table);
	s->table = NULL;
	return 0;
}

static int add_entry(struct dscan *s, const uint8_t *rec, uint8_t nl)
{
	struct fsck_inode *dp = s->dp;
	struct fsck_entry *e;

	/* with a sound index a name can only repeat inside its one block */
	for (size_t i = s->table ? s->block_first : 0; i < dp->nents; i++) {
		if (dp->ents[i].namelen == nl && memcmp(dp->ents[i].name, rec + 16, nl) == 0) {
			fsck__finding(s->f, OSDFS_FSCK_DUPLICATE_ENTRY,
				      "directory %s (inode %llu): name '%.*s' stored twice",
				      s->path, (unsigned long long)dp->ino, (int)nl,
				      (const char *)rec + 16);
			dp->dir_rebuild = 1;
			return 0;
		}
	}
	if ((dp->nents & (dp->nents + 1)) == 0 || dp->nents == 0) {
		size_t ncap = dp->nents ? 2 * (dp->nents + 1) : 16;
		struct fsck_entry *n = realloc(dp->ents, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		dp->ents = n;
	}
	e = &dp->ents[dp->nents++];
	memset(e, 0, sizeof(*e));
	e->ino = osdfs__get_le64(rec);
	e->ft = rec[11];
	e->namelen = nl;
	memcpy(e->name, rec + 16, nl);
	e->name[nl] = '\0';
	return 0;
}

/* Is the record's name one the core accepts? Reports "." and "..". */
static int rec_valid(struct dscan *s, const uint8_t *r, uint16_t rl, uint32_t blk, size_t off)
{
	uint8_t nl = r[10];
	const char *name = (const char *)r + 16;

	if (nl == 0 || ((16u + nl + 7u) & ~7u) > rl || r[11] > OSDFS__FT_MAX ||
	    osdfs__get_le64(r) > OSDFS__MAX_INO) {
		corrupt(s, "%s %llu", "bad record in block", blk);
		return 0;
	}
	if (name[0] == '.' && (nl == 1 || (nl == 2 && name[1] == '.'))) {
		fsck__finding(s->f, OSDFS_FSCK_DUPLICATE_ENTRY,
			      "directory %s (inode %llu): stored '%.*s' record in block %u offset %zu",
			      s->path, (unsigned long long)s->dp->ino, (int)nl, name, blk, off);
		s->dp->dir_bad = 1;
		return 0;
	}
	if (memchr(name, '/', nl) || memchr(name, 0, nl)) {
		corrupt(s, "%s %llu", "name with '/' or NUL in block", blk);
		return 0;
	}
	return 1;
}

/*
 * After a bad record length the chain is broken: look for the next record
 * at an 8-byte boundary that is plausible in every field and names an
 * existing inode of the type it records, so the entries behind the damage
 * keep their names.
 */
static size_t resync(struct dscan *s, const uint8_t *buf, size_t off)
{
	for (off += 8; off + OSDFS__REC_HDR_LEN <= s->bsize; off += 8) {
		const uint8_t *r = buf + off;
		uint16_t rl = osdfs__get_le16(r + 8);
		uint8_t nl = r[10];
		const struct fsck_inode *t;

		if (rl < OSDFS__REC_HDR_LEN || rl % 8 || rl > s->bsize - off || nl == 0 ||
		    ((16u + nl + 7u) & ~7u) > rl || r[13] || r[14] || r[15] ||
		    memchr(r + 16, '/', nl) || memchr(r + 16, 0, nl))
			continue;
		t = fsck__find(s->f, osdfs__get_le64(r));
		if (t && !t->bad && osdfs__ft_of_mode(t->d.mode) == r[11])
			return off;
	}
	return s->bsize;
}

static int scan_block(struct dscan *s, uint32_t blk, const uint8_t *buf)
{
	size_t off = OSDFS__BLOCK_HDR_LEN;

	s->block_first = s->dp->nents;
	if (osdfs__get_le32(buf) != OSDFS__BLOCK_MAGIC || buf[4] != 1 ||
	    osdfs__get_le64(buf + 8) != s->dp->ino) {
		corrupt(s, "%s %llu", "bad header in block", blk);
		return 0;
	}
	while (off < s->bsize) {
		const uint8_t *r = buf + off;
		uint16_t rl = osdfs__get_le16(r + 8);
		int rc;

		if (rl < OSDFS__REC_HDR_LEN || rl % 8 || rl > s->bsize - off) {
			corrupt(s, "%s %llu", "bad record length in block", blk);
			off = resync(s, buf, off);
			continue;
		}
		off += rl;
		if (osdfs__get_le64(r) == 0 || !rec_valid(s, r, rl, blk, off - rl))
			continue;
		if (s->table) {
			uint64_t h = osdfs__siphash(s->f->sb.hash_k0, s->f->sb.hash_k1, r + 16,
						    r[10]) >> (64 - HBITS);

			if (s->table[h >> (HBITS - s->dh.depth)] != blk)
				continue; /* stale copy left by a split */
		}
		rc = add_entry(s, r, r[10]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int fsck__scan_dir(struct fsck *f, struct fsck_inode *dp)
{
	struct dscan s = { .f = f, .dp = dp, .bsize = f->sb.block_size };
	uint64_t nblocks;
	uint8_t *buf, *named;
	int rc;

	fsck__dir_path(f, dp, s.path, sizeof(s.path));
	rc = load_index(&s);
	if (rc < 0)
		goto out;
	nblocks = s.table ? s.dh.nblocks : dp->objlen / s.bsize;
	if (nblocks > (1u << 22))
		nblocks = 1u << 22; /* salvage: a corrupt length must not run away */
	buf = malloc(s.bsize);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	named = calloc(nblocks ? nblocks : 1, 1);
	if (!named) {
		free(buf);
		rc = -ENOMEM;
		goto out;
	}
	/* blocks no table slot names hold nothing live */
	for (size_t i = 0; s.table && i < ((size_t)1 << s.dh.depth); i++)
		named[s.table[i]] = 1;
	for (uint64_t b = 0; b < nblocks && rc == 0; b++) {
		struct iovec iov = { buf, s.bsize };
		ssize_t n;

		if (s.table && !named[b])
			continue;
		n = f->ops->read(f->impl, OSDFS__OID_BASE + dp->ino, b * s.bsize, &iov, 1);
		if (n < 0)
			rc = (int)n;
		else if ((size_t)n != s.bsize)
			corrupt(&s, "%s %llu", "short block", b);
		else
			rc = scan_block(&s, (uint32_t)b, buf);
	}
	free(named);
	free(buf);
	if (rc == 0 && !dp->dir_bad && s.table) {
		if (s.dh.nentries != dp->nents) {
			fsck__finding(f, OSDFS_FSCK_COUNTERS,
				      "directory %s (inode %llu): index counts %llu entries, found %zu",
				      s.path, (unsigned long long)dp->ino,
				      (unsigned long long)s.dh.nentries, dp->nents);
			dp->dir_rebuild = 1;
		}
		if (dp->d.size != (uint64_t)s.dh.nblocks * s.bsize) {
			fsck__finding(f, OSDFS_FSCK_BAD_SIZE,
				      "directory %s (inode %llu): size %llu, blocks hold %llu",
				      s.path, (unsigned long long)dp->ino,
				      (unsigned long long)dp->d.size,
				      (unsigned long long)s.dh.nblocks * s.bsize);
			dp->dir_rebuild = 1;
		}
	}
	if (dp->dir_bad)
		dp->dir_rebuild = 1;
out:
	free(s.table);
	f->rep->directories++;
	f->rep->entries += dp->nents;
	return rc;
}
