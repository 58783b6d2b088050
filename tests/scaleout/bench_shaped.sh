#!/bin/bash
# scaleout_bench_shaped: osd-bench --layout --link-rate, tiny. Checks that
#  - a run over 1 and 2 shaped links prints every row with the line-rate
#    ratios, and that each link is shaped in both directions: at 16 Mbit/s
#    neither writes (bench -> daemon) nor reads (daemon -> bench) can beat
#    the line rate (plus the 64 KiB burst; a loaded machine only slows them);
#  - while it runs, each daemon is alone in its namespace, both veth ends
#    carry tbf at the rate, and nothing was added to this namespace;
#  - SIGTERM, a daemon that does not start, tc failing half-way and a usage
#    error leave no namespace, daemon or file; a namespace left by a killed osd-bench is
#    removed by the next run;
#  - without ip/tc on PATH or without CAP_NET_ADMIN/CAP_SYS_ADMIN it says so.
# Needs root (CI runs as root); exits 77 only without it.
#   bench_shaped.sh OSD_BENCH OSD_TARGETD
set -u
BENCH=$1 TARGETD=$2
[ "$(id -u)" = 0 ] || { echo "SKIP: --link-rate needs root"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
bgpid=
trap '[ -n "$bgpid" ] && kill -KILL $bgpid 2>/dev/null; rm -rf "$work"' EXIT
links_before=$(ip -o link show | awk -F': ' '{print $2}' | sort)
num='[0-9][0-9]*\.[0-9][0-9]*'

# ours PID: the namespaces osd-bench PID made that still exist
ours() { ip netns list | awk '{print $1}' | grep -E "^osd-bench-$1(-[0-9]+)?\$"; }
gone() { # PID WHAT: no namespace of PID, nothing left in the work directory
	[ -z "$(ours "$1")" ] || fail "$2: namespaces left: $(ours "$1" | tr '\n' ' ')"
	[ -z "$(ls -A "$work/dir")" ] || fail "$2: files left in --dir: $(ls -A "$work/dir")"
}
mkdir "$work/dir"

# 1. shape of the output; both directions bounded by 16 Mbit/s = 1.91 MiB/s
"$BENCH" --layout --runs 1 --size 2 --devices 1,2 --layout raid0 --layout raid1 \
	--link-rate 16M --dir "$work/dir" --targetd "$TARGETD" >"$work/out" 2>&1 &
bgpid=$!
wait $bgpid
rc=$?
bgpid_done=$bgpid
bgpid=
cat "$work/out"
[ $rc = 0 ] || fail "osd-bench --layout --link-rate exited $rc"
grep -q '^links: each daemon in its own network namespace behind a veth pair, tbf$' \
	"$work/out" || fail "no links line"
grep -q '^16 Mbit/s (1\.9 MiB/s) each way\.$' "$work/out" || fail "no rate line"
row() { # SPEC DEVS STRIPE
	grep -q "^$1  *$2 $3  *$num  *$num  *$num  *$num  *$num  *$num  *-  *-\$" "$work/out" ||
	grep -q "^$1  *$2 $3  *$num  *$num  *$num  *$num  *$num  *$num  *$num  *$num\$" \
		"$work/out" || fail "no row for $1 on $2 devices (stripe $3)"
}
row raid0 1 1
row raid0 2 2
row raid1 2 '1x2'
grep -q '^raid1  *1 n/a  *n/a  *n/a$' "$work/out" || fail "raid1 on 1 device is not n/a"
# w/line and r/line (columns 8 and 9) of every measured row: at most 1.1
awk '$3 != "n/a" && $1 ~ /^raid/ && ($8 > 1.1 || $9 > 1.1) { bad = 1; print "too fast:", $0 }
     END { exit bad }' "$work/out" || fail "a link carried more than its rate"
gone $bgpid_done "after a normal end"

# 2. while running: one daemon per namespace, tbf on both ends; then SIGTERM
"$BENCH" --layout --runs 5 --size 64 --devices 2 --link-rate 100M \
	--dir "$work/dir" --targetd "$TARGETD" >"$work/out" 2>&1 &
bgpid=$!
for _ in $(seq 300); do # up to 30 s for both daemons to be in their namespaces
	[ -n "$(ip netns pids osd-bench-$bgpid-1 2>/dev/null)" ] && break
	kill -0 $bgpid 2>/dev/null || break
	sleep 0.1
done
pids0=$(ip netns pids osd-bench-$bgpid-0 2>/dev/null)
pids1=$(ip netns pids osd-bench-$bgpid-1 2>/dev/null)
[ -n "$pids1" ] || { cat "$work/out"; fail "the daemon of device 1 did not start"; }
[ "$(echo "$pids0" | wc -w)" = 1 ] || fail "device 0's namespace holds: $pids0"
[ "$(cat /proc/$pids0/comm)" = osd-targetd ] || fail "device 0 runs $(cat /proc/$pids0/comm)"
for d in 0 1; do
	tc -n osd-bench-$bgpid qdisc show dev dev$d | grep -q '^qdisc tbf .* rate 100Mbit ' ||
		fail "no tbf on the benchmark's end of link $d"
	tc -n osd-bench-$bgpid-$d qdisc show dev bench | grep -q '^qdisc tbf .* rate 100Mbit ' ||
		fail "no tbf on device $d's end of its link"
	ip -n osd-bench-$bgpid-$d -o addr show dev bench | grep -q " inet 10\.0\.$d\.2/30 " ||
		fail "device $d is not at 10.0.$d.2/30"
done
[ "$(ip -o link show | awk -F': ' '{print $2}' | sort)" = "$links_before" ] ||
	fail "links were added to this namespace"
kill -TERM $bgpid
wait $bgpid
rc=$?
victim=$bgpid
bgpid=
[ $rc = 143 ] || { cat "$work/out"; fail "after SIGTERM osd-bench exited $rc, not 143"; }
grep -q 'Terminated: stopping the daemons and removing what the benchmark made' "$work/out" ||
	fail "no message on SIGTERM"
for p in $pids0 $pids1; do
	! kill -0 "$p" 2>/dev/null || fail "daemon $p outlived SIGTERM"
done
gone $victim "after SIGTERM"

# 3. a daemon that does not start
"$BENCH" --layout --runs 1 --size 1 --devices 2 --link-rate 1G --dir "$work/dir" \
	--targetd /bin/false >"$work/out" 2>&1 &
bgpid=$!
wait $bgpid
rc=$?
victim=$bgpid
bgpid=
cat "$work/out"
[ $rc = 1 ] || fail "a daemon that exits: osd-bench exited $rc, not 1"
grep -q 'osd-bench --layout: /bin/false did not start' "$work/out" || fail "no message"
gone $victim "after a failed start"

# 3b. tc failing half-way through making the links: its message, and what
#     was made (namespaces, a veth pair) is removed
mkdir "$work/fakebin"
printf '#!/bin/sh\necho "RTNETLINK answers: Operation not supported" >&2\nexit 2\n' \
	>"$work/fakebin/tc"
chmod +x "$work/fakebin/tc"
PATH="$work/fakebin:$PATH" "$BENCH" --layout --runs 1 --size 1 --devices 2 --link-rate 1G \
	--dir "$work/dir" --targetd "$TARGETD" >"$work/out" 2>&1 &
bgpid=$!
wait $bgpid
rc=$?
victim=$bgpid
bgpid=
cat "$work/out"
[ $rc = 1 ] || fail "a failing tc: osd-bench exited $rc, not 1"
grep -q "^osd-bench --layout: shaped links: tc -n osd-bench-$victim qdisc add dev dev0 root tbf rate 1000000000bit .*: RTNETLINK answers: Operation not supported\$" \
	"$work/out" || fail "a failing tc: no message naming the command and its output"
gone $victim "after a failing tc"

# 4. a namespace left by a dead osd-bench goes with the next run
sh -c 'exit 0' &
dead=$!
wait $dead
ip netns add "osd-bench-$dead-0" || fail "cannot make a namespace"
"$BENCH" --layout --runs 1 --size 1 --devices 1 --link-rate 10G --dir "$work/dir" \
	--targetd "$TARGETD" >"$work/out" 2>&1 || { cat "$work/out"; fail "a 10G run failed"; }
[ -z "$(ours $dead)" ] || { ip netns del "osd-bench-$dead-0"; fail "stale namespace kept"; }

# 5. what it needs, and usage errors
out=$(PATH=/nonexistent "$BENCH" --layout --link-rate 1G 2>&1)
rc=$?
[ $rc = 1 ] && [[ "$out" == *"needs 'ip' and 'tc' on PATH"* ]] ||
	fail "without ip/tc: exit $rc: $out"
out=$(setpriv --bounding-set -net_admin,-sys_admin "$BENCH" --layout --link-rate 1G 2>&1)
rc=$?
[ $rc = 1 ] && [[ "$out" == *"--link-rate needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN)"* ]] ||
	fail "without the capabilities: exit $rc: $out"
for bad in 0 1x 999k 500G -1G; do
	"$BENCH" --layout --link-rate "$bad" --dir "$work/dir" >/dev/null 2>&1
	rc=$?
	[ $rc = 2 ] || fail "--link-rate $bad: exit $rc, not 2"
done
[ -z "$(ls -A "$work/dir")" ] || fail "usage errors left files"
[ "$(ip -o link show | awk -F': ' '{print $2}' | sort)" = "$links_before" ] ||
	fail "links were added to this namespace"
echo "ok: shaped links both ways, one namespace per daemon, cleaned up on every exit"
