/*
 * osdfs directories (docs/osdfs-format.md section 4) from arbitrary bytes.
 *
 * First the core's record parser itself (osdfs__dirblk_hdr_check,
 * osdfs__rec_parse) on every block of the payload, each in a
 * buffer of exactly one block: whatever it accepts must lie inside the block
 * and the chain must advance. Then, as the table loader and the block walk
 * are internal to libosdfs/core/dir.c, through the public API: a fresh
 * filesystem (fuzz_fs_common.h) gets one directory's object data, and
 * optionally its header and first table chunk, replaced by the input; then
 * it is mounted, listed, looked up, stat'ed and (read-write) changed. Every
 * damaged structure must give an error (EUCLEAN/EIO), never a crash, an
 * endless walk or a leak.
 *
 * Input layout:
 *   byte 0   bit 0: the root directory instead of /d
 *            bit 1: then 24 bytes replace the directory header
 *            bit 2: then a 2-byte little-endian length n and n bytes replace
 *                   table chunk 0 of the (new) header's depth
 *            bit 3: mount read-only
 *            bit 4: the superblock has DIRSUMS, so a stamp in the header
 *                   makes the mount read a name summary snapshot after
 *                   the blocks (section 4.6), and a change void it
 *   rest     the directory object's data (its blocks, and what follows)
 */
#include "fuzz_fs_common.h"

#define SEL_ROOT 0x1
#define SEL_HEADER 0x2
#define SEL_TABLE 0x4
#define SEL_RDONLY 0x8
#define SEL_DIRSUMS 0x10

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void dirsums_on(struct fzfs *f)
{
	struct osdfs__super sb;

	fzfs_super_get(f, &sb);
	sb.ro_compat |= OSDFS__RO_COMPAT_DIRSUMS;
	fzfs_super_put(f, &sb);
}

/* An accepted record must fit its block and, if live, carry a valid name. */
static void check_record(const struct osdfs__rec *r, size_t off)
{
	if (r->rec_len < OSDFS__REC_HDR_LEN || r->rec_len % 8 || r->rec_len > FZFS_BSIZE - off)
		fzfs_fail("accepted record length", r->rec_len);
	if (!r->ino)
		return;
	if (!r->name_len || OSDFS__REC_HDR_LEN + (size_t)r->name_len > r->rec_len)
		fzfs_fail("accepted name length", r->name_len);
	if (r->ft > OSDFS__FT_MAX || r->ino > OSDFS__MAX_INO)
		fzfs_fail("accepted inode or type", r->ft);
	if (memchr(r->name, '/', r->name_len) || memchr(r->name, 0, r->name_len))
		fzfs_fail("accepted name with '/' or NUL", r->name_len);
	if (r->name[0] == '.' && (r->name_len == 1 || (r->name_len == 2 && r->name[1] == '.')))
		fzfs_fail("accepted \".\" or \"..\"", r->name_len);
}

/* Walk every whole block of @p data (directory @p dir) with the core's parser. */
static void check_blocks(const uint8_t *data, size_t size, uint64_t dir)
{
	uint8_t *blk = malloc(FZFS_BSIZE);

	if (!blk)
		fzfs_fail("malloc", -ENOMEM);
	for (size_t b = 0; b + FZFS_BSIZE <= size; b += FZFS_BSIZE) {
		size_t off = OSDFS__BLOCK_HDR_LEN;

		memcpy(blk, data + b, FZFS_BSIZE);
		if (osdfs__dirblk_hdr_check(blk, dir) != OSDFS__DIRBLK_OK)
			continue;
		while (off < FZFS_BSIZE) {
			struct osdfs__rec r;

			if (osdfs__rec_parse(&r, blk, off, FZFS_BSIZE) != OSDFS__DIRBLK_OK)
				break;
			check_record(&r, off);
			off += r.rec_len;
		}
	}
	free(blk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t hdr[OSDFS__DIRHDR_LEN];
	struct fzfs f;
	uint64_t dir;
	uint8_t sel;
	unsigned int depth;

	if (size < 1)
		return 0;
	sel = data[0];
	data++;
	size--;
	dir = (sel & SEL_ROOT) ? FZFS_ROOT : FZFS_DIR;
	fzfs_build(&f);
	if (sel & SEL_DIRSUMS)
		dirsums_on(&f);
	if (fzfs_get_attr(&f, dir, OSDFS__PAGE_DIR, OSDFS__ATTR_DIRHDR, hdr, sizeof(hdr)) !=
	    sizeof(hdr))
		fzfs_fail("directory header", -EUCLEAN);
	if (sel & SEL_HEADER) {
		if (size < sizeof(hdr))
			goto out;
		memcpy(hdr, data, sizeof(hdr));
		fzfs_set_attr(&f, dir, OSDFS__PAGE_DIR, OSDFS__ATTR_DIRHDR, hdr, sizeof(hdr));
		data += sizeof(hdr);
		size -= sizeof(hdr);
	}
	if (sel & SEL_TABLE) {
		size_t n;

		if (size < 2)
			goto out;
		n = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (n > size)
			n = size;
		/* Chunk 0 of the header's depth (a wild depth names an unused number). */
		depth = hdr[1] & 0x1F;
		fzfs_set_attr(&f, dir, OSDFS__PAGE_DIR, OSDFS__ATTR_DIRTAB0 + (depth << 12), data, n);
		data += n;
		size -= n;
	}
	check_blocks(data, size, dir);
	fzfs_set_data(&f, dir, data, size);
	(void)fzfs_exercise(&f, (sel & SEL_RDONLY) ? OSDFS_MOUNT_RDONLY : 0);
out:
	fzfs_free(&f);
	return 0;
}
