/*
 * The inodes the kernel knows: one struct pt_inode per (st_dev, st_ino),
 * found again through a chained hash table so that hard links and repeated
 * lookups share one node id, freed when the kernel forgets the last
 * reference.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pt.h"

#define INITIAL_BUCKETS 4096u

int pt_table_init(struct pt_fs *fs, const char *source)
{
	struct stat st;

	memset(fs, 0, sizeof(*fs));
	pthread_mutex_init(&fs->lock, NULL);
	fs->root.fd = open(source, O_PATH | O_DIRECTORY);
	if (fs->root.fd < 0 || fstat(fs->root.fd, &st) < 0)
		return -errno;
	fs->root.dev = st.st_dev;
	fs->root.ino = st.st_ino;
	fs->root.nlookup = 2; /* never freed */
	fs->nbuckets = INITIAL_BUCKETS;
	fs->table = calloc(fs->nbuckets, sizeof(*fs->table));
	if (!fs->table)
		return -ENOMEM;
	return 0;
}

void pt_table_free(struct pt_fs *fs)
{
	for (size_t i = 0; fs->table && i < fs->nbuckets; i++) {
		while (fs->table[i]) {
			struct pt_inode *in = fs->table[i];

			fs->table[i] = in->next;
			close(in->fd);
			free(in);
		}
	}
	free(fs->table);
	if (fs->root.fd >= 0)
		close(fs->root.fd);
	pthread_mutex_destroy(&fs->lock);
}

struct pt_inode *pt_inode(fuse_req_t req, fuse_ino_t ino)
{
	struct pt_fs *fs = fuse_req_userdata(req);

	return ino == FUSE_ROOT_ID ? &fs->root : (struct pt_inode *)(uintptr_t)ino;
}

static size_t bucket(const struct pt_fs *fs, dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;

	return (size_t)(h >> 17) & (fs->nbuckets - 1);
}

static void grow(struct pt_fs *fs)
{
	size_t old_n = fs->nbuckets;
	struct pt_inode **old = fs->table;
	struct pt_inode **t = calloc(old_n * 2, sizeof(*t));

	if (!t)
		return; /* longer chains, still correct */
	fs->table = t;
	fs->nbuckets = old_n * 2;
	for (size_t i = 0; i < old_n; i++) {
		while (old[i]) {
			struct pt_inode *in = old[i];
			size_t b = bucket(fs, in->dev, in->ino);

			old[i] = in->next;
			in->next = t[b];
			t[b] = in;
		}
	}
	free(old);
}

/* The inode of @p st with one more reference; takes over @p fd (closing it
 * when the inode is known already). Called with the lock held. */
static struct pt_inode *ref_locked(struct pt_fs *fs, const struct stat *st, int fd)
{
	struct pt_inode *in;
	size_t b;

	if (st->st_dev == fs->root.dev && st->st_ino == fs->root.ino) {
		close(fd);
		return &fs->root;
	}
	b = bucket(fs, st->st_dev, st->st_ino);
	for (in = fs->table[b]; in; in = in->next)
		if (in->dev == st->st_dev && in->ino == st->st_ino)
			break;
	if (in) {
		close(fd);
		in->nlookup++;
		return in;
	}
	in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	in->fd = fd;
	in->dev = st->st_dev;
	in->ino = st->st_ino;
	in->nlookup = 1;
	in->next = fs->table[b];
	fs->table[b] = in;
	if (++fs->count > fs->nbuckets)
		grow(fs);
	return in;
}

int pt_lookup_ref(struct pt_fs *fs, struct pt_inode *parent, const char *name,
		  struct fuse_entry_param *e)
{
	struct pt_inode *in;
	int fd;

	memset(e, 0, sizeof(*e));
	e->attr_timeout = PT_TIMEOUT;
	e->entry_timeout = PT_TIMEOUT;
	fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	pthread_mutex_lock(&fs->lock);
	in = ref_locked(fs, &e->attr, fd);
	pthread_mutex_unlock(&fs->lock);
	if (!in) {
		close(fd);
		return -ENOMEM;
	}
	e->ino = in == &fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)in;
	return 0;
}

static void unlink_locked(struct pt_fs *fs, struct pt_inode *in)
{
	struct pt_inode **p = &fs->table[bucket(fs, in->dev, in->ino)];

	while (*p != in)
		p = &(*p)->next;
	*p = in->next;
	fs->count--;
}

void pt_unref(struct pt_fs *fs, fuse_ino_t ino, uint64_t n)
{
	struct pt_inode *in;

	if (ino == FUSE_ROOT_ID)
		return;
	in = (struct pt_inode *)(uintptr_t)ino;
	pthread_mutex_lock(&fs->lock);
	in->nlookup = in->nlookup > n ? in->nlookup - n : 0;
	if (in->nlookup == 0)
		unlink_locked(fs, in);
	else
		in = NULL;
	pthread_mutex_unlock(&fs->lock);
	if (in) {
		close(in->fd);
		free(in);
	}
}
