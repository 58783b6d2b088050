/*
 * Corruption matrix of the store's metadata (docs/target-store.md, "Damage
 * and salvage"). For each seed a store is built with objects of known data
 * and attributes, a checkpoint in the middle (so checkpoint.prev and
 * log.prev exist) and removals; then one piece of damage per case: the log
 * flipped, truncated (start, middle, tail), given a block of zeros (what a
 * system crash leaves), deleted, emptied, its header flipped; the
 * checkpoint flipped or deleted; an object's data file flipped, truncated
 * or deleted; its checksum sidecar flipped or deleted. Each metadata case
 * must be refused with a message naming the file (and the byte offset for a
 * damaged record), or recovered; a refused one is then salvaged. Each data
 * case opens, and every read of the damaged object fails with EIO (MEDIUM
 * ERROR) after exactly the bytes before the first damaged block, the store
 * telling its log the object and that offset; salvage rebuilds lost
 * checksums from intact data. Across all cases no wrong byte or value is
 * returned as success, no data file is deleted (live or in quarantine/),
 * and a damaged or missing checkpoint is rebuilt completely from
 * checkpoint.prev + log.prev + log.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_helpers.h"
#include "store/internal.h"

#define P1 0x10000ull
#define O1 0x10000ull
#define MAXOBJ 48
#define SEEDS 12

enum dmg {
	LOG_FLIP_START, LOG_FLIP_MID, LOG_FLIP_TAIL, LOG_TRUNC_START, LOG_TRUNC_MID,
	LOG_TRUNC_TAIL, LOG_ZERO_HOLE, LOG_DELETE, LOG_EMPTY, LOG_HDR_FLIP, CKPT_FLIP,
	CKPT_DELETE, DATA_FLIP, DATA_TRUNC, DATA_DELETE, SUMS_FLIP, SUMS_DELETE, PACK_FLIP,
	NCASES
};

static const char *const case_names[NCASES] = {
	"log flip start", "log flip middle", "log flip tail", "log truncate start",
	"log truncate middle", "log truncate tail", "log zero hole", "log delete", "log empty",
	"log header flip", "checkpoint flip", "checkpoint delete", "data flip",
	"data truncate", "data delete", "checksums flip", "checksums delete", "pack slot flip",
};

/* The data cases damage object O1 + target: reads of it fail after @p good bytes. */
struct data_dmg {
	int target;    /* object index, -1: none */
	long long good; /* bytes before the first damaged block */
};

struct expect {
	int n;
	int live[MAXOBJ];
	size_t len[MAXOBJ];
	uint32_t a1[MAXOBJ], a2[MAXOBJ]; /* a2 0: not set */
	int files;                        /* data files of live objects */
};

struct totals {
	int cases, refused, recovered, salvaged, quarantined;
	int read_errors; /* reads answered EIO (MEDIUM ERROR) */
	int revived_eio; /* removed packed objects brought back by damage: EIO */
	int index_hits;  /* checkpoint flips in its index: read from the records */
	int lazy_found;  /* checkpoint flips the open did not read: found at use */
	int meta_eio;    /* objects whose damaged records failed their use */
	int logged;      /* of them, told to the log naming object and offset */
	int missing; /* live objects lost */
	long long verified, wrong;
	int per_case_refused[NCASES];
};

static struct totals tot;

/* The store's log callback: the last error message. */
static char last_err[1024];

static void log_cb(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level == OSD_STORE_LOG_ERR)
		snprintf(last_err, sizeof(last_err), "%s", msg);
}

static uint64_t data_seed(unsigned seed, int i)
{
	return (uint64_t)seed * 1000 + (uint64_t)i;
}

static void put_obj(struct osd_store *st, struct expect *e, unsigned seed, int i,
		    unsigned *rs)
{
	static uint8_t buf[20000];
	uint64_t oid = O1 + (uint64_t)i;
	ck_assert_int_eq(osd_store_object_create(st, P1, oid, OSD_OBJ_USER, 0), 0);
	size_t len = (size_t)(rand_r(rs) % sizeof(buf));
	th_fill(buf, len, data_seed(seed, i), 0);
	struct iovec iov = { buf, len };
	if (len)
		ck_assert_int_eq(osd_store_write(st, P1, oid, 0, &iov, 1, 0), 0);
	e->a1[i] = (uint32_t)(seed * 7919u + (unsigned)i * 3u + 1u);
	/* A lazy value (as an access time is) logged with a1 in one ATTRS record. */
	ck_assert_int_eq(osd_store_attr_set(st, P1, oid, 0x10000, 3, &e->a1[i], 4,
					    OSD_STORE_LAZY), 0);
	ck_assert_int_eq(osd_store_attr_set(st, P1, oid, 0x10000, 1, &e->a1[i], 4, 0), 0);
	e->live[i] = 1;
	e->len[i] = len;
}

