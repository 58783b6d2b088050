#!/bin/bash
# scaleout_bench_layout: osd-bench --layout with tiny sizes on 127.0.0.1, so
# the mode cannot rot: two maps over 1, 2 and 4 devices give one row each,
# with the resolved stripe, two figures and the ratio columns (none to a
# line rate: the links are not shaped); RAID 5 on one device is n/a; and
# osd-bench --parity prints a figure for every operation.
#   bench_smoke.sh OSD_BENCH OSD_TARGETD
set -u
BENCH=$1 TARGETD=$2
out=$("$BENCH" --layout --runs 1 --size 8 --io 2 --devices 1,2,4 --layout raid0,su=64K \
	--layout raid5 --targetd "$TARGETD" 2>&1)
rc=$?
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ $rc = 0 ] || fail "osd-bench --layout exited $rc"
num='[0-9][0-9]*\.[0-9][0-9]*'
# layout devs stripe write read w/1dev r/1dev w/line r/line w/raid0 r/raid0
row() { # SPEC DEVS STRIPE
	echo "$out" | grep -q "^$1  *$2 $3  *$num  *$num  *$num  *$num  *-  *-  *$num  *$num\$" ||
		fail "no row for $1 on $2 devices (stripe $3)"
}
row 'raid0,su=64K' 1 1
row 'raid0,su=64K' 2 2
row 'raid0,su=64K' 4 4
row raid5 2 '1+1'
row raid5 4 '3+1'
echo "$out" | grep -q '^raid5  *1 n/a  *n/a  *n/a$' || fail "raid5 on 1 device is not n/a"
echo "$out" | grep -q '^raid0,su=64K  *1 1  .* 1\.00  *1\.00  *-  *-  *1\.00  *1\.00$' ||
	fail "the one-device RAID 0 row is not its own baseline"
echo "$out" | grep -q '^links: none, every daemon on 127\.0\.0\.1 (unshaped)\.$' ||
	fail "no links line"
echo "$out" | grep -q "nproc $(nproc)," || fail "no nproc"
echo "$out" | grep -q "; 8 MiB file, 2 MiB I/O, write includes\$" || fail "no sizes"
"$BENCH" --layout --size 8 --io 3 >/dev/null 2>&1
[ $? = 2 ] || fail "--io 3 of --size 8 is not a usage error"
out=$("$BENCH" --parity --runs 1 --unit 4 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "osd-bench --parity exited $rc"
for op in 'P' 'P+Q' 'recover 1' 'recover 2'; do
	for b in aligned +16; do
		echo "$out" | grep -q "^$op  *8  *$b  *$num  *\($num  *${num}x\|n/a  *n/a\)\$" ||
			fail "no --parity row for $op, 8 data units, $b"
	done
done
echo "ok: osd-bench --layout printed every row, the stripes and the ratios; --parity every row"
