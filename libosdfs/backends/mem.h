/*
 * The mem backend's internals (libosdfs/backends/mem*.c): the store, its
 * objects, sparse data chunks and attributes. Callers hold the store lock.
 */
#ifndef OSDFS_BACKENDS_MEM_H
#define OSDFS_BACKENDS_MEM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <osd/attributes.h>
#include <osdfs/backends.h>

#include "backends/htab.h"

#define CHUNK_SHIFT 16
#define CHUNK_SIZE ((uint64_t)1 << CHUNK_SHIFT)
#define CHUNK_MASK (CHUNK_SIZE - 1)
#define CHUNK_MIN_CAP 256u
#define MEM_MAX_LENGTH ((uint64_t)INT64_MAX) /* largest logical length */
#define MEM_ATTR_MAX_LEN 0xFFFEu            /* OSD attribute length limit */
#define ATTR_WILDCARD OSD_APAGE_ALL         /* "all": request-only, never stored */
#define PAGE_USER_INFO OSD_APAGE_INFORMATION
#define ATTR_OBJECT_ID OSD_ATTR_UI_OBJECT_ID
#define ATTR_USED_CAPACITY OSD_ATTR_UI_USED_CAPACITY
#define ATTR_LOGICAL_LENGTH OSD_ATTR_UI_LOGICAL_LENGTH

struct mem_chunk {
	struct osdfs__hnode node; /* key: chunk index */
	uint32_t len;             /* allocated (and accounted) bytes */
	uint32_t cap;             /* bytes behind data */
	unsigned char *data;
};

struct mem_attr {
	uint32_t page;
	uint32_t number;
	uint32_t len;
	unsigned char *value;
};

struct mem_object {
	struct osdfs__hnode node; /* key: object id */
	uint64_t size;            /* logical length */
	uint64_t data_used;       /* allocated chunk bytes */
	struct osdfs__htab chunks;
	struct mem_attr *attrs;
	size_t nattrs;
	size_t attr_cap;
};

struct osdfs_mem_store {
	pthread_rwlock_t lock;
	atomic_uint refs;
	struct osdfs__htab objects;
	uint64_t capacity; /* 0 = unlimited */
	uint64_t used;     /* data bytes + attribute bytes */
};

/* Value copies for a set, allocated up front so the commit cannot fail. */
struct osdfs__mem_plan {
	unsigned char **copies;
};

/* ---- data (mem_data.c) ---- */

/* Release allocated data in [start, end) of @obj, returning space to @s. */
void osdfs__mem_release(struct osdfs_mem_store *s, struct mem_object *obj,
			uint64_t start, uint64_t end);
/* Bytes a write of [off, off + n) would newly allocate. */
uint64_t osdfs__mem_write_growth(const struct mem_object *obj, uint64_t off, size_t n);
/* Allocate every chunk of [off, end); -ENOMEM leaves contents unchanged. */
int osdfs__mem_write_alloc(struct osdfs_mem_store *s, struct mem_object *obj,
			   uint64_t off, uint64_t end);
/* Copy the iovecs into [off, end), allocated by osdfs__mem_write_alloc(). */
void osdfs__mem_write_copy(struct mem_object *obj, uint64_t off, uint64_t end,
			   const struct iovec *iov, int iovcnt);
/* Read up to @total bytes from @off; returns the count (short at the end). */
ssize_t osdfs__mem_read(const struct mem_object *obj, uint64_t off,
			const struct iovec *iov, int iovcnt, size_t total);
/* Set the logical length, releasing data beyond it. */
void osdfs__mem_truncate(struct osdfs_mem_store *s, struct mem_object *obj, uint64_t size);
/* Free every chunk of @obj (no accounting). */
void osdfs__mem_data_free(struct mem_object *obj);

/* ---- attributes (mem_attr.c) ---- */

/* -EINVAL unless @attrs may be set. */
int osdfs__mem_attrs_check(const struct osdfs_attr *attrs, int nattrs);
/* Net change of attribute bytes if @attrs were set on @obj (may be NULL). */
int64_t osdfs__mem_attrs_growth(const struct mem_object *obj,
				const struct osdfs_attr *attrs, int n);
/* Reserve and copy what a set needs; 0 or -ENOMEM with nothing changed. */
int osdfs__mem_plan_prepare(struct osdfs__mem_plan *p, struct mem_object *obj,
			    const struct osdfs_attr *attrs, int n);
/* Drop a prepared set that will not be committed. */
void osdfs__mem_plan_free(struct osdfs__mem_plan *p, int n);
/* Apply a prepared set (cannot fail); consumes the plan. */
void osdfs__mem_plan_commit(struct osdfs__mem_plan *p, struct osdfs_mem_store *s,
			    struct mem_object *obj, const struct osdfs_attr *attrs, int n);
/* Fill get entries (see struct osdfs_attr). */
int osdfs__mem_attrs_get(const struct mem_object *obj, struct osdfs_attr *attrs, int n);
/* Every stored attribute, values copied into @p buf; -ENOSPC if they do not fit. */
int osdfs__mem_attrs_get_all(const struct mem_object *obj, struct osdfs_attr *attrs, int max,
			     void *buf, size_t buflen);
/* Free every attribute of @obj (no accounting). */
void osdfs__mem_attrs_free(struct mem_object *obj);

#endif