/* A store for @p seed: half the objects, a checkpoint, the rest, removals. */
static void build(const char *dir, unsigned seed, struct expect *e)
{
	unsigned rs = seed * 2654435761u + 1;
	struct osd_store *st = th_open(dir);
	memset(e, 0, sizeof(*e));
	e->n = 24 + (int)(seed % 16);
	ck_assert_int_eq(osd_store_partition_create(st, P1, 0), 0);
	for (int i = 0; i < e->n / 2; i++)
		put_obj(st, e, seed, i, &rs);
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	ck_assert_int_eq(osd__store_compact(st), 0);
	for (int i = e->n / 2; i < e->n; i++)
		put_obj(st, e, seed, i, &rs);
	for (int i = 0; i < e->n / 2; i += 3) {
		e->a2[i] = (uint32_t)(seed + (unsigned)i + 100);
		ck_assert_int_eq(osd_store_attr_set(st, P1, O1 + (uint64_t)i, 0x10000, 2,
						    &e->a2[i], 4, 0), 0);
	}
	for (int i = 3; i < e->n; i += 7) {
		ck_assert_int_eq(osd_store_object_remove(st, P1, O1 + (uint64_t)i, 0), 0);
		e->live[i] = 0;
	}
	ck_assert_int_eq(osd_store_flush_all(st), 0);
	osd_store_close(st);
	for (int i = 0; i < e->n; i++)
		e->files += e->live[i] && e->len[i] > OSD__PACK_SLOT; /* smaller ones are packed */
}

static off_t file_size(const char *dir, const char *name)
{
	char p[4200];
	struct stat sb;
	th_path(p, sizeof(p), dir, name);
	return stat(p, &sb) == 0 ? sb.st_size : -1;
}

static void flip(const char *dir, const char *name, off_t pos, unsigned *rs)
{
	char p[4200];
	uint8_t b;
	th_path(p, sizeof(p), dir, name);
	int fd = open(p, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, pos), 1);
	b ^= (uint8_t)(1 + rand_r(rs) % 255);
	ck_assert_int_eq(pwrite(fd, &b, 1, pos), 1);
	close(fd);
}

static void cut(const char *dir, const char *name, off_t len)
{
	char p[4200];
	th_path(p, sizeof(p), dir, name);
	ck_assert_int_eq(truncate(p, len), 0);
}

/* 512 aligned zero bytes in the second half: pages a system crash did not write. */
static void zero_hole(const char *dir, off_t size, unsigned *rs)
{
	static const uint8_t zeros[512];
	char p[4200];
	off_t blocks = size / 512;
	ck_assert_int_ge(blocks, 2);
	off_t at = (blocks / 2 + rand_r(rs) % (blocks - blocks / 2)) * 512;
	th_path(p, sizeof(p), dir, "log");
	int fd = open(p, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, zeros, sizeof(zeros), at), (ssize_t)sizeof(zeros));
	close(fd);
}

static void del(const char *dir, const char *name)
{
	char p[4200];
	th_path(p, sizeof(p), dir, name);
	ck_assert_int_eq(unlink(p), 0);
}

/* The data file (or sidecar) name of object index @p i: generations are
 * given in creation order from 1, and every object here is created once. */
static void obj_file(char *out, size_t n, int i, int sums)
{
	uint64_t gen = (uint64_t)i + 1;
	snprintf(out, n, "data/%02x/%016llx%s", (unsigned)(gen & 0xff), (unsigned long long)gen,
		 sums ? ".sum" : "");
}

