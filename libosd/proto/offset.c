/*
 * Encoded data-in / data-out offsets: byte offset = mantissa << (exponent + 8).
 *
 * OSD-1 reads the 4-bit exponent as unsigned (shift 8..23), OSD-2 as signed
 * two's complement. For OSD-2 we accept exponents -5..+7 only (shift 3..15):
 * segments are 8-byte aligned in OSD-2 and exponents -8..-6 would designate
 * byte-granular offsets no target produces (docs/protocol-choices.md).
 */
#include <errno.h>
#include <osd/offset.h>

#define MANTISSA_MASK 0x0FFFFFFFu
#define EXP_SHIFT 28

static void shift_range(enum osd_version version, unsigned *min, unsigned *max)
{
	if (version == OSD_V1) {
		*min = 8;
		*max = 23;
	} else {
		*min = 3;
		*max = 15;
	}
}

/* Largest mantissa usable at @p shift: the all-ones word means "unused". */
static uint32_t max_mantissa(unsigned shift)
{
	return ((shift - 8) & 0xF) == 0xF ? MANTISSA_MASK - 1 : MANTISSA_MASK;
}

int osd_offset_encode(enum osd_version version, uint64_t offset,
		      uint32_t *encoded, uint64_t *rounded)
{
	unsigned min, max;

	if ((version != OSD_V1 && version != OSD_V2) || offset == OSD_OFFSET_NONE)
		return -EINVAL;
	if (offset == 0) {
		/* Both versions write offset 0 as all zeroes (exponent 0). */
		*encoded = 0;
		if (rounded)
			*rounded = 0;
		return 0;
	}
	shift_range(version, &min, &max);
	for (unsigned s = min; s <= max; s++) {
		uint64_t unit = 1ULL << s;
		uint64_t m = offset / unit + (offset % unit != 0);

		if (m > max_mantissa(s))
			continue;
		*encoded = ((uint32_t)((s - 8) & 0xF) << EXP_SHIFT) | (uint32_t)m;
		if (rounded)
			*rounded = m << s;
		return 0;
	}
	return -EINVAL;
}

int osd_offset_decode(enum osd_version version, uint32_t encoded, uint64_t *offset)
{
	unsigned min, max;
	int exp;

	if (version != OSD_V1 && version != OSD_V2)
		return -EINVAL;
	if (encoded == OSD_OFFSET_UNUSED) {
		*offset = OSD_OFFSET_NONE;
		return 0;
	}
	exp = (int)(encoded >> EXP_SHIFT);
	if (version == OSD_V2 && exp > 7)
		exp -= 16;
	shift_range(version, &min, &max);
	if (exp + 8 < (int)min || exp + 8 > (int)max)
		return -EBADMSG;
	*offset = (uint64_t)(encoded & MANTISSA_MASK) << (exp + 8);
	return 0;
}

uint64_t osd_offset_align(enum osd_version version, uint64_t offset)
{
	uint32_t enc;
	uint64_t rounded;

	if (osd_offset_encode(version, offset, &enc, &rounded) < 0)
		return OSD_OFFSET_NONE;
	return rounded;
}
