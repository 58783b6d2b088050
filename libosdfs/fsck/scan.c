/*
 * fsck pass 1: the superblock attributes and every inode object, read
 * straight from the backend (the filesystem is not mounted).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "core/fs.h"
#include "fsck/fsck_state.h"

int osdfs__fsck_read_super(struct fsck *f)
{
	uint8_t sbuf[512], cbuf[64], mbuf[128];
	struct osdfs_attr a[3] = {
		{ OSDFS__PAGE_SUPER, OSDFS__ATTR_SUPER, sbuf, sizeof(sbuf) },
		{ OSDFS__PAGE_SUPER, OSDFS__ATTR_COUNTERS, cbuf, sizeof(cbuf) },
		{ OSDFS__PAGE_SUPER, OSDFS__ATTR_MOUNT, mbuf, sizeof(mbuf) },
	};
	int rc = f->ops->get_attrs(f->impl, OSDFS__SUPER_OID, a, 3), dec = -EUCLEAN;

	if (rc == 0 && a[0].len > 0 && a[0].len <= sizeof(sbuf))
		dec = osdfs__super_decode(&f->sb, sbuf, a[0].len);
	if (rc == -ENOENT || (rc == 0 && dec == -EUCLEAN)) {
		osdfs__fsck_finding(f, OSDFS_FSCK_SUPERBLOCK,
			      "superblock missing or corrupt: not an osdfs filesystem?");
		f->unrepairable++;
		f->fatal = 1;
		return -EUCLEAN;
	}
	if (rc < 0)
		return rc;
	/* A format this code does not know (as mount refuses it): its
	 * structures cannot be judged, so nothing is checked or repaired. */
	if (dec == -EPROTONOSUPPORT || (f->sb.incompat & ~OSDFS__INCOMPAT_KNOWN)) {
		if (dec == -EPROTONOSUPPORT)
			osdfs__fsck_finding(f, OSDFS_FSCK_SUPERBLOCK,
				      "unsupported osdfs format version %u: not checked",
				      f->sb.version);
		else
			osdfs__fsck_finding(f, OSDFS_FSCK_SUPERBLOCK,
				      "unsupported incompatible features 0x%llx: not checked",
				      (unsigned long long)(f->sb.incompat &
							   ~OSDFS__INCOMPAT_KNOWN));
		f->unrepairable++;
		f->fatal = 1;
		return -EPROTONOSUPPORT;
	}
	/* Read-only-compatible features it does not know: readable, so
	 * checked, but not written (mount read-write refuses them too). */
	if (f->opts->repair && (f->sb.ro_compat & ~OSDFS__RO_COMPAT_KNOWN)) {
		osdfs__fsck_finding(f, OSDFS_FSCK_SUPERBLOCK,
			      "unknown read-only-compatible features 0x%llx: not repaired "
			      "(a check without repair reads it)",
			      (unsigned long long)(f->sb.ro_compat & ~OSDFS__RO_COMPAT_KNOWN));
		f->unrepairable++;
		f->fatal = 1;
		return -EROFS;
	}
	f->sb_ok = 1;
	if (a[1].len > sizeof(cbuf) || osdfs__counters_decode(&f->ctr, cbuf, a[1].len) < 0) {
		osdfs__fsck_finding(f, OSDFS_FSCK_COUNTERS, "superblock counters missing or corrupt");
		memset(&f->ctr, 0, sizeof(f->ctr));
		f->fix_counters = 1;
	}
	if (a[2].len != 0) {
		struct osdfs__mount_rec m;
		struct osdfs_holder h;
		int ok = a[2].len <= sizeof(mbuf) && osdfs__mount_decode(&m, mbuf, a[2].len) == 0;

		osdfs__holder_judge(&m, ok, &h);
		if (h.state == OSDFS_HOLDER_LIVE && !osdfs__in_takeover()) {
			/* in use: not damage, and not to be repaired under its holder */
			return f->opts->repair ? -EBUSY : 0;
		}
		if (ok)
			osdfs__fsck_finding(f, OSDFS_FSCK_MOUNT_RECORD,
				      "stale mount record: host '%s' pid %u mount id %016llx",
				      m.host, m.pid, (unsigned long long)m.mount_id);
		else
			osdfs__fsck_finding(f, OSDFS_FSCK_MOUNT_RECORD, "unreadable mount record");
		f->mount_rec = 1;
	}
	return 0;
}

/* Flags a symlink whose target the core would refuse (path.c): a bad
 * length, an inline length that differs, or a slow target cut or holding NUL. */
static int link_check(struct fsck *f, struct fsck_inode *ip)
{
	char buf[OSDFS_SYMLINK_MAX];
	struct iovec iov = { buf, (size_t)ip->d.size };
	ssize_t n;

	if (ip->d.size == 0 || ip->d.size > OSDFS_SYMLINK_MAX ||
	    (ip->inline_len && ip->inline_len != ip->d.size) ||
	    (!ip->inline_len && ip->objlen != ip->d.size)) {
		ip->bad_link = 1;
		return 0;
	}
	if (ip->inline_len)
		return 0;
	n = f->ops->read(f->impl, OSDFS__OID_BASE + ip->ino, 0, &iov, 1);
	if (n < 0)
		return (int)n;
	ip->bad_link = (uint64_t)n != ip->d.size || memchr(buf, 0, (size_t)n) != NULL;
	return 0;
}

