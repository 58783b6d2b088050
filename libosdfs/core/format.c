/*
 * Encoders and decoders of the osdfs on-object structures, everything
 * core/format.h declares: superblock, counters, mount record, inode,
 * directory header, directory records and blocks, the name hash and the
 * index attribute numbers. Decoders check versions and lengths and return
 * -EUCLEAN for anything malformed, so a corrupt attribute never reaches the
 * rest of the filesystem.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>

#include "core/format.h"
#include "checksum/crc32c.h"
#include "lebytes.h"

static void put_ts(uint8_t *sec, uint8_t *nsec, const struct osdfs__ts *ts)
{
	osdfs__put_le64(sec, (uint64_t)ts->sec);
	osdfs__put_le32(nsec, ts->nsec);
}

static int get_ts(struct osdfs__ts *ts, const uint8_t *sec, const uint8_t *nsec)
{
	ts->sec = (int64_t)osdfs__get_le64(sec);
	ts->nsec = osdfs__get_le32(nsec);
	return ts->nsec < 1000000000u ? 0 : -EUCLEAN;
}

void osdfs__super_encode(uint8_t out[OSDFS__SUPER_LEN], const struct osdfs__super *sb)
{
	memset(out, 0, OSDFS__SUPER_LEN);
	memcpy(out, OSDFS__MAGIC, 8);
	osdfs__put_le16(out + 8, (uint16_t)sb->version);
	osdfs__put_le16(out + 10, OSDFS__SUPER_LEN);
	osdfs__put_le32(out + 12, sb->block_size);
	osdfs__put_le64(out + 16, sb->compat);
	osdfs__put_le64(out + 24, sb->ro_compat);
	osdfs__put_le64(out + 32, sb->incompat);
	memcpy(out + 40, sb->uuid, 16);
	osdfs__put_le64(out + 56, sb->hash_k0);
	osdfs__put_le64(out + 64, sb->hash_k1);
	osdfs__put_le64(out + 72, sb->root_ino);
	osdfs__put_le64(out + 80, (uint64_t)sb->mkfs_sec);
	osdfs__put_le32(out + 88, sb->mkfs_nsec);
	memcpy(out + 96, sb->label, strnlen(sb->label, 63));
}

int osdfs__super_decode(struct osdfs__super *sb, const uint8_t *in, size_t len)
{
	if (len < 12 || memcmp(in, OSDFS__MAGIC, 8) != 0)
		return -EUCLEAN;
	memset(sb, 0, sizeof(*sb));
	sb->version = osdfs__get_le16(in + 8);
	if (sb->version != OSDFS__FORMAT_VERSION)
		return -EPROTONOSUPPORT;
	if (osdfs__get_le16(in + 10) < OSDFS__SUPER_LEN || len < OSDFS__SUPER_LEN)
		return -EUCLEAN;
	sb->block_size = osdfs__get_le32(in + 12);
	sb->compat = osdfs__get_le64(in + 16);
	sb->ro_compat = osdfs__get_le64(in + 24);
	sb->incompat = osdfs__get_le64(in + 32);
	memcpy(sb->uuid, in + 40, 16);
	sb->hash_k0 = osdfs__get_le64(in + 56);
	sb->hash_k1 = osdfs__get_le64(in + 64);
	sb->root_ino = osdfs__get_le64(in + 72);
	sb->mkfs_sec = (int64_t)osdfs__get_le64(in + 80);
	sb->mkfs_nsec = osdfs__get_le32(in + 88);
	memcpy(sb->label, in + 96, 63);
	sb->label[63] = '\0';
	if (sb->block_size < 1024 || sb->block_size > 32768 ||
	    (sb->block_size & (sb->block_size - 1)) != 0 || sb->root_ino < 1 ||
	    sb->root_ino >= OSDFS__FIRST_INO)
		return -EUCLEAN;
	return 0;
}

void osdfs__counters_encode(uint8_t out[OSDFS__COUNTERS_LEN], const struct osdfs__counters *c)
{
	memset(out, 0, OSDFS__COUNTERS_LEN);
	out[0] = 1;
	osdfs__put_le64(out + 8, c->next_ino);
	osdfs__put_le64(out + 16, c->next_gen);
}

int osdfs__counters_decode(struct osdfs__counters *c, const uint8_t *in, size_t len)
{
	if (len < OSDFS__COUNTERS_LEN || in[0] != 1)
		return -EUCLEAN;
	c->next_ino = osdfs__get_le64(in + 8);
	c->next_gen = osdfs__get_le64(in + 16);
	if (c->next_ino < OSDFS__FIRST_INO || c->next_ino > OSDFS__MAX_INO)
		return -EUCLEAN;
	return 0;
}

void osdfs__mount_encode(uint8_t out[OSDFS__MOUNT_LEN], const struct osdfs__mount_rec *m)
{
	memset(out, 0, OSDFS__MOUNT_LEN);
	out[0] = 2;
	osdfs__put_le32(out + 4, m->lease_sec);
	osdfs__put_le64(out + 8, m->mount_id);
	osdfs__put_le64(out + 16, (uint64_t)m->time_sec);
	osdfs__put_le32(out + 24, m->pid);
	osdfs__put_le32(out + 28, m->pidns);
	memcpy(out + 32, m->host, strnlen(m->host, 64));
	osdfs__put_le64(out + 96, (uint64_t)m->renewed_sec);
}

/* Version 1 (96 bytes, no lease) and version 2 (104 bytes or more). */
int osdfs__mount_decode(struct osdfs__mount_rec *m, const uint8_t *in, size_t len)
{
	memset(m, 0, sizeof(*m));
	if (len < OSDFS__MOUNT_V1_LEN || (in[0] != 1 && in[0] != 2) ||
	    (in[0] == 2 && len < OSDFS__MOUNT_LEN))
		return -EUCLEAN;
	m->version = in[0];
	m->mount_id = osdfs__get_le64(in + 8);
	m->time_sec = (int64_t)osdfs__get_le64(in + 16);
	m->pid = osdfs__get_le32(in + 24);
	memcpy(m->host, in + 32, 64);
	m->host[64] = '\0';
	if (m->version == 2) {
		m->lease_sec = osdfs__get_le32(in + 4);
		m->pidns = osdfs__get_le32(in + 28);
		m->renewed_sec = (int64_t)osdfs__get_le64(in + 96);
	}
	return 0;
}

