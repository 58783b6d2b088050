#!/bin/bash
# resync_mounted: a device that comes back while the filesystem is mounted
# is resynced by the mount itself (docs/layout.md, "Devices that come back
# while mounted"). osdfs-mount over NDEV osd-targetd processes with
# probe_interval=0.2; slot AWAY's daemon goes away (kill: killed with
# SIGKILL and started again on the same store and port; stop: SIGSTOP, then
# SIGCONT), files are written and a 4 KiB patch lands in a 24 MiB file
# meanwhile; once back the mount logs returned, resync-started and
# resync-finished for the slot, having written about one region (1 MiB),
# not the big file's share. Then ANOTHER daemon is killed and diff -r
# through the mount (kernel caches dropped) and, after the unmount, cat
# through the osdfs tool give every byte: the returned device holds the new
# data. fsck is clean and 'osdfs devices' lists the events. Needs root and
# /dev/fuse (exit 77).
# With wipe, the daemon comes back on an empty store at the same address: the
# mount reports another device there once, never resyncs it, and the slot
# stays down (diff -r, fsck clean, the report in 'osdfs devices').
# With ro, the filesystem is mounted read-only with the daemon away and it
# comes back: reported once, never resynced.
# With fast, the files and the patch are written but not flushed, then the
# daemon is SIGKILLed (losing what it had not flushed: its metadata log is in
# memory) and restarted at once, within the initiator's failover window: no
# command fails, the next ones meet UNIT ATTENTION 29h/00h POWER ON, RESET...
# (osd_dev_reset_count()), and the mount must take the slot down as reset
# and resync it (docs/layout.md, "A device that restarts without failing a
# command") before ANOTHER daemon is killed. (When the initiator noticed the
# lost connection while the daemon was down, its logins were refused and
# the session gave up: the return watch's read then takes the slot down as
# failed. Either way it must be resynced with what it had not flushed.)
#   resync_mounted.sh OSDFS_MOUNT OSDFS OSD_TARGETD SPEC NDEV AWAY OTHER kill|stop|wipe|ro|fast
set -u
MOUNT_BIN=$1 OSDFS=$2 TARGETD=$3 SPEC=$4 NDEVS=$5 AWAY=$6 OTHER=$7 MODE=$8
BIG=$((24 << 20)) REGION=$((1 << 20))
HERE=$(dirname "$0")

. "$HERE/scaleout_lib.sh"
mount_prepare resync-mounted TERM
SECONDS=0
fs() { "$OSDFS" $(target_args) "$@"; }
logged() { grep -c "^osdfs-mount: [a-z]*: layout: $1, slot $2: " "$WORK/osdfs.log"; }
# same_tree WHEN: the kernel's caches dropped, MNT/a reads back as the source
same_tree() {
	echo 3 >/proc/sys/vm/drop_caches
	diff -r "$WORK/src" "$MNT/a" >"$WORK/diff.log" 2>&1 ||
		fail "$1: $MNT/a differs: $(head -5 "$WORK/diff.log")"
}

