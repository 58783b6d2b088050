/*
 * osdfs_fsck(): one checking pass over the unmounted backend, the repairs
 * it planned, and a second pass that verifies the result. Findings of the
 * first pass are reported; whatever the second pass still finds is counted
 * as unrepaired.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsck/fsck_state.h"
#include "search/sorted_ids.h"

static const char *const kind_names[OSDFS_FSCK_KIND_COUNT] = {
	"superblock", "mount-record", "counters", "bad-inode", "orphan", "link-count",
	"dangling-entry", "bad-size", "corrupt-directory", "duplicate-entry", "parent",
	"data-io",
};

const char *osdfs_fsck_kind_name(enum osdfs_fsck_kind kind)
{
	return (unsigned)kind < OSDFS_FSCK_KIND_COUNT ? kind_names[kind] : "unknown";
}

void osdfs__fsck_finding(struct fsck *f, enum osdfs_fsck_kind kind, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	f->found++;
	if (f->quiet)
		return;
	f->rep->found[kind]++;
	f->rep->total++;
	if (!f->opts->cb)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f->opts->cb(kind, msg, f->opts->payload);
}

/*
 * Inode numbers are allocated in order, so those in use are mostly dense:
 * then a table of 4 bytes a number finds an inode with one access (40 MB at
 * 10M inodes) where even an interpolation search strays into the 1.5 GB of
 * inodes, a cache and TLB miss a step. Sparse numbers, or no memory for the
 * table, leave the search.
 */
void osdfs__fsck_index(struct fsck *f)
{
	uint64_t base, span;

	free(f->slot);
	f->slot = NULL;
	if (f->ninodes == 0 || f->ninodes >= FSCK_NO_SLOT)
		return;
	base = f->inodes[0].ino;
	span = f->inodes[f->ninodes - 1].ino - base + 1;
	if (span > 2 * (uint64_t)f->ninodes + 4096 || !(f->slot = malloc(span * sizeof(*f->slot))))
		return;
	memset(f->slot, 0xff, span * sizeof(*f->slot));
	for (size_t i = 0; i < f->ninodes; i++)
		f->slot[f->inodes[i].ino - base] = (uint32_t)i;
	f->slot_base = base;
	f->slot_len = span;
}

/* The index in f->inodes of @p ino's inode, or SIZE_MAX. */
static size_t fsck_slot(const struct fsck *f, uint64_t ino)
{
	size_t i;

	if (f->slot) {
		if (ino < f->slot_base || ino - f->slot_base >= f->slot_len)
			return SIZE_MAX;
		i = f->slot[ino - f->slot_base];
		return i == FSCK_NO_SLOT ? SIZE_MAX : i;
	}
	i = osd__sorted_lower(f->inodes, f->ninodes, sizeof(f->inodes[0]), ino);
	return i < f->ninodes && f->inodes[i].ino == ino ? i : SIZE_MAX;
}

struct fsck_inode *osdfs__fsck_find(struct fsck *f, uint64_t ino)
{
	size_t i = fsck_slot(f, ino);

	return i == SIZE_MAX ? NULL : &f->inodes[i];
}

void osdfs__fsck_resolve(struct fsck *f, struct fsck_dir *dp)
{
	for (size_t i = 0; i < dp->nents; i++) {
		/* The table finds an inode without reading it (the walks after
		 * fetch the inodes ahead), but is itself 40 MB at 10M inodes:
		 * its slots are fetched ahead here. */
		if (f->slot && i + FSCK_AHEAD < dp->nents) {
			uint64_t a = dp->ents[i + FSCK_AHEAD].ino - f->slot_base;

			if (a < f->slot_len)
				__builtin_prefetch(&f->slot[a]);
		}
		dp->ents[i].to = osdfs__fsck_find(f, dp->ents[i].ino);
	}
}

