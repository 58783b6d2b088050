#!/bin/bash
# scrub_dirs: 'osdfs scrub' over 4 embedded target directories (docs/layout.md,
# "Medium errors and scrub"). A byte flipped in the largest data file of
# directory 1:
# - RAID 6: 'scrub --dry-run' reports it (exit 4) and writes nothing; 'scrub'
#   repairs it (exit 1: located by P and Q, or a medium error where the store
#   checks data checksums), the file reads back exactly, the next scrub is
#   clean (exit 0) and 'devices' shows the repair on slot 1 with its event.
# - RAID 5: either repaired (a medium error: the store knows the bad block)
#   or reported as a mismatch that cannot be attributed (exit 4) with the
#   data file left as it was; never a silent change.
#   scrub_dirs.sh OSDFS
set -u
OSDFS=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-scrub.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

fail() { echo "FAIL: $*"; [ -s err ] && cat err; exit 1; }
T=(--target d0 --target d1 --target d2 --target d3)
fs() { "$OSDFS" "${T[@]}" "$@" 2>err; }
# flip one byte of the largest data file of d1 (a component of /big)
flip() {
	victim=$(find d1/data -type f -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
	[ -n "$victim" ] || fail "no data file in d1"
	old=$(od -An -tu1 -j 20000 -N1 "$victim" | tr -d ' ')
	printf "\\$(printf '%03o' $(((old + 1) % 256)))" |
		dd of="$victim" bs=1 seek=20000 conv=notrunc status=none || fail "flip"
}
mkfs_put() {
	rm -rf d0 d1 d2 d3
	mkdir -m 700 d0 d1 d2 d3
	fs mkfs --layout "$1" >/dev/null || fail "mkfs $1"
	fs put big /big || fail "put big ($1)"
}
head -c 300001 /dev/urandom >big

# RAID 6
mkfs_put raid6,su=16K
flip
sum=$(md5sum <"$victim")
fs --json scrub --dry-run >out
rc=$?
[ $rc -eq 4 ] || fail "raid6 dry run: exit $rc, want 4: $(cat out)"
grep -q '"unrepaired":1' out || fail "raid6 dry run: $(cat out)"
[ "$(md5sum <"$victim")" = "$sum" ] || fail "raid6 dry run wrote"
fs --json scrub >out
rc=$?
[ $rc -eq 1 ] || fail "raid6 scrub: exit $rc, want 1: $(cat out)"
grep -q '"repaired":1,"unrepaired":0' out || fail "raid6 scrub: $(cat out)"
grep -q '"kind":"repaired","slot":1' out || fail "raid6 scrub: no repair on slot 1: $(cat out)"
fs cat /big >got || fail "cat after scrub"
cmp -s got big || fail "raid6: /big differs after scrub"
fs scrub >out || fail "raid6: second scrub not clean: $(cat out)"
grep -q '^scrub clean: ' out || fail "raid6 second scrub: $(cat out)"
fs --json devices >out || fail "devices"
grep -q '"slot":1,"state":"up","errors":0,"medium_errors":[0-9]*,"repairs":1,' out ||
	fail "devices: no repair counted on slot 1: $(cat out)"
grep -q '"kind":"repaired","slot":1,' out || fail "devices: no repair event: $(cat out)"
fs devices >out || fail "devices (text)"
grep -q 'warning  repaired       slot 1  object 0x' out || fail "devices text: $(cat out)"

# RAID 5
mkfs_put raid5,su=16K
flip
sum=$(md5sum <"$victim")
fs --json scrub >out
rc=$?
case $rc in
1)	fs cat /big >got && cmp -s got big || fail "raid5: repaired but /big differs" ;;
4)	grep -q '"kind":"mismatch"' out || fail "raid5: exit 4 without a mismatch: $(cat out)"
	[ "$(md5sum <"$victim")" = "$sum" ] || fail "raid5: an unattributed mismatch was written"
	;;
*)	fail "raid5 scrub: exit $rc: $(cat out)" ;;
esac
echo "scrub_dirs: ok"
