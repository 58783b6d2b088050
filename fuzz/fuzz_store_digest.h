/*
 * A digest of everything a store holds, through its API: partitions,
 * objects, types, every attribute, quotas, lengths, capacity and packed
 * objects' state. A fuzz target compares it before and after a checkpoint
 * and reopen. The includer defines fz_fail().
 */
#ifndef FUZZ_STORE_DIGEST_H
#define FUZZ_STORE_DIGEST_H

#include <errno.h>
#include <stdint.h>

#include "store/internal.h"
#include "store/store.h"

#define FZ_LIST_MAX 64

static void fz_fail(const char *what, int rc);

/* FNV-1a over the recovered state. */
static void fz_mix(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 0x100000001B3ULL;
}

static void fz_mix_u64(uint64_t *h, uint64_t v)
{
	fz_mix(h, &v, sizeof(v));
}

static int fz_attr_cb(uint32_t page, uint32_t num, const void *val, size_t len, void *payload)
{
	uint64_t *h = payload;

	fz_mix_u64(h, ((uint64_t)page << 32) | num);
	fz_mix_u64(h, len);
	fz_mix(h, val, len);
	return 0;
}

/* A packed object's slot, CRC and damage mark must survive a checkpoint too. */
static void fz_digest_pack(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *h)
{
	struct osd__obj *o = osd__ns_get(st, pid, oid);
	uint64_t used = 0;

	if (!o)
		fz_fail("object listed but not found", -ENOENT);
	fz_mix_u64(h, o->packed);
	fz_mix_u64(h, o->packed ? o->slot : 0);
	fz_mix_u64(h, o->packed ? o->pcrc : 0);
	fz_mix_u64(h, o->sums_bad);
	osd__obj_put(st, o);
	fz_mix_u64(h, (uint64_t)osd_store_used(st, pid, oid, &used));
	fz_mix_u64(h, used);
}

/* One object's type, attributes, quota, length and pack state. */
static void fz_digest_obj(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *h)
{
	enum osd_obj_type type = 0;
	uint64_t v = 0;
	int rc;

	fz_mix_u64(h, pid);
	fz_mix_u64(h, oid);
	rc = osd_store_object_type(st, pid, oid, &type);
	fz_mix_u64(h, (uint64_t)rc);
	fz_mix_u64(h, type);
	fz_mix_u64(h, (uint64_t)osd_store_attr_iterate(st, pid, oid, OSD_STORE_ALL_PAGES,
							  fz_attr_cb, h));
	rc = osd_store_get_quota(st, pid, oid, &v);
	fz_mix_u64(h, (uint64_t)rc);
	fz_mix_u64(h, rc ? 0 : v);
	if (type == OSD_OBJ_USER) {
		v = 0;
		rc = osd_store_length(st, pid, oid, &v);
		fz_mix_u64(h, (uint64_t)rc);
		fz_mix_u64(h, v);
		fz_digest_pack(st, pid, oid, h);
	}
}

static void fz_digest_part(struct osd_store *st, uint64_t pid, uint64_t *h)
{
	uint64_t ids[FZ_LIST_MAX], start = 0, next;
	size_t n;

	fz_digest_obj(st, pid, 0, h);
	do {
		if (osd_store_object_list(st, pid, start, 0, ids, FZ_LIST_MAX, &n, &next) != 0)
			fz_fail("object list", -EIO);
		for (size_t i = 0; i < n; i++)
			fz_digest_obj(st, pid, ids[i], h);
		if (next && next <= start)
			fz_fail("object list does not advance", -ELOOP);
		start = next;
	} while (next);
}

static uint64_t fz_digest(struct osd_store *st)
{
	uint64_t h = 0xCBF29CE484222325ULL, ids[FZ_LIST_MAX], start = 0, next, total = 0;
	size_t n;

	fz_digest_obj(st, 0, 0, &h);
	fz_mix_u64(&h, (uint64_t)osd_store_capacity(st, &total, NULL));
	fz_mix_u64(&h, total);
	do {
		if (osd_store_partition_list(st, start, ids, FZ_LIST_MAX, &n, &next) != 0)
			fz_fail("partition list", -EIO);
		for (size_t i = 0; i < n; i++)
			fz_digest_part(st, ids[i], &h);
		if (next && next <= start)
			fz_fail("partition list does not advance", -ELOOP);
		start = next;
	} while (next);
	return h;
}

#endif
