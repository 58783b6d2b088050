/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every
 * metadata record of the store. Uses the SSE4.2 instruction when the CPU has
 * it and a slice-by-8 table otherwise; both give identical results.
 */
#ifndef OSDTARGET_STORE_CRC32C_H
#define OSDTARGET_STORE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/** Continue a CRC32C over @p len bytes; start with crc = 0. */
uint32_t osd__crc32c(uint32_t crc, const void *buf, size_t len);

/** The table-driven implementation alone (tests compare it with the fast path). */
uint32_t osd__crc32c_table(uint32_t crc, const void *buf, size_t len);

#endif