size_t osdfs__inode_encode(uint8_t out[OSDFS__INODE_MAX_LEN], const struct osdfs__dinode *di)
{
	size_t len = OSDFS__INODE_FIXED_LEN + di->inline_len;

	memset(out, 0, OSDFS__INODE_FIXED_LEN);
	out[0] = 1;
	osdfs__put_le16(out + 2, OSDFS__INODE_FIXED_LEN);
	osdfs__put_le32(out + 4, di->mode);
	osdfs__put_le32(out + 8, di->uid);
	osdfs__put_le32(out + 12, di->gid);
	osdfs__put_le32(out + 16, di->nlink);
	osdfs__put_le32(out + 20, di->flags);
	osdfs__put_le64(out + 24, di->size);
	osdfs__put_le64(out + 32, di->generation);
	osdfs__put_le32(out + 40, di->rdev_major);
	osdfs__put_le32(out + 44, di->rdev_minor);
	put_ts(out + 48, out + 80, &di->atime);
	put_ts(out + 56, out + 84, &di->mtime);
	put_ts(out + 64, out + 88, &di->ctime);
	put_ts(out + 72, out + 92, &di->crtime);
	osdfs__put_le64(out + 96, di->parent);
	osdfs__put_le16(out + 104, di->inline_len);
	memcpy(out + OSDFS__INODE_FIXED_LEN, di->inline_data, di->inline_len);
	return len;
}

int osdfs__inode_decode(struct osdfs__dinode *di, const uint8_t *in, size_t len)
{
	size_t fixed;

	if (len < 4 || in[0] != 1)
		return -EUCLEAN;
	fixed = osdfs__get_le16(in + 2);
	if (fixed < OSDFS__INODE_FIXED_LEN || len < fixed)
		return -EUCLEAN;
	memset(di, 0, sizeof(*di));
	di->mode = osdfs__get_le32(in + 4);
	di->uid = osdfs__get_le32(in + 8);
	di->gid = osdfs__get_le32(in + 12);
	di->nlink = osdfs__get_le32(in + 16);
	di->flags = osdfs__get_le32(in + 20);
	di->size = osdfs__get_le64(in + 24);
	di->generation = osdfs__get_le64(in + 32);
	di->rdev_major = osdfs__get_le32(in + 40);
	di->rdev_minor = osdfs__get_le32(in + 44);
	if (get_ts(&di->atime, in + 48, in + 80) || get_ts(&di->mtime, in + 56, in + 84) ||
	    get_ts(&di->ctime, in + 64, in + 88) || get_ts(&di->crtime, in + 72, in + 92))
		return -EUCLEAN;
	di->parent = osdfs__get_le64(in + 96);
	di->inline_len = osdfs__get_le16(in + 104);
	if (di->inline_len > OSDFS__INLINE_MAX || len < fixed + di->inline_len)
		return -EUCLEAN;
	memcpy(di->inline_data, in + fixed, di->inline_len);
	switch (di->mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR:
	case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		return 0;
	default:
		return -EUCLEAN;
	}
}

