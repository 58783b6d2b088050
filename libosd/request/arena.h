/*
 * Request arena: a chain of blocks that every allocation of one request comes
 * from, released all at once with the request (libiscsi's scsi_malloc idea).
 */
#ifndef OSD_REQUEST_ARENA_H
#define OSD_REQUEST_ARENA_H

#include <stddef.h>

struct osd__arena_block;

/* What a typical request (lists, iovec copies, a small attribute buffer)
 * needs: served from inside the request, so most requests never call malloc
 * for their arena. */
#define OSD__ARENA_INLINE 1024

struct osd__arena {
	struct osd__arena_block *head;
	size_t inline_used;
	_Alignas(16) unsigned char inline_buf[OSD__ARENA_INLINE];
};

/* Make @p a empty; its inline storage need not be zeroed. */
void osd__arena_init(struct osd__arena *a);
/* Zeroed, 16-byte aligned memory (the arena must itself be 16-byte aligned,
 * as malloc'ed memory is) valid until osd__arena_release(); NULL on ENOMEM. */
void *osd__arena_alloc(struct osd__arena *a, size_t n);
/* The same, not zeroed: for buffers only read as far as they were filled. */
void *osd__arena_alloc_raw(struct osd__arena *a, size_t n);
/* A copy of @p n bytes of @p src (n may be 0). */
void *osd__arena_dup(struct osd__arena *a, const void *src, size_t n);
void osd__arena_release(struct osd__arena *a);

#endif
