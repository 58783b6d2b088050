/* Finding the data in a buffer, so copies skip all-zero blocks (holes). */
#include <string.h>
#include "osdfs_tool.h"

static int zero_block(const char *p, size_t len)
{
	return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

int next_data_run(const char *buf, size_t len, size_t *start, size_t *end)
{
	size_t i = *start, j;

	while (i < len && zero_block(buf + i, len - i < SPARSE_BLOCK ? len - i : SPARSE_BLOCK))
		i += SPARSE_BLOCK;
	if (i >= len)
		return 0;
	for (j = i; j < len && !zero_block(buf + j, len - j < SPARSE_BLOCK ? len - j : SPARSE_BLOCK);)
		j += SPARSE_BLOCK;
	*start = i;
	*end = j < len ? j : len;
	return 1;
}
