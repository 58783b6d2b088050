/*
 * Request arena: a chain of blocks that every allocation of one request comes
 * from, released all at once with the request (libiscsi's scsi_malloc idea).
 */
#ifndef OSD_REQUEST_ARENA_H
#define OSD_REQUEST_ARENA_H

#include <stddef.h>

struct osd__arena_block;

struct osd__arena {
	struct osd__arena_block *head;
};

/* Zeroed, 16-byte aligned memory valid until osd__arena_release(); NULL on ENOMEM. */
void *osd__arena_alloc(struct osd__arena *a, size_t n);
/* A copy of @p n bytes of @p src (n may be 0). */
void *osd__arena_dup(struct osd__arena *a, const void *src, size_t n);
void osd__arena_release(struct osd__arena *a);

#endif
