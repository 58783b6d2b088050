/*
 * One run's filesystem: device, osd backend on the chosen partition, and a
 * mount (read-only for queries, so they leave no mount record behind).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "osdfs_tool.h"

int tool_fail(struct tool *t, int rc, const char *what)
{
	const char *detail = t->fs ? osdfs_error(t->fs) : "";

	if (rc == -EACCES) {
		char head[4200];

		snprintf(head, sizeof(head), "%s: %s", t->cmd, what);
		return tc_device_fail(&t->dev, rc, head);
	}
	/* the core's message adds facts (which block, which inode) for damage */
	if ((rc == -EUCLEAN || rc == -EIO) && *detail)
		tc_err("%s: %s: %s (%s)", t->cmd, what, strerror(-rc), detail);
	else
		tc_err("%s: %s: %s", t->cmd, what, strerror(-rc));
	return TC_EXIT_FAILED;
}

int tool_fail_partition(struct tool *t, int rc)
{
	char what[4200];

	snprintf(what, sizeof(what), "%s partition 0x%llx", t->devopts.target_dir,
		 (unsigned long long)t->partition);
	return tool_fail(t, rc, what);
}

int tool_backend(struct tool *t, int create)
{
	int rc;

	if (tc_device_check(&t->devopts) < 0)
		return -EINVAL;
	rc = tc_device_open(&t->dev, &t->devopts, create);
	if (rc < 0)
		return rc;
	rc = osdfs_backend_osd_new(&t->be, t->dev.dev, t->partition);
	if (rc < 0) {
		tc_err_rc(rc, "%s: partition 0x%llx", t->cmd, (unsigned long long)t->partition);
		tc_device_close(&t->dev);
	}
	return rc;
}

void tool_release_backend(struct tool *t)
{
	osdfs_backend_free(t->be);
	t->be = NULL;
	tc_device_close(&t->dev);
}

int tool_mount(struct tool *t, int readonly)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	char err[256] = "";
	int rc = tool_backend(t, 0);

	if (rc < 0)
		return rc;
	mo.flags = readonly ? OSDFS_MOUNT_RDONLY : 0;
	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mount(&t->fs, t->be, &mo);
	if (rc < 0) {
		if (rc == -EACCES)
			tc_device_fail(&t->dev, rc, t->cmd);
		else if (rc == -EUCLEAN && strstr(err, "no superblock"))
			tc_err("%s: %s partition 0x%llx: %s (create one with 'osdfs mkfs')", t->cmd,
			       t->devopts.target_dir, (unsigned long long)t->partition, err);
		else
			tc_err("%s: cannot mount %s partition 0x%llx: %s", t->cmd,
			       t->devopts.target_dir, (unsigned long long)t->partition,
			       *err ? err : strerror(-rc));
		tool_release_backend(t);
		return rc;
	}
	t->be = NULL; /* the mount owns it */
	return 0;
}

int tool_unmount(struct tool *t, int status)
{
	int rc = osdfs_unmount(t->fs);

	t->fs = NULL;
	if (rc < 0) {
		tc_err_rc(rc, "%s: unmount", t->cmd);
		status = TC_EXIT_FAILED;
	}
	tc_device_close(&t->dev);
	return status;
}
