/*
 * osdfs inodes (docs/osdfs-format.md section 3) from arbitrary bytes.
 *
 * First the decoder itself (osdfs__inode_decode): whatever it accepts must
 * re-encode to bytes that decode to the same inode. Then the same bytes
 * replace the inode attribute of one inode of a fresh filesystem
 * (fuzz_fs_common.h), which is mounted, walked (getattr, readlink, read,
 * readdir, xattrs) and, read-write, changed: a damaged inode must give an
 * error, never a crash, a loop or a leak.
 *
 * Input layout:
 *   byte 0   bits 0-2: which inode: root, /d, /f, /s (fast symlink),
 *            /l (slow symlink), /p (fifo), /c (char device), first file in /d
 *            bit 3: mount read-only
 *   rest     the inode attribute value (page 0x10001, number 1)
 */
#include "fuzz_fs_common.h"

#define SEL_RDONLY 0x8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* decode → encode → decode must be a fixed point. */
static void check_roundtrip(const uint8_t *data, size_t size)
{
	struct osdfs__dinode a, b;
	uint8_t enc[OSDFS__INODE_MAX_LEN], enc2[OSDFS__INODE_MAX_LEN];
	size_t n, n2;

	if (osdfs__inode_decode(&a, data, size) != 0)
		return;
	if (a.inline_len > OSDFS__INLINE_MAX)
		fzfs_fail("decoded inline length", a.inline_len);
	n = osdfs__inode_encode(enc, &a);
	if (n != OSDFS__INODE_FIXED_LEN + a.inline_len)
		fzfs_fail("encoded inode length", (long)n);
	if (osdfs__inode_decode(&b, enc, n) != 0)
		fzfs_fail("re-encoded inode does not decode", -EUCLEAN);
	n2 = osdfs__inode_encode(enc2, &b);
	if (n2 != n || memcmp(enc, enc2, n) != 0)
		fzfs_fail("inode encoding is not stable", (long)n2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t inos[8] = { FZFS_ROOT, FZFS_DIR,  FZFS_FILE, FZFS_FAST,
					  FZFS_SLOW, FZFS_FIFO, FZFS_CHR,  FZFS_DIR_FIRST };
	struct fzfs f;
	uint8_t sel;

	if (size < 1)
		return 0;
	sel = data[0];
	data++;
	size--;
	check_roundtrip(data, size);
	fzfs_build(&f);
	fzfs_set_attr(&f, inos[sel & 7], OSDFS__PAGE_INODE, OSDFS__ATTR_INODE, data, size);
	(void)fzfs_exercise(&f, (sel & SEL_RDONLY) ? OSDFS_MOUNT_RDONLY : 0);
	fzfs_free(&f);
	return 0;
}
