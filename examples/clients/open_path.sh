#!/bin/sh
# example_open_path: open_path (osdfs_open_path(), <osdfs/open.h>) reads a
# file of a CAPKEY filesystem made by the osdfs tool, with the tool's key
# scheme: from the store directory, then over iSCSI from osd-targetd serving
# it. Without the key, or with another key, it is refused and says so.
#   open_path.sh OPEN_PATH OSDFS OSD_TARGETD
set -u
open_path=$1 osdfs=$2 targetd=$3
d=$(mktemp -d "${TMPDIR:-/tmp}/osdop.XXXXXX") || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT
fail() { echo "example_open_path: FAIL: $*"; [ -f "$d/err" ] && cat "$d/err"; exit 1; }

umask 077
printf '00112233445566778899aabbccddeeff00112233\n' >"$d/key"
printf 'ffeeddccbbaa99887766554433221100ffeeddcc\n' >"$d/other.key"
# a file of more than one block, with every byte value
i=0
while [ $i -lt 40 ]; do printf 'line %02d of the file osdfs wrote: \001\377\n' $i; i=$((i + 1)); done >"$d/file"
fs="--target $d/store --security capkey --key-file $d/key"
"$osdfs" $fs mkfs >"$d/err" 2>&1 || fail "osdfs mkfs"
"$osdfs" $fs mkdir /dir >"$d/err" 2>&1 || fail "osdfs mkdir"
"$osdfs" $fs put "$d/file" /dir/file >"$d/err" 2>&1 || fail "osdfs put"

"$open_path" "$d/store" capkey "$d/key" /dir/file >"$d/out" 2>"$d/err" || fail "open_path DIR"
cmp "$d/file" "$d/out" || fail "open_path DIR read other bytes than osdfs put"

if "$open_path" "$d/store" nosec - /dir/file >"$d/out" 2>"$d/err"; then
	fail "a NOSEC open of a CAPKEY filesystem read it"
fi
grep -q "Permission denied" "$d/err" || fail "NOSEC refusal not reported as such"
if "$open_path" "$d/store" capkey "$d/other.key" /dir/file >"$d/out" 2>"$d/err"; then
	fail "another root key read it"
fi
grep -q "Permission denied" "$d/err" || fail "wrong-key refusal not reported as such"
if "$open_path" "$d/nothing" capkey "$d/key" /dir/file >"$d/out" 2>"$d/err"; then
	fail "a missing store opened"
fi
grep -q "nothing: no OSD store here" "$d/err" || fail "missing store not named"

# One device of a filesystem spread over two (RAID 1) holds only part of it:
# refused, named as such.
"$osdfs" --target "$d/m0" --target "$d/m1" mkfs --layout raid1 >"$d/err" 2>&1 ||
	fail "osdfs mkfs --layout raid1"
if "$open_path" "$d/m0" nosec - /x >"$d/out" 2>"$d/err"; then
	fail "a layout member opened alone"
fi
grep -q "m0 partition 0x10000: a device of a layout" "$d/err" || fail "layout member not named"

# The same over iSCSI (port 0: the daemon picks a free port and writes it).
"$targetd" --listen 127.0.0.1:0 --port-file "$d/port" "$d/store" 2>"$d/targetd.log" &
pid=$!
n=0
while [ ! -s "$d/port" ]; do
	kill -0 "$pid" 2>/dev/null || fail "osd-targetd exited: $(cat "$d/targetd.log")"
	n=$((n + 1))
	[ $n -gt 600 ] && fail "osd-targetd did not write its port in 30 s"
	sleep 0.05
done
url="iscsi://127.0.0.1:$(cat "$d/port")/iqn.2026-12.org.osd:target/0"
"$open_path" "$url" capkey "$d/key" /dir/file >"$d/out" 2>"$d/err" || fail "open_path URL"
cmp "$d/file" "$d/out" || fail "open_path URL read other bytes than osdfs put"
echo "example_open_path: OK"
