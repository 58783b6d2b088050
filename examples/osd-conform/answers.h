/*
 * Checks of the answers a target sends to the plain SCSI commands and to a
 * page-mode GET ATTRIBUTES: untrusted bytes, read only within the length
 * given (fuzz/fuzz_conform_answers.c). Each returns 0 when the answer is as
 * the standard says, else -1 with the reason in @p why; a summary for a
 * passing answer goes to @p why as well.
 */
#ifndef OSD_CONFORM_ANSWERS_H
#define OSD_CONFORM_ANSWERS_H

#include <stddef.h>
#include <stdint.h>
#include <osd/types.h>

/* Standard INQUIRY data of an OSD speaking @p ver (docs/protocol.md 12.1, 12.4). */
int cf_check_inquiry(const uint8_t *d, size_t n, enum osd_version ver, char *why, size_t len);
/* INQUIRY VPD page 00h (supported VPD pages) of an OSD. */
int cf_check_vpd_pages(const uint8_t *d, size_t n, char *why, size_t len);
/* REPORT LUNS parameter data. */
int cf_check_report_luns(const uint8_t *d, size_t n, char *why, size_t len);
/* A user object timestamps page (@p page) in page format (docs/protocol.md 9.8). */
int cf_check_timestamps_page(const uint8_t *pg, size_t n, uint32_t page, char *why,
			     size_t len);

#endif
