/*
 * The osdfs on-object format (docs/osdfs-format.md): object ids, attribute
 * pages, and encoders/decoders between host-order structures and the
 * little-endian byte images stored in the backend.
 */
#ifndef OSDFS_CORE_FORMAT_H
#define OSDFS_CORE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <osdfs/layout.h>

/* Object ids: inode number N lives in object OSDFS__OID_BASE + N. */
#define OSDFS__OID_BASE 0x10000ULL
#define OSDFS__SUPER_OID OSDFS__OID_BASE   /* "inode 0" is the superblock */
#define OSDFS__FIRST_INO 2ULL              /* first inode number mkfs hands out */
#define OSDFS__MAX_INO (UINT64_MAX - OSDFS__OID_BASE)

/* Attribute pages (application-client range of user objects). */
#define OSDFS__PAGE_SUPER 0x10000u /* on the superblock object */
#define OSDFS__ATTR_SUPER 1u
#define OSDFS__ATTR_MOUNT 2u
#define OSDFS__ATTR_COUNTERS 3u
#define OSDFS__ATTR_ORPHANS 4u
/* 5 is the layout backend's device table (OSDFS_LAYOUT_TABLE_NUMBER). */
#define OSDFS__PAGE_INODE 0x10001u
#define OSDFS__ATTR_INODE 1u
/* The OSD user object information page and its USED CAPACITY (osd2r01
 * §7.1.2.11, attribute 81h): the object's allocated bytes, 8 bytes. */
#define OSDFS__PAGE_USER_INFO 0x1u
#define OSDFS__ATTR_USED_CAPACITY 0x81u
#define OSDFS__PAGE_DIR 0x10002u
#define OSDFS__ATTR_DIRHDR 1u
#define OSDFS__ATTR_DIRTAB0 2u     /* table chunk i is attribute 2 + i */
#define OSDFS__PAGE_XATTR 0x10003u
#define OSDFS__ATTR_XATTR 1u
/* Page 0x10004 is the layout backend's on every object (OSDFS_LAYOUT_PAGE). */

/* On a layout, the superblock is the object that carries the device table:
 * mkfs creating it is what writes the table (osdfs/layout.h). */
_Static_assert(OSDFS__SUPER_OID == OSDFS_LAYOUT_TABLE_OID &&
	       OSDFS__PAGE_SUPER == OSDFS_LAYOUT_TABLE_PAGE,
	       "the layout's device table lives on the superblock");

#define OSDFS__FORMAT_VERSION 1u
#define OSDFS__MAGIC "OSDFS\x1a\n"   /* 8 bytes with the NUL */
#define OSDFS__INCOMPAT_HASHDIR 0x1ULL
#define OSDFS__INCOMPAT_KNOWN OSDFS__INCOMPAT_HASHDIR
/* Holes are punched by writing zeros: the backend's PUNCH is missing or not
 * standard (probed at mkfs). Read-only compatible: an implementation that
 * does not know it could punch with a PUNCH that corrupts files. */
#define OSDFS__RO_COMPAT_PUNCH_ZEROES 0x1ULL
/* Directories may carry a snapshot of their name summaries (dirsums.c).
 * Read-only compatible: a writer that does not know it would change a
 * directory without voiding its snapshot, whose stale summaries would then
 * hide names from lookups. */
#define OSDFS__RO_COMPAT_DIRSUMS 0x2ULL
#define OSDFS__RO_COMPAT_KNOWN (OSDFS__RO_COMPAT_PUNCH_ZEROES | OSDFS__RO_COMPAT_DIRSUMS)

#define OSDFS__SUPER_LEN 160u
#define OSDFS__COUNTERS_LEN 24u
#define OSDFS__MOUNT_LEN 104u   /* version 2; version 1 records are 96 bytes */
#define OSDFS__MOUNT_V1_LEN 96u
#define OSDFS__INODE_FIXED_LEN 112u
#define OSDFS__INLINE_MAX 160u
#define OSDFS__INODE_MAX_LEN (OSDFS__INODE_FIXED_LEN + OSDFS__INLINE_MAX)
#define OSDFS__DIRHDR_LEN 24u
#define OSDFS__DIRTAB_CHUNK 1024u  /* table entries per chunk attribute */
#define OSDFS__DIR_MAX_DEPTH 20u
#define OSDFS__HASH_BITS 54u
#define OSDFS__BLOCK_HDR_LEN 16u
#define OSDFS__BLOCK_MAGIC 0x4B4C4244u /* "DBLK" */
#define OSDFS__REC_HDR_LEN 16u

