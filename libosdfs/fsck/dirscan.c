/*
 * fsck: reading one directory (format in docs/osdfs-format.md). The core's
 * block walker stops at the first bad record; fsck needs to salvage what is
 * valid around a bad one, so it walks the records itself, decoding and
 * validating each with the core's parser (osdfs__rec_get/osdfs__rec_check
 * in core/dir.c): an index header, a table of block numbers (one attribute
 * chunk per 1024 slots), and blocks of records. With a sound index a record
 * counts only if the table routes its name's hash to its block (others are
 * stale leftovers of an interrupted split); with a corrupt index every
 * valid record counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lebytes.h"
#include "core/fs.h"
#include "fsck/fsck_state.h"

#define HBITS OSDFS__HASH_BITS

struct dscan {
	struct fsck *f;
	struct fsck_inode *dp;
	struct osdfs__dirhdr dh;
	uint32_t *table;      /* NULL when the index is unusable */
	uint32_t bsize;
	size_t block_first;   /* first entry taken from the block being scanned */
	uint8_t *sums;        /* a name summary snapshot that vouches for the blocks */
	uint32_t sum_len;
	uint64_t unsummarized; /* live names a summary of sums lacks */
	char path[512];
};

static void corrupt(struct dscan *s, const char *fmt, const char *detail, uint64_t n)
{
	char what[160];

	if (s->dp->dir_bad)
		return; /* one finding per directory: it is rebuilt as a whole */
	snprintf(what, sizeof(what), fmt, detail, (unsigned long long)n);
	osdfs__fsck_finding(s->f, OSDFS_FSCK_CORRUPT_DIR, "directory %s (inode %llu): %s", s->path,
		      (unsigned long long)s->dp->ino, what);
	s->dp->dir_bad = 1;
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
		a = (struct osdfs_attr){ OSDFS__PAGE_DIR, osdfs__dirtab_attr(s->dh.depth, c), buf,
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

static int add_entry(struct dscan *s, const struct osdfs__rec *r)
{
	struct fsck_dir *dp = s->dp->dir;
	struct fsck_entry *e;

	/* with a sound index a name can only repeat inside its one block */
	for (size_t i = s->table ? s->block_first : 0; i < dp->nents; i++) {
		if (dp->ents[i].namelen == r->name_len &&
		    memcmp(fsck_ent_name(dp, &dp->ents[i]), r->name, r->name_len) == 0) {
			osdfs__fsck_finding(s->f, OSDFS_FSCK_DUPLICATE_ENTRY,
				      "directory %s (inode %llu): name '%.*s' stored twice",
				      s->path, (unsigned long long)s->dp->ino, (int)r->name_len,
				      r->name);
			s->dp->dir_rebuild = 1;
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
	if (dp->names_cap - dp->names_len < (size_t)r->name_len + 1) {
		size_t ncap = dp->names_cap ? 2 * dp->names_cap : 256;
		char *n = realloc(dp->names, ncap);

		if (!n)
			return -ENOMEM;
		dp->names = n;
		dp->names_cap = ncap;
	}
	e = &dp->ents[dp->nents++];
	memset(e, 0, sizeof(*e));
	e->ino = r->ino;
	e->ft = r->ft;
	e->namelen = r->name_len;
	e->name_off = dp->names_len;
	memcpy(dp->names + dp->names_len, r->name, r->name_len);
	dp->names[dp->names_len + r->name_len] = '\0';
	dp->names_len += (size_t)r->name_len + 1;
	return 0;
}

/* Reports what the core's validator found wrong with a live record. */
static void rec_fault(struct dscan *s, const struct osdfs__rec *r, enum osdfs__dirblk_fault why,
		      uint32_t blk, size_t off)
{
	if (why == OSDFS__DIRBLK_DOT_NAME) {
		osdfs__fsck_finding(s->f, OSDFS_FSCK_DUPLICATE_ENTRY,
			      "directory %s (inode %llu): stored '%.*s' record in block %u offset %zu",
			      s->path, (unsigned long long)s->dp->ino, (int)r->name_len, r->name,
			      blk, off);
		s->dp->dir_bad = 1;
	} else if (why == OSDFS__DIRBLK_BAD_NAME) {
		corrupt(s, "%s %llu", "name with '/' or NUL in block", blk);
	} else {
		corrupt(s, "%s %llu", "bad record in block", blk);
	}
}

/*
 * After a bad record length the chain is broken: look for the next record
 * at an 8-byte boundary that the validator accepts (a "." or ".." too: it is
 * reported when scanned), whose padding is zero, and that names an existing
 * inode of the type it records, so the entries behind the damage keep their
 * names.
 */
static size_t resync(struct dscan *s, const uint8_t *buf, size_t off)
{
	for (off += 8; off + OSDFS__REC_HDR_LEN <= s->bsize; off += 8) {
		const uint8_t *p = buf + off;
		const struct fsck_inode *t;
		enum osdfs__dirblk_fault why;
		struct osdfs__rec r;

		osdfs__rec_get(&r, p);
		why = osdfs__rec_check(&r, off, s->bsize);
		if (!r.ino || (why != OSDFS__DIRBLK_OK && why != OSDFS__DIRBLK_DOT_NAME) ||
		    p[13] || p[14] || p[15])
			continue;
		t = osdfs__fsck_find(s->f, r.ino);
		if (t && !t->bad && osdfs__ft_of_mode(t->d.mode) == r.ft)
			return off;
	}
	return s->bsize;
}

static int scan_block(struct dscan *s, uint32_t blk, const uint8_t *buf)
{
	size_t off = OSDFS__BLOCK_HDR_LEN;

	s->block_first = s->dp->dir->nents;
	if (osdfs__dirblk_hdr_check(buf, s->dp->ino) != OSDFS__DIRBLK_OK) {
		corrupt(s, "%s %llu", "bad header in block", blk);
		return 0;
	}
	while (off < s->bsize) {
		enum osdfs__dirblk_fault why;
		struct osdfs__rec r;
		int rc;

		why = osdfs__rec_parse(&r, buf, off, s->bsize);
		if (why == OSDFS__DIRBLK_BAD_REC_LEN) {
			corrupt(s, "%s %llu", "bad record length in block", blk);
			off = resync(s, buf, off);
			continue;
		}
		off += r.rec_len;
		if (!r.ino)
			continue;
		if (why != OSDFS__DIRBLK_OK) {
			rec_fault(s, &r, why, blk, off - r.rec_len);
			continue;
		}
		if (s->table) {
			uint64_t h = osdfs__name_hash(&s->f->sb, r.name, r.name_len);

			if (s->table[h >> (HBITS - s->dh.depth)] != blk)
				continue; /* stale copy left by a split */
		}
		if (s->sums && !osdfs__sum_may_hold(s->sums + OSDFS__DIRSUMS_HDR_LEN +
							    (size_t)blk * s->sum_len,
						    s->sum_len, r.name, r.name_len))
			s->unsummarized++;
		rc = add_entry(s, &r);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void sums_finding(struct dscan *s, const char *what)
{
	osdfs__fsck_finding(s->f, OSDFS_FSCK_CORRUPT_DIR,
			    "directory %s (inode %llu): name summary snapshot %s", s->path,
			    (unsigned long long)s->dp->ino, what);
	s->dp->sums_void = 1;
}

/*
 * The name summary snapshot the header vouches for (osdfs-format.md 4.6),
 * into s->sums. One that fails its checks is a finding, as mounts ignore
 * it: its stamp is voided. A snapshot that lacks a name (scan_block)
 * would hide it from lookups: the same.
 */
static int load_sums(struct dscan *s)
{
	int rc;

	if (!s->table || !s->dh.sums_stamp || !(s->f->sb.ro_compat & OSDFS__RO_COMPAT_DIRSUMS) ||
	    s->dh.nblocks > (1u << 22))
		return 0;
	s->sum_len = s->bsize / OSDFS__DIRSUMS_FACTOR;
	rc = osdfs__dirsums_read(s->f->ops, s->f->impl, s->dp->ino, &s->dh, s->bsize, &s->sums);
	if (rc == -EUCLEAN || rc == -EIO) {
		sums_finding(s, "does not match its directory");
		rc = 0;
	}
	return rc;
}

int osdfs__fsck_scan_dir(struct fsck *f, struct fsck_inode *dp)
{
	struct dscan s = { .f = f, .dp = dp, .bsize = f->sb.block_size };
	uint64_t nblocks;
	uint8_t *buf, *named;
	int rc;

	osdfs__fsck_dir_path(f, dp, s.path, sizeof(s.path));
	rc = load_index(&s);
	if (rc == 0)
		rc = load_sums(&s);
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
	if (rc == 0 && s.unsummarized && !dp->dir_bad) {
		char what[64];

		snprintf(what, sizeof(what), "lacks %llu names",
			 (unsigned long long)s.unsummarized);
		sums_finding(&s, what);
	}
	if (rc == 0 && !dp->dir_bad && s.table) {
		if (s.dh.nentries != dp->dir->nents) {
			osdfs__fsck_finding(f, OSDFS_FSCK_COUNTERS,
				      "directory %s (inode %llu): index counts %llu entries, found %zu",
				      s.path, (unsigned long long)dp->ino,
				      (unsigned long long)s.dh.nentries, dp->dir->nents);
			dp->dir_rebuild = 1;
		}
		if (dp->d.size != (uint64_t)s.dh.nblocks * s.bsize) {
			osdfs__fsck_finding(f, OSDFS_FSCK_BAD_SIZE,
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
	free(s.sums);
	free(s.table);
	f->rep->directories++;
	f->rep->entries += dp->dir->nents;
	return rc;
}
