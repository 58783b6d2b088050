#!/bin/bash
# scaleout_bench_layout: osd-bench --layout with tiny sizes, so the mode
# cannot rot: the table has a row with two figures for 1, 2 and 4 devices
# and both scaling ratios.
#   bench_smoke.sh OSD_BENCH OSD_TARGETD
set -u
BENCH=$1 TARGETD=$2
out=$("$BENCH" --layout --runs 1 --size 8 --targetd "$TARGETD" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "FAIL: osd-bench --layout exited $rc"; exit 1; }
num='[0-9][0-9]*\.[0-9]'
for n in 1 2 4; do
	echo "$out" | grep -q "^$n  *$num  *$num\$" || { echo "FAIL: no row for $n devices"; exit 1; }
done
for n in 2 4; do
	echo "$out" | grep -q "^scaling $n/1 devices: *write $num[0-9]*x *read $num[0-9]*x\$" ||
		{ echo "FAIL: no scaling $n/1 line"; exit 1; }
done
echo "ok: osd-bench --layout printed the 1/2/4-device rows and the scaling ratios"
