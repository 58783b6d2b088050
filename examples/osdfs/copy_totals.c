/*
 * What a cp will copy, counted before it starts, so its progress line can
 * show the share done and the time left: the non-directories (each counts as
 * one file, as the copy counts them) and the bytes of regular files. Only
 * when the line is shown; a count that fails leaves the total unknown.
 */
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include "osdfs_tool.h"

static uint64_t scan_files, scan_bytes;

static int count_local(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_D || type == FTW_DP || type == FTW_DNR)
		return 0;
	scan_files++;
	if (S_ISREG(st->st_mode))
		scan_bytes += (uint64_t)st->st_size;
	return 0;
}

void copy_totals_local(struct tc_progress *p, char **srcs, int nsrc, int recursive)
{
	struct stat st;

	scan_files = scan_bytes = 0;
	for (int i = 0; i < nsrc; i++) {
		if (lstat(srcs[i], &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (recursive && nftw(srcs[i], count_local, 32, FTW_PHYS) != 0)
				return;
		} else {
			count_local(srcs[i], &st, FTW_F, NULL);
		}
	}
	tc_progress_set_total(p, scan_files, scan_bytes);
}

static int count_remote(osdfs *fs, const struct osdfs_stat *st, unsigned depth)
{
	struct dir_entry *v;
	size_t n;
	int rc;

	if (!S_ISDIR(st->mode)) {
		scan_files++;
		if (S_ISREG(st->mode))
			scan_bytes += st->size;
		return 0;
	}
	if (depth > OSDFS_PATH_MAX / 2) /* deeper than any path can be */
		return -ELOOP;
	rc = remote_list(fs, st->ino, &v, &n);
	if (rc < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct osdfs_stat sub;

		rc = osdfs_getattr(fs, v[i].ino, &sub);
		if (rc == 0)
			rc = count_remote(fs, &sub, depth + 1);
	}
	dir_entries_free(v, n);
	return rc;
}

void copy_totals_remote(struct tc_progress *p, osdfs *fs, char **srcs, int nsrc, int recursive)
{
	struct osdfs_stat st;

	scan_files = scan_bytes = 0;
	for (int i = 0; i < nsrc; i++) {
		if (osdfs_stat_path(fs, srcs[i], 0, &st) < 0)
			continue;
		if (S_ISDIR(st.mode) && !recursive)
			continue;
		if (count_remote(fs, &st, 0) < 0)
			return;
	}
	tc_progress_set_total(p, scan_files, scan_bytes);
}
