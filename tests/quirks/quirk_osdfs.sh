#!/bin/bash
# quirk_osdfs: osdfs against an osd-targetd that behaves like another target,
# one behaviour at a time (osd-targetd --quirk, docs/target.md).
#   quirk_osdfs.sh OSDFS OSD_TARGETD OSDCTL QUIRK
# Over iSCSI on 127.0.0.1: mkfs, cp -r a tree in, df, cp -r it out (exact
# bytes), fsck clean; every command must exit 0. Also checks with osdctl that
# the quirk is in effect (so that the run above met it), the superblock
# record of a PUNCH that is missing or not standard (osdfs-format.md), and
# that an unknown quirk name is refused.
# Exit status: 0 passed, 1 failed.
set -u
OSDFS=$1 TARGETD=$2 OSDCTL=$3 QUIRK=$4

WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-quirk.XXXXXX") || exit 1
PID=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
	echo "FAIL ($QUIRK): $*"
	[ -s "$WORK/osdfs.log" ] && { echo "--- tool messages:"; tail -20 "$WORK/osdfs.log"; }
	[ -s "$WORK/targetd.log" ] && { echo "--- osd-targetd:"; tail -20 "$WORK/targetd.log"; }
	exit 1
}

# wait_for WHAT SECONDS CONDITION: poll CONDITION until it holds, at most SECONDS
wait_for() {
	local deadline=$((SECONDS + $2))
	until eval "$3"; do
		[ $SECONDS -lt $deadline ] || fail "timed out waiting for $1"
		sleep 0.02
	done
}

# An unknown quirk is a usage error (exit 2), and nothing is served.
"$TARGETD" --quirk no-such-quirk --create "$WORK/refused" >"$WORK/usage.log" 2>&1
rc=$?
[ $rc = 2 ] || fail "--quirk no-such-quirk: exit $rc, expected 2"
grep -q "unknown --quirk: no-such-quirk" "$WORK/usage.log" || fail "usage message: $(cat "$WORK/usage.log")"
[ -e "$WORK/refused" ] && fail "a refused command line created a store"

"$TARGETD" --listen 127.0.0.1:0 --port-file "$WORK/port" --create --quirk "$QUIRK" \
	--iqn iqn.2026-12.org.osd:quirk "$WORK/store" >>"$WORK/targetd.log" 2>&1 &
PID=$!
wait_for "osd-targetd to listen" 20 "grep -qx '[0-9][0-9]*' '$WORK/port' 2>/dev/null || ! kill -0 $PID"
kill -0 "$PID" 2>/dev/null || fail "osd-targetd exited: $(cat "$WORK/targetd.log")"
URL="iscsi://127.0.0.1:$(cat "$WORK/port")/iqn.2026-12.org.osd:quirk/0"
fs() { "$OSDFS" --target "$URL" "$@"; }

# a tree: sizes around block and object boundaries, empty, sparse, nested
mkdir -p "$WORK/src/d1/d2" "$WORK/src/empty"
for n in 0 1 4095 4096 65537 300000; do
	head -c "$n" /dev/urandom >"$WORK/src/f$n"
done
head -c 1000000 /dev/urandom >"$WORK/src/d1/d2/big"
truncate -s 2000000 "$WORK/src/d1/sparse"
head -c 3000 /dev/urandom | dd of="$WORK/src/d1/sparse" bs=3000 seek=700000 oflag=seek_bytes \
	conv=notrunc status=none
ln -s ../f4096 "$WORK/src/d1/link"

fs mkfs --label quirk >"$WORK/mkfs.log" 2>>"$WORK/osdfs.log" || fail "mkfs: $(cat "$WORK/mkfs.log")"
fs cp -r "$WORK/src" :/tree 2>>"$WORK/osdfs.log" || fail "cp -r in"
fs df >"$WORK/df.log" 2>>"$WORK/osdfs.log" || fail "df"
fs --json df >"$WORK/df.json" 2>>"$WORK/osdfs.log" || fail "df --json"
# the root, the tree's 3 directories, 9 files and a symlink are in use
grep -Eq '"inodes_used": *14[,}]' "$WORK/df.json" || fail "df --json: $(cat "$WORK/df.json")"
fs cp -r :/tree "$WORK/out" 2>>"$WORK/osdfs.log" || fail "cp -r out"
diff -r "$WORK/src" "$WORK/out" >"$WORK/diff.log" 2>&1 || fail "copy differs: $(head -5 "$WORK/diff.log")"
fs fsck >"$WORK/fsck.log" 2>&1 || fail "fsck: exit $?: $(cat "$WORK/fsck.log")"
grep -q '^clean' "$WORK/fsck.log" || fail "fsck: $(cat "$WORK/fsck.log")"
# refused: what the quirk takes away, seen without osdfs' fallbacks
refused() {
	"$OSDCTL" --target "$URL" "$@" >"$WORK/ctl.log" 2>&1
	local rc=$?
	[ $rc = 1 ] || fail "osdctl $*: exit $rc, expected 1: $(cat "$WORK/ctl.log")"
	grep -q "$EXPECT" "$WORK/ctl.log" || fail "osdctl $*: $(cat "$WORK/ctl.log")"
}
EXPECT="INVALID COMMAND OPERATION CODE"
case $QUIRK in
osd1-descriptor)
	refused --osd-version 1 create-partition 0x20000
	grep -q "note: INQUIRY claims OSD-1 but the target refused an OSD-1 CDB" "$WORK/osdfs.log" ||
		fail "no note of the version fallback" ;;
no-flush-partition) refused flush 0x10000 ;;
no-flush-osd) refused flush ;;
no-object-count) EXPECT="INVALID FIELD IN PARAMETER LIST" refused getattr 0x10000 0 0x30000001 0xC1 ;;
esac
# the superblock's ro_compat (bytes 24-31, little-endian): 1 = PUNCH_ZEROES
sb=$("$OSDCTL" --target "$URL" getattr 0x10000 0x10000 0x10000 1 2>>"$WORK/osdfs.log") ||
	fail "osdctl getattr of the superblock"
ro_compat=${sb:50:16}
case $QUIRK in
no-punch | punch-shifts) want=0100000000000000 ;;
*) want=0000000000000000 ;;
esac
[ "$ro_compat" = $want ] || fail "superblock ro_compat $ro_compat, expected $want"

kill -TERM "$PID" && wait "$PID" || fail "osd-targetd did not stop cleanly"
PID=
echo "PASS ($QUIRK): mkfs, cp -r in/out ($(du -sb --apparent-size "$WORK/src" | cut -f1) bytes), df, fsck clean"
