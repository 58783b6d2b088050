/*
 * The scratch directory a fuzz target keeps its store in: removed, with
 * everything in it, when the fuzzer exits.
 */
#ifndef FUZZ_SCRATCH_H
#define FUZZ_SCRATCH_H

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int fz_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove @p dir and everything below it (links are not followed). */
static inline void fz_rm_tree(const char *dir)
{
	nftw(dir, fz_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
