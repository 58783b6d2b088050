/* Data commands: READ, WRITE, APPEND, CLEAR, PUNCH and the FLUSH family. */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "response.h"

#define FLUSH_SCOPE_MAX 2

/* A sub-vector of data-out or data-in; *iov is malloc'd. */
static int slice(struct osd__cmd *c, const struct iovec *src, int cnt, size_t off, size_t len,
		 struct iovec **iov, int *n, size_t *got)
{
	*iov = calloc(cnt > 0 ? (size_t)cnt : 1, sizeof(**iov));
	if (!*iov)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	*n = osd__iov_slice(src, cnt, off, len, *iov, cnt, got);
	return 0;
}

/* Write @p len payload bytes found at data-out @p dout_off to @p offset. */
static int write_range(struct osd__cmd *c, uint64_t pid, uint64_t oid, size_t dout_off,
		       uint64_t len, uint64_t offset)
{
	struct iovec *iov;
	size_t got;
	int n = 0, rc;

	if (!len)
		return 0;
	rc = slice(c, c->x->out_iov, c->x->out_iovcnt, dout_off, (size_t)len, &iov, &n, &got);
	if (rc)
		return rc;
	if (got != len) { /* the data-out vectors hold less than out_len claims */
		free(iov);
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	}
	rc = osd_store_write(c->st, pid, oid, offset, iov, n, osd__data_flags(c));
	free(iov);
	return rc < 0 ? osd__fail_store(c, rc, OSD__FP_OBJECT) : 0;
}

/* The payload must be present in data-out right after the continuation segment. */
static int check_payload(struct osd__cmd *c)
{
	uint64_t len = c->cdb.length;

	if (len > SIZE_MAX || c->cont_len > c->x->out_len || len > c->x->out_len - c->cont_len)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	return 0;
}

int osd__write_payload(struct osd__cmd *c, uint64_t pid, uint64_t oid)
{
	int rc = check_payload(c);

	if (rc)
		return rc;
	if (!c->sg) {
		if (c->cdb.start > UINT64_MAX - c->cdb.length)
			return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_start(c));
		rc = write_range(c, pid, oid, c->cont_len, c->cdb.length, c->cdb.start);
	} else {
		size_t pos = c->cont_len;

		for (size_t i = 0; rc == 0 && i < c->nsg; i++) {
			rc = write_range(c, pid, oid, pos, c->sg[i].length, c->sg[i].offset);
			pos += (size_t)c->sg[i].length;
		}
	}
	if (rc == 0)
		osd__touch(c, pid, oid, OSD__TS_DATA_WRITE);
	return rc;
}

int osd__cmd_write(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	int rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_USER);

	return rc ? rc : osd__write_payload(c, o->partition, o->id);
}

/* Read one extent into data-in at @p pos; returns bytes read via *nread. */
static int read_range(struct osd__cmd *c, uint64_t offset, size_t pos, size_t len, size_t *nread)
{
	struct iovec *iov;
	size_t got;
	int n = 0, rc;

	*nread = 0;
	if (!len)
		return 0;
	rc = slice(c, c->x->in_iov, c->x->in_iovcnt, pos, len, &iov, &n, &got);
	if (rc)
		return rc;
	rc = osd_store_read(c->st, c->cdb.obj.partition, c->cdb.obj.id, offset, iov, n, nread);
	free(iov);
	if (rc == -EIO) /* a checksum mismatch, or the host could not read */
		return osd__fail_medium(c, NULL, offset + *nread);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_OBJECT);
	/* Past the logical length: the tail reads as zeros. */
	osd__resp_zero(c->x, pos + *nread, pos + len);
	if (pos + *nread > c->x->in_xferred)
		c->x->in_xferred = pos + *nread;
	return 0;
}

