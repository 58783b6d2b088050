#!/bin/bash
# mount_concurrent: readers and writers of one file at once on osdfs-mount,
# over one embedded target and over RAID 5 on four, then fsck. Written for
# ThreadSanitizer (CI builds it with -DOSD_TSAN=ON and runs it with
# halt_on_error=1, so a race report makes osdfs-mount exit non-zero), and
# run in every build as a concurrency test.
#   concurrent.sh OSDFS_MOUNT OSDFS_CLI
# Exit status: 0 passed, 1 failed, 77 skipped (not root, no FUSE, no fio).
set -u
MOUNT_BIN=$1 CLI=$2

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
for t in fusermount3 fio; do
	command -v "$t" >/dev/null || skip "no $t (scripts/setup installs it)"
done

. "$(dirname "$0")/mountlib.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-concurrent.XXXXXX") || exit 1
MNT=$WORK/mnt LOG=$WORK/mount.log OUT=$WORK/out
mkdir -p "$MNT"
PID=

trap cleanup EXIT

# Two writers and two readers of one file, and a writer of its own file that
# verifies what it wrote; 4 s of mixed I/O, bounded. O_DIRECT, so that every
# read and write reaches osdfs-mount instead of the kernel's page cache.
workload() {
	cat >"$WORK/job.fio" <<EOF
[global]
directory=$MNT
ioengine=psync
bs=4k
size=8m
runtime=4
direct=1
[w1]
rw=randwrite
filename=shared
time_based
[w2]
rw=randwrite
filename=shared
time_based
[r1]
rw=randread
filename=shared
time_based
[r2]
rw=read
filename=shared
time_based
[own]
rw=randwrite
filename=own
verify=crc32c
verify_fatal=1
do_verify=1
EOF
	fio "$WORK/job.fio" --output-format=terse --terse-version=3 >"$OUT" 2>&1 || fail "fio ($1) exited $?"
	grep -qi 'verify.*fail\|bad magic\|crc32c.*wanted' "$OUT" && fail "fio ($1): verify errors"
	[ "$(grep -c '^3;' "$OUT")" = 5 ] || fail "fio ($1): not 5 job results"
	awk -F';' '$5 != 0 { bad = 1 } END { exit bad }' "$OUT" || fail "fio ($1): a job failed"
	echo "$1: 2 writers + 2 readers of one file, 1 verifying writer: ok"
}

fsck_clean() {
	"$CLI" "$@" --json fsck >"$OUT" 2>&1 || fail "osdfs fsck exited $?"
	grep -q '"status":"clean"' "$OUT" || fail "osdfs fsck not clean"
}

T=$WORK/plain
start_mount mkfs,format=256M "$T"
workload "plain"
stop_mount
fsck_clean --target "$T"

set -- "$WORK/d1" "$WORK/d2" "$WORK/d3" "$WORK/d4"
start_mount mkfs,layout=raid5:su=64K "$@"
workload "raid5 over 4"
stop_mount
fsck_clean --target "$1" --target "$2" --target "$3" --target "$4"
echo "PASS"
