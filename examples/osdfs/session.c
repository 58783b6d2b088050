/*
 * One run's filesystem: the devices, the backend on the chosen partition
 * (plain "osd" on one device, a layout over several), and a mount
 * (read-only for queries, so they leave no mount record behind).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "osdfs_tool.h"

const char *tool_fs_name(struct tool *t)
{
	return tc_targets_name(&t->targets);
}

int tool_fail(struct tool *t, int rc, const char *what)
{
	const char *detail = t->fs ? osdfs_error(t->fs) : "";

	if (rc == -EACCES) {
		struct tc_device d;
		char head[4400]; /* command name, ": ", a what of up to 4200 */

		snprintf(head, sizeof(head), "%s: %s", t->cmd, what);
		return tc_device_fail(tc_devset_refusing(&t->set, &t->devopts, &d), rc, head);
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

	snprintf(what, sizeof(what), "%s partition 0x%llx", tool_fs_name(t),
		 (unsigned long long)t->partition);
	return tool_fail(t, rc, what);
}

int tool_backend(struct tool *t, int create, int readonly)
{
	int rc;

	if (tc_targets_check(&t->targets, &t->devopts) < 0)
		return -EINVAL;
	rc = tc_devset_open(&t->set, &t->devopts, &t->targets, t->partition,
			    create ? &t->map : NULL, !t->layout_given, readonly);
	if (rc < 0)
		return rc;
	t->be = t->set.be;
	t->set.be = NULL;
	return 0;
}

void tool_release_backend(struct tool *t)
{
	osdfs_backend_free(t->be);
	t->be = NULL;
	tc_devset_close(&t->set);
}

/* The way out of a refused mount, by what the holder looks like now. */
void tool_holder_hint(struct tool *t, int readonly)
{
	struct osdfs_holder h;

	if (!t->be || osdfs_holder_get(t->be, &h) < 0 || h.state == OSDFS_HOLDER_NONE)
		return;
	if (readonly)
		tc_err("%s: this command only reads: 'osdfs --force %s ...' looks anyway (what "
		       "the holder has not written yet is not seen)", t->cmd, t->cmd);
	else if (h.state == OSDFS_HOLDER_LIVE && h.lease_sec)
		tc_err("%s: the holder is alive: unmount it there first (if it crashed, "
		       "--force takes over once its lease runs out, in %lld s)", t->cmd,
		       (long long)h.expires_in);
	else if (h.state == OSDFS_HOLDER_LIVE)
		tc_err("%s: the holder is a running process of this host: unmount it first",
		       t->cmd);
	else if (!t->force)
		tc_err("%s: the holder is gone: take over with 'osdfs --force %s ...'", t->cmd,
		       t->cmd);
}

int tool_mount(struct tool *t, int readonly)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	char err[256] = "";
	int rc = tool_backend(t, 0, readonly);

	if (rc < 0)
		return rc;
	if (!readonly)
		tool_trap_signals();
	mo.flags = (readonly ? OSDFS_MOUNT_RDONLY : 0) | (t->force ? OSDFS_MOUNT_FORCE : 0);
	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mount(&t->fs, t->be, &mo);
	if (rc < 0) {
		struct tc_device d;

		if (rc == -EACCES)
			tc_device_fail(tc_devset_refusing(&t->set, &t->devopts, &d), rc, t->cmd);
		else if (rc == -EUCLEAN && strstr(err, "no superblock"))
			tc_err("%s: %s partition 0x%llx: %s (create one with 'osdfs mkfs')", t->cmd,
			       tool_fs_name(t), (unsigned long long)t->partition, err);
		else
			tc_err("%s: cannot mount %s partition 0x%llx: %s", t->cmd,
			       tool_fs_name(t), (unsigned long long)t->partition,
			       *err ? err : strerror(-rc));
		if (rc == -EBUSY)
			tool_holder_hint(t, readonly);
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
	tc_devset_close(&t->set);
	return status;
}
