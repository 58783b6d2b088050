/*
 * Recycled data files: a removed object's file, once its REMOVE record is
 * durable, is emptied and renamed into data/pool/ instead of unlinked, and
 * the next object that needs a file renames one out. The host filesystem
 * then allocates and frees no inodes for small-object churn, which on ext4
 * without a journal costs a walk over every recently deleted inode per
 * create (docs/target-store.md, "Recycled files").
 *
 * Pool files are empty, so they hold no space and no old data; a file is
 * recycled only if its object had no descriptor in use at its removal, so
 * I/O that started before the REMOVE cannot reach the file's next owner.
 * The pool is a cache: anything in it may be deleted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/internal.h"

/* At most this many files wait in the pool (empty inodes, about 256 B each
 * on ext4); a removal past it unlinks. */
#define POOL_MAX 16384u

static void pool_name(uint64_t n, char name[32])
{
	snprintf(name, 32, "pool/%016" PRIx64, n);
}

/* Push pool file @p n; 0, or -ENOSPC when the pool is full. pool_mu held. */
static int pool_push_locked(struct osd_store *st, uint64_t n)
{
	if (st->npool == POOL_MAX)
		return -ENOSPC;
	if (st->npool == st->pool_cap) {
		size_t cap = st->pool_cap ? st->pool_cap * 2 : 256;
		uint64_t *p = realloc(st->pool, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		st->pool = p;
		st->pool_cap = cap;
	}
	st->pool[st->npool++] = n;
	if (n >= st->pool_next)
		st->pool_next = n + 1;
	return 0;
}

/*
 * Adopt the files a previous open left in the pool; a name with another
 * link (a crash of a filesystem without a journal can leave a renamed file
 * under both names) or past the cap is deleted instead.
 */
static int pool_adopt(struct osd_store *st, int dfd)
{
	DIR *dh = fdopendir(dfd);
	struct dirent *de;
	struct stat sb;
	uint64_t n;

	if (!dh) {
		close(dfd);
		return -errno;
	}
	pthread_mutex_lock(&st->pool_mu);
	while ((de = readdir(dh)) != NULL) {
		if (osd__parse_hex16(de->d_name, &n) != 0)
			continue;
		if (fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(sb.st_mode) || sb.st_nlink != 1 || pool_push_locked(st, n) != 0)
			(void)unlinkat(dfd, de->d_name, 0);
	}
	pthread_mutex_unlock(&st->pool_mu);
	closedir(dh);
	return 0;
}

int osd__pool_open(struct osd_store *st, int create)
{
	int dfd;

	if (mkdirat(st->datafd, "pool", 0700) == 0)
		/* a new store's caller fsyncs data/ after its fan-out directories */
		return create || fsync(st->datafd) == 0 ? 0 : -errno;
	if (errno != EEXIST)
		return -errno;
	dfd = openat(st->datafd, "pool", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 ? -errno : pool_adopt(st, dfd);
}

int osd__pool_take(struct osd_store *st, const char *name)
{
	char from[32];
	uint64_t n;

	pthread_mutex_lock(&st->pool_mu);
	if (!st->npool) {
		pthread_mutex_unlock(&st->pool_mu);
		return -ENOENT;
	}
	n = st->pool[--st->npool];
	pthread_mutex_unlock(&st->pool_mu);
	pool_name(n, from);
	if (renameat(st->datafd, from, st->datafd, name) == 0)
		return 0;
	int e = errno;
	(void)unlinkat(st->datafd, from, 0); /* do not offer it again */
	return -e;
}

int osd__pool_put(struct osd_store *st, const char *name)
{
	char to[32];
	uint64_t n;
	int r, fd;

	pthread_mutex_lock(&st->pool_mu);
	if (st->npool == POOL_MAX) {
		pthread_mutex_unlock(&st->pool_mu);
		return -ENOSPC;
	}
	n = st->pool_next++;
	pthread_mutex_unlock(&st->pool_mu);
	fd = openat(st->datafd, name, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	close(fd);
	pool_name(n, to);
	if (renameat(st->datafd, name, st->datafd, to) != 0)
		return -errno;
	pthread_mutex_lock(&st->pool_mu);
	r = pool_push_locked(st, n);
	pthread_mutex_unlock(&st->pool_mu);
	if (r)
		(void)unlinkat(st->datafd, to, 0);
	return 0;
}

void osd__pool_wipe(struct osd_store *st)
{
	char name[32];

	pthread_mutex_lock(&st->pool_mu);
	while (st->npool) {
		pool_name(st->pool[--st->npool], name);
		(void)unlinkat(st->datafd, name, 0);
	}
	pthread_mutex_unlock(&st->pool_mu);
}

void osd__pool_free(struct osd_store *st)
{
	free(st->pool);
	st->pool = NULL;
	st->npool = st->pool_cap = 0;
}
