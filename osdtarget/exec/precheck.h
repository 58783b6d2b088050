/*
 * Checking a command before its data-out arrives (internal): a transport
 * that collects data-out (the iSCSI server) asks first whether the command
 * can run at all, so a command with a bad CDB or credential costs it no
 * buffer (docs/iscsi.md, "Limits").
 */
#ifndef OSDTARGET_EXEC_PRECHECK_H
#define OSDTARGET_EXEC_PRECHECK_H

#include <stddef.h>
#include <stdint.h>
#include <osdtarget/target.h>

/*
 * Decodes the CDB of @p x and runs the capability and credential checks
 * that need no data-out, without executing anything and without using up a
 * CMDRSP/ALLDATA nonce (osd_target_execute() later checks everything again,
 * the nonce and the data-out integrity included). @p x carries no data-out.
 * Returns 1 when the command may go on; 0 when it is refused, with its
 * status and sense in @p x as osd_target_execute() would give them;
 * -EINVAL for bad arguments.
 */
int osd__target_precheck(osd_target *tgt, struct osd_xfer *x, const uint8_t *token,
			 size_t token_len);

#endif