/* ext2 directory file types. */
enum {
	OSDFS__FT_UNKNOWN, OSDFS__FT_REG, OSDFS__FT_DIR, OSDFS__FT_CHR,
	OSDFS__FT_BLK, OSDFS__FT_FIFO, OSDFS__FT_SOCK, OSDFS__FT_LNK,
	OSDFS__FT_MAX = OSDFS__FT_LNK
};

struct osdfs__super {
	uint32_t version;
	uint32_t block_size;
	uint64_t compat, ro_compat, incompat;
	uint8_t uuid[16];
	uint64_t hash_k0, hash_k1;
	uint64_t root_ino;
	int64_t mkfs_sec;
	uint32_t mkfs_nsec;
	char label[64]; /* NUL terminated */
};

struct osdfs__counters {
	uint64_t next_ino;
	uint64_t next_gen;
};

struct osdfs__mount_rec {
	uint8_t version;    /* 1: no lease (lease_sec and renewed_sec are 0) */
	uint32_t lease_sec;
	uint64_t mount_id;
	int64_t time_sec;
	uint32_t pid;
	uint32_t pidns;      /* the holder's pid namespace (its inode number); 0 = unknown */
	char host[65];
	int64_t renewed_sec; /* the holder's clock */
};

struct osdfs__ts {
	int64_t sec;
	uint32_t nsec;
};

struct osdfs__dinode {
	uint32_t mode, uid, gid, nlink, flags;
	uint64_t size, generation;
	uint32_t rdev_major, rdev_minor;
	struct osdfs__ts atime, mtime, ctime, crtime;
	uint64_t parent;
	uint16_t inline_len;
	uint8_t inline_data[OSDFS__INLINE_MAX];
};

struct osdfs__dirhdr {
	uint8_t depth;
	uint32_t nblocks;
	uint64_t nentries;
	uint64_t sums_stamp;  /* stamp of a valid summary snapshot; 0: none */
};

/* Name summary snapshot header, at byte nblocks x block size of the
 * directory object (docs/osdfs-format.md 4.6). */
#define OSDFS__DIRSUMS_MAGIC 0x4D555344u /* "DSUM" */
#define OSDFS__DIRSUMS_HDR_LEN 32u
#define OSDFS__DIRSUMS_FACTOR 32u  /* block bytes per byte of a block's summary */
struct osdfs__dirsums_hdr {
	uint32_t nblocks;
	uint32_t sum_len;     /* bytes of one block's summary */
	uint64_t stamp;
	uint32_t crc;         /* CRC32C of header (this field 0) and summaries */
};

void osdfs__super_encode(uint8_t out[OSDFS__SUPER_LEN], const struct osdfs__super *sb);
int osdfs__super_decode(struct osdfs__super *sb, const uint8_t *in, size_t len);
void osdfs__counters_encode(uint8_t out[OSDFS__COUNTERS_LEN], const struct osdfs__counters *c);
int osdfs__counters_decode(struct osdfs__counters *c, const uint8_t *in, size_t len);
void osdfs__mount_encode(uint8_t out[OSDFS__MOUNT_LEN], const struct osdfs__mount_rec *m);
int osdfs__mount_decode(struct osdfs__mount_rec *m, const uint8_t *in, size_t len);
/* Returns the encoded length. */
size_t osdfs__inode_encode(uint8_t out[OSDFS__INODE_MAX_LEN], const struct osdfs__dinode *di);
int osdfs__inode_decode(struct osdfs__dinode *di, const uint8_t *in, size_t len);
void osdfs__dirhdr_encode(uint8_t out[OSDFS__DIRHDR_LEN], const struct osdfs__dirhdr *h);
int osdfs__dirhdr_decode(struct osdfs__dirhdr *h, const uint8_t *in, size_t len);
void osdfs__dirsums_hdr_encode(uint8_t out[OSDFS__DIRSUMS_HDR_LEN],
			       const struct osdfs__dirsums_hdr *h);
