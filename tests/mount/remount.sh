#!/bin/bash
# mount_remount: unmount and mount again at once, 50 times in a row, as a
# script would: the new osdfs-mount must wait for the previous one to close
# the store (bounded) instead of failing with "in use by another process".
# Each round writes a file; all must be there at the end, and fsck clean.
#   remount.sh OSDFS_MOUNT OSDFS_CLI
# Exit status: 0 passed, 1 failed, 77 skipped (not root, no FUSE).
set -u
MOUNT_BIN=$1 CLI=$2
ROUNDS=${OSD_REMOUNT_ROUNDS:-50}

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "no fusermount3 (scripts/setup installs it)"
. "$(dirname "$0")/mountlib.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-remount.XXXXXX") || exit 1
TGT=$WORK/target MNT=$WORK/mnt LOG=$WORK/mount.log OUT=$WORK/out
mkdir -p "$MNT"
PID=
trap cleanup EXIT

start_mount mkfs,format=64M
waited=0 old=()
for i in $(seq 1 "$ROUNDS"); do
	echo "round $i" >"$MNT/r$i" || fail "round $i: write"
	cd "$WORK" || fail "cd"
	unmount_busy_retry fusermount3 -u "$MNT" || fail "round $i: fusermount3 -u"
	old+=("$PID")
	# at once, without waiting for the previous daemon to exit
	start_mount pid=0x10000
	grep -q "waiting up to" "$LOG" && waited=$((waited + 1))
done
for p in "${old[@]}"; do
	wait "$p" || fail "an earlier osdfs-mount exited $?"
done
for i in $(seq 1 "$ROUNDS"); do
	[ "$(cat "$MNT/r$i")" = "round $i" ] || fail "r$i lost or wrong"
done
stop_mount
"$CLI" --target "$TGT" --json fsck >"$OUT" 2>&1 || fail "osdfs fsck exited $?"
grep -q '"status":"clean"' "$OUT" || fail "osdfs fsck not clean"
echo "$ROUNDS unmount/mount cycles in a row, $waited waited for the previous mount to close; $ROUNDS files verified, fsck clean"
echo "PASS"