int osd__cmd_read(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	size_t avail = c->x->in_len, pos = 0, total = 0, nread;
	int rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_USER);

	if (rc)
		return rc;
	if (c->cdb.length > avail)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	if (!c->sg) {
		rc = read_range(c, c->cdb.start, 0, (size_t)c->cdb.length, &nread);
		total = nread;
		pos = (size_t)c->cdb.length;
	} else {
		for (size_t i = 0; rc == 0 && i < c->nsg; i++) {
			rc = read_range(c, c->sg[i].offset, pos, (size_t)c->sg[i].length, &nread);
			total += nread;
			pos += (size_t)c->sg[i].length;
		}
	}
	if (rc)
		return rc;
	c->data_len = pos;
	if (pos > c->x->in_xferred)
		c->x->in_xferred = pos;
	if (total < pos) {
		c->recovered = 1;
		c->csi = total;
	}
	osd__touch(c, o->partition, o->id, OSD__TS_DATA_READ);
	return 0;
}

int osd__cmd_append(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	struct iovec *iov;
	size_t got;
	int n = 0, rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_USER);

	if (rc == 0)
		rc = check_payload(c);
	if (rc)
		return rc;
	rc = slice(c, c->x->out_iov, c->x->out_iovcnt, c->cont_len, (size_t)c->cdb.length,
		   &iov, &n, &got);
	if (rc)
		return rc;
	if (got != c->cdb.length) {
		free(iov);
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	}
	rc = osd_store_append(c->st, o->partition, o->id, iov, n, osd__data_flags(c),
			      &c->cc_append);
	free(iov);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_OBJECT);
	c->has_append = 1;
	osd__touch(c, o->partition, o->id, OSD__TS_DATA_WRITE);
	return 0;
}

/* The range [start, start+length) clipped to the logical length. */
static int clip_range(struct osd__cmd *c, uint64_t *off, uint64_t *len)
{
	uint64_t logical;
	int rc;

	if (c->cdb.start > UINT64_MAX - c->cdb.length)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_start(c));
	rc = osd_store_length(c->st, c->cdb.obj.partition, c->cdb.obj.id, &logical);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_OBJECT);
	*off = c->cdb.start;
	*len = 0;
	if (*off < logical)
		*len = c->cdb.length < logical - *off ? c->cdb.length : logical - *off;
	return 0;
}

/*
 * CLEAR: the range reads back as zeros. Done with the store's punch, which
 * zeroes in constant time whatever the length (no unbounded zero writes).
 */
int osd__cmd_clear(struct osd__cmd *c)
{
	return osd__cmd_punch(c);
}

int osd__cmd_punch(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	uint64_t off = 0, len = 0;
	int rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_USER);

	if (rc == 0)
		rc = clip_range(c, &off, &len);
	if (rc == 0 && len) {
		int err = osd_store_punch(c->st, o->partition, o->id, off, len,
					  osd__data_flags(c));

		if (err < 0)
			rc = osd__fail_store(c, err, OSD__FP_OBJECT);
	}
	if (rc == 0)
		osd__touch(c, o->partition, o->id, OSD__TS_DATA_WRITE);
	return rc;
}

int osd__cmd_flush(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	int rc;

	if (c->cdb.flush_scope > FLUSH_SCOPE_MAX)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_OPTIONS);
	switch (c->cdb.action) {
	case OSD_ACT_FLUSH:
		rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_USER);
		if (rc == 0 && (rc = osd_store_flush_object(c->st, o->partition, o->id)) < 0)
			rc = osd__fail_store(c, rc, OSD__FP_OBJECT);
		return rc;
	case OSD_ACT_FLUSH_COLLECTION:
		rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_COLLECTION);
		break;
	case OSD_ACT_FLUSH_PARTITION:
		if (!o->partition || o->id)
			return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB,
					       o->id ? OSD__FP_OBJECT : OSD__FP_PARTITION);
		rc = osd__need_object(c, o->partition, 0, OSD_OBJ_PARTITION);
		break;
	default: /* FLUSH OSD */
		if (o->partition || o->id)
			return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_PARTITION);
		if ((rc = osd_store_flush_all(c->st)) < 0)
			return osd__fail_store(c, rc, OSD__FP_PARTITION);
		return 0;
	}
	/* A collection's members live in its partition: flushing it covers them. */
	if (rc == 0 && (rc = osd_store_flush_partition(c->st, o->partition)) < 0)
		rc = osd__fail_store(c, rc, OSD__FP_PARTITION);
	return rc;
}
