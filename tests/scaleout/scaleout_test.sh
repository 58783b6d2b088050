#!/bin/bash
# scaleout_layouts: osdfs spread over several osd-targetd processes.
#   scaleout_test.sh OSDFS OSD_TARGETD LAYOUT...
# Each LAYOUT is "NDEV:KILLS:SPEC" (e.g. 4:1:raid5,width=4). For each: start
# NDEV osd-targetd processes on 127.0.0.1 (free ports from --port-file), mkfs
# over their iSCSI URLs, copy a generated tree in and read it back; then,
# while a second copy runs, kill -9 KILLS daemons; read everything back
# (exact bytes) and write more, degraded; start a fresh daemon on an empty
# store per killed one and `osdfs rebuild` onto it; fsck clean; kill KILLS
# DIFFERENT daemons and read everything back again. KILLS 0: round trip and
# fsck only. OSD_SCALEOUT_KB (default 1024) scales the tree (64 for ASan).
# Exit status: 0 passed, 1 failed.
set -u
OSDFS=$1 TARGETD=$2
shift 2
UNIT_KB=${OSD_SCALEOUT_KB:-1024}
HERE=$(dirname "$0")
. "$HERE/scaleout_lib.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-scaleout.XXXXXX") || exit 1
trap cleanup EXIT
SECONDS=0
make_tree "$WORK/src" "$UNIT_KB"
TREE_FILES=$(find "$WORK/src" -type f | wc -l)
TREE_BYTES=$(du -sb --apparent-size "$WORK/src" | cut -f1)
echo "tree: $TREE_FILES files, $TREE_BYTES bytes (unit ${UNIT_KB} KiB)"

# fs ARGS...: osdfs on the current devices (every URL, dead ones included:
# the tool leaves out what it cannot reach)
fs() { "$OSDFS" $(target_args) "$@"; }

# read_back NAME: copy :/NAME out and compare it with the source tree
read_back() {
	local out=$WORK/out.$1.$RANDOM
	fs cp -r ":/$1" "$out" 2>>"$WORK/osdfs.log" || fail "cp -r :/$1 out (see osdfs.log)"
	diff -r "$WORK/src" "$out" >"$WORK/diff.log" 2>&1 ||
		fail "$1 read back differs: $(head -5 "$WORK/diff.log")"
	VERIFIED_BYTES=$((VERIFIED_BYTES + TREE_BYTES))
	VERIFIED_FILES=$((VERIFIED_FILES + TREE_FILES))
	rm -rf "$out"
}

# write_tree NAME: copy the tree in as :/NAME
write_tree() {
	fs cp -r "$WORK/src" ":/$1" 2>>"$WORK/osdfs.log" || fail "cp -r src :/$1 (see osdfs.log)"
}

fsck_clean() {
	fs fsck >"$WORK/fsck.log" 2>&1
	local rc=$?
	[ $rc = 0 ] || fail "fsck $1: exit $rc: $(cat "$WORK/fsck.log")"
	grep -q '^clean' "$WORK/fsck.log" || fail "fsck $1: $(cat "$WORK/fsck.log")"
}

# kill_during_copy NAME SLOT...: copy the tree in as :/NAME and kill -9 the
# daemons of SLOTs once the copy has written to the first of them
kill_during_copy() {
	local name=$1
	shift
	local store=$WORK/store.${DEV_ID[$1]} before
	before=$(du -sb "$store" | cut -f1)
	fs cp -r "$WORK/src" ":/$name" 2>>"$WORK/osdfs.log" &
	local cp=$!
	wait_for "the copy to reach slot $1" 30 \
		"[ \$(du -sb '$store' | cut -f1) -gt $((before + 65536)) ] || ! kill -0 $cp 2>/dev/null"
	if kill -0 $cp 2>/dev/null; then MIDWAY="while the copy ran"; else MIDWAY="after the copy"; fi
	kill_slots "$@"
	wait $cp || fail "cp -r src :/$name failed when slot(s) $* died (see osdfs.log)"
}

