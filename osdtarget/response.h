/*
 * Writing a command's answer into a struct osd_xfer: data-in bytes at given
 * offsets (bounded by the initiator's allocation), status and descriptor
 * sense. Shared by the OSD engine (exec/) and the plain SCSI commands.
 */
#ifndef OSDTARGET_RESPONSE_H
#define OSDTARGET_RESPONSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <osd/sense.h>
#include <osd/sys/transport.h>

#include "iov/iov.h" /* libosd: osd__iov_read, osd__iov_write, osd__iov_slice */

/* Write data-in bytes at @p off (clipped to in_len) and extend in_xferred. */
void osd__resp_data(struct osd_xfer *x, size_t off, const void *buf, size_t len);

/* Zero data-in [from, to) (clipped); used between segments. */
void osd__resp_zero(struct osd_xfer *x, size_t from, size_t to);

/* Status GOOD, no sense. */
void osd__resp_good(struct osd_xfer *x);

/*
 * CHECK CONDITION with @p s encoded as descriptor sense; RECOVERED ERROR
 * keeps data-in as transferred. Returns 0.
 */
int osd__resp_sense(struct osd_xfer *x, const struct osd_sense *s);

/* Shorthand: CHECK CONDITION key/asc with an optional CDB field pointer (-1 = none). */
int osd__resp_error(struct osd_xfer *x, uint8_t key, uint16_t asc, int field);

#endif
