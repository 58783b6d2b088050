#!/bin/sh
# Smoke test of `osd-bench --fuse`: a tiny run must print every table row
# with five numbers and both goal lines, and leave nothing mounted or on
# disk; bad options exit 2; a FUSE daemon that fails to start makes it exit 1
# and still unmount and remove everything. Needs root and /dev/fuse (77).
#   bench_fuse_test.sh OSD-BENCH
# BENCH_FUSE_FILES scales the metadata rows (default 200).
set -u
bench=$1
files=${BENCH_FUSE_FILES:-200}
base=$(mktemp -d "${TMPDIR:-/tmp}/bench-fuse-test.XXXXXX") || exit 1
out=$base.out
trap 'rm -rf "$base" "$out"' EXIT

fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

# Nothing of ours may stay mounted and the temporary directory must be gone.
check_clean() {
	if grep -q " $base/" /proc/self/mountinfo; then
		grep " $base/" /proc/self/mountinfo
		fail "$1: a mount under $base remains"
	fi
	[ -z "$(ls -A "$base")" ] || fail "$1: $base not emptied: $(ls -A "$base")"
}

"$bench" --fuse --dir "$base" --runs 1 --files "$files" --size 8 --reads 200 >"$out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
	cat "$out"
	exit 77
fi
[ $rc -eq 0 ] || fail "exit status $rc"
num='[0-9]+(\.[0-9]+)?'
for row in 'create empty files \(/s\)' 'stat \(/s\)' 'readdir \(entries/s\)' \
	'rename \(/s\)' 'unlink \(/s\)' 'mkdir tree \(/s\)' \
	'4 KiB file create\+write\+close \(/s\)' 'seq write 1 MiB \+ fsync \(MiB/s\)' \
	'seq read, caches dropped \(MiB/s\)' 'random 4 KiB read, cold \(/s\)'; do
	grep -Eq "^  $row +$num +$num +$num +$num +$num( |$)" "$out" || fail "row '$row'"
done
grep -Eq '^goal: metadata within 2x of passthrough: (met|not met) \(lowest osdfs/pt' "$out" ||
	fail "metadata goal line"
grep -Eq '^goal: sequential I/O within 1.5x of passthrough: (met|not met) ' "$out" ||
	fail "sequential goal line"
grep -q "median of 1 runs: $files names per metadata row, 8 MiB file" "$out" ||
	fail "header"
# as root drop_caches works: the metadata rows start cold
grep -q "^  caches before each metadata row: dentries and inodes dropped$" "$out" ||
	fail "header: metadata rows not cold"
check_clean "after a run"

# Bad usage: exit 2 before anything is made.
for args in "--files 0" "--runs 22" "--size x" "--bogus" "extra"; do
	# shellcheck disable=SC2086
	"$bench" --fuse --dir "$base" $args >"$out" 2>&1
	rc=$?
	[ $rc -eq 2 ] || fail "'$args' exited $rc, not 2"
done
check_clean "after bad options"

# A daemon that fails: exit 1, the other one unmounted, everything removed.
"$bench" --fuse --dir "$base" --runs 1 --files 10 --size 1 --osdfs-mount /bin/false \
	>"$out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "failing osdfs-mount: exit $rc, not 1"
grep -q "osdfs-mount exited with status 1 before mounting" "$out" || fail "no reason given"
check_clean "after a failing osdfs-mount"
"$bench" --fuse --dir "$base" --runs 1 --files 10 --size 1 --passthrough /bin/false \
	>"$out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "failing passthrough: exit $rc, not 1"
grep -q "osd-bench-passthrough exited with status 1 before mounting" "$out" ||
	fail "no reason given for the passthrough"
check_clean "after a failing passthrough (osdfs-mount had mounted)"
echo "PASS"
