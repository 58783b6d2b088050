#!/bin/bash
# resync_dirs: resync, not rebuild (docs/layout.md, "Dirty-region log and
# resync"). RAID 5 over 4 embedded target directories holding a 4 MiB file;
# d2 is taken away and a new file is put degraded; 'osdfs devices'
# (read-only) shows slot 2 still down and the log covering it; with d2 back
# 'osdfs resync' reports it brought up, having copied only the objects that
# changed (the new file, its directory, the superblock: a few KiB), none of
# the 4 MiB file; afterwards every slot is up, the log is empty, scrub is
# clean. A second outage is resynced by the open of the next ordinary
# read-write command by itself, and every file reads back exact with d0 gone.
#   resync_dirs.sh OSDFS
set -u
OSDFS=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-resync.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

fail() { echo "FAIL: $*"; [ -s err ] && cat err; exit 1; }
T=(--target d0 --target d1 --target d2 --target d3)
fs() { "$OSDFS" "${T[@]}" "$@" 2>err; }
states() { fs --json devices | grep -o '"state":"[a-z]*"' | cut -d'"' -f4 | tr '\n' ' '; }
same() { fs cat "/$1" >out && cmp -s out "$1"; }

fs mkfs --layout raid5,su=64K >/dev/null || fail "mkfs"
head -c 4194304 /dev/urandom >big
head -c 5000 /dev/urandom >small
head -c 3000 /dev/urandom >more
fs put big /big || fail "put big"

mv d2 away
fs put small /small || fail "put small without d2"
mv away d2
fs devices >dev.txt || fail "devices"
grep -q "resyncs slot 2" dev.txt || fail "devices: no covered slot 2: $(cat dev.txt)"
[ "$(states)" = "up up down up " ] || fail "read-only runs resync nothing: '$(states)'"
fs resync >resync.txt || fail "resync: $(cat resync.txt)"
cat resync.txt
grep -q "^resynced slot 2 at open: 0 regions, [0-9]* objects, " resync.txt ||
	fail "resync: $(cat resync.txt)"
# whole objects only (a new file, directory and superblock): far less than
# the 1.3 MiB a rebuild of slot 2 copies of the big file
bytes=$(sed -n 's/.* objects, \([0-9]*\) bytes resynced;.*/\1/p' resync.txt)
[ -n "$bytes" ] && [ "$bytes" -lt 200000 ] || fail "resync copied $bytes bytes"
[ "$(states)" = "up up up up " ] || fail "after resync: '$(states)'"
fs --json devices | grep -q '"dirty_log":{"entries":0,' || fail "log not empty after resync"
fs scrub >scrub.txt || fail "scrub: $(cat scrub.txt)"

# a second outage: the next read-write command resyncs at its open
mv d2 away
fs put more /more || fail "put more without d2"
mv away d2
fs mkdir /after || fail "mkdir with d2 back"
[ "$(states)" = "up up up up " ] || fail "after the open's resync: '$(states)'"
fs devices | grep -q "resync-finished  slot 2" || fail "no resync-finished event"
fs resync | grep -q "nothing to resync" || fail "resync with every device up"

mv d0 away
for f in big small more; do same $f || fail "/$f differs with d0 gone"; done
echo "PASS: resynced $bytes bytes instead of a rebuild"
