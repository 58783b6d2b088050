/*
 * Per-thread scratch buffers for the write path (parity units, partial rows).
 * A parity write needs P units per row of fresh memory on every call; taken
 * from malloc each time, a buffer of a few hundred KiB comes from mmap or a
 * heap that is trimmed again at free, so every call pays a page fault per
 * 4 KiB (osd-bench --layout's profile showed it). Each thread keeps its
 * largest buffer up to SCRATCH_KEEP bytes instead.
 */
#include <pthread.h>
#include <stdlib.h>

#include "layout/layout_int.h"

#define SCRATCH_KEEP (32u << 20) /* bytes a thread keeps at most */

struct scratch {
	void *p;
	size_t cap;
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_ok;

static void scratch_free(void *arg)
{
	struct scratch *s = arg;

	free(s->p);
	free(s);
}

static void scratch_init(void)
{
	scratch_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

static struct scratch *mine(void)
{
	struct scratch *s;

	pthread_once(&scratch_once, scratch_init);
	if (!scratch_ok)
		return NULL;
	s = pthread_getspecific(scratch_key);
	if (!s && (s = calloc(1, sizeof(*s))) && pthread_setspecific(scratch_key, s) != 0) {
		free(s);
		s = NULL;
	}
	return s;
}

void *lay_scratch_get(size_t n)
{
	struct scratch *s = mine();
	void *p;

	if (s && s->p && s->cap >= n) {
		p = s->p;
		s->p = NULL;
		return p;
	}
	return malloc(n ? n : 1);
}

void lay_scratch_put(void *p, size_t n)
{
	struct scratch *s;

	if (!p)
		return;
	s = n <= SCRATCH_KEEP ? mine() : NULL;
	if (!s || (s->p && s->cap >= n)) {
		free(p);
		return;
	}
	free(s->p);
	s->p = p;
	s->cap = n;
}
