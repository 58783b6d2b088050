#!/bin/bash
# rebuild_mounted: rebuild and mount agree (docs/layout.md, "Rebuilding a
# mounted filesystem"). RAID 5 over 3 osd-targetd processes, slot 2 killed
# and recorded down; while an 'osdfs put' holds the filesystem mounted (a
# live holder renewing its lease), 'osdfs rebuild --replace' onto a fresh
# daemon is refused naming the holder, and writes nothing: every file
# reads back exact. Once the holder unmounts, the same rebuild works, and
# the result holds after the next mount and unmount: every slot up, fsck
# and scrub clean, every file exact with slot 0 killed.
#   rebuild_mounted.sh OSDFS OSD_TARGETD
set -u
OSDFS=$1 TARGETD=$2
HERE=$(dirname "$0")
. "$HERE/scaleout_lib.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-rebuild-mounted.XXXXXX") || exit 1
HOLDER=
cleanup_extra() {
	[ -n "$HOLDER" ] && kill -KILL "$HOLDER" 2>/dev/null && wait "$HOLDER" 2>/dev/null
	exec 8>&- 2>/dev/null
}
trap cleanup EXIT

fs() { "$OSDFS" $(target_args) "$@"; }
states() { fs --json devices 2>/dev/null | grep -o '"state":"[a-z]*"' | cut -d'"' -f4 | tr '\n' ' '; }
# same NAME [OPTION...]: /NAME reads back as the local file NAME
same() {
	local name=$1
	shift
	fs "$@" cat "/$name" >"$WORK/out" 2>>"$WORK/osdfs.log" && cmp -s "$WORK/out" "$WORK/$name"
}

start_devices 3
head -c 300001 /dev/urandom >"$WORK/a"
head -c 70000 /dev/urandom >"$WORK/b"
head -c 5000 /dev/urandom >"$WORK/c"
fs mkfs --layout raid5,su=16K >/dev/null 2>>"$WORK/osdfs.log" || fail "mkfs"
fs put "$WORK/a" /a 2>>"$WORK/osdfs.log" || fail "put a"
kill_slots 2
fs put "$WORK/b" /b 2>>"$WORK/osdfs.log" || fail "put b degraded"
[ "$(states)" = "up up down " ] || fail "after the kill: states '$(states)'"
replace_slot 2

# the holder: 'osdfs put - /held' keeps the filesystem mounted while its
# input stays open
mkfifo "$WORK/fifo"
"$OSDFS" $(target_args) put - /held <"$WORK/fifo" 2>>"$WORK/osdfs.log" &
HOLDER=$!
exec 8>"$WORK/fifo"
wait_for "the holder to mount" 20 \
	"fs fsck 2>&1 | grep -q 'it looks alive' || ! kill -0 $HOLDER"
kill -0 "$HOLDER" 2>/dev/null || fail "the holder exited"

fs rebuild --replace "$NEW_URL" >"$WORK/rebuild.log" 2>&1 && fail "rebuild while mounted succeeded"
grep -q "unmount it first" "$WORK/rebuild.log" || fail "refusal: $(cat "$WORK/rebuild.log")"
grep -q "pid $HOLDER" "$WORK/rebuild.log" || fail "refusal names no holder: $(cat "$WORK/rebuild.log")"
[ "$(fs --force --json devices 2>/dev/null | grep -o '"state":"[a-z]*"' | cut -d'"' -f4 | tr '\n' ' ')" = "up up down " ] ||
	fail "the refused rebuild changed the table"
for f in a b; do same $f --force || fail "/$f differs after the refused rebuild"; done

echo "held data" >&8
exec 8>&-
wait "$HOLDER" || fail "the holder failed"
HOLDER=
fs rebuild --replace "$NEW_URL" >"$WORK/rebuild.log" 2>&1 || fail "rebuild: $(cat "$WORK/rebuild.log")"
grep -q "state up" "$WORK/rebuild.log" || fail "rebuild: $(cat "$WORK/rebuild.log")"
URL[2]=$NEW_URL
fs put "$WORK/c" /c 2>>"$WORK/osdfs.log" || fail "put c after the rebuild"
[ "$(states)" = "up up up " ] || fail "after the next mount: states '$(states)'"
fs fsck >"$WORK/fsck.log" 2>&1 && grep -q '^clean' "$WORK/fsck.log" || fail "fsck: $(cat "$WORK/fsck.log")"
fs scrub >"$WORK/scrub.log" 2>&1 || fail "scrub: $(cat "$WORK/scrub.log")"
kill_slots 0
for f in a b c; do same $f || fail "/$f differs with slot 0 gone"; done
fs cat /held 2>>"$WORK/osdfs.log" | grep -qx "held data" || fail "/held"
echo "PASS: rebuild refused under a live holder, then rebuilt and kept"
