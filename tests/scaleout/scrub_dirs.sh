#!/bin/bash
# scrub_dirs: 'osdfs scrub' over 4 embedded target directories (docs/layout.md,
# "Medium errors and scrub"). A byte flipped in the largest data file of
# directory 1:
# - RAID 6: 'scrub --dry-run' reports it (exit 4) and writes nothing; 'scrub'
#   repairs it (exit 1: located by P and Q, or a medium error where the store
#   checks data checksums), the file reads back exactly, the next scrub is
#   clean (exit 0) and 'devices' shows the repair on slot 1 with its event.
# - RAID 5: the store's data checksum makes it a medium error: 'cat' and
#   'fsck --verify-data' read the right bytes from parity, 'scrub' repairs
#   it (exit 1), the next scrub is clean, 'devices' counts the repair.
# - One device: 'fsck --verify-data' reports the file by path (exit 4).
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
	victim=$(find d1/data -type f ! -name '*.sum' -printf '%s %p\n' | sort -n | tail -1 |
		cut -d' ' -f2)
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

# RAID 5: the store's data checksums turn the flip into a medium error
# (MEDIUM ERROR, -EIO) on a device that answers: reads return the right
# bytes from parity (read-only commands do not rewrite), scrub repairs it
mkfs_put raid5,su=16K
flip
fs cat /big >got || fail "raid5: cat with a bad block"
cmp -s got big || fail "raid5: /big differs with a bad block"
fs fsck --verify-data >out || fail "raid5: fsck --verify-data: $(cat out)"
grep -q '^clean: .* 300001 data bytes read' out || fail "raid5 fsck --verify-data: $(cat out)"
grep -q "^1 read failed on a device that answered and was rebuilt from redundancy: run 'osdfs scrub'" \
	out || fail "raid5 fsck --verify-data does not point at scrub: $(cat out)"
fs --json scrub >out
rc=$?
[ $rc -eq 1 ] || fail "raid5 scrub: exit $rc, want 1: $(cat out)"
grep -q '"medium":1,"mismatches":0,"repaired":1,"unrepaired":0' out || fail "raid5 scrub: $(cat out)"
fs scrub >out || fail "raid5: second scrub not clean: $(cat out)"
fs cat /big >got && cmp -s got big || fail "raid5: /big differs after scrub"
fs --json devices >out || fail "devices"
grep -q '"slot":1,"state":"up","errors":0,"medium_errors":[1-9][0-9]*,"repairs":1,' out ||
	fail "raid5 devices: $(cat out)"

# one device, no redundancy: fsck --verify-data names the file
rm -rf p && mkdir -m 700 p
"$OSDFS" --target p mkfs >/dev/null 2>err || fail "mkfs p"
"$OSDFS" --target p put big /big 2>err || fail "put p"
victim=$(find p/data -type f ! -name '*.sum' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
old=$(od -An -tu1 -j 5000 -N1 "$victim" | tr -d ' ')
printf "\\$(printf '%03o' $(((old + 1) % 256)))" |
	dd of="$victim" bs=1 seek=5000 conv=notrunc status=none || fail "flip p"
"$OSDFS" --target p fsck --verify-data >out 2>err
rc=$?
[ $rc -eq 4 ] || fail "plain fsck --verify-data: exit $rc, want 4: $(cat out)"
grep -q '^data-io: /big (inode [0-9]*): Input/output error reading bytes 0-300000$' out ||
	fail "plain fsck --verify-data: $(cat out)"
"$OSDFS" --target p fsck >out 2>err || fail "plain fsck without --verify-data: $(cat out)"
echo "scrub_dirs: ok"
