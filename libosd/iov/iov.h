/*
 * Byte ranges of iovec arrays: copy out, copy in, and take a sub-vector,
 * each at a byte offset into the array. Used by the iSCSI transport for a
 * request's data-out and data-in buffers and by the target for a command's.
 *
 * Semi-private: exported from libosd for libosdtarget, not an API.
 */
#ifndef OSD_IOV_IOV_H
#define OSD_IOV_IOV_H

#include <stddef.h>
#include <sys/uio.h>
#include <osd/types.h>

/** Copy up to @p len bytes of @p iov from byte @p off into @p dst; returns
 *  the bytes copied (fewer when the array ends first). */
size_t osd__iov_read(const struct iovec *iov, int cnt, size_t off, void *dst,
				size_t len);

/** Copy @p len bytes of @p src (zeros when NULL) into @p iov from byte
 *  @p off; returns the bytes written (fewer when the array ends first). */
size_t osd__iov_write(const struct iovec *iov, int cnt, size_t off,
				 const void *src, size_t len);

/**
 * Fill @p out (at most @p max entries) with pointers into @p iov covering
 * bytes [off, off + len), clipped to what the array holds and to @p max
 * entries. Returns the entry count; *got (unless NULL) gets the bytes covered.
 */
int osd__iov_slice(const struct iovec *iov, int cnt, size_t off, size_t len,
			      struct iovec *out, int max, size_t *got);

#endif