# restart_slot SLOT [--create]: osd-targetd again on SLOT's store, at the same port
restart_slot() {
	local slot=$1 id=${DEV_ID[$1]} port=${URL[$1]#iscsi://127.0.0.1:}
	port=${port%%/*}
	rm -f "$WORK/port.$id"
	"$TARGETD" --listen "127.0.0.1:$port" --port-file "$WORK/port.$id" ${2:-} \
		--iqn "iqn.2026-12.org.osd:scaleout$id" "$WORK/store.$id" \
		>>"$WORK/targetd.$id.log" 2>&1 &
	PID[$slot]=$!
	wait_for "osd-targetd $id to listen again" 20 \
		"grep -qx '[0-9][0-9]*' '$WORK/port.$id' 2>/dev/null || ! kill -0 ${PID[$slot]}"
	kill -0 "${PID[$slot]}" 2>/dev/null || fail "osd-targetd $id exited: $(tail -3 "$WORK/targetd.$id.log")"
}

mkdir -p "$WORK/src/d"
head -c $BIG /dev/urandom >"$WORK/src/big"
for i in 1 2 3; do head -c $((i * 7001)) /dev/urandom >"$WORK/src/d/f$i"; done
start_devices "$NDEVS"
mount_start "mkfs,layout=${SPEC//,/:},probe_interval=${PROBE:-0.2}"
cp -a "$WORK/src" "$MNT/a" || fail "cp -a into the mount"
# Durable before the outage: fsync of every file and directory (a FLUSH of
# its objects; sync -f reaches no FUSE filesystem). A device that crashes
# may lose what it acknowledged since its last flush (osd-targetd keeps its
# metadata log in memory until then), so the resync also copies what was
# written unflushed before it went away (docs/layout.md): here nothing.
sync "$MNT" "$MNT/a" "$MNT/a/big" "$MNT/a/d" "$MNT"/a/d/* || fail "fsync before the outage"

if [ "$MODE" = ro ]; then
	# a read-only mount with slot AWAY away at mount: the device back is
	# reported once, never resynced (item 1: read-only writes nothing)
	mount_end
	kill_slots "$AWAY"
	mount_start "ro,probe_interval=${PROBE:-0.2}"
	restart_slot "$AWAY"
	wait_for "the read-only mount to report slot $AWAY back" 60 \
		"grep -q 'layout: returned, slot $AWAY: back (read-only mount: not resynced)' '$WORK/osdfs.log'"
	same_tree "read-only, slot $AWAY back"
	mount_end
	[ "$(logged resync-started "$AWAY")" = 0 ] || fail "the read-only mount resynced"
	[ "$(logged returned "$AWAY")" = 1 ] || fail "the device back was not reported once"
	echo "ok: read-only mount: slot $AWAY back reported once, not resynced; diff -r" \
	     "identical (${SECONDS}s)"
	grep "layout:" "$WORK/osdfs.log"
	exit 0
fi

FILES="big d/f2 d/f3 d/f4 d/f5"
if [ "$MODE" = fast ]; then
	# written, not flushed; the daemon restarts within the failover window
	head -c 4096 /dev/urandom >"$WORK/patch"
	dd if="$WORK/patch" of="$WORK/src/big" bs=4096 seek=$((BIG / 8192)) conv=notrunc status=none
	timeout 60 dd if="$WORK/patch" of="$MNT/a/big" bs=4096 seek=$((BIG / 8192)) conv=notrunc \
		status=none || fail "patch the big file"
	for i in 4 5; do head -c $((i * 5003)) /dev/urandom >"$WORK/src/d/f$i"; done
	cp "$WORK/src/d/f4" "$WORK/src/d/f5" "$MNT/a/d/" || fail "new files"
	rm "$WORK/src/d/f1" "$MNT/a/d/f1" || fail "rm"
	kill_slots "$AWAY"
	restart_slot "$AWAY"
	# the next commands: no failure, a unit attention that counts as a reset
	head -c 3001 /dev/urandom >"$WORK/src/d/f6"
	cp "$WORK/src/d/f6" "$MNT/a/d/" || fail "a file after the restart"
	sync "$MNT/a/d/f6" "$MNT/a/d" || fail "fsync after the restart"
	FILES="$FILES d/f6"
	wait_for "the mount to log slot $AWAY down" 30 "[ \$(logged down $AWAY) -ge 1 ]"
	why=$(grep -o "layout: down, slot $AWAY: device [^ ]* .*" "$WORK/osdfs.log" | head -1 | cut -d' ' -f6-)
	echo "ok: $SPEC mounted over $NDEVS daemons; slot $AWAY restarted at once: down ($why)"
fi

# away: new files, and a patch in the middle of the big one
if [ "$MODE" = fast ]; then
	:
elif [ "$MODE" = stop ]; then
	kill -STOP "${PID[$AWAY]}" || fail "SIGSTOP"
	STOPPED=${PID[$AWAY]}
else
	kill_slots "$AWAY"
fi
if [ "$MODE" != fast ]; then
head -c 4096 /dev/urandom >"$WORK/patch"
dd if="$WORK/patch" of="$WORK/src/big" bs=4096 seek=$((BIG / 8192)) conv=notrunc status=none
timeout 60 dd if="$WORK/patch" of="$MNT/a/big" bs=4096 seek=$((BIG / 8192)) conv=notrunc,fsync \
	status=none || fail "patch the big file with slot $AWAY away"
for i in 4 5; do head -c $((i * 5003)) /dev/urandom >"$WORK/src/d/f$i"; done
cp "$WORK/src/d/f4" "$WORK/src/d/f5" "$MNT/a/d/" || fail "new files with slot $AWAY away"
rm "$WORK/src/d/f1" "$MNT/a/d/f1" || fail "rm with slot $AWAY away"
sync -f "$MNT/a"
wait_for "the mount to log slot $AWAY down" 30 "[ \$(logged down $AWAY) -ge 1 ]"
echo "ok: $SPEC mounted over $NDEVS daemons; slot $AWAY away ($MODE): written, logged down"
fi

if [ "$MODE" = fast ]; then
	: # back already
elif [ "$MODE" = stop ]; then
	kill -CONT "$STOPPED"
	STOPPED=
elif [ "$MODE" = wipe ]; then
	rm -rf "$WORK/store.${DEV_ID[$AWAY]}"
	restart_slot "$AWAY" --create
else
	restart_slot "$AWAY"
fi
if [ "$MODE" = wipe ]; then
	# another (empty) device at the address: reported, never resynced
	wait_for "the mount to report slot $AWAY back as another device" 60 \
		"grep -q 'layout: returned, slot $AWAY: back but another device' '$WORK/osdfs.log'"
	same_tree "slot $AWAY wiped"
	mount_end
	[ "$(logged resync-started "$AWAY")" = 0 ] || fail "a wiped device was resynced"
	[ "$(logged returned "$AWAY")" = 1 ] || fail "the wiped device was not reported once"
	fs --json devices >"$WORK/devices.log" 2>/dev/null
	grep -q "\"slot\":$AWAY,\"state\":\"down\"" "$WORK/devices.log" ||
		fail "slot $AWAY is not down: $(cat "$WORK/devices.log")"
	grep -q "\"kind\":\"returned\",\"slot\":$AWAY,.*another device" "$WORK/devices.log" ||
		fail "osdfs devices shows no report of another device: $(cat "$WORK/devices.log")"
	fs fsck >"$WORK/fsck.log" 2>&1 && grep -q '^clean' "$WORK/fsck.log" ||
		fail "fsck: $(cat "$WORK/fsck.log")"
	echo "ok: slot $AWAY back on a wiped store: reported once as another device, left" \
	     "down, never resynced; diff -r identical, fsck clean (${SECONDS}s)"
	grep "layout:" "$WORK/osdfs.log"
	exit 0
fi
wait_for "the mount to resync slot $AWAY" 60 "[ \$(logged resync-finished $AWAY) -ge 1 ]"
[ "$(logged returned "$AWAY")" -ge 1 ] && [ "$(logged resync-started "$AWAY")" -ge 1 ] ||
	fail "returned / resync-started not logged: $(grep layout: "$WORK/osdfs.log")"
line=$(grep "layout: resync-finished, slot $AWAY: " "$WORK/osdfs.log" | tail -n 1)
bytes=$(sed -n 's/.*: [0-9]* regions, [0-9]* objects, \([0-9]*\) bytes resynced;.*/\1/p' <<<"$line")
[ -n "$bytes" ] || fail "no byte count in '$line'"
# one region of the big file plus metadata and the two new files; its share is 8 MiB or more
# (fast: what was written since the last flush, the whole files included)
[ "$MODE" = fast ] || { [ "$bytes" -le $((REGION + 256 * 1024)) ] && [ "$bytes" -ge $((REGION / 2)) ]; } ||
	fail "the resync wrote $bytes bytes (one region is $REGION)"
echo "ok: slot $AWAY back: the mount resynced it in the background: $bytes bytes written" \
     "(a $BIG-byte file patched by 4 KiB, one $REGION-byte region)"

kill_slots "$OTHER"
same_tree "slot $OTHER killed after the resync"
echo "ok: slot $OTHER killed after the resync: diff -r identical through the mount"
mount_end
# what differs, where (offsets and 64 KiB units), and what the file is
differs() {
	local f=$1 got want n
	got=$(stat -c %s "$WORK/out") want=$(stat -c %s "$WORK/src/$f")
	n=$(cmp -l "$WORK/out" "$WORK/src/$f" 2>/dev/null | wc -l)
	echo "/a/$f: $got bytes read, $want expected; $n bytes differ;" \
	     "first/last (offset, 64K unit, read, want octal):" \
	     "$(cmp -l "$WORK/out" "$WORK/src/$f" 2>/dev/null |
		awk 'NR == 1 { f = $0 } { l = $0; z += $2 == 0 }
		     END { split(f, a); split(l, b)
			   printf "%d u%d %s %s .. %d u%d %s %s; %d read as zero",
				  a[1] - 1, int((a[1] - 1) / 65536), a[2], a[3],
				  b[1] - 1, int((b[1] - 1) / 65536), b[2], b[3], z }')"
	fs stat "/a/$f" 2>&1 | head -20
}
for f in $FILES; do
	fs cat "/a/$f" >"$WORK/out" 2>>"$WORK/osdfs.log" && cmp -s "$WORK/out" "$WORK/src/$f" ||
		fail "/a/$f differs read by osdfs with slot $OTHER gone: $(differs "$f")"
done
fs fsck >"$WORK/fsck.log" 2>&1 && grep -q '^clean' "$WORK/fsck.log" ||
	fail "fsck: $(cat "$WORK/fsck.log")"
fs --json devices >"$WORK/devices.log" 2>/dev/null
for k in returned resync-started resync-finished; do
	grep -q "\"kind\":\"$k\",\"slot\":$AWAY," "$WORK/devices.log" ||
		fail "osdfs devices shows no '$k' event for slot $AWAY: $(cat "$WORK/devices.log")"
done
grep -q "\"slot\":$AWAY,\"state\":\"up\"" "$WORK/devices.log" ||
	fail "slot $AWAY is not up: $(cat "$WORK/devices.log")"
echo "ok: unmounted; osdfs reads every file with slot $OTHER gone; fsck clean; osdfs devices" \
     "lists returned, resync-started, resync-finished for slot $AWAY (${SECONDS}s)"
echo "--- what the mount logged:"
grep "layout:" "$WORK/osdfs.log"
