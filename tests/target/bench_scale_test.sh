#!/bin/bash
# test_bench_scale: osd-bench --scale at tiny counts, so the mode cannot rot:
# every goal line is printed with a figure per count, the ratio and a
# verdict; the read-only pass appends no log byte (a real check: reads never
# write the store, docs/target-store.md "Access times"); a first 4 KiB WRITE
# appends at most 1 log record (its access time and "data modified" in one
# ATTRS record, docs/target-store.md "Metadata log"); st_blocks of the sparse file (2 MiB in
# 20 GiB) is what it uses, 2 MiB, not its size;
# the objects hold data (--data), so the open loads them; bad options exit 2;
# nothing is left in the scratch directory.
#   bench_scale_test.sh OSD_BENCH
set -u
BENCH=$1
scratch=$(mktemp -d "${TMPDIR:-/tmp}/bench-scale-test.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$BENCH" --scale --objects 2k,20k --small 500 --flush-every 100 --ops 500 \
	--updates 3000 --data 100 --dir "$scratch" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "osd-bench --scale exited $rc"
num='[0-9][0-9.]*'
verdict='(met|NOT MET)'
echo "$out" | grep -Eq "^  objects \(N\) +2000 +20000 +ratio$" || fail "no header row"
for goal in "resident memory after open \+ LIST <= 256 MiB" \
	"peak resident memory \(VmHWM\) <= 256 MiB" \
	"open after a clean close <= 1 s" \
	"open after kill -9 of a writer <= 1 s" \
	"peak resident memory of that updater <= 256 MiB" \
	"open after kill -9 of an updater \(see above\) <= 1 s" \
	"resident memory after that open <= 256 MiB" \
	"full LIST walk: <= 12x the time per 10x objects" \
	"osdfs fsck: <= 12x the time per 10x objects" \
	"log bytes appended by a read-only pass = 0" \
	"log records per first 4 KiB WRITE <= 1" \
	"CREATE \+ 4 KiB WRITE \+ FLUSH >= 50k objects/s" \
	"osdfs lookup: time per op within 1.5x" \
	"osdfs negative lookup: time per op within 1.5x" \
	"osdfs create: time per op within 1.5x" \
	"osdfs st_blocks of 2 MiB in 20 GiB = 2 MiB"; do
	echo "$out" | grep -Eq "^  $goal +$num +$num +[A-Za-z/]+ +$num"x" +$verdict$" ||
		fail "no goal line '$goal'"
done
echo "$out" | grep -Eq "^  log bytes appended by a read-only pass = 0 +0 +0 +B .* met$" ||
	fail "a read-only pass wrote to the log"
# the figure is records / objects written, printed as a decimal (0.99 when
# one record of the batch was shared): compare numbers, not text
echo "$out" | awk '/^  log records per first 4 KiB WRITE <= 1 / {
		n++; if ($10 + 0 <= 0 || $10 > 1 || $11 + 0 <= 0 || $11 > 1) bad = 1 }
	END { exit !(n == 1 && !bad) }' ||
	fail "a first 4 KiB WRITE appended more than 1 log record (or none)"
echo "$out" | grep -Eq "^  osdfs st_blocks of 2 MiB in 20 GiB = 2 MiB +2[.0-9]* +2[.0-9]* +MiB .* met$" ||
	fail "st_blocks of the sparse file is not the 2 MiB it uses"
echo "$out" | grep -q "updater: 3000 SET ATTRIBUTES" || fail "the header does not name --updates"
echo "$out" | grep -q "the N objects hold 100 bytes of data each" || fail "the header does not name --data"
for row in "REMOVE of a random object" "CREATE of it again"; do
	echo "$out" | grep -Eq "^  $row \(us, not a goal\) +$num +$num$" || fail "no row '$row'"
done
[ -z "$(ls -A "$scratch")" ] || fail "left behind: $(ls -A "$scratch")"

"$BENCH" --scale --objects 0 >/dev/null 2>&1
[ $? = 2 ] || fail "--objects 0 not refused with 2"
"$BENCH" --scale --objects 1k,2k,3k,4k,5k >/dev/null 2>&1
[ $? = 2 ] || fail "five counts not refused with 2"
"$BENCH" --scale --updates 0 >/dev/null 2>&1
[ $? = 2 ] || fail "--updates 0 not refused with 2"
"$BENCH" --scale --data 0 >/dev/null 2>&1
[ $? = 2 ] || fail "--data 0 not refused with 2"
"$BENCH" --scale --bogus >/dev/null 2>&1
[ $? = 2 ] || fail "an unknown option not refused with 2"
"$BENCH" --scale --help | grep -q -- "--objects LIST" || fail "--help lacks --objects"
echo "ok: osd-bench --scale printed every goal line; read-only pass wrote 0 log bytes"
