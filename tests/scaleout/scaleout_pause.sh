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

. "$HERE/scaleout_lib.sh"
mount_prepare scaleout-pause KILL
now_ms() { echo $(($(date +%s%N) / 1000000)); }

start_devices 2
mount_start "mkfs,layout=raid1"

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
mount_end 120
echo "ok: unmounted after the daemon resumed"
