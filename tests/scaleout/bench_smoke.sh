#!/bin/bash
# scaleout_bench_layout: osd-bench --layout with tiny sizes, so the mode
# cannot rot: the table has a row with two figures for 1, 2 and 4 devices
# and both scaling ratios; with two maps, the ratios of the second to the
# first; and osd-bench --parity prints a figure for every operation.
#   bench_smoke.sh OSD_BENCH OSD_TARGETD
set -u
BENCH=$1 TARGETD=$2
out=$("$BENCH" --layout --runs 1 --size 8 --targetd "$TARGETD" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "FAIL: osd-bench --layout exited $rc"; exit 1; }
num='[0-9][0-9]*\.[0-9]'
for n in 1 2 4; do
	echo "$out" | grep -q "^$n  *$num  *$num  *$num[0-9]*\$" || { echo "FAIL: no row for $n devices"; exit 1; }
done
for n in 2 4; do
	echo "$out" | grep -q "^scaling $n/1 devices: *write $num[0-9]*x *read $num[0-9]*x\$" ||
		{ echo "FAIL: no scaling $n/1 line"; exit 1; }
done
out=$("$BENCH" --layout --runs 1 --size 8 --targetd "$TARGETD" --layout raid0,su=64K \
	--layout raid5,su=64K 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "FAIL: osd-bench --layout with two maps exited $rc"; exit 1; }
for n in 2 4; do
	echo "$out" | grep -q "^raid5,su=64K  *$n  *$num[0-9]*  *$num[0-9]*  *$num[0-9]*\$" ||
		{ echo "FAIL: no ratio of raid5 to raid0 on $n devices"; exit 1; }
done
out=$("$BENCH" --parity --runs 1 --unit 4 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "FAIL: osd-bench --parity exited $rc"; exit 1; }
for op in 'P' 'P+Q' 'recover 1' 'recover 2'; do
	for b in aligned +16; do
		echo "$out" | grep -q "^$op  *8  *$b  *$num[0-9]*  *\($num[0-9]*  *$num[0-9]*x\|n/a  *n/a\)\$" ||
			{ echo "FAIL: no --parity row for $op, 8 data units, $b"; exit 1; }
	done
done
echo "ok: osd-bench --layout printed the 1/2/4-device rows, the scaling ratios and the ratios between maps; --parity every row"