void osdfs__dirhdr_encode(uint8_t out[OSDFS__DIRHDR_LEN], const struct osdfs__dirhdr *h)
{
	memset(out, 0, OSDFS__DIRHDR_LEN);
	out[0] = 1;
	out[1] = h->depth;
	osdfs__put_le16(out + 2, OSDFS__DIRHDR_LEN);
	osdfs__put_le32(out + 4, h->nblocks);
	osdfs__put_le64(out + 8, h->nentries);
	osdfs__put_le64(out + 16, h->sums_stamp);
}

int osdfs__dirhdr_decode(struct osdfs__dirhdr *h, const uint8_t *in, size_t len)
{
	if (len < OSDFS__DIRHDR_LEN || in[0] != 1 || osdfs__get_le16(in + 2) < OSDFS__DIRHDR_LEN)
		return -EUCLEAN;
	h->depth = in[1];
	h->nblocks = osdfs__get_le32(in + 4);
	h->nentries = osdfs__get_le64(in + 8);
	h->sums_stamp = osdfs__get_le64(in + 16);
	if (h->depth > OSDFS__DIR_MAX_DEPTH || h->nblocks == 0)
		return -EUCLEAN;
	return 0;
}

void osdfs__dirsums_hdr_encode(uint8_t out[OSDFS__DIRSUMS_HDR_LEN],
			       const struct osdfs__dirsums_hdr *h)
{
	memset(out, 0, OSDFS__DIRSUMS_HDR_LEN);
	osdfs__put_le32(out, OSDFS__DIRSUMS_MAGIC);
	out[4] = 1;
	osdfs__put_le16(out + 6, OSDFS__DIRSUMS_HDR_LEN);
	osdfs__put_le32(out + 8, h->nblocks);
	osdfs__put_le32(out + 12, h->sum_len);
	osdfs__put_le64(out + 16, h->stamp);
	osdfs__put_le32(out + 24, h->crc);
}

int osdfs__dirsums_hdr_decode(struct osdfs__dirsums_hdr *h, const uint8_t *in, size_t len)
{
	if (len < OSDFS__DIRSUMS_HDR_LEN || osdfs__get_le32(in) != OSDFS__DIRSUMS_MAGIC ||
	    in[4] != 1 || osdfs__get_le16(in + 6) != OSDFS__DIRSUMS_HDR_LEN)
		return -EUCLEAN;
	h->nblocks = osdfs__get_le32(in + 8);
	h->sum_len = osdfs__get_le32(in + 12);
	h->stamp = osdfs__get_le64(in + 16);
	h->crc = osdfs__get_le32(in + 24);
	return 0;
}

uint32_t osdfs__dirsums_crc(uint8_t *snap, size_t len)
{
	memset(snap + 24, 0, 4);
	return osd__crc32c(0, snap, len);
}

int osdfs__dirsums_verify(uint8_t *snap, size_t len, uint32_t nblocks, uint32_t sum_len,
			  uint64_t stamp)
{
	struct osdfs__dirsums_hdr h;

	if (osdfs__dirsums_hdr_decode(&h, snap, len) < 0 || h.nblocks != nblocks ||
	    h.sum_len != sum_len || h.stamp != stamp ||
	    len != OSDFS__DIRSUMS_HDR_LEN + (size_t)nblocks * sum_len ||
	    h.crc != osdfs__dirsums_crc(snap, len))
		return -EUCLEAN;
	return 0;
}

uint8_t osdfs__ft_of_mode(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return OSDFS__FT_REG;
	case S_IFDIR: return OSDFS__FT_DIR;
	case S_IFCHR: return OSDFS__FT_CHR;
	case S_IFBLK: return OSDFS__FT_BLK;
	case S_IFIFO: return OSDFS__FT_FIFO;
	case S_IFSOCK: return OSDFS__FT_SOCK;
	case S_IFLNK: return OSDFS__FT_LNK;
	default: return OSDFS__FT_UNKNOWN;
	}
}

