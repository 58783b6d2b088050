/*
 * The kernel's lookup count per inode. FUSE adds one reference for every
 * successful entry reply (lookup, create, mknod, mkdir, symlink, link,
 * readdirplus) and gives them back with forget. Keeping the counts lets the
 * frontend tell which inodes the kernel still names and catch a mismatch.
 * An open-addressing table (linear probing, backward-shift deletion) under
 * one mutex: forget storms after a big "find" stay cheap.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "mount.h"

struct slot {
	uint64_t ino;   /* 0 = empty (inode 0 does not exist) */
	uint64_t count;
	int nocaps;     /* known to have no security.capability xattr */
};

struct mnt_lookups {
	pthread_mutex_t lock;
	struct slot *slots;
	size_t mask;    /* capacity - 1; capacity is a power of two */
	size_t used;
	uint64_t xgen;  /* bumped before and after every xattr change */
};

#define INITIAL_SLOTS 1024u

static size_t hash_ino(uint64_t ino)
{
	/* splitmix64 finaliser: consecutive inode numbers spread out */
	ino ^= ino >> 30;
	ino *= 0xbf58476d1ce4e5b9ULL;
	ino ^= ino >> 27;
	ino *= 0x94d049bb133111ebULL;
	ino ^= ino >> 31;
	return (size_t)ino;
}

int mnt_lookups_new(struct mnt_lookups **out)
{
	struct mnt_lookups *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->slots = calloc(INITIAL_SLOTS, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return -ENOMEM;
	}
	t->mask = INITIAL_SLOTS - 1;
	pthread_mutex_init(&t->lock, NULL);
	*out = t;
	return 0;
}

void mnt_lookups_free(struct mnt_lookups *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->slots);
	free(t);
}

static size_t find_slot(const struct mnt_lookups *t, uint64_t ino)
{
	size_t i = hash_ino(ino) & t->mask;

	while (t->slots[i].ino && t->slots[i].ino != ino)
		i = (i + 1) & t->mask;
	return i;
}

static int grow(struct mnt_lookups *t)
{
	size_t n = (t->mask + 1) * 2;
	struct slot *old = t->slots;
	size_t old_n = t->mask + 1;

	t->slots = calloc(n, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -ENOMEM;
	}
	t->mask = n - 1;
	for (size_t i = 0; i < old_n; i++)
		if (old[i].ino)
			t->slots[find_slot(t, old[i].ino)] = old[i];
	free(old);
	return 0;
}

int mnt_lookups_add(struct mnt_lookups *t, uint64_t ino)
{
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&t->lock);
	/* keep the load under 3/4 so probes stay short */
	if ((t->used + 1) * 4 > (t->mask + 1) * 3)
		rc = grow(t);
	if (rc == 0) {
		i = find_slot(t, ino);
		if (!t->slots[i].ino) {
			t->slots[i].ino = ino;
			t->used++;
		}
		t->slots[i].count++;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

/* Removes slot @p i and shifts later members of its probe run back. */
static void remove_slot(struct mnt_lookups *t, size_t i)
{
	size_t j = i;

	for (;;) {
		j = (j + 1) & t->mask;
		if (!t->slots[j].ino)
			break;
		size_t home = hash_ino(t->slots[j].ino) & t->mask;
		/* move j into the hole unless its home lies cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].ino = 0;
	t->slots[i].count = 0;
	t->slots[i].nocaps = 0;
	t->used--;
}

int64_t mnt_lookups_drop(struct mnt_lookups *t, uint64_t ino, uint64_t n)
{
	int64_t left;
	size_t i;

	pthread_mutex_lock(&t->lock);
	i = find_slot(t, ino);
	if (!t->slots[i].ino || t->slots[i].count < n) {
		if (t->slots[i].ino)
			remove_slot(t, i);
		left = -ENOENT;
	} else {
		t->slots[i].count -= n;
		left = (int64_t)t->slots[i].count;
		if (left == 0)
			remove_slot(t, i);
	}
	pthread_mutex_unlock(&t->lock);
	return left;
}

/*
 * Without FUSE_HANDLE_KILLPRIV(_V2) the kernel asks for security.capability
 * before every write(2) (file_remove_privs()), and for osdfs each answer is a
 * GET ATTRIBUTES command. The mount is exclusive, so only our own setxattr
 * and removexattr can make the answer change: "absent" is remembered per
 * inode while the kernel holds it. A change bumps xgen before and after it,
 * and an absence seen by a getxattr that overlapped a change is not kept.
 */
uint64_t mnt_lookups_xattr_gen(struct mnt_lookups *t)
{
	uint64_t g;

	pthread_mutex_lock(&t->lock);
	g = t->xgen;
	pthread_mutex_unlock(&t->lock);
	return g;
}

void mnt_lookups_xattr_change(struct mnt_lookups *t, uint64_t ino)
{
	size_t i;

	pthread_mutex_lock(&t->lock);
	t->xgen++;
	if (ino) {
		i = find_slot(t, ino);
		t->slots[i].nocaps = 0;
	}
	pthread_mutex_unlock(&t->lock);
}

int mnt_lookups_nocaps(struct mnt_lookups *t, uint64_t ino)
{
	int r;

	pthread_mutex_lock(&t->lock);
	r = t->slots[find_slot(t, ino)].nocaps;
	pthread_mutex_unlock(&t->lock);
	return r;
}

void mnt_lookups_set_nocaps(struct mnt_lookups *t, uint64_t ino, uint64_t gen)
{
	size_t i;

	pthread_mutex_lock(&t->lock);
	i = find_slot(t, ino);
	if (t->slots[i].ino && t->xgen == gen)
		t->slots[i].nocaps = 1;
	pthread_mutex_unlock(&t->lock);
}
