/*
 * Big-endian wire integer helpers shared by every libosd component.
 *
 * OSD puts all multi-byte integers on the wire in big-endian order, at byte
 * offsets that are often unaligned; these byte-wise accessors are the only
 * way the library reads or writes them (never struct overlays).
 */
#ifndef OSD_PROTO_BYTEORDER_H
#define OSD_PROTO_BYTEORDER_H

#include <stdint.h>

static inline uint16_t osd__get_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t osd__get_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t osd__get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t osd__get_be48(const uint8_t *p)
{
	return (uint64_t)osd__get_be16(p) << 32 | osd__get_be32(p + 2);
}

static inline uint64_t osd__get_be64(const uint8_t *p)
{
	return (uint64_t)osd__get_be32(p) << 32 | osd__get_be32(p + 4);
}

static inline void osd__put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void osd__put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void osd__put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Writes the low 48 bits of v. */
static inline void osd__put_be48(uint8_t *p, uint64_t v)
{
	osd__put_be16(p, (uint16_t)(v >> 32));
	osd__put_be32(p + 2, (uint32_t)v);
}

static inline void osd__put_be64(uint8_t *p, uint64_t v)
{
	osd__put_be32(p, (uint32_t)(v >> 32));
	osd__put_be32(p + 4, (uint32_t)v);
}

#endif
