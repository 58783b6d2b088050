#!/bin/bash
# scaleout_pause: bounded failover through the mount. osdfs-mount over a
# RAID 1 of 2 osd-targetd processes; one daemon is paused with SIGSTOP (its
# kernel still accepts connections, it answers nothing); the next 64 KiB
# write + fsync on the mount must complete within the iSCSI transport's
# failover_ms (10 s by default, docs/iscsi-initiator.md "Bounded failover")
# plus 5 s for the RAID 1 fallback, FUSE and dd on a loaded machine (an
# unbounded wait is what it guards against: the SCSI default is 60 s and
# more), and the file reads back. Needs root and /dev/fuse (exit 77).
#   scaleout_pause.sh OSDFS_MOUNT OSD_TARGETD
set -u
MOUNT_BIN=$1 TARGETD=$2
FAILOVER_MS=10000
SLACK_MS=5000
BOUND_MS=$((FAILOVER_MS + SLACK_MS))
HERE=$(dirname "$0")

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "no fusermount3"

. "$HERE/scaleout_lib.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-scaleout-pause.XXXXXX") || exit 1
MNT=$WORK/mnt MPID= STOPPED=
mkdir -p "$MNT"
is_mounted() { awk -v m="$MNT" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo; }
cleanup_extra() {
	[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null
	is_mounted && { fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null; }
	[ -n "$MPID" ] && kill -KILL "$MPID" 2>/dev/null && wait "$MPID" 2>/dev/null
}
trap cleanup EXIT
now_ms() { echo $(($(date +%s%N) / 1000000)); }

start_devices 2
env --default-signal=INT "$MOUNT_BIN" -f -o "mkfs,layout=raid1" "${URL[0]}" "${URL[1]}" "$MNT" \
	>"$WORK/osdfs.log" 2>&1 &
MPID=$!
wait_for "the mount" 30 "is_mounted || ! kill -0 $MPID 2>/dev/null"
if ! is_mounted; then
	grep -q "Operation not permitted" "$WORK/osdfs.log" && skip "FUSE mounts not permitted here"
	fail "osdfs-mount exited before mounting"
fi

head -c 65536 /dev/urandom >"$WORK/before"
head -c 65536 /dev/urandom >"$WORK/after"
dd if="$WORK/before" of="$MNT/before" bs=64k conv=fsync status=none || fail "write before the pause"
cmp "$WORK/before" "$MNT/before" || fail "read back before the pause"

kill -STOP "${PID[1]}" || fail "SIGSTOP"
STOPPED=${PID[1]}
t0=$(now_ms)
# bounded however the mount behaves: the test's own limit, far above the bound
timeout 60 dd if="$WORK/after" of="$MNT/after" bs=64k conv=fsync status=none ||
	fail "write + fsync with one daemon paused"
took=$(($(now_ms) - t0))
[ "$took" -le "$BOUND_MS" ] ||
	fail "write + fsync with one daemon paused took $took ms (bound $BOUND_MS ms)"
cmp "$WORK/after" "$MNT/after" || fail "read back with one daemon paused"
cmp "$WORK/before" "$MNT/before" || fail "older file with one daemon paused"
echo "ok: one of 2 RAID 1 daemons paused: 64 KiB write + fsync in $took ms" \
     "(bound failover_ms $FAILOVER_MS + $SLACK_MS), both files read back"

kill -CONT "$STOPPED"
STOPPED=
fusermount3 -u "$MNT" || fail "fusermount3 -u"
wait_for "osdfs-mount to exit" 120 "! kill -0 $MPID 2>/dev/null"
wait "$MPID"
rc=$?
MPID=
[ $rc = 0 ] || fail "osdfs-mount exited $rc after the unmount"
echo "ok: unmounted after the daemon resumed"
