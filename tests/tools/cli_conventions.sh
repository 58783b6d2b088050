#!/bin/sh
# cli_conventions: what every tool does alike.
#  - -V/--version and -v/--verbose in osdctl, osdfs, osdfs-mount, osd-targetd,
#    osd-bench; one "<tool>: " prefix on errors (never "osdfs: osdfs:");
#  - osd-bench --iters abc and osd-targetd --meta-cache 0 say what is wrong;
#  - --json is valid UTF-8 whatever the names hold: well-formed UTF-8 kept,
#    control bytes escaped, every other byte as \udcXX (PEP 383), which
#    python3 parses and turns back into the exact bytes (ls, stat, tree, a
#    file name in fsck's findings); osdctl --json info shows the real clock.
# Usage: cli_conventions.sh OSDFS OSDCTL OSD_TARGETD OSD_BENCH [OSDFS_MOUNT]
set -u
OSDFS=$1 OSDCTL=$2 TARGETD=$3 BENCH=$4 MOUNT=${5:-}
d=$(mktemp -d "${TMPDIR:-/tmp}/osd-cli-conv.XXXXXX") || exit 1
trap 'rm -rf "$d"' EXIT
fail() { echo "cli_conventions: FAIL: $*"; [ -f "$d/err" ] && cat "$d/err"; exit 1; }

# --version, -V, -v on every tool.
for tool in "$OSDFS" "$OSDCTL" "$TARGETD" "$BENCH" $MOUNT; do
	name=$(basename "$tool")
	for opt in -V --version; do
		"$tool" $opt >"$d/out" 2>"$d/err" || fail "$name $opt exited $?"
		grep -Eq "^$name [0-9]+\.[0-9]+\.[0-9]+" "$d/out" || fail "$name $opt: $(cat "$d/out")"
	done
	"$tool" --help >"$d/out" 2>&1 || fail "$name --help"
	grep -q -- "-v, --verbose" "$d/out" || fail "$name --help has no -v, --verbose"
done

# One prefix on errors.
"$OSDFS" -Q >"$d/out" 2>"$d/err"; [ $? -eq 2 ] || fail "osdfs -Q: not a usage error"
[ "$(head -n 1 "$d/err")" = "osdfs: unknown option '-Q'" ] || fail "osdfs -Q: $(cat "$d/err")"
"$OSDFS" --target "$d/s" ls -Q >"$d/out" 2>"$d/err"; [ $? -eq 2 ] || fail "ls -Q"
[ "$(head -n 1 "$d/err")" = "osdfs: ls: unknown option '-Q'" ] || fail "ls -Q: $(cat "$d/err")"

# osd-bench counts.
"$BENCH" --proto --iters abc >"$d/out" 2>"$d/err"; [ $? -eq 2 ] || fail "--iters abc not a usage error"
grep -q "^osd-bench --proto --iters: bad count 'abc' (1\.\.100000000)\$" "$d/err" ||
	fail "--iters abc: $(cat "$d/err")"
"$BENCH" --target --runs 0 >"$d/out" 2>"$d/err"; [ $? -eq 2 ] || fail "--runs 0"
grep -q "^osd-bench --target: bad count '0'" "$d/err" || fail "--runs 0: $(cat "$d/err")"

# osd-targetd --meta-cache takes a count of objects, nothing else.
for bad in 0 abc -5 +5 4294967297; do
	"$TARGETD" --meta-cache "$bad" "$d/t" >"$d/out" 2>"$d/err"
	[ $? -eq 2 ] || fail "--meta-cache $bad: not a usage error"
	[ "$(head -n 1 "$d/err")" = "osd-targetd: invalid --meta-cache (1 to 2^32 objects): $bad" ] ||
		fail "--meta-cache $bad: $(cat "$d/err")"
done
[ -e "$d/t" ] && fail "osd-targetd with a bad --meta-cache made the store"

# -v says what is opened, on stderr only.
"$OSDFS" --target "$d/s" -v mkfs >"$d/out" 2>"$d/err" || fail "mkfs -v"
grep -q "^osdfs: $d/s: opened the embedded target (OSD-2, security nosec)\$" "$d/err" ||
	fail "osdfs -v said: $(cat "$d/err")"
"$OSDFS" --target "$d/s" mkfs -f >"$d/out" 2>"$d/err" || fail "mkfs"
[ -s "$d/err" ] && fail "without -v, mkfs wrote to stderr"

# A bad key file is refused before anything is made.
printf 'short\n' >"$d/bad.key"
chmod 600 "$d/bad.key"
"$OSDFS" --target "$d/new" --security capkey --key-file "$d/bad.key" mkfs >"$d/out" 2>"$d/err" &&
	fail "mkfs with a bad key file"
[ "$(cat "$d/err")" = "osdfs: $d/bad.key: a key file holds 20 bytes or 40 hex digits" ] ||
	fail "bad key file: $(cat "$d/err")"