static int add_inode(struct fsck *f, uint64_t ino)
{
	uint8_t buf[OSDFS__INODE_MAX_LEN];
	struct osdfs_attr a[2] = {
		{ OSDFS__PAGE_INODE, OSDFS__ATTR_INODE, buf, sizeof(buf) },
		{ OSDFS__PAGE_XATTR, OSDFS__ATTR_XATTR, NULL, OSDFS_XATTR_TOTAL_MAX + 1 },
	};
	struct osdfs__dinode di;
	struct fsck_inode *ip;
	int rc;

	if (!f->xbuf && !(f->xbuf = malloc(OSDFS_XATTR_TOTAL_MAX + 1)))
		return -ENOMEM;
	a[1].value = f->xbuf;
	if (f->ninodes == f->cap) {
		size_t ncap = f->cap ? 2 * f->cap : 1024;
		struct fsck_inode *n = realloc(f->inodes, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->inodes = n;
		f->cap = ncap;
	}
	ip = &f->inodes[f->ninodes];
	memset(ip, 0, sizeof(*ip));
	ip->ino = ino;
	rc = f->ops->get_attrs(f->impl, OSDFS__OID_BASE + ino, a, 2);
	if (rc == -ENOENT)
		return 0; /* removed since the listing */
	if (rc < 0)
		return rc;
	if (a[0].len == 0 || a[0].len > sizeof(buf) || osdfs__inode_decode(&di, buf, a[0].len) < 0)
		ip->bad = 1;
	else {
		ip->d = (struct fsck_dinode){ di.size, di.generation, di.parent, di.mode, di.nlink };
		ip->inline_len = di.inline_len;
	}
	ip->bad_xattr = a[1].len != 0 && osdfs__xattr_check(f->xbuf, a[1].len) < 0;
	rc = f->ops->size(f->impl, OSDFS__OID_BASE + ino, &ip->objlen);
	if (rc < 0)
		return rc;
	if (!ip->bad && S_ISLNK(ip->d.mode))
		rc = link_check(f, ip);
	if (rc < 0)
		return rc;
	if (!ip->bad && S_ISDIR(ip->d.mode) && !(ip->dir = calloc(1, sizeof(*ip->dir))))
		return -ENOMEM;
	f->ninodes++;
	if (ino > f->max_ino)
		f->max_ino = ino;
	return 0;
}

/* Asks for huge pages under the inodes: the walks over a big directory's
 * entries reach its inodes at random, and with 4 KiB pages nearly every
 * one of those reads also misses the TLB (at 10M inodes, the directory
 * pass took 4.8 s with 4 KiB pages, 3.3 s with huge ones). */
static void hint_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t e = ((uintptr_t)p + len) & ~(huge - 1);

	if (e > a)
		(void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* a hint: may fail */
#else
	(void)p;
	(void)len;
#endif
}

/* Room for the inodes the partition says it holds, and a little more:
 * doubling the array from empty would at its last step hold it twice
 * (400 MB for 1M inodes). Without the memory the array grows as it goes. */
static void reserve_inodes(struct fsck *f, uint64_t total)
{
	if (f->cap || total == 0 || total > SIZE_MAX / 2 / sizeof(*f->inodes))
		return;
	size_t want = (size_t)total + (size_t)total / 64 + 16;
	struct fsck_inode *v = malloc(want * sizeof(*v));

	if (v) {
		hint_huge(v, want * sizeof(*v));
		f->inodes = v;
		f->cap = want;
	}
}

int osdfs__fsck_load_inodes(struct fsck *f)
{
	uint64_t ids[256], start = OSDFS__SUPER_OID + 1, next, total = 0;
	struct osdfs_backend_stat st;
	size_t n;
	int rc;

	/* the partition's objects: the inodes and the superblock (an estimate) */
	if (f->ops->statfs && f->ops->statfs(f->impl, &st) == 0 && st.objects > 0)
		total = st.objects - 1;
	reserve_inodes(f, total);
	do {
		rc = f->ops->list(f->impl, start, ids, sizeof(ids) / sizeof(ids[0]), &n, &next);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < n; i++) {
			uint64_t last = f->ninodes ? f->inodes[f->ninodes - 1].ino : 0;

			if (ids[i] <= OSDFS__SUPER_OID || ids[i] - OSDFS__OID_BASE <= last)
				continue; /* not ours, or repeated */
			rc = add_inode(f, ids[i] - OSDFS__OID_BASE);
			if (rc < 0)
				return rc;
			osdfs__fsck_progress(f, "inodes", f->ninodes,
				       total > f->ninodes ? total : f->ninodes);
		}
		if (next != 0 && next <= start)
			return -EIO; /* a listing that does not advance */
		start = next;
	} while (next != 0);
	f->rep->inodes = f->ninodes;
	osdfs__fsck_index(f);
	return 0;
}