/* Damage one object's data or checksums; *d says what reads must see. */
static void damage_data(const char *dir, const struct expect *e, enum dmg c, unsigned *rs,
			struct data_dmg *d)
{
	char name[64];
	int cand[MAXOBJ], n = 0;
	/* an object with a data file, or a packed one for PACK_FLIP */
	for (int i = 0; i < e->n; i++)
		if (e->live[i] && e->len[i] > 0 && (e->len[i] > OSD__PACK_SLOT) == (c != PACK_FLIP))
			cand[n++] = i;
	ck_assert_int_gt(n, 0);
	int i = cand[rand_r(rs) % n];
	long long len = (long long)e->len[i], at;
	d->target = i;
	obj_file(name, sizeof(name), i, c == SUMS_FLIP || c == SUMS_DELETE);
	switch (c) {
	case PACK_FLIP: {
		/* a byte of its slot in data/pack: the whole object fails */
		struct osd_store *st = th_open(dir);
		struct osd__obj *o = osd__ns_find(st, P1, O1 + (uint64_t)i);
		ck_assert_ptr_nonnull(o);
		ck_assert_int_eq(o->packed, 1);
		long long slot = o->slot;
		osd_store_close(st);
		flip(dir, "data/" OSD__PACK_NAME, slot * OSD__PACK_SLOT + rand_r(rs) % len, rs);
		d->good = 0;
		break;
	}
	case DATA_FLIP:
		at = rand_r(rs) % len;
		flip(dir, name, at, rs);
		d->good = at / 4096 * 4096;
		break;
	case DATA_TRUNC:
		at = rand_r(rs) % len;
		cut(dir, name, at);
		d->good = at / 4096 * 4096;
		break;
	case DATA_DELETE:
	case SUMS_DELETE:
		del(dir, name);
		d->good = 0;
		break;
	case SUMS_FLIP: {
		/* the header or the entry of one block */
		long long blocks = (len + 4095) / 4096;
		long long b = rand_r(rs) % (blocks + 1) - 1;
		at = b < 0 ? rand_r(rs) % 64 : 64 + 4 * b + rand_r(rs) % 4;
		flip(dir, name, at, rs);
		d->good = b < 0 ? 0 : b * 4096;
		break;
	}
	default:
		ck_abort();
	}
}

/* The last CKPT_FLIP hit the checkpoint's head or index, not its records. */
static int ckpt_index_hit;

/* Where the records of the checkpoint start (after its index). */
static off_t records_off(const char *dir)
{
	uint8_t *buf;
	size_t len, off;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(osd__read_file(dfd, "checkpoint", &buf, &len), 0);
	close(dfd);
	ck_assert_int_eq(osd__table_records(buf, len, &off), 0);
	free(buf);
	return (off_t)off;
}

/* Damage the store; @return the damaged byte (-1 if not a single byte). */
static off_t damage(const char *dir, enum dmg c, unsigned *rs)
{
	off_t lz = file_size(dir, "log"), cz = file_size(dir, "checkpoint");
	off_t body = lz - OSD__FILE_HDR, pos = -1;
	ck_assert_int_gt(body, 64);
	switch (c) {
	case LOG_FLIP_START: pos = OSD__FILE_HDR + rand_r(rs) % 64; break;
	case LOG_FLIP_MID: pos = OSD__FILE_HDR + body / 4 + rand_r(rs) % (body / 2); break;
	case LOG_FLIP_TAIL: pos = lz - 1 - rand_r(rs) % 24; break;
	case LOG_TRUNC_START: cut(dir, "log", OSD__FILE_HDR + rand_r(rs) % 64); return -1;
	case LOG_TRUNC_MID: cut(dir, "log", OSD__FILE_HDR + body / 4 + rand_r(rs) % (body / 2));
		return -1;
	case LOG_TRUNC_TAIL: cut(dir, "log", lz - 1 - rand_r(rs) % 24); return -1;
	case LOG_ZERO_HOLE: zero_hole(dir, lz, rs); return -1;
	case LOG_DELETE: del(dir, "log"); return -1;
	case LOG_EMPTY: cut(dir, "log", 0); return -1;
	case LOG_HDR_FLIP: flip(dir, "log", rand_r(rs) % OSD__FILE_HDR, rs); return -1;
	case CKPT_FLIP:
		pos = rand_r(rs) % cz;
		ckpt_index_hit = pos >= OSD__FILE_HDR && pos < records_off(dir);
		flip(dir, "checkpoint", pos, rs);
		return pos;
	case CKPT_DELETE: del(dir, "checkpoint"); return -1;
	default: ck_abort();
	}
	flip(dir, "log", pos, rs);
	return pos;
}

