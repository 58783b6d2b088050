/*
 * test_rel_crash: shared pieces of the crash-consistency test. The driver
 * (test_rel_crash.c) forks a workload process (test_rel_crash_work.c) that
 * runs seeded metadata-heavy operations on osdfs and reports each fsync'ed
 * file ("sealed") through a pipe; the driver SIGKILLs the target or the
 * workload at a random point, recovers, and checks every sealed file
 * (test_rel_crash_check.c).
 */
#ifndef TEST_REL_CRASH_H
#define TEST_REL_CRASH_H

#include <stddef.h>
#include <stdint.h>
#include <osdfs/osdfs.h>

#define RC_PATH_MAX 512

/*
 * One fsync'ed file: path holds exactly len bytes generated from seed. While
 * a rename of it is reported but not yet confirmed, alt is the new name and
 * either name may hold it after a crash.
 */
struct rc_sealed {
	char path[RC_PATH_MAX];
	char alt[RC_PATH_MAX];
	uint64_t len;
	uint64_t seed;
	int pending;
};

/* What the driver knows survived: every sealed file of every iteration. */
struct rc_journal {
	struct rc_sealed *v;
	size_t n, cap;
};

/* Deterministic file contents: byte @p off of a file generated from @p seed. */
void rc_fill(uint8_t *buf, size_t len, uint64_t off, uint64_t seed);
/* splitmix64 step. */
uint64_t rc_rand(uint64_t *state);

/* Adds a sealed file; returns its index or -1 (no memory). */
long rc_journal_add(struct rc_journal *j, const char *path, uint64_t len, uint64_t seed);
/* Index of the sealed file at @p path (its current name), or -1. */
long rc_journal_find(const struct rc_journal *j, const char *path);
/* Does any sealed file live under directory @p dir? */
int rc_journal_under(const struct rc_journal *j, const char *dir);
void rc_journal_free(struct rc_journal *j);

/*
 * The workload, run in the forked child on a mounted filesystem: @p nops
 * operations from @p seed, names unique to @p iter; reports lines on @p fd:
 * "A" after every operation, "S len seed path" for a sealed file,
 * "M idx newpath" before and "m idx" after renaming sealed file idx, "O" for
 * a file unlinked while open (left open: the orphan list must free it).
 * Sealed files are added to @p j (the child's copy) as they are reported.
 * Returns 0, or -errno of the first failing call.
 */
int rc_workload(osdfs *fs, struct rc_journal *j, int fd, unsigned iter,
		uint64_t seed, unsigned nops);

/* Result of checking a recovered filesystem. */
struct rc_check {
	uint64_t files_verified;  /* sealed files found intact */
	uint64_t bytes_verified;
	uint64_t losses;          /* sealed files missing or wrong */
	uint64_t walked;          /* entries walked (every file read, links read) */
	char first_loss[2 * RC_PATH_MAX + 128];
};

/*
 * Walks the whole tree (reading every file and symlink) and checks every
 * sealed file of @p j. A confirmed pending rename is settled in @p j to the
 * name found. Returns 0 or -errno if the walk itself failed.
 */
int rc_check_fs(osdfs *fs, struct rc_journal *j, struct rc_check *c);

#endif
