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
#include <string.h>

/* The 32- and 64-bit accessors are one load or store and a byte swap: the
 * byte-wise form, in a loop, made GCC -O3 vectorize it into byte shuffles
 * and single-byte stores (four fifths of a LIST walk went into encoding
 * the ids). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OSD__BE32(v) __builtin_bswap32(v)
#define OSD__BE64(v) __builtin_bswap64(v)
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define OSD__BE32(v) (v)
#define OSD__BE64(v) (v)
#else
#error "unknown byte order"
#endif

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
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return OSD__BE32(v);
}

static inline uint64_t osd__get_be48(const uint8_t *p)
{
	return (uint64_t)osd__get_be16(p) << 32 | osd__get_be32(p + 2);
}

static inline uint64_t osd__get_be64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return OSD__BE64(v);
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
	v = OSD__BE32(v);
	memcpy(p, &v, sizeof(v));
}

/* Writes the low 48 bits of v. */
static inline void osd__put_be48(uint8_t *p, uint64_t v)
{
	osd__put_be16(p, (uint16_t)(v >> 32));
	osd__put_be32(p + 2, (uint32_t)v);
}

static inline void osd__put_be64(uint8_t *p, uint64_t v)
{
	v = OSD__BE64(v);
	memcpy(p, &v, sizeof(v));
}

#endif
