/*
 * fsck cross-checks: walks the directory tree from the root (so findings
 * can name paths), then the directories nothing reaches, and compares what
 * the entries say with every inode: dangling entries, directories linked
 * twice, orphans, link counts, parent pointers, sizes and the inode counter.
 * Each check records the repair it wants in the fsck_inode; repair.c
 * carries them out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsck/fsck_state.h"

/* Scans dp and queues the directories its entries name for the first time. */
static int visit(struct fsck *f, struct fsck_inode *dp, uint64_t **queue, size_t *qn,
		 size_t *qcap)
{
	struct fsck_dir *d = dp->dir;
	int rc;

	/* a directory outside the tree, scanned from the list of those, may be
	 * named by another found later: its entries and names stay as read */
	if (dp->scanned)
		return 0;
	dp->scanned = 1;
	if ((rc = osdfs__fsck_scan_dir(f, dp)) < 0)
		return rc;
	osdfs__fsck_resolve(f, d);
	f->dirs_read++;
	osdfs__fsck_progress(f, "directories", f->dirs_read,
		       f->ndirs > f->dirs_read ? f->ndirs : f->dirs_read);
	for (size_t i = 0; i < d->nents; i++) {
		struct fsck_inode *t = fsck_ent_inode(d, i);
		int score, first;

		/* an entry naming its own directory is no parent of it (it is
		 * dropped as another link to the directory, check_entries()) */
		if (!t || !t->dir || t->ino == OSDFS_ROOT_INO || t == dp)
			continue;
		/* of several entries naming a directory, keep the one typed as a
		 * directory in the directory its parent pointer names */
		score = 1 + (d->ents[i].ft == OSDFS__FT_DIR) * 2 + (t->d.parent == dp->ino);
		if (score <= t->dir->pscore)
			continue;
		first = t->dir->pscore == 0;
		t->dir->pscore = score;
		t->dir->found_parent = dp->ino;
		t->dir->name = fsck_ent_name(d, &d->ents[i]);
		if (!first)
			continue;
		if (*qn == *qcap) {
			size_t ncap = *qcap ? 2 * *qcap : 256;
			uint64_t *n = realloc(*queue, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			*queue = n;
			*qcap = ncap;
		}
		(*queue)[(*qn)++] = t->ino;
	}
	return 0;
}

static int scan_all_dirs(struct fsck *f, struct fsck_inode *root)
{
	uint64_t *queue = NULL;
	size_t qn = 0, qcap = 0, head = 0;
	int rc;

	for (size_t i = 0; i < f->ninodes; i++)
		f->ndirs += f->inodes[i].dir != NULL;
	root->dir->found_parent = root->ino;
	root->dir->pscore = 100;
	rc = visit(f, root, &queue, &qn, &qcap);
	while (rc == 0 && head < qn)
		rc = visit(f, osdfs__fsck_find(f, queue[head++]), &queue, &qn, &qcap);
	/* directories the tree does not reach (or that are linked wrongly) */
	for (size_t i = 0; rc == 0 && i < f->ninodes; i++) {
		struct fsck_inode *ip = &f->inodes[i];

		if (ip->dir && !ip->dir->found_parent && ip != root) {
			rc = visit(f, ip, &queue, &qn, &qcap);
			while (rc == 0 && head < qn)
				rc = visit(f, osdfs__fsck_find(f, queue[head++]), &queue, &qn, &qcap);
		}
	}
	free(queue);
	return rc;
}

/* Counts kept entries; plans removal of dangling ones and extra directory links. */
static void check_entries(struct fsck *f, struct fsck_inode *dp)
{
	struct fsck_dir *d = dp->dir;
	char path[512];

	osdfs__fsck_dir_path(f, dp, path, sizeof(path));
	for (size_t i = 0; i < d->nents; i++) {
		struct fsck_entry *e = &d->ents[i];
		struct fsck_inode *t = fsck_ent_inode(d, i);

		if (t && t->bad_link) {
			e->drop = 1;
		} else if (!t || t->bad) {
			osdfs__fsck_finding(f, OSDFS_FSCK_DANGLING_ENTRY,
				      "%s/%s: entry names %s inode %llu", path, fsck_ent_name(d, e),
				      t ? "unreadable" : "missing", (unsigned long long)e->ino);
			e->drop = 1;
		} else if (t->dir && (t->dir->found_parent != dp->ino ||
				      strcmp(t->dir->name ? t->dir->name : "", fsck_ent_name(d, e)))) {
			osdfs__fsck_finding(f, OSDFS_FSCK_DUPLICATE_ENTRY,
				      "%s/%s: another link to directory inode %llu",
				      path, fsck_ent_name(d, e), (unsigned long long)e->ino);
			e->drop = 1;
		} else {
			t->links++;
			if (t->dir)
				d->subdirs++;
			continue;
		}
		if (!dp->dir_rebuild)
			dp->dir_edit = 1;
	}
}

static void mark_reached(struct fsck *f, struct fsck_inode *root)
{
	struct fsck_inode **stack = malloc((f->ninodes + 1) * sizeof(*stack));
	size_t n = 0;

	if (!stack)
		return;
	root->reached = 1;
	stack[n++] = root;
	while (n > 0) {
		struct fsck_dir *d = stack[--n]->dir;

		for (size_t i = 0; i < d->nents; i++) {
			struct fsck_inode *t;

			if (d->ents[i].drop || !(t = fsck_ent_inode(d, i)) || t->reached)
				continue;
			t->reached = 1;
			if (t->dir)
				stack[n++] = t;
		}
	}
	free(stack);
}

/* Is an orphan worth keeping? Unlinked or empty ones are not. */
static int orphan_empty(const struct fsck_inode *ip)
{
	if (S_ISDIR(ip->d.mode))
		return fsck_nents(ip) == 0;
	if (ip->d.nlink == 0)
		return 1;
	return S_ISREG(ip->d.mode) && ip->d.size == 0 && ip->objlen == 0;
}

static void plan_orphans(struct fsck *f)
{
	for (size_t i = 0; i < f->ninodes; i++) {
		struct fsck_inode *ip = &f->inodes[i];

		if (ip->reached || ip->bad)
			continue;
		if (ip->links > 0) {
			/* inside an orphaned directory: moves with it, unless the
			 * directories form a cycle nothing reaches */
			continue;
		}
		ip->remove = orphan_empty(ip);
		ip->to_lost_found = !ip->remove;
		osdfs__fsck_finding(f, OSDFS_FSCK_ORPHAN, "inode %llu (mode %06o, %llu bytes) is not "
			      "reachable from the root: %s", (unsigned long long)ip->ino,
			      ip->d.mode, (unsigned long long)ip->d.size,
			      ip->remove ? "empty or unlinked, remove" : "move to /lost+found");
		if (ip->to_lost_found)
			ip->links = 1;
	}
}

/* Directory cycles nothing reaches: not repaired (rare; needs a human). */
static void check_unreached(struct fsck *f)
{
	for (size_t i = 0; i < f->ninodes; i++) {
		struct fsck_inode *ip = &f->inodes[i];
		struct fsck_inode *p = ip;

		if (ip->reached || ip->bad || ip->links == 0 || ip->to_lost_found)
			continue;
		/* reached once its orphaned ancestor is linked into lost+found? */
		for (int depth = 0; p && depth < 4096 && !p->to_lost_found && !p->reached; depth++)
			p = p->dir ? osdfs__fsck_find(f, p->dir->found_parent) : NULL;
		if (p && (p->to_lost_found || p->reached))
			continue;
		if (!S_ISDIR(ip->d.mode))
			continue; /* its directory is reported */
		osdfs__fsck_finding(f, OSDFS_FSCK_ORPHAN,
			      "directory inode %llu is in a cycle no path from the root reaches",
			      (unsigned long long)ip->ino);
		f->unrepairable++;
	}
}

static void check_inode(struct fsck *f, struct fsck_inode *ip, uint64_t lost_found)
{
	char path[512];
	uint32_t want;

	if (ip->bad || ip->remove)
		return;
	if (ip->dir) {
		uint64_t parent = ip->ino == OSDFS_ROOT_INO ? ip->ino :
				  ip->to_lost_found ? lost_found : ip->dir->found_parent;

		want = 2 + ip->dir->subdirs;
		if (parent && ip->d.parent != parent) {
			osdfs__fsck_finding(f, OSDFS_FSCK_PARENT, "directory %s (inode %llu): parent "
				      "pointer %llu, should be %llu",
				      osdfs__fsck_dir_path(f, ip, path, sizeof(path)),
				      (unsigned long long)ip->ino, (unsigned long long)ip->d.parent,
				      (unsigned long long)parent);
			ip->dir->want_parent = parent;
			ip->fix_inode = 1;
		}
	} else {
		want = ip->links;
		/* the smaller one is the truth: bytes past the size are stale,
		 * a size past the object's end is not backed by anything */
		if (S_ISREG(ip->d.mode) && ip->objlen != ip->d.size) {
			osdfs__fsck_finding(f, OSDFS_FSCK_BAD_SIZE, "inode %llu: size %llu but the object "
				      "holds %llu bytes", (unsigned long long)ip->ino,
				      (unsigned long long)ip->d.size,
				      (unsigned long long)ip->objlen);
			if (ip->objlen > ip->d.size)
				ip->fix_objlen = 1;
			else
				ip->fix_size = ip->fix_inode = 1;
		}
	}
	if (want && ip->d.nlink != want) {
		osdfs__fsck_finding(f, OSDFS_FSCK_LINK_COUNT, "%sinode %llu: link count %u, should be %u",
			      S_ISDIR(ip->d.mode) ? "directory " : "", (unsigned long long)ip->ino,
			      ip->d.nlink, want);
		ip->want_nlink = want;
		ip->fix_inode = 1;
	}
}

/* What scan.c found undecodable: the inode, a symlink target, the xattrs. */
static void check_attrs(struct fsck *f, struct fsck_inode *ip)
{
	if (ip->bad_link) {
		/* nothing to salvage: removed like a bad inode, its entries
		 * dropped without a finding of their own */
		osdfs__fsck_finding(f, OSDFS_FSCK_BAD_SIZE, "symlink inode %llu: target of %llu "
			      "bytes missing or damaged (object holds %llu), remove",
			      (unsigned long long)ip->ino, (unsigned long long)ip->d.size,
			      (unsigned long long)ip->objlen);
		ip->bad = ip->remove = 1;
	} else if (ip->bad) {
		osdfs__fsck_finding(f, OSDFS_FSCK_BAD_INODE, "inode %llu: inode attribute missing or "
			      "corrupt", (unsigned long long)ip->ino);
		ip->remove = 1;
	} else if (ip->bad_xattr) {
		osdfs__fsck_finding(f, OSDFS_FSCK_BAD_INODE, "inode %llu: extended attributes cannot "
			      "be decoded: delete them", (unsigned long long)ip->ino);
	}
}

void osdfs__fsck_check(struct fsck *f)
{
	struct fsck_inode *root = osdfs__fsck_find(f, f->sb.root_ino);
	uint64_t lost_found = 0;
	int rc;

	for (size_t i = 0; i < f->ninodes; i++)
		check_attrs(f, &f->inodes[i]);
	if (!root || root->bad || !S_ISDIR(root->d.mode)) {
		osdfs__fsck_finding(f, OSDFS_FSCK_SUPERBLOCK, "root directory missing or corrupt");
		f->unrepairable++;
		f->fatal = 1;
		return;
	}
	root->remove = 0;
	if (f->ctr.next_ino <= f->max_ino) {
		osdfs__fsck_finding(f, OSDFS_FSCK_COUNTERS, "next inode number %llu is not above the "
			      "highest in use (%llu)", (unsigned long long)f->ctr.next_ino,
			      (unsigned long long)f->max_ino);
		f->fix_counters = 1;
	}
	rc = scan_all_dirs(f, root);
	if (rc < 0) {
		f->unrepairable++;
		return;
	}
	for (size_t i = 0; i < f->ninodes; i++)
		if (f->inodes[i].dir && !f->inodes[i].bad)
			check_entries(f, &f->inodes[i]);
	mark_reached(f, root);
	plan_orphans(f);
	check_unreached(f);
	for (size_t i = 0; i < root->dir->nents; i++)
		if (strcmp(fsck_ent_name(root->dir, &root->dir->ents[i]), "lost+found") == 0 &&
		    !root->dir->ents[i].drop)
			lost_found = root->dir->ents[i].ino;
	for (size_t i = 0; i < f->ninodes; i++)
		check_inode(f, &f->inodes[i], lost_found);
}
