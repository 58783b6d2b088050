/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78): the iSCSI header and
 * data digest (RFC 7143 13.1), the checksum of every metadata record of
 * the target's store and of every 4 KiB block of its data. Uses the SSE4.2 instruction when the CPU has it and a
 * slice-by-8 table otherwise; both give identical results.
 *
 * Semi-private: exported from libosd for libosdtarget, not an API.
 */
#ifndef OSD_CHECKSUM_CRC32C_H
#define OSD_CHECKSUM_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <osd/types.h>

/** Continue a CRC32C over @p len bytes; start with crc = 0. */
uint32_t osd__crc32c(uint32_t crc, const void *buf, size_t len);

/**
 * The CRC32C (each started at 0) of @p n consecutive blocks of @p bs bytes
 * into @p out: the store's per-block data checksums. With AVX-512 and
 * VPCLMULQDQ, blocks of a multiple of 256 bytes are folded with carry-less
 * multiplication (about 35-45 GB/s on this machine's cores); otherwise, with
 * SSE4.2, three blocks are computed at once (about 15-22 GB/s, 2-3 times one
 * by one).
 */
void osd__crc32c_blocks(const void *buf, size_t bs, size_t n, uint32_t *out);

/** The table-driven implementation alone (tests compare it with the fast path). */
uint32_t osd__crc32c_table(uint32_t crc, const void *buf, size_t len);

#endif
