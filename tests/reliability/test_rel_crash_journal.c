/* test_rel_crash: the journal of sealed files and their generated contents. */
#include <stdlib.h>
#include <string.h>

#include "test_rel_crash.h"

uint64_t rc_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

void rc_fill(uint8_t *buf, size_t len, uint64_t off, uint64_t seed)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t word = off + i, s = seed ^ (word >> 3) * 0xD6E8FEB86659FD93ULL;

		buf[i] = (uint8_t)(rc_rand(&s) >> (8 * (word & 7)));
	}
}

long rc_journal_add(struct rc_journal *j, const char *path, uint64_t len, uint64_t seed)
{
	struct rc_sealed *s;

	if (j->n == j->cap) {
		size_t ncap = j->cap ? 2 * j->cap : 64;
		struct rc_sealed *v = realloc(j->v, ncap * sizeof(*v));

		if (!v)
			return -1;
		j->v = v;
		j->cap = ncap;
	}
	s = &j->v[j->n];
	memset(s, 0, sizeof(*s));
	strncpy(s->path, path, sizeof(s->path) - 1);
	s->len = len;
	s->seed = seed;
	return (long)j->n++;
}

long rc_journal_find(const struct rc_journal *j, const char *path)
{
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->v[i].path, path) == 0 ||
		    (j->v[i].pending && strcmp(j->v[i].alt, path) == 0))
			return (long)i;
	return -1;
}

static int is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

int rc_journal_under(const struct rc_journal *j, const char *dir)
{
	for (size_t i = 0; i < j->n; i++)
		if (is_under(j->v[i].path, dir) || (j->v[i].pending && is_under(j->v[i].alt, dir)))
			return 1;
	return 0;
}

void rc_journal_free(struct rc_journal *j)
{
	free(j->v);
	memset(j, 0, sizeof(*j));
}