/* A file salvage moved to quarantine/, not a report it wrote there. */
static int not_salvage_report(const char *name)
{
	return strstr(name, "salvaged") == NULL;
}

/* Files in data/00..ff, and in quarantine/ (data files only). */
static void data_files(const char *dir, int *live, int *quar)
{
	char p[4200];
	*live = (int)th_data_entries(dir, NULL);
	snprintf(p, sizeof(p), "%s/quarantine", dir);
	*quar = (int)th_dir_entries(p, not_salvage_report);
}

/*
 * Everything the store returns as success must be what was written. A read
 * may fail with EIO only for the damaged object @p d, after exactly the
 * bytes before its first damaged block, and the store's log names both.
 */
static int verify(struct osd_store *st, const struct expect *e, unsigned seed,
		  const struct data_dmg *d)
{
	static uint8_t buf[20001];
	int present = 0;
	for (int i = 0; i < e->n; i++) {
		uint64_t oid = O1 + (uint64_t)i;
		last_err[0] = 0;
		if (osd_store_object_type(st, P1, oid, NULL) != 0)
			continue;
		present++;
		struct iovec iov = { buf, sizeof(buf) };
		size_t got = 0, vl;
		uint32_t v;
		int r = osd_store_read(st, P1, oid, 0, &iov, 1, &got);
		if (r == -EIO && !d && !got && strstr(last_err, "are damaged")) {
			/* a checkpoint flip in the records of an object without data,
			 * found when it is loaded: it fails whole, never reads wrong */
			ck_assert_int_eq(osd_store_attr_get(st, P1, oid, 0x10000, 1, &v, 4, &vl),
					 -EIO);
			tot.meta_eio++;
			continue;
		}
		if (r == -EIO && !e->live[i] && !got) {
			/* a REMOVE lost to damage brought back a packed object whose
			 * slot was let go: its reads fail, never return bytes */
			tot.revived_eio++;
			continue;
		}
		if (r == -EIO) {
			char want[96];
			ck_assert_msg(d && d->target == i, "object %d: unexpected EIO: %s", i,
				      last_err);
			ck_assert_int_eq((long long)got, d->good);
			tot.read_errors++;
			snprintf(want, sizeof(want), "object 0x%llx in partition 0x%llx",
				 (unsigned long long)oid, (unsigned long long)P1);
			ck_assert_msg(strstr(last_err, want), "%s", last_err);
			snprintf(want, sizeof(want), "at byte %lld", d->good);
			ck_assert_msg(strstr(last_err, want), "%s", last_err);
			tot.logged++;
		} else {
			ck_assert_int_eq(r, 0);
		}
		if (!e->live[i]) {
			/* a REMOVE lost to damage may bring the object back, never its bytes */
			tot.wrong += (long long)got;
			continue;
		}
		size_t good = got < e->len[i] ? got : e->len[i];
		tot.verified += (long long)good;
		tot.wrong += (long long)(got - good);
		for (size_t k = 0; k < good; k++)
			tot.wrong += !th_check(buf + k, 1, data_seed(seed, i), k);
		if (osd_store_attr_get(st, P1, oid, 0x10000, 1, &v, 4, &vl) == 0)
			tot.wrong += vl != 4 || v != e->a1[i];
		/* the lazy value and a1 came in one record: both or neither */
		int a3 = osd_store_attr_get(st, P1, oid, 0x10000, 3, &v, 4, &vl);
		if (a3 == 0)
			tot.wrong += vl != 4 || v != e->a1[i];
		tot.wrong += (a3 == 0) != (osd_store_attr_get(st, P1, oid, 0x10000, 1, NULL, 0,
								NULL) == 0);
		if (osd_store_attr_get(st, P1, oid, 0x10000, 2, &v, 4, &vl) == 0)
			tot.wrong += vl != 4 || v != e->a2[i];
	}
	return present;
}

/* The byte offset a refusal names ("... at byte N"), or -1. */
static long long named_offset(const char *err)
{
	const char *p = strstr(err, "at byte ");
	return p ? strtoll(p + 8, NULL, 10) : -1;
}