const char *osdfs__fsck_dir_path(struct fsck *f, const struct fsck_inode *ip, char *buf,
				 size_t size)
{
	const char *parts[64];
	size_t n = 0, len = 0;

	while (ip && ip->ino != f->sb.root_ino && ip->dir && ip->dir->name && n < 64) {
		parts[n++] = ip->dir->name;
		ip = osdfs__fsck_find(f, ip->dir->found_parent);
	}
	if (!ip || (ip->ino != f->sb.root_ino)) {
		len = (size_t)snprintf(buf, size, "#%llu", ip ? (unsigned long long)ip->ino : 0ULL);
	} else if (n == 0) {
		snprintf(buf, size, "/");
		return buf;
	} else {
		buf[0] = '\0';
	}
	while (n > 0 && len < size)
		len += (size_t)snprintf(buf + len, size - len, "/%s", parts[--n]);
	return buf;
}

static void state_free(struct fsck *f)
{
	for (size_t i = 0; i < f->ninodes; i++) {
		struct fsck_dir *d = f->inodes[i].dir;

		if (d) {
			free(d->ents);
			free(d->names);
			free(d);
		}
	}
	free(f->inodes);
	free(f->slot);
	f->slot = NULL;
	free(f->xbuf);
	f->xbuf = NULL;
	f->inodes = NULL;
	f->ninodes = f->cap = 0;
}

void osdfs__fsck_progress(struct fsck *f, const char *phase, uint64_t done, uint64_t total)
{
	struct osdfs_fsck_progress p = { phase, done, total };

	/* version 1 options end before the callback */
	if (!f->quiet && f->opts->version >= 2 && f->opts->progress)
		f->opts->progress(&p, f->opts->progress_payload);
}

/* One pass: read everything and plan repairs. */
static int run_pass(struct fsck *f)
{
	int rc = osdfs__fsck_read_super(f);

	if (rc < 0)
		return rc;
	rc = osdfs__fsck_load_inodes(f);
	if (rc < 0)
		return rc;
	osdfs__fsck_check(f);
	return 0;
}

int osdfs_fsck(osdfs_backend *be, const struct osdfs_fsck_options *opts,
	       struct osdfs_fsck_report *out)
{
	struct osdfs_fsck_options defaults = OSDFS_FSCK_OPTIONS_INIT;
	struct osdfs_fsck_report rep, scratch;
	struct fsck f;
	int rc;

	if (!be || (opts && (opts->version < 1 || opts->version > OSDFS_FSCK_OPTIONS_VERSION)))
		return -EINVAL;
	memset(&rep, 0, sizeof(rep));
	memset(&f, 0, sizeof(f));
	f.be = be;
	f.ops = osdfs_backend_ops_of(be);
	f.impl = osdfs_backend_impl(be);
	f.opts = opts ? opts : &defaults;
	f.rep = &rep;
	rc = run_pass(&f);
	if (rc == 0 && !f.fatal && f.opts->version >= 3 && f.opts->verify_data)
		rc = osdfs__fsck_verify_data(&f);
	if (rc == 0 && f.found > 0 && f.opts->repair && !f.fatal) {
		int repair_rc = osdfs__fsck_repair(&f);

		state_free(&f);
		{
			/* verify: a fresh pass whose findings are what is left */
			struct fsck v;

			memset(&v, 0, sizeof(v));
			memset(&scratch, 0, sizeof(scratch));
			v.be = be;
			v.ops = f.ops;
			v.impl = f.impl;
			v.opts = f.opts;
			v.rep = &scratch;
			v.quiet = 1;
			rc = run_pass(&v);
			rep.unrepaired = v.found + f.data_bad; /* fsck cannot rewrite data */
			state_free(&v);
			if (rc == -EUCLEAN)
				rc = 0;
			/* a failed repair matters only if it left damage behind */
			if (rc == 0 && v.found > 0 && repair_rc < 0 && repair_rc != -EUCLEAN)
				rc = repair_rc;
		}
		rep.repaired = rep.total > rep.unrepaired ? rep.total - rep.unrepaired : 0;
	} else {
		rep.unrepaired = f.found;
	}
	state_free(&f);
	if (out)
		*out = rep;
	if (rc == -EUCLEAN || (rc == 0 && rep.unrepaired > 0))
		return -EUCLEAN;
	return rc;
}
