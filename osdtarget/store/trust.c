/*
 * Read trust: verify a data block once per stay in the page cache, as ZFS
 * verifies a block read from disk into the ARC and not on ARC hits.
 *
 * A block is trusted when the store verified the bytes it copied out of
 * the block's page, or computed the block's checksum from the exact bytes
 * it wrote there. A READ whose blocks are all trusted copies them with
 * preadv2(RWF_NOWAIT): it succeeds only from pages already in the cache,
 * so the bytes come from the pages that were verified unless the kernel
 * dropped one and read it back from disk in between. Every way the store
 * itself makes the kernel read a page from disk first clears the trust of
 * the blocks it may read and bumps the object's trust epoch (tepoch); a
 * trusted READ that sees the epoch move while it copied verifies what it
 * copied. Descriptors are opened with POSIX_FADV_RANDOM, so the store's
 * reads bring in only the pages they ask for (no readahead that could
 * read a trusted block's dropped page back unseen). Writes by other
 * processes change the file's ctime: a trusted READ that finds it moved
 * since the store's last own change drops all trust of the object.
 * Reasoning and the residual risk: docs/target-store.md, "Read trust".
 *
 * All of it is under obj->mu. A copy that finds a page missing has started
 * that page's read from disk before RWF_NOWAIT returns, and bumps the epoch
 * only after: so each copy holds a slot naming the blocks it may read in
 * until it has bumped, and a copy of trusted blocks counts as trusted only
 * if no other copy in flight covers any of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/internal.h"

#define WORD 64u
/* Folios of filesystems with blocks larger than a page are this large at
 * most (64 KiB blocks): a fault of one block may read its neighbours. */
#define FAULT_ALIGN (65536u / OSD__SUM_BLOCK)
/* Trust covers the first 32 GiB of an object (a 1 MiB bitmap at most) ... */
#define TRUST_MAX_BLOCKS (1ull << 23)
/* ... and the bitmaps of all stores of the process take at most 64 MiB (2 TiB
 * of trusted blocks, more than a page cache holds): past that, reads verify. */
#define TRUST_BUDGET (64u << 20)
static _Atomic uint64_t trust_bytes;

void osd__trust_drop(struct osd__obj *o)
{
	struct osd__obj_io *io = o->io;
	if (!io)
		return; /* no descriptor was ever open: nothing trusted */
	atomic_fetch_sub(&trust_bytes, io->tcap / 8);
	free(io->tbits);
	io->tbits = NULL;
	io->tcap = 0;
	io->tvalid = 0;
	atomic_fetch_add(&io->tepoch, 1);
}

/* [lo, hi) widened to the folios a read of it may bring in. */
static void fault_range(uint64_t *lo, uint64_t *hi)
{
	*lo -= *lo % FAULT_ALIGN;
	*hi = *hi > UINT64_MAX - FAULT_ALIGN ? UINT64_MAX
	      : (*hi + FAULT_ALIGN - 1) / FAULT_ALIGN * FAULT_ALIGN;
}

uint64_t osd__trust_fault(struct osd__obj *o, uint64_t lo, uint64_t hi)
{
	struct osd__obj_io *io = o->io;
	fault_range(&lo, &hi);
	if (hi > io->tcap)
		hi = io->tcap;
	for (uint64_t b = lo; b < hi;) {
		if (b % WORD == 0 && hi - b >= WORD) {
			io->tbits[b / WORD] = 0;
			b += WORD;
		} else {
			io->tbits[b / WORD] &= ~(1ull << (b % WORD));
			b++;
		}
	}
	return atomic_fetch_add(&io->tepoch, 1) + 1;
}

int osd__trust_covers(const struct osd__obj *o, uint64_t lo, uint64_t hi)
{
	const struct osd__obj_io *io = o->io;
	if (!io || hi > io->tcap || !io->tvalid)
		return 0;
	for (uint64_t b = lo; b < hi; b++) {
		uint64_t w = io->tbits[b / WORD];
		if (b % WORD == 0 && hi - b >= WORD) {
			if (w != UINT64_MAX)
				return 0;
			b += WORD - 1;
		} else if (!(w & (1ull << (b % WORD)))) {
			return 0;
		}
	}
	return 1;
}

