/*
 * Whether one device is a member of a layout: the device table lives on the
 * superblock object of every member (docs/layout.md), so its presence there
 * is the mark. Tools and osdfs_open_path() ask before treating a device as a
 * plain filesystem; mkfs drops an old table before a new filesystem.
 */
#include <errno.h>
#include <osdfs/layout.h>

int osdfs_layout_is_member(osdfs_backend *child)
{
	uint8_t buf[8];
	struct osdfs_attr a = { OSDFS_LAYOUT_TABLE_PAGE, OSDFS_LAYOUT_TABLE_NUMBER, buf, sizeof(buf) };
	int rc;

	if (!child)
		return -EINVAL;
	rc = osdfs_backend_ops_of(child)->get_attrs(osdfs_backend_impl(child), OSDFS_LAYOUT_TABLE_OID,
						     &a, 1);
	if (rc == -ENOENT)
		return 0;
	return rc < 0 ? rc : a.len > 0;
}

int osdfs_layout_forget_member(osdfs_backend *child)
{
	struct osdfs_attr a = { OSDFS_LAYOUT_TABLE_PAGE, OSDFS_LAYOUT_TABLE_NUMBER, NULL, 0 };
	int rc = osdfs_layout_is_member(child);

	if (rc <= 0)
		return rc;
	return osdfs_backend_ops_of(child)->set_attrs(osdfs_backend_impl(child), OSDFS_LAYOUT_TABLE_OID,
						       &a, 1);
}
