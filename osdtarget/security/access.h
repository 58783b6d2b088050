/*
 * Security enforcement for one command (docs/security.md section 5): the
 * capability checks in the documented order, request ICV and nonce, ALLDATA
 * data-out integrity, and on the way out the data-in integrity block and the
 * response ICV. Every check runs before the command does anything.
 */
#ifndef OSDTARGET_SECURITY_ACCESS_H
#define OSDTARGET_SECURITY_ACCESS_H

#include "exec/exec.h"

/* Checks 1-14 plus the continuation and data-out ICVs. 0 or OSD__FAILED. */
int osd__sec_check(struct osd__cmd *c, const uint8_t *token, size_t token_len);

/* Release the capability key (back to the cache when it verified the request). */
void osd__sec_release(struct osd__cmd *c);

/* The response ICV for the status and sense as they would be returned now. */
int osd__sec_response_icv(struct osd__cmd *c, uint8_t status, const uint8_t *sense,
			  size_t sense_len, uint8_t icv[OSD_HMAC_LEN]);

/* ALLDATA: write the data-in integrity block after data-in is complete. */
void osd__sec_datain_block(struct osd__cmd *c);

#endif
