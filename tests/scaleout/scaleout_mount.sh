#!/bin/bash
# scaleout_mount: osdfs-mount over 4 osd-targetd processes (raid5 by
# default): cp -r a tree in, diff -r, kill -9 one daemon, drop the kernel's
# caches, diff -r again (degraded reads through FUSE), write more, unmount;
# then fsck over the three left. A byte flipped in a store data file is
# read back right and repaired; the mount logs the repair and the device
# going down, and 'osdfs devices' shows the events. Needs root and /dev/fuse (exit 77).
#   scaleout_mount.sh OSDFS_MOUNT OSDFS OSD_TARGETD [SPEC]
set -u
MOUNT_BIN=$1 OSDFS=$2 TARGETD=$3 SPEC=${4:-raid5,su=64K,width=4}
UNIT_KB=${OSD_SCALEOUT_KB:-1024}
HERE=$(dirname "$0")

. "$HERE/scaleout_lib.sh"
mount_prepare scaleout-mount TERM
SECONDS=0

make_tree "$WORK/src" "$UNIT_KB"
TREE_FILES=$(find "$WORK/src" -type f | wc -l)
TREE_BYTES=$(du -sb --apparent-size "$WORK/src" | cut -f1)
start_devices 4
mount_start "mkfs,layout=${SPEC//,/:}"

check_tree() {
	diff -r "$WORK/src" "$MNT/$1" >"$WORK/diff.log" 2>&1 ||
		fail "$2: $MNT/$1 differs: $(head -5 "$WORK/diff.log")"
	VERIFIED_FILES=$((VERIFIED_FILES + TREE_FILES))
	VERIFIED_BYTES=$((VERIFIED_BYTES + TREE_BYTES))
}

cp -a "$WORK/src" "$MNT/a" || fail "cp -a into the mount"
sync -f "$MNT/a"
echo 3 >/proc/sys/vm/drop_caches
check_tree a "after the copy"
echo "ok: $SPEC over 4 daemons through FUSE: cp -a, diff -r identical"
# a flipped byte in a data file of slot 1: the store's checksum makes
# the read a medium error; the mount reads the right bytes from redundancy,
# rewrites the unit and logs the repair. The victim must hold a data unit
# at its start: a parity unit is not read while the stripe is whole.
victim=$(data_unit_file "$WORK/store.${DEV_ID[1]}/data" "$WORK/src" 65536)
[ -n "$victim" ] || fail "no data unit of the tree at the start of a file in slot 1's store"
# flip bit 6 of byte 1000, so the byte changes whatever it was
b=$(dd if="$victim" bs=1 skip=1000 count=1 status=none | od -An -tu1 | tr -d ' \n')
[ -n "$b" ] || fail "read byte 1000 of $victim"
printf "\\$(printf '%03o' $((b ^ 64)))" | dd of="$victim" bs=1 seek=1000 conv=notrunc status=none ||
	fail "flip a byte"
echo 3 >/proc/sys/vm/drop_caches
check_tree a "a byte flipped on slot 1"
grep -q "^osdfs-mount: warning: layout: repaired, slot 1, object 0x" "$WORK/osdfs.log" ||
	fail "the mount logged no repair on slot 1: $(tail -5 "$WORK/osdfs.log")"
echo "ok: a byte flipped in slot 1's store: read back right, repaired, logged"
"$OSDFS" $(target_args) scrub >"$WORK/scrub.log" 2>&1
rc=$?
[ $rc = 8 ] && grep -q "is mounted" "$WORK/scrub.log" ||
	fail "scrub of the mounted filesystem: exit $rc: $(cat "$WORK/scrub.log")"
kill_slots 2
echo 3 >/proc/sys/vm/drop_caches
check_tree a "slot 2 killed"
cp -a "$WORK/src" "$MNT/b" || fail "cp -a into the degraded mount"
echo 3 >/proc/sys/vm/drop_caches
check_tree b "written degraded"
echo "ok: slot 2 killed: diff -r identical (degraded reads), degraded writes read back"
grep -q "^osdfs-mount: error: layout: down, slot 2: " "$WORK/osdfs.log" ||
	fail "the mount logged no 'down' event for slot 2: $(tail -5 "$WORK/osdfs.log")"
mount_end
"$OSDFS" $(target_args) fsck >"$WORK/fsck.log" 2>&1 || fail "fsck: $(cat "$WORK/fsck.log")"
grep -q '^clean' "$WORK/fsck.log" || fail "fsck: $(cat "$WORK/fsck.log")"
echo "ok: unmounted cleanly; fsck over the 3 devices left: $(grep '^clean' "$WORK/fsck.log")"
"$OSDFS" $(target_args) --json devices >"$WORK/devices.log" 2>&1 || fail "devices"
grep -q '"severity":"err","kind":"down","slot":2,' "$WORK/devices.log" ||
	fail "devices shows no 'down' event for slot 2: $(cat "$WORK/devices.log")"
grep -q '"slot":1,"state":"up","errors":0,"medium_errors":[1-9][0-9]*,"repairs":[1-9]' \
	"$WORK/devices.log" || fail "devices counts no repair on slot 1: $(cat "$WORK/devices.log")"
echo "ok: the mount logged slot 2 down; osdfs devices shows the event and slot 1's repair"
echo "verified: $VERIFIED_FILES files and $VERIFIED_BYTES bytes through FUSE, $KILLS daemon killed," \
     "in ${SECONDS}s"