int osdfs__dirsums_hdr_decode(struct osdfs__dirsums_hdr *h, const uint8_t *in, size_t len);
/* CRC of a snapshot of @p len bytes (its CRC field zeroed on the way). */
uint32_t osdfs__dirsums_crc(uint8_t *snap, size_t len);
/* 0 if the snapshot @p snap (@p len bytes, CRC field zeroed on the way)
 * is whole and vouches for @p nblocks blocks, @p sum_len bytes each, under
 * @p stamp; else -EUCLEAN. */
int osdfs__dirsums_verify(uint8_t *snap, size_t len, uint32_t nblocks, uint32_t sum_len,
			  uint64_t stamp);
/* 0 if the name summary @p bits (@p sum_len bytes; sums.c) shows no
 * record named @p name, 1 if it may hold one. */
int osdfs__sum_may_hold(const uint8_t *bits, size_t sum_len, const char *name, size_t len);

/* File type of a mode for directory records, and the DT_ value of a record type. */
uint8_t osdfs__ft_of_mode(uint32_t mode);
unsigned int osdfs__dt_of_ft(uint8_t ft);

/* Keyed 64-bit SipHash-2-4 of a name (directory hashing). */
uint64_t osdfs__siphash(uint64_t k0, uint64_t k1, const void *data, size_t len);

/*
 * Directory blocks (dir.c): the one parser and validator of directory
 * records, shared by the core and fsck. A block is a header (magic,
 * version, owning directory) and a chain of records {ino le64, rec_len
 * le16, name_len, ft, coll, 3 zero bytes, name}; ino 0 is free space.
 */
struct osdfs__rec {
	uint64_t ino;
	uint16_t rec_len;
	uint8_t name_len, ft, coll;
	const char *name;   /* points into the block, not NUL-terminated */
};

/* What is wrong with a block header or a record. */
enum osdfs__dirblk_fault {
	OSDFS__DIRBLK_OK,
	OSDFS__DIRBLK_BAD_HEADER,   /* magic or version */
	OSDFS__DIRBLK_OTHER_DIR,    /* the header names another directory */
	OSDFS__DIRBLK_BAD_REC_LEN,  /* the chain of records breaks here */
	OSDFS__DIRBLK_BAD_NAME_LEN,
	OSDFS__DIRBLK_BAD_INO_FT,   /* inode number or file type out of range */
	OSDFS__DIRBLK_BAD_NAME,     /* '/' or NUL in the name */
	OSDFS__DIRBLK_DOT_NAME,     /* "." or "..", which are never stored */
};

/* Decodes the record at @p p (OSDFS__REC_HDR_LEN bytes and the name). */
void osdfs__rec_get(struct osdfs__rec *r, const uint8_t *p);
/* Writes a record header (and @p name_len bytes of name) at @p p. */
void osdfs__rec_put(uint8_t *p, uint64_t ino, uint16_t rec_len, const char *name,
		    uint8_t name_len, uint8_t ft, uint8_t coll);
/* Bytes a record with a @p nl-byte name needs: header and name, 8-aligned. */
#define OSDFS__REC_NEED(nl) ((OSDFS__REC_HDR_LEN + (size_t)(nl) + 7u) & ~(size_t)7u)
/* Checks the header of a block of directory @p ino. */
enum osdfs__dirblk_fault osdfs__dirblk_hdr_check(const uint8_t *buf, uint64_t ino);
/* Checks record @p r found at offset @p off of a block of @p bsize bytes:
 * its length, and for a live record its name and fields. */
enum osdfs__dirblk_fault osdfs__rec_check(const struct osdfs__rec *r, size_t off, size_t bsize);
/* Decodes and checks the record at offset @p off of block @p blk: what a
 * walk over an unchecked block must use, since it never reads past the block
 * (a tail shorter than a record header is a bad record length). */
enum osdfs__dirblk_fault osdfs__rec_parse(struct osdfs__rec *r, const uint8_t *blk, size_t off,
					 size_t bsize);
/* An empty block of directory @p ino: the header and one free record. */
void osdfs__dirblk_init(uint8_t *buf, size_t bsize, uint64_t ino);
/* The OSDFS__HASH_BITS-bit hash of a name with the filesystem's keys. */
uint64_t osdfs__name_hash(const struct osdfs__super *sb, const char *name, size_t len);
/* Attribute number (page OSDFS__PAGE_DIR) of index table chunk @p chunk. */
uint32_t osdfs__dirtab_attr(unsigned int depth, uint32_t chunk);

#endif