void osd__trust_grant(struct osd__obj *o, uint64_t epoch, uint64_t lo, uint64_t hi)
{
	struct osd__obj_io *io = o->io;
	if (epoch != atomic_load(&io->tepoch) || !io->tvalid)
		return;
	if (hi > TRUST_MAX_BLOCKS)
		hi = TRUST_MAX_BLOCKS;
	if (lo >= hi)
		return;
	if (hi > io->tcap) {
		uint64_t cap = io->tcap ? io->tcap : 4096;
		while (cap < hi)
			cap *= 2;
		uint64_t more = (cap - io->tcap) / 8;
		if (atomic_fetch_add(&trust_bytes, more) + more > TRUST_BUDGET) {
			atomic_fetch_sub(&trust_bytes, more);
			return; /* no more trust: reads verify */
		}
		uint64_t *nb = realloc(io->tbits, (size_t)(cap / WORD * 8));
		if (!nb) {
			atomic_fetch_sub(&trust_bytes, more);
			return;
		}
		memset(nb + io->tcap / WORD, 0, (size_t)((cap - io->tcap) / WORD * 8));
		io->tbits = nb;
		io->tcap = cap;
	}
	for (uint64_t b = lo; b < hi;) {
		if (b % WORD == 0 && hi - b >= WORD) {
			io->tbits[b / WORD] = UINT64_MAX;
			b += WORD;
		} else {
			io->tbits[b / WORD] |= 1ull << (b % WORD);
			b++;
		}
	}
}

static int ts_eq(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

int osd__trust_ctime(int fd, struct timespec *ts)
{
	struct stat sb;
	if (fstat(fd, &sb) != 0)
		return -errno;
	*ts = sb.st_ctim;
	return 0;
}

/* @p now: the data file's ctime. Someone else changed the file since the
 * store's last own change: nothing of it is trusted any more. */
static void external_check(struct osd__obj *o, const struct timespec *now)
{
	struct osd__obj_io *io = o->io;
	if (io->tvalid && !io->tchanging && !ts_eq(now, &io->tctime))
		osd__trust_drop(o);
}

uint64_t osd__trust_change_begin(struct osd__obj *o, int fd, uint64_t lo, uint64_t hi)
{
	struct osd__obj_io *io = o->io;
	struct timespec now;
	if (osd__trust_ctime(fd, &now) != 0)
		osd__trust_drop(o);
	else
		external_check(o, &now);
	io->tchanging = 1; /* the change moves the ctime: known again at its end */
	io->tvalid = 0;
	return osd__trust_fault(o, lo, hi);
}

void osd__trust_change_end(struct osd__obj *o, const struct timespec *ctime)
{
	struct osd__obj_io *io = o->io;
	io->tctime = *ctime;
	io->tvalid = 1;
	io->tchanging = 0;
}

int osd__trust_read_ok(struct osd__obj *o, uint64_t epoch, const struct timespec *c0,
		       const struct timespec *now)
{
	struct osd__obj_io *io = o->io;
	if (io->tchanging)
		return 0;
	if (!c0) /* tvalid when the read began: tctime is the file's ctime before it */
		c0 = &io->tctime;
	if (!ts_eq(c0, now)) { /* changed during the read */
		external_check(o, now);
		return 0;
	}
	external_check(o, now);
	if (!io->tvalid && epoch == atomic_load(&io->tepoch)) {
		/* nothing is trusted yet (or any more) and nobody changed the
		 * file while it was read: this ctime is the file's */
		io->tctime = *now;
		io->tvalid = 1;
	}
	return io->tvalid && epoch == atomic_load(&io->tepoch);
}

int osd__trust_copy_begin(struct osd__obj *o, uint64_t lo, uint64_t hi)
{
	struct osd__obj_io *io = o->io;
	for (int i = 0; i < OSD__TRUST_COPIES; i++) {
		if (!(io->copies & (1u << i))) {
			fault_range(&lo, &hi);
			io->copies |= 1u << i;
			io->copy_lo[i] = lo;
			io->copy_hi[i] = hi;
			return i;
		}
	}
	return -1;
}

int osd__trust_copy_alone(const struct osd__obj *o, int slot, uint64_t lo, uint64_t hi)
{
	const struct osd__obj_io *io = o->io;
	for (int i = 0; i < OSD__TRUST_COPIES; i++)
		if (i != slot && (io->copies & (1u << i)) && io->copy_lo[i] < hi && lo < io->copy_hi[i])
			return 0;
	return 1;
}

void osd__trust_copy_end(struct osd__obj *o, int slot)
{
	struct osd__obj_io *io = o->io;
	if (slot >= 0)
		io->copies &= ~(1u << slot);
}
