/*
 * Guard rails of the commands that erase (osdfs mkfs, osdctl format,
 * osdfs-mount -o mkfs): what a store directory already holds, so that they
 * refuse to erase a store or to build one among unrelated files unless
 * forced, and can say what would be lost.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "toolcommon.h"

int tc_dir_survey(const char *dir, struct tc_dir_survey *out)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	memset(out, 0, sizeof(*out));
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (strcmp(de->d_name, "superblock") == 0)
			out->store = 1; /* osdtarget's store marks itself with this file */
		if (out->entries++ == 0)
			snprintf(out->example, sizeof(out->example), "%.63s", de->d_name);
	}
	closedir(d);
	return 0;
}

int tc_guard_dir(const char *dir, int force, const char *force_opt)
{
	struct tc_dir_survey s;
	int rc = tc_dir_survey(dir, &s);

	if (rc < 0)
		return tc_err_rc(rc, "%s", dir), rc;
	if (force || s.store || s.entries == 0)
		return 0;
	tc_err("%s is not empty and holds no OSD store (%u entr%s, e.g. '%s'): refusing to "
	       "build a store among them (%s to do it anyway)", dir, s.entries,
	       s.entries == 1 ? "y" : "ies", s.example, force_opt);
	return -ENOTEMPTY;
}
