/*
 * The scratch directory a fuzz target keeps its store in: removed, with
 * everything in it, when the fuzzer exits.
 */
#ifndef FUZZ_SCRATCH_H
#define FUZZ_SCRATCH_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Replace file @p path with the @p len bytes of @p data: 0 or -errno. */
static inline int fz_put_file(const char *path, const uint8_t *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n <= 0) {
			int r = n < 0 ? -errno : -EIO;

			close(fd);
			return r;
		}
		data += n;
		len -= (size_t)n;
	}
	close(fd);
	return 0;
}

/* The whole of file @p path in a malloc'ed buffer *out of *len bytes: 0 or -errno. */
static inline int fz_get_file(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n = 0;
	int r = 0;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0)
		r = -errno;
	if (!r) {
		rewind(f);
		*out = malloc((size_t)n + 1);
		if (!*out || fread(*out, 1, (size_t)n, f) != (size_t)n)
			r = -EIO;
		*len = (size_t)n;
	}
	if (f)
		fclose(f);
	return r;
}

#endif
