/* The target handle: open/close, identity, root-key bootstrap, command entry. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>
#include <osd/attributes.h>
#include <osd/security.h>

#include "exec/exec.h"
#include "response.h"
#include "security/keystore.h"
#include "target_internal.h"

#define OSD_OPCODE 0x7F
#define BOOT_EPOCH_ATTR 2 /* on the private root page */

int osd__target_seterr(osd_target *tgt, int rc, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&tgt->err_lock);
	va_start(ap, fmt);
	vsnprintf(tgt->err, sizeof(tgt->err), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&tgt->err_lock);
	return rc;
}

/* A copy per calling thread, so a concurrent command never tears the text read. */
const char *osd_target_error(osd_target *tgt)
{
	static __thread char copy[sizeof(((osd_target *)0)->err)];

	if (!tgt)
		return "no target";
	pthread_mutex_lock(&tgt->err_lock);
	memcpy(copy, tgt->err, sizeof(copy));
	pthread_mutex_unlock(&tgt->err_lock);
	return copy;
}

void osd__target_serial(const osd_target *tgt, char out[OSD__SERIAL_LEN])
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < OSD_SYSTEM_ID_LEN; i++) {
		out[2 * i] = hex[tgt->system_id[i] >> 4];
		out[2 * i + 1] = hex[tgt->system_id[i] & 0xF];
	}
}

/* The OSD system id is made once, randomly, and kept in root information 0x3. */
static int load_identity(osd_target *tgt)
{
	const uint32_t page = OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION;
	size_t len = 0;
	int rc = osd_store_attr_get(tgt->st, 0, 0, page, OSD_ATTR_RI_SYSTEM_ID, tgt->system_id,
				    OSD_SYSTEM_ID_LEN, &len);

	if (rc == 0 && len == OSD_SYSTEM_ID_LEN)
		return 0;
	if (RAND_bytes(tgt->system_id, OSD_SYSTEM_ID_LEN) != 1)
		return -EIO;
	return osd_store_attr_set(tgt->st, 0, 0, page, OSD_ATTR_RI_SYSTEM_ID, tgt->system_id,
				  OSD_SYSTEM_ID_LEN, OSD_STORE_FUA);
}

/* Capabilities may name a boot epoch: count opens durably. */
static int next_boot_epoch(osd_target *tgt)
{
	uint8_t v[2] = { 0, 0 };
	size_t len = 0;

	if (osd_store_attr_get(tgt->st, 0, 0, OSD__PRIV_PAGE_ROOT, BOOT_EPOCH_ATTR, v, 2, &len) < 0 ||
	    len != 2)
		v[0] = v[1] = 0;
	tgt->boot_epoch = (uint16_t)((v[0] << 8 | v[1]) + 1);
	if (!tgt->boot_epoch)
		tgt->boot_epoch = 1;
	v[0] = (uint8_t)(tgt->boot_epoch >> 8);
	v[1] = (uint8_t)tgt->boot_epoch;
	return osd_store_attr_set(tgt->st, 0, 0, OSD__PRIV_PAGE_ROOT, BOOT_EPOCH_ATTR, v, 2,
				  OSD_STORE_FUA);
}

static int init_locks(osd_target *tgt)
{
	if (pthread_rwlock_init(&tgt->cmd_lock, NULL))
		return -ENOMEM;
	if (pthread_mutex_init(&tgt->list_lock, NULL)) {
		pthread_rwlock_destroy(&tgt->cmd_lock);
		return -ENOMEM;
	}
	if (pthread_mutex_init(&tgt->err_lock, NULL)) {
		pthread_mutex_destroy(&tgt->list_lock);
		pthread_rwlock_destroy(&tgt->cmd_lock);
		return -ENOMEM;
	}
	return 0;
}

static void destroy_locks(osd_target *tgt)
{
	pthread_mutex_destroy(&tgt->err_lock);
	pthread_mutex_destroy(&tgt->list_lock);
	pthread_rwlock_destroy(&tgt->cmd_lock);
}