unsigned int osdfs__dt_of_ft(uint8_t ft)
{
	static const unsigned char dt[] = { DT_UNKNOWN, DT_REG, DT_DIR, DT_CHR,
					    DT_BLK, DT_FIFO, DT_SOCK, DT_LNK };

	return ft <= OSDFS__FT_MAX ? dt[ft] : DT_UNKNOWN;
}

/* ---- directory records, blocks and index (docs/osdfs-format.md section 4) ---- */

void osdfs__rec_get(struct osdfs__rec *r, const uint8_t *p)
{
	r->ino = osdfs__get_le64(p);
	r->rec_len = osdfs__get_le16(p + 8);
	r->name_len = p[10];
	r->ft = p[11];
	r->coll = p[12];
	r->name = (const char *)p + OSDFS__REC_HDR_LEN;
}

void osdfs__rec_put(uint8_t *p, uint64_t ino, uint16_t rec_len, const char *name,
		    uint8_t name_len, uint8_t ft, uint8_t coll)
{
	osdfs__put_le64(p, ino);
	osdfs__put_le16(p + 8, rec_len);
	p[10] = name_len;
	p[11] = ft;
	p[12] = coll;
	p[13] = p[14] = p[15] = 0;
	if (name_len)
		memmove(p + OSDFS__REC_HDR_LEN, name, name_len);
}

uint64_t osdfs__name_hash(const struct osdfs__super *sb, const char *name, size_t len)
{
	return osdfs__siphash(sb->hash_k0, sb->hash_k1, name, len) >> (64 - OSDFS__HASH_BITS);
}

uint32_t osdfs__dirtab_attr(unsigned int depth, uint32_t chunk)
{
	return OSDFS__ATTR_DIRTAB0 + (depth << 12) + chunk;
}

void osdfs__dirblk_init(uint8_t *buf, size_t bsize, uint64_t ino)
{
	memset(buf, 0, bsize);
	osdfs__put_le32(buf, OSDFS__BLOCK_MAGIC);
	buf[4] = 1;
	osdfs__put_le64(buf + 8, ino);
	osdfs__rec_put(buf + OSDFS__BLOCK_HDR_LEN, 0, (uint16_t)(bsize - OSDFS__BLOCK_HDR_LEN),
		NULL, 0, 0, 0);
}

enum osdfs__dirblk_fault osdfs__dirblk_hdr_check(const uint8_t *buf, uint64_t ino)
{
	if (osdfs__get_le32(buf) != OSDFS__BLOCK_MAGIC || buf[4] != 1)
		return OSDFS__DIRBLK_BAD_HEADER;
	if (osdfs__get_le64(buf + 8) != ino)
		return OSDFS__DIRBLK_OTHER_DIR;
	return OSDFS__DIRBLK_OK;
}

enum osdfs__dirblk_fault osdfs__rec_parse(struct osdfs__rec *r, const uint8_t *blk, size_t off,
					 size_t bsize)
{
	if (bsize - off < OSDFS__REC_HDR_LEN)
		return OSDFS__DIRBLK_BAD_REC_LEN; /* a tail too short for a header */
	osdfs__rec_get(r, blk + off);
	return osdfs__rec_check(r, off, bsize);
}

enum osdfs__dirblk_fault osdfs__rec_check(const struct osdfs__rec *r, size_t off, size_t bsize)
{
	if (r->rec_len < OSDFS__REC_HDR_LEN || r->rec_len % 8 || r->rec_len > bsize - off)
		return OSDFS__DIRBLK_BAD_REC_LEN;
	if (!r->ino)
		return OSDFS__DIRBLK_OK; /* free space: only its length counts */
	if (r->name_len == 0 || OSDFS__REC_NEED(r->name_len) > r->rec_len)
		return OSDFS__DIRBLK_BAD_NAME_LEN;
	if (r->ft > OSDFS__FT_MAX || r->ino > OSDFS__MAX_INO)
		return OSDFS__DIRBLK_BAD_INO_FT;
	if (memchr(r->name, '/', r->name_len) || memchr(r->name, 0, r->name_len))
		return OSDFS__DIRBLK_BAD_NAME;
	if (r->name[0] == '.' && (r->name_len == 1 || (r->name_len == 2 && r->name[1] == '.')))
		return OSDFS__DIRBLK_DOT_NAME;
	return OSDFS__DIRBLK_OK;
}
