#!/bin/bash
# readonly_store: read-only osdfs commands do not change a directory store
# (docs/target-store.md, "Access times"). After mkfs and cp -r of a small
# tree, each of ls -R, ls -l, stat, cat, get, tree, df, fsck (no --repair)
# and devices leaves every file of the store byte-identical, except that
# each open of the target appends exactly one record to the metadata log:
# its boot epoch (docs/target.md; capabilities name it), a 35-byte
# attribute record of (pid 0, oid 0, private root page BFFFFFF0h, number 2)
# holding the previous epoch + 1. Reads used to append access-time records
# too (~140 B per 'ls').
#   readonly_store.sh OSDFS
set -u
OSDFS=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/osd-rostore.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

fail() { echo "FAIL: $*"; [ -s err ] && cat err; exit 1; }
fs() { "$OSDFS" --target st "$@" 2>err; }
# every store file but the log: name, size, checksum
others() { (cd st && find . -type f ! -path ./log -printf '%p %s\n' -exec cksum {} + | sort); }
# the 35-byte record at the end of the log, as hex bytes
last_rec() { tail -c 35 st/log | od -An -v -tx1 | tr -s ' \n' ' '; }
KEY=' 00 00 00 1a 05 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 bf ff ff f0 00 00 00 02'

mkdir -p src/sub || exit 1
printf 'hello\n' >src/a.txt
seq 1 5000 >src/sub/b.txt
printf 'x' >src/sub/c
fs mkfs >/dev/null || fail "mkfs"
fs cp -r src :/src >/dev/null || fail "cp -r"

epoch=
# run_ro [-x] NAME ARGS...: -x: the command exits non-zero (it still opens the target)
run_ro() {
	local xfail=0 name o0 o1 l0 l1 rec e
	[ "$1" = -x ] && { xfail=1; shift; }
	name=$1
	shift
	o0=$(others)
	l0=$(stat -c %s st/log)
	cp st/log log.before
	if fs "$@" >out; then
		[ $xfail = 0 ] || fail "$name succeeded"
	else
		[ $xfail = 1 ] || fail "$name"
	fi
	o1=$(others)
	l1=$(stat -c %s st/log)
	[ "$o0" = "$o1" ] || fail "$name changed a store file other than the log"
	[ "$l1" -eq $((l0 + 35)) ] || fail "$name: log grew by $((l1 - l0)) bytes, not 35"
	cmp -s -n "$l0" log.before st/log || fail "$name rewrote logged bytes"
	rec=$(last_rec)
	# bytes 4-32 of the record: length 26, type, the key; 33-34 the epoch
	[ "$(echo "$rec" | cut -d' ' -f6-34)" = "$(echo "$KEY" | cut -d' ' -f2-30)" ] ||
		fail "$name appended something else: $rec"
	e=$((16#$(echo "$rec" | cut -d' ' -f35)$(echo "$rec" | cut -d' ' -f36)))
	[ -z "$epoch" ] || [ "$e" -eq $((epoch + 1)) ] || fail "$name: epoch $e after $epoch"
	epoch=$e
}

run_ro "ls -R" ls -R /
grep -q 'b.txt' out || fail "ls -R output"
run_ro "ls -l" ls -l /src/sub
run_ro "stat" stat /src/a.txt
run_ro "cat" cat /src/a.txt /src/sub/b.txt
cat src/a.txt src/sub/b.txt | cmp -s - out || fail "cat output"
run_ro "get" get /src/sub/b.txt got
cmp -s got src/sub/b.txt || fail "get output"
run_ro "tree" tree /
run_ro "df" df
run_ro "fsck" fsck
grep -q '^clean' out || fail "fsck: $(cat out)"
# one device: no device table to show, but the target was opened
run_ro -x "devices" devices
grep -q 'no device table' err || fail "devices: $(cat err)"
run_ro "ls -R again" ls -R /
echo "PASS: read-only commands wrote only their boot epoch records"