int osd_target_open(osd_target **out, const char *dir, const struct osd_target_options *opts)
{
	static const struct osd_target_options dflt = OSD_TARGET_OPTIONS_INIT;
	struct osd_store_options so = { 0 };
	osd_target *tgt;
	int rc;

	if (!out || !dir)
		return -EINVAL;
	*out = NULL;
	if (!opts)
		opts = &dflt;
	if (opts->version < 1 || opts->version > OSD_TARGET_OPTIONS_VERSION ||
	    (opts->version >= 3 && (opts->quirks & ~OSD_TARGET_QUIRKS_ALL)))
		return -EINVAL;
	tgt = calloc(1, sizeof(*tgt));
	if (!tgt)
		return -ENOMEM;
	rc = init_locks(tgt);
	if (rc) {
		free(tgt);
		return rc;
	}
	so.create = opts->create;
	so.capacity = opts->capacity;
	so.sync_writes = opts->sync_writes;
	if (opts->version >= 2) {
		so.salvage = opts->salvage;
		_Static_assert(OSD_TARGET_LOG_ERR == OSD_STORE_LOG_ERR &&
			       OSD_TARGET_LOG_NOTICE == OSD_STORE_LOG_NOTICE, "one set of levels");
		so.log = opts->log_event;
		so.log_arg = opts->log_event_arg;
	}
	if (opts->version >= 4)
		so.no_checksums = opts->no_checksums;
	if (opts->version >= 5)
		so.verify_reads = opts->verify_reads;
	if (opts->version >= 6)
		so.meta_cache = opts->meta_cache;
	if (opts->version >= 7)
		so.scan_data = opts->scan_data;
	tgt->sync_writes = opts->sync_writes;
	tgt->quirks = opts->version >= 3 ? opts->quirks : 0;
	tgt->start_ms = osd_now_ms();
	rc = osd_store_open(&tgt->st, dir, &so, tgt->err, sizeof(tgt->err));
	if (rc == 0 && (rc = load_identity(tgt)) < 0)
		osd__target_seterr(tgt, rc, "cannot establish the OSD system id");
	if (rc == 0 && (rc = next_boot_epoch(tgt)) < 0)
		osd__target_seterr(tgt, rc, "cannot record the boot epoch");
	if (rc == 0)
		rc = osd__nonce_cache_init(&tgt->nonces, tgt->start_ms);
	if (rc == 0 && (rc = osd__capkey_cache_init(&tgt->capkeys)) < 0)
		osd__nonce_cache_destroy(&tgt->nonces);
	if (rc < 0) {
		osd_store_close(tgt->st);
		destroy_locks(tgt);
		free(tgt);
		return rc;
	}
	*out = tgt;
	return 0;
}

void osd_target_close(osd_target *tgt)
{
	if (!tgt)
		return;
	osd_store_close(tgt->st);
	osd__nonce_cache_destroy(&tgt->nonces);
	osd__capkey_cache_destroy(&tgt->capkeys);
	destroy_locks(tgt);
	free(tgt);
}

void osd_target_system_id(osd_target *tgt, uint8_t id[OSD_SYSTEM_ID_LEN])
{
	memcpy(id, tgt->system_id, OSD_SYSTEM_ID_LEN);
}

int osd_target_set_root_key(osd_target *tgt, const uint8_t key[20])
{
	int rc;

	if (!tgt || !key)
		return -EINVAL;
	pthread_rwlock_wrlock(&tgt->cmd_lock);
	rc = osd__key_save(tgt->st, 0, OSD_KEY_ROOT, 0, key, NULL);
	osd__capkey_invalidate(&tgt->capkeys);
	pthread_rwlock_unlock(&tgt->cmd_lock);
	if (rc < 0)
		return osd__target_seterr(tgt, rc, "cannot store the root key: %s", strerror(-rc));
	return 0;
}

int osd_target_root_secured(osd_target *tgt)
{
	int r;

	if (!tgt)
		return -EINVAL;
	pthread_rwlock_rdlock(&tgt->cmd_lock);
	r = osd__root_key_present(tgt->st);
	pthread_rwlock_unlock(&tgt->cmd_lock);
	return r;
}

int osd_target_execute(osd_target *tgt, struct osd_xfer *x, const uint8_t *token, size_t token_len)
{
	if (!tgt || !x || (!x->cdb && x->cdb_len) || (x->out_len && !x->out_iov) ||
	    (x->in_len && !x->in_iov) || x->out_iovcnt < 0 || x->in_iovcnt < 0)
		return -EINVAL;
	x->status = OSD_STATUS_GOOD;
	x->sense_len = 0;
	x->in_xferred = 0;
	if (!x->cdb_len)
		return osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_OPCODE, 0);
	if (x->cdb[0] == OSD_OPCODE)
		osd__exec_osd(tgt, x, token, token_len);
	else
		osd__scsi_execute(tgt, x, token, token_len);
	return 0;
}
