/*
 * Little-endian integer helpers for what libosdfs stores on objects.
 *
 * Every multi-byte field the filesystem (core, fsck) and the layout backend
 * store is little-endian at a fixed byte offset; these byte-wise accessors
 * are the only way any part of libosdfs reads or writes them (never struct
 * overlays), so the formats are host-independent. Shared here, outside any
 * one part, because the layout must not depend on the filesystem's core.
 */
#ifndef OSDFS_LEBYTES_H
#define OSDFS_LEBYTES_H

#include <stdint.h>

static inline uint16_t osdfs__get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t osdfs__get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t osdfs__get_le64(const uint8_t *p)
{
	return (uint64_t)osdfs__get_le32(p) | (uint64_t)osdfs__get_le32(p + 4) << 32;
}

static inline void osdfs__put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void osdfs__put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void osdfs__put_le64(uint8_t *p, uint64_t v)
{
	osdfs__put_le32(p, (uint32_t)v);
	osdfs__put_le32(p + 4, (uint32_t)(v >> 32));
}

#endif
