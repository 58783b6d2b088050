#!/bin/bash
# resync_daemons: a device that is only away comes back by resync, not
# rebuild (docs/layout.md, "Dirty-region log and resync"), over iSCSI. RAID 5
# over 4 osd-targetd processes holding an 8 MiB file; slot 2's daemon is
# killed with SIGKILL and a file is put degraded; the daemon is started again
# on the same store (another port: slots are matched by device uuid) and
# 'osdfs resync' reports the slot resynced, having written a few KiB (the new
# file, its directory, the superblock), not the big file's 2.7 MiB share.
# Then every slot is up, the log is empty, fsck and scrub are clean, and
# every file reads back exact with slot 0's daemon killed.
#   resync_daemons.sh OSDFS OSD_TARGETD
set -u
OSDFS=$1 TARGETD=$2
HERE=$(dirname "$0")
. "$HERE/scaleout_lib.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-resync-daemons.XXXXXX") || exit 1
trap cleanup EXIT

fs() { "$OSDFS" $(target_args) "$@"; }
states() { fs --json devices 2>/dev/null | grep -o '"state":"[a-z]*"' | cut -d'"' -f4 | tr '\n' ' '; }
same() { fs cat "/$1" >"$WORK/out" 2>>"$WORK/osdfs.log" && cmp -s "$WORK/out" "$WORK/$1"; }

# restart_slot SLOT: osd-targetd again on SLOT's store (its data as it was)
restart_slot() {
	local slot=$1 id=${DEV_ID[$1]} port
	rm -f "$WORK/port.$id"
	"$TARGETD" --listen 127.0.0.1:0 --port-file "$WORK/port.$id" \
		--iqn "iqn.2026-12.org.osd:scaleout$id" "$WORK/store.$id" \
		>>"$WORK/targetd.$id.log" 2>&1 &
	PID[$slot]=$!
	wait_for "osd-targetd $id to listen again" 20 \
		"grep -qx '[0-9][0-9]*' '$WORK/port.$id' 2>/dev/null || ! kill -0 ${PID[$slot]}"
	kill -0 "${PID[$slot]}" 2>/dev/null || fail "osd-targetd $id exited: $(tail -3 "$WORK/targetd.$id.log")"
	port=$(cat "$WORK/port.$id")
	URL[$slot]="iscsi://127.0.0.1:$port/iqn.2026-12.org.osd:scaleout$id/0"
}

start_devices 4
head -c 8388608 /dev/urandom >"$WORK/big"
head -c 5000 /dev/urandom >"$WORK/small"
fs mkfs --layout raid5,su=64K >/dev/null 2>>"$WORK/osdfs.log" || fail "mkfs"
fs put "$WORK/big" /big 2>>"$WORK/osdfs.log" || fail "put big"
kill_slots 2
fs put "$WORK/small" /small 2>>"$WORK/osdfs.log" || fail "put small degraded"
restart_slot 2
[ "$(fs --json devices 2>/dev/null | grep -o '"covers":\[[0-9,]*\]')" = '"covers":[2]' ] ||
	fail "the log does not cover slot 2: $(fs devices 2>&1)"
fs resync >"$WORK/resync.log" 2>>"$WORK/osdfs.log" || fail "resync: $(cat "$WORK/resync.log")"
cat "$WORK/resync.log"
bytes=$(sed -n 's/^resynced slot 2 at open: 0 regions, [0-9]* objects, \([0-9]*\) bytes resynced; .*/\1/p' \
	"$WORK/resync.log")
[ -n "$bytes" ] && [ "$bytes" -lt 100000 ] || fail "resync wrote '$bytes' bytes"
[ "$(states)" = "up up up up " ] || fail "after resync: states '$(states)'"
fs --json devices 2>/dev/null | grep -q '"dirty_log":{"entries":0,' || fail "log not empty"
fs fsck >"$WORK/fsck.log" 2>&1 && grep -q '^clean' "$WORK/fsck.log" || fail "fsck: $(cat "$WORK/fsck.log")"
fs scrub >"$WORK/scrub.log" 2>&1 || fail "scrub: $(cat "$WORK/scrub.log")"
kill_slots 0
for f in big small; do same $f || fail "/$f differs with slot 0 gone"; done
echo "PASS: slot 2 back by resync ($bytes bytes), not rebuild"
