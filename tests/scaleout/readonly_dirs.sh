#!/bin/bash
# readonly_dirs: read-only commands record nothing (docs/layout.md,
# "Read-only"). RAID 5 over 4 embedded target directories; 'osdfs cat',
# 'fsck' and 'devices' with directory 1 absent, then with directory 2
# absent, read every file exactly and leave the device table alone: with
# all four back every slot is up (two read-only runs used to record two
# different slots down, and the second was refused). A read-write command
# with a directory absent still records it down.
#   readonly_dirs.sh OSDFS
set -u
OSDFS=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-readonly.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

fail() { echo "FAIL: $*"; [ -s err ] && cat err; exit 1; }
T=(--target d0 --target d1 --target d2 --target d3)
fs() { "$OSDFS" "${T[@]}" "$@" 2>err; }
# the slots' states, space-separated, as 'devices --json' reports them
states() { fs --json devices | grep -o '"state":"[a-z]*"' | cut -d'"' -f4 | tr '\n' ' '; }

fs mkfs --layout raid5,su=16K >/dev/null || fail "mkfs"
head -c 300001 /dev/urandom >big
printf 'small file\n' >small
fs put big /big || fail "put big"
fs put small /small || fail "put small"

for gone in 1 2; do
	mv "d$gone" away
	for f in big small; do
		fs cat "/$f" >out || fail "cat /$f without d$gone"
		cmp -s out "$f" || fail "/$f read back differs without d$gone"
	done
	fs fsck >/dev/null || fail "fsck without d$gone"
	want="up up up up "
	want=${want:0:$((gone * 3))}down${want:$((gone * 3 + 2))}
	[ "$(states)" = "$want" ] || fail "without d$gone: states '$(states)', want '$want'"
	mv away "d$gone"
done

[ "$(states)" = "up up up up " ] || fail "after read-only runs: states '$(states)'"
for f in big small; do
	fs cat "/$f" >out && cmp -s out "$f" || fail "/$f with every device"
done

# read-write with d3 absent: d3 is recorded down and stays down when back
mv d3 away
fs mkdir /rw || fail "mkdir without d3"
mv away d3
[ "$(states)" = "up up up down " ] || fail "after a read-write run: states '$(states)'"
echo "PASS: two read-only runs without d1 and d2 recorded nothing"