[ -e "$d/new" ] && fail "mkfs with a bad key file created the store"

# A name with every kind of byte: a, 0xff, b, U+00E9 as UTF-8, 0x01, an overlong
# "/" (c0 af), a UTF-16 surrogate as UTF-8 (ed a0 80), z.
name=$(printf 'a\377b\303\251\001\300\257\355\240\200z')
hex=61ff62c3a901c0afeda0807a
printf 'data\n' >"$d/$name"
"$OSDFS" --target "$d/s" mkdir /dir 2>"$d/err" || fail "mkdir"
"$OSDFS" --target "$d/s" put "$d/$name" "/dir/$name" 2>"$d/err" || fail "put of the odd name"
"$OSDFS" --target "$d/s" --json ls /dir >"$d/ls.json" 2>"$d/err" || fail "--json ls"
"$OSDFS" --target "$d/s" --json stat "/dir/$name" >"$d/stat.json" 2>"$d/err" || fail "--json stat"
"$OSDFS" --target "$d/s" --json tree / >"$d/tree.json" 2>"$d/err" || fail "--json tree"
# the exact escape (known-good bytes)
want='"name":"a\udcffb'$(printf '\303\251')'\u0001\udcc0\udcaf\udced\udca0\udc80z"'
for f in ls stat tree; do
	grep -qF "$want" "$d/$f.json" || fail "$f: no $want in $(cat "$d/$f.json")"
done
python3 - "$d" "$hex" <<'PY' || fail "python3 could not parse or round-trip the JSON"
import json, sys
d, want = sys.argv[1], bytes.fromhex(sys.argv[2])
def load(f):
    # strict UTF-8 first: the output must be valid UTF-8 as it stands
    with open(f"{d}/{f}.json", encoding="utf-8", errors="strict") as fh:
        return json.load(fh)
def raw(s):
    return s.encode("utf-8", "surrogateescape")
ls = load("ls")
assert [raw(e["name"]) for e in ls] == [want], ls
assert raw(ls[0]["path"]) == b"/dir/" + want
st = load("stat")
st = st[0] if isinstance(st, list) else st
assert raw(st["name"]) == want and st["size"] == 5, st
tree = load("tree")
assert tree["directories"] == 1 and tree["files"] == 1, tree
child = tree["children"][0]["children"][0]
assert raw(child["path"]) == b"/dir/" + want, child
print("round trip OK")
PY

# Progress (forced with --progress, as a terminal shows it): totals first,
# then the share done; fsck names its phases.
mkdir -p "$d/tree/sub"
for i in 1 2 3; do head -c 100000 /dev/zero >"$d/tree/sub/f$i"; done
"$OSDFS" --target "$d/s" --progress cp -r "$d/tree" :/ >"$d/out" 2>"$d/err" || fail "cp -r --progress"
grep -q "osdfs: copying in: [0-3] of 3 files, [0-9.]*K of 293K ([0-9]*%)" "$d/err" ||
	fail "cp progress without totals: $(tr '\r' '\n' <"$d/err")"
"$OSDFS" --target "$d/s" --progress cp -r :/tree "$d/back" >"$d/out" 2>"$d/err" || fail "cp out"
grep -q "osdfs: copying out: [0-3] of 3 files, [0-9.]*K of 293K ([0-9]*%)" "$d/err" || fail "cp out progress: $(cat "$d/err")"
cmp "$d/tree/sub/f3" "$d/back/sub/f3" || fail "cp out copied other bytes"
"$OSDFS" --target "$d/s" --progress fsck >"$d/out" 2>"$d/err" || fail "fsck --progress"
grep -q "osdfs: fsck: reading inodes: 1 of [0-9]* inodes" "$d/err" ||
	fail "fsck inode progress: $(cat "$d/err")"
grep -q "osdfs: fsck: reading directories: [0-9]* of 4 directories" "$d/err" ||
	fail "fsck directory progress: $(cat "$d/err")"
grep -q "^clean: " "$d/out" || fail "fsck: $(cat "$d/out")"
# not a terminal and not forced: nothing
"$OSDFS" --target "$d/s" fsck >"$d/out" 2>"$d/err" || fail "fsck"
[ -s "$d/err" ] && fail "fsck wrote progress to a file"

# osdctl --json info: the OSD's clock, as the text form shows it (ms since 1970).
"$OSDCTL" --target "$d/s" --json info >"$d/info.json" 2>"$d/err" || fail "osdctl --json info"
python3 - "$d/info.json" <<'PY' || fail "osdctl --json info: $(cat "$d/info.json")"
import json, sys, time
info = json.load(open(sys.argv[1], encoding="utf-8"))
now = time.time() * 1000
assert abs(info["clock_ms"] - now) < 3600 * 1000, info["clock_ms"]
PY
echo "cli_conventions: OK"