run_layout() {
	local ndev=${1%%:*} rest=${1#*:}
	local kills=${rest%%:*} spec=${rest#*:}
	local first=() second=() s
	echo "== $spec on $ndev devices, $kills killed"
	start_devices "$ndev"
	fs mkfs --layout "$spec" >"$WORK/mkfs.log" 2>&1 || fail "mkfs --layout $spec: $(cat "$WORK/mkfs.log")"
	write_tree a
	read_back a
	if [ "$kills" = 0 ]; then
		fsck_clean "$spec"
		echo "ok: $spec: round trip, fsck clean"
		stop_devices
		return
	fi
	for ((s = 0; s < kills; s++)); do first+=($((s + 1))); second+=($(((s + 1 + kills) % ndev))); done
	kill_during_copy b "${first[@]}"
	read_back a
	read_back b
	write_tree c
	read_back c
	echo "ok: $spec: slot(s) ${first[*]} killed $MIDWAY; degraded reads and writes exact"
	for s in "${first[@]}"; do
		replace_slot "$s"
		fs rebuild --slot "$s" --replace "$NEW_URL" >"$WORK/rebuild.log" 2>>"$WORK/osdfs.log" ||
			fail "rebuild slot $s: $(cat "$WORK/rebuild.log")"
		URL[$s]=$NEW_URL
		grep -q "state up" "$WORK/rebuild.log" || fail "rebuild slot $s: $(cat "$WORK/rebuild.log")"
		REBUILT=$((REBUILT + $(sed -n 's/.*examined, \([0-9]*\) components.*/\1/p' "$WORK/rebuild.log")))
		echo "ok: $spec: $(cat "$WORK/rebuild.log")"
	done
	fsck_clean "$spec after rebuild"
	kill_slots "${second[@]}"
	read_back a
	read_back b
	read_back c
	fsck_clean "$spec with slot(s) ${second[*]} down"
	echo "ok: $spec: rebuilt, fsck clean; slot(s) ${second[*]} killed: every file exact"
	stop_devices
}

# expect_fail STATUS TEXT ARGS...: osdfs ARGS exits STATUS saying TEXT
expect_fail() {
	local want=$1 text=$2 rc
	shift 2
	"$OSDFS" "$@" >"$WORK/err.log" 2>&1
	rc=$?
	[ $rc = "$want" ] || fail "osdfs $*: exit $rc, not $want: $(cat "$WORK/err.log")"
	grep -q -- "$text" "$WORK/err.log" || fail "osdfs $*: no '$text' in: $(cat "$WORK/err.log")"
}

# Bad layouts, too few devices and foreign devices, on embedded stores
check_errors() {
	local d=$WORK/emb
	mkdir -p "$d"
	expect_fail 2 "unknown RAID" -t "$d/a" -t "$d/b" mkfs --layout raid9
	expect_fail 2 "not a positive multiple of 512" -t "$d/a" -t "$d/b" mkfs --layout raid0,su=1000
	expect_fail 2 "does not fit 2 devices" -t "$d/a" -t "$d/b" mkfs --layout raid5,width=3
	expect_fail 2 "does not fit 1 device" -t "$d/a" mkfs --layout raid1
	[ -e "$d/a" ] && fail "a refused mkfs created a store"
	"$OSDFS" -t "$d/a" -t "$d/b" mkfs --layout raid1 >/dev/null 2>&1 || fail "mkfs raid1 on 2"
	"$OSDFS" -t "$d/x" -t "$d/y" mkfs >/dev/null 2>&1 || fail "mkfs raid0 on 2"
	expect_fail 1 "foreign device" -t "$d/a" -t "$d/y" ls /
	expect_fail 1 "tolerates 0" -t "$d/x" ls /
	expect_fail 0 "nothing to rebuild" -t "$d/a" -t "$d/b" rebuild
	"$OSDFS" -t "$d/a" ls / >"$WORK/err.log" 2>&1 || fail "raid1 on one of two: $(cat "$WORK/err.log")"
	grep -q "slot 1 .* is down" "$WORK/err.log" || fail "no warning for the missing device"
	expect_fail 1 "no new device" -t "$d/a" rebuild
	rm -rf "$d"
	echo "ok: bad layouts, too few devices and foreign devices refused with clear messages"
}

check_errors
for l in "$@"; do
	run_layout "$l"
done
echo "verified: $# layouts, $VERIFIED_FILES files and $VERIFIED_BYTES bytes read back exactly," \
     "$KILLS daemons killed, $REBUILT components rebuilt, in ${SECONDS}s"
