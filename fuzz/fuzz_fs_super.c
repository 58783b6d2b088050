/*
 * The osdfs superblock object (docs/osdfs-format.md section 2) from
 * arbitrary bytes.
 *
 * First the decoders themselves (osdfs__super_decode, _counters_decode,
 * _mount_decode): whatever they accept must re-encode to bytes that decode
 * to the same values. Then the same bytes replace one attribute of the
 * superblock object of a fresh filesystem (fuzz_fs_common.h), which is
 * mounted, walked and, read-write, changed (which also runs orphan
 * recovery and the counter reservation): a damaged superblock must fail the
 * mount with an error (EUCLEAN, EPROTONOSUPPORT, EROFS, EBUSY), never crash,
 * loop or leak.
 *
 * Input layout:
 *   byte 0   bits 0-1: which attribute: 0 superblock, 1 counters,
 *                      2 mount record, 3 orphan list
 *            bit 2: mount with OSDFS_MOUNT_FORCE
 *            bit 3: mount read-only
 *   rest     the attribute value (page 0x10000)
 */
#include "fuzz_fs_common.h"

#define SEL_FORCE 0x4
#define SEL_RDONLY 0x8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_super(const uint8_t *data, size_t size)
{
	struct osdfs__super a, b;
	uint8_t enc[OSDFS__SUPER_LEN], enc2[OSDFS__SUPER_LEN];

	if (osdfs__super_decode(&a, data, size) != 0)
		return;
	if (memchr(a.label, 0, sizeof(a.label)) == NULL)
		fzfs_fail("label not terminated", -EUCLEAN);
	osdfs__super_encode(enc, &a);
	if (osdfs__super_decode(&b, enc, sizeof(enc)) != 0)
		fzfs_fail("re-encoded superblock does not decode", -EUCLEAN);
	osdfs__super_encode(enc2, &b);
	if (memcmp(enc, enc2, sizeof(enc)) != 0)
		fzfs_fail("superblock encoding is not stable", -EUCLEAN);
}

static void check_counters(const uint8_t *data, size_t size)
{
	struct osdfs__counters a, b;
	uint8_t enc[OSDFS__COUNTERS_LEN];

	if (osdfs__counters_decode(&a, data, size) != 0)
		return;
	osdfs__counters_encode(enc, &a);
	if (osdfs__counters_decode(&b, enc, sizeof(enc)) != 0 || a.next_ino != b.next_ino ||
	    a.next_gen != b.next_gen)
		fzfs_fail("counters do not round-trip", -EUCLEAN);
}

static void check_mount(const uint8_t *data, size_t size)
{
	struct osdfs__mount_rec a, b;
	uint8_t enc[OSDFS__MOUNT_LEN];

	if (osdfs__mount_decode(&a, data, size) != 0)
		return;
	if (memchr(a.host, 0, sizeof(a.host)) == NULL)
		fzfs_fail("host not terminated", -EUCLEAN);
	osdfs__mount_encode(enc, &a);
	/* a version 1 record re-encodes as version 2 with no lease (zeros) */
	if (osdfs__mount_decode(&b, enc, sizeof(enc)) != 0 || a.mount_id != b.mount_id ||
	    a.time_sec != b.time_sec || a.pid != b.pid || strcmp(a.host, b.host) != 0 ||
	    a.lease_sec != b.lease_sec || a.renewed_sec != b.renewed_sec || a.pidns != b.pidns ||
	    b.version != 2)
		fzfs_fail("mount record does not round-trip", -EUCLEAN);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t nums[4] = { OSDFS__ATTR_SUPER, OSDFS__ATTR_COUNTERS,
					  OSDFS__ATTR_MOUNT, OSDFS__ATTR_ORPHANS };
	struct fzfs f;
	unsigned int flags = 0;
	uint8_t sel;

	if (size < 1)
		return 0;
	sel = data[0];
	data++;
	size--;
	check_super(data, size);
	check_counters(data, size);
	check_mount(data, size);
	if (sel & SEL_FORCE)
		flags |= OSDFS_MOUNT_FORCE;
	if (sel & SEL_RDONLY)
		flags |= OSDFS_MOUNT_RDONLY;
	fzfs_build(&f);
	fzfs_set_attr(&f, 0, OSDFS__PAGE_SUPER, nums[sel & 3], data, size);
	(void)fzfs_exercise(&f, flags);
	fzfs_free(&f);
	return 0;
}