static int open_logged(struct osd_store **st, const char *dir, int salvage, char *err,
		       size_t errlen)
{
	struct osd_store_options so = { .salvage = salvage, .log = log_cb };
	return osd_store_open(st, dir, &so, err, errlen);
}

/* Data damage: the store opens; the damaged object's reads fail where the
 * damage is (also after a reopen); salvage recomputes lost checksums. */
static int data_case(const char *dir, unsigned seed, enum dmg c, const struct expect *e,
		     const struct data_dmg *d, struct osd_store **stp)
{
	char err[1024] = "";
	int r = open_logged(stp, dir, 0, err, sizeof(err));
	ck_assert_msg(r == 0, "%s, seed %u: %d %s", case_names[c], seed, r, err);
	tot.recovered++;
	int before = tot.read_errors;
	int present = verify(*stp, e, seed, d);
	/* the damage is never read around */
	ck_assert_msg(tot.read_errors == before + 1, "%s, seed %u: object %d read back whole",
		      case_names[c], seed, d->target);
	osd_store_close(*stp);
	ck_assert_int_eq(open_logged(stp, dir, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(verify(*stp, e, seed, d), present);
	ck_assert_int_eq(tot.read_errors, before + 2);
	osd_store_close(*stp);
	ck_assert_int_eq(open_logged(stp, dir, 1, err, sizeof(err)), 0);
	tot.salvaged++;
	before = tot.read_errors;
	ck_assert_int_eq(verify(*stp, e, seed, d), present);
	/* lost checksums of intact data come back; damaged data never reads as good */
	if (c == SUMS_DELETE)
		ck_assert_int_eq(tot.read_errors, before);
	else if (c != SUMS_FLIP)
		ck_assert_int_eq(tot.read_errors, before + 1);
	return present;
}

static void run_case(unsigned seed, enum dmg c)
{
	char *dir = th_mkdtemp();
	char err[1024] = "";
	struct expect e;
	unsigned rs = seed * 31u + (unsigned)c * 7u + 5u;
	struct osd_store *st = NULL;
	struct data_dmg d = { -1, 0 };
	int live0, q0, live, quar, present, nlive = 0;

	build(dir, seed, &e);
	data_files(dir, &live0, &q0);
	/* each data file with its checksum sidecar */
	ck_assert_int_eq(live0, 2 * e.files);
	for (int i = 0; i < e.n; i++)
		nlive += e.live[i];
	tot.cases++;
	if (c >= DATA_FLIP) {
		damage_data(dir, &e, c, &rs, &d);
		present = data_case(dir, seed, c, &e, &d, &st);
		goto done;
	}
	ckpt_index_hit = 0;
	off_t pos = damage(dir, c, &rs);
	int ckpt = c == CKPT_FLIP || c == CKPT_DELETE;
	int r = open_logged(&st, dir, 0, err, sizeof(err));
	int lazy = c == CKPT_FLIP && r == 0 && !ckpt_index_hit;
	if (ckpt_index_hit) {
		/* the index is made from the records, which are whole: read them */
		ck_assert_msg(r == 0, "%s, seed %u: %d %s", case_names[c], seed, r, err);
		ck_assert_msg(strstr(osd_store_error(st), "index is damaged"), "%s, seed %u: %s",
			      case_names[c], seed, osd_store_error(st));
		tot.index_hits++;
	}
	if (r == -EUCLEAN) {
		tot.refused++;
		tot.per_case_refused[c]++;
		ck_assert_msg(strstr(err, ckpt ? "/checkpoint" : "/log"), "%s, seed %u: %s",
			      case_names[c], seed, err);
		ck_assert_msg(strstr(err, "salvage"), "%s: %s", case_names[c], err);
		if (pos >= OSD__FILE_HDR) {
			long long at = named_offset(err);
			ck_assert_msg(at >= OSD__FILE_HDR && at <= pos && pos - at <= 0x10030,
				      "%s, seed %u: flipped %lld, named %lld: %s", case_names[c],
				      seed, (long long)pos, at, err);
		}
		struct osd_store_options so = { .salvage = 1 };
		r = osd_store_open(&st, dir, &so, err, sizeof(err));
		ck_assert_msg(r == 0, "salvage %s, seed %u: %d %s", case_names[c], seed, r, err);
		tot.salvaged++;
	} else {
		ck_assert_msg(r == 0, "%s, seed %u: %d %s", case_names[c], seed, r, err);
		tot.recovered++;
	}
	present = verify(st, &e, seed, NULL);
	if (ckpt) /* rebuilt from checkpoint.prev + log.prev + log: nothing lost */
		ck_assert_msg(present == nlive, "%s, seed %u: %d objects of %d: %s",
			      case_names[c], seed, present, nlive, err);
	osd_store_close(st);
	/* What the store holds after a reopen is what it returned before. */
	ck_assert_int_eq(open_logged(&st, dir, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(verify(st, &e, seed, NULL), present);
	if (lazy) {
		/* the open reads the index alone; salvage reads the records whole
		 * and rebuilds what they lost from checkpoint.prev and the logs */
		int eio = tot.meta_eio;
		tot.lazy_found++;
		osd_store_close(st);
		ck_assert_int_eq(open_logged(&st, dir, 1, err, sizeof(err)), 0);
		ck_assert_int_eq(verify(st, &e, seed, NULL), nlive);
		ck_assert_int_eq(tot.meta_eio, eio);
	}
done:
	osd_store_close(st);
	data_files(dir, &live, &quar);
	ck_assert_msg(live + quar == live0, "%s, seed %u: %d data files + %d quarantined, "
		      "had %d", case_names[c], seed, live, quar, live0);
	tot.quarantined += quar;
	tot.missing += nlive - present;
	th_rmtree(dir);
}

START_TEST(t_matrix)
{
	unsigned base = getenv("OSD_DAMAGE_SEED") ? (unsigned)atoi(getenv("OSD_DAMAGE_SEED")) : 1;
	for (unsigned s = 0; s < SEEDS; s++)
		for (int c = 0; c < NCASES; c++)
			run_case(base + s, (enum dmg)c);
	printf("STORE damage: cases=%d refused=%d recovered=%d salvaged=%d "
	       "objects_lost=%d files_quarantined=%d read_errors=%d (logged %d) "
	       "revived_eio=%d index_hits=%d found_at_use=%d (objects %d) "
	       "bytes_verified=%lld wrong=%lld\n",
	       tot.cases, tot.refused, tot.recovered, tot.salvaged, tot.missing,
	       tot.quarantined, tot.read_errors, tot.logged, tot.revived_eio, tot.index_hits,
	       tot.lazy_found, tot.meta_eio, tot.verified, tot.wrong);
	for (int c = 0; c < NCASES; c++)
		printf("STORE damage: %-20s refused %d of %d\n", case_names[c],
		       tot.per_case_refused[c], SEEDS);
	ck_assert_int_eq(tot.logged, tot.read_errors);
	ck_assert_int_eq(tot.wrong, 0);
	/* Damage with intact records after it is never cut silently. */
	ck_assert_int_eq(tot.per_case_refused[LOG_FLIP_START], SEEDS);
	ck_assert_int_eq(tot.per_case_refused[LOG_FLIP_MID], SEEDS);
	/* A crash leaves these, and nothing acknowledged after them: cut, not refused. */
	ck_assert_int_eq(tot.per_case_refused[LOG_ZERO_HOLE], 0);
	ck_assert_int_eq(tot.per_case_refused[LOG_TRUNC_MID], 0);
	ck_assert_int_eq(tot.per_case_refused[LOG_DELETE], SEEDS);
	ck_assert_int_eq(tot.per_case_refused[LOG_EMPTY], SEEDS);
	ck_assert_int_eq(tot.per_case_refused[LOG_HDR_FLIP], SEEDS);
	/* damage of records the open reads is refused, of the index (made from
	 * the records) read around, of other records found when used */
	ck_assert_int_gt(tot.index_hits, 0);
	ck_assert_int_eq(tot.per_case_refused[CKPT_FLIP] + tot.index_hits + tot.lazy_found, SEEDS);
	ck_assert_int_eq(tot.per_case_refused[CKPT_DELETE], SEEDS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store_damage");
	TCase *tc = tcase_create("matrix");
	tcase_add_test(tc, t_matrix);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
