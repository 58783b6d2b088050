#!/bin/sh
# osd-conform against our own target, where every test must PASS: a store
# directory (loopback) and osd-targetd over iSCSI on 127.0.0.1, both CDB
# versions, without a key (NOSEC) and with a root key (all four methods),
# destructive mode on scratch stores. The only UNSUPPORTED results allowed
# are the commands docs/target.md says the software target does not
# implement. Also: a non-destructive run leaves a user's partition alone and
# removes its own, --json parses, --list / -t select, bad arguments exit 2
# with a clear message.
# Usage: test_osd_conform.sh OSD-CONFORM OSD-TARGETD OSDCTL
set -u

CONFORM=$1
DAEMON=$2
OSDCTL=$3
IQN=iqn.2026-12.org.osd:conform-test
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }

DIR=$(mktemp -d "${TMPDIR:-/tmp}/osd-conform-test.XXXXXX") || exit 1
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	[ -f "$DIR/log" ] && { echo "--- daemon log:"; cat "$DIR/log"; }
	exit 1
}

# Checks a --json report: every run set up and cleaned up, the runs asked
# for (versions x methods), every result PASS or N/A except the commands
# the software target does not implement, which must be UNSUPPORTED.
# OVERRIDES (optional): TEST=RESULT,... expected instead in every run, and
# "osd1=UNSUPPORTED" for a target that refuses OSD-1 CDBs (that run sets up
# nothing and every test is UNSUPPORTED).
check_json() { # FILE VERSIONS METHODS DESTRUCTIVE(0|1) [OVERRIDES]
	python3 - "$@" <<'EOF'
import json, os, sys
path, versions, methods, destructive = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
overrides = dict(kv.split("=") for kv in sys.argv[5].split(",")) if len(sys.argv) > 5 else {}
d = json.load(open(path))
unimplemented = {"set-master-key"}  # docs/target.md 7
v2_only = {"clear", "punch", "query", "get-member-attributes", "set-member-attributes",
           "remove-member-objects", "object-structure-check"}
want = [(int(v), m) for v in versions.split(",") for m in methods.split(",")]
got = [(r["osd_version"], r["security"]) for r in d["runs"]]
assert got == want, "runs %s, expected %s" % (got, want)
assert d["failed"] is ("FAIL" in overrides.values()), "report says failed: %s" % d["failed"]
bad = []
for r in d["runs"]:
    run = "OSD-%d/%s" % (r["osd_version"], r["security"])
    if r["osd_version"] == 1 and overrides.get("osd1") == "UNSUPPORTED":
        assert r["setup"].startswith("the target refuses OSD-1 CDBs"), r["setup"]
        assert all(t["result"] in ("UNSUPPORTED", "N/A") for t in r["results"]), run
        continue
    assert r["setup"] == "ok" and r["cleanup"] == "ok", "%s: %s / %s" % (run, r["setup"], r["cleanup"])
    res = {t["test"]: t for t in r["results"]}
    assert len(res) == int(os.environ["NTESTS"]), "%s: %d tests, --list has %s" % (run, len(res), os.environ["NTESTS"])
    for name, t in res.items():
        if name in v2_only and r["osd_version"] == 1:
            expect = "N/A"
        elif name == "format" or name == "set-master-key":
            expect = ("UNSUPPORTED" if name in unimplemented else "PASS") if destructive else "N/A"
        elif name == "set-key" or name in ("security.request-icv", "security.weaker-method"):
            expect = "N/A" if r["security"] == "nosec" else "PASS"
        elif name == "security.nonce-replay":
            expect = "PASS" if r["security"] == "cmdrsp" else "N/A"
        elif name in unimplemented:
            expect = "UNSUPPORTED"
        else:
            expect = "PASS"
        if name in overrides and expect != "N/A":
            expect = overrides[name]
        if t["result"] != expect:
            bad.append("%s %s: %s (expected %s): %s" % (run, name, t["result"], expect, t["detail"]))
        if t["result"] == "UNSUPPORTED" and (t["sense"] is None or t["sense"]["key"] != 5):
            bad.append("%s %s: UNSUPPORTED without ILLEGAL REQUEST sense" % (run, name))
assert not bad, "\n".join(bad)
EOF
}

# ---- usage -------------------------------------------------------------
"$CONFORM" --version | grep -q '^osd-conform ' || fail "--version"
"$CONFORM" --help | grep -q -- '--destructive' || fail "--help"
"$CONFORM" >/dev/null 2>"$DIR/err"; [ $? -eq 2 ] || fail "no TARGET should exit 2"
grep -q "no TARGET given" "$DIR/err" || fail "no TARGET message: $(cat "$DIR/err")"
"$CONFORM" --osd-version 3 "$DIR/s" 2>"$DIR/err"; [ $? -eq 2 ] || fail "--osd-version 3 should exit 2"
grep -q -- "--osd-version: not 1, 2 or both: 3" "$DIR/err" || fail "--osd-version message: $(cat "$DIR/err")"
"$CONFORM" --security capkey "$DIR/s" 2>"$DIR/err"; [ $? -eq 2 ] || fail "capkey without a key should exit 2"
grep -q "needs --key-file" "$DIR/err" || fail "--security message: $(cat "$DIR/err")"
"$CONFORM" --security bogus "$DIR/s" 2>/dev/null; [ $? -eq 2 ] || fail "--security bogus should exit 2"
"$CONFORM" -t '(' "$DIR/s" 2>"$DIR/err"; [ $? -eq 2 ] || fail "a bad regex should exit 2"
grep -q "not a regular expression" "$DIR/err" || fail "-t message: $(cat "$DIR/err")"
"$CONFORM" --bogus "$DIR/s" 2>/dev/null; [ $? -eq 2 ] || fail "an unknown option should exit 2"
"$CONFORM" "$DIR/s" "$DIR/t" 2>/dev/null; [ $? -eq 2 ] || fail "two targets should exit 2"
"$CONFORM" "$DIR/missing" 2>"$DIR/err"; [ $? -eq 1 ] || fail "a missing store should exit 1"
grep -q "no OSD store here" "$DIR/err" || fail "missing store message: $(cat "$DIR/err")"
[ ! -e "$DIR/missing" ] || fail "a non-destructive run created a store"
"$CONFORM" --list | grep -q '^punch ' || fail "--list"
[ "$("$CONFORM" --list -t '^punch$' | grep -c '^[a-z]')" -eq 1 ] || fail "--list -t selects one test"
NTESTS=$("$CONFORM" --list | grep -c '^[a-z]')
[ "$NTESTS" -ge 50 ] || fail "--list shows $NTESTS tests"
export NTESTS
# docs/conformance.md lists every test.
DOC=$(dirname "$0")/../../docs/conformance.md
for t in $("$CONFORM" --list | grep '^[a-z]' | cut -d' ' -f1); do
	grep -qF "| \`$t\` |" "$DOC" || fail "docs/conformance.md does not list $t"
done

# ---- a store directory (loopback) -------------------------------------
"$CONFORM" --destructive --json "$DIR/loop" >"$DIR/loop.json" 2>"$DIR/err" ||
	fail "loopback, destructive: exit $?: $(cat "$DIR/err") $(cat "$DIR/loop.json")"
check_json "$DIR/loop.json" 1,2 nosec 1 || fail "loopback, destructive"
# Non-destructive: a user's partition and object survive, the scratch one goes.
"$OSDCTL" --target "$DIR/loop" create-partition 0x20000 >/dev/null || fail "osdctl create-partition"
"$OSDCTL" --target "$DIR/loop" create 0x20000 0x10000 >/dev/null || fail "osdctl create"
printf 'user data' | "$OSDCTL" --target "$DIR/loop" write 0x20000 0x10000 || fail "osdctl write"
"$CONFORM" "$DIR/loop" >"$DIR/loop.txt" 2>"$DIR/err" || fail "loopback: exit $?: $(cat "$DIR/loop.txt")"
grep -q "^write-read  *PASS  *PASS" "$DIR/loop.txt" || fail "matrix row: $(cat "$DIR/loop.txt")"
grep -q "0 FAIL" "$DIR/loop.txt" || fail "matrix totals: $(cat "$DIR/loop.txt")"
[ "$("$OSDCTL" --target "$DIR/loop" list)" = "0x20000" ] || fail "partitions left: $("$OSDCTL" --target "$DIR/loop" list)"
[ "$("$OSDCTL" --target "$DIR/loop" read 0x20000 0x10000)" = "user data" ] || fail "user data changed"
# -t runs only what it selects.
"$CONFORM" --json -t '^(punch|clear)$' --osd-version 2 "$DIR/loop" >"$DIR/sel.json" || fail "-t run"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"]; assert len(r)==1; assert sorted(t["test"] for t in r[0]["results"])==["clear","punch"]' "$DIR/sel.json" ||
	fail "-t selection: $(cat "$DIR/sel.json")"

# ---- osd-targetd over iSCSI ------------------------------------------
start_daemon() { # STORE [OPTIONS]
	rm -f "$DIR/port"
	store=$1
	shift
	"$DAEMON" --listen 127.0.0.1:0 --port-file "$DIR/port" --iqn "$IQN" --create "$@" "$store" 2>"$DIR/log" &
	PID=$!
	i=0
	while [ ! -s "$DIR/port" ]; do
		kill -0 "$PID" 2>/dev/null || fail "daemon died"
		i=$((i + 1))
		[ $i -gt 300 ] && fail "no port file after 30 s"
		sleep 0.1
	done
	URL=iscsi://127.0.0.1:$(cat "$DIR/port")/$IQN/0
}
stop_daemon() {
	kill -TERM "$PID"
	wait "$PID"
	PID=
}

# Without a key: NOSEC in both versions.
start_daemon "$DIR/nokey"
"$CONFORM" --destructive --json "$URL" >"$DIR/nokey.json" 2>"$DIR/err" ||
	fail "iSCSI without a key: exit $?: $(cat "$DIR/err") $(cat "$DIR/nokey.json")"
check_json "$DIR/nokey.json" 1,2 nosec 1 || fail "iSCSI without a key"
stop_daemon

# With a root key: every method in both versions.
head -c 20 /dev/urandom >"$DIR/key" && chmod 600 "$DIR/key"
"$OSDCTL" --target "$DIR/keyed" --key-file "$DIR/key" format >/dev/null || fail "keyed store"
start_daemon "$DIR/keyed"
"$CONFORM" --destructive --json --key-file "$DIR/key" "$URL" >"$DIR/keyed.json" 2>"$DIR/err" ||
	fail "iSCSI with a key: exit $?: $(cat "$DIR/err") $(cat "$DIR/keyed.json")"
check_json "$DIR/keyed.json" 1,2 nosec,capkey,cmdrsp,alldata 1 || fail "iSCSI with a key"
# A keyed root without the key: the run cannot set up, which is a failure.
"$CONFORM" --osd-version 2 "$URL" >"$DIR/out" 2>&1; [ $? -eq 1 ] || fail "keyed root without a key should exit 1"
grep -q "needs --key-file" "$DIR/out" || fail "keyed root message: $(cat "$DIR/out")"
stop_daemon

# Targets that behave like others seen in the field (osd-targetd --quirk, one
# behaviour each): the matching test must say UNSUPPORTED, or FAIL where the
# behaviour breaks the standard, and nothing else may change.
if "$DAEMON" --help | grep -q -- '--quirk'; then
	for case in no-flush-partition:flush-partition=UNSUPPORTED no-flush-osd:flush-osd=UNSUPPORTED \
	    no-flush-collection:flush-collection=UNSUPPORTED no-punch:punch=UNSUPPORTED \
	    punch-shifts:punch=FAIL no-object-count:partition-information=UNSUPPORTED \
	    osd1-descriptor:osd1=UNSUPPORTED,scsi.inquiry=FAIL; do
		quirk=${case%%:*}
		expect=${case#*:}
		rm -rf "$DIR/quirk"
		start_daemon "$DIR/quirk" --quirk "$quirk"
		"$CONFORM" --json "$URL" >"$DIR/quirk.json" 2>"$DIR/err"
		rc=$?
		case $expect in *FAIL*) want=1 ;; *) want=0 ;; esac
		[ $rc -eq $want ] || fail "quirk $quirk: exit $rc, expected $want: $(cat "$DIR/err")"
		check_json "$DIR/quirk.json" 1,2 nosec 0 "$expect" || fail "quirk $quirk"
		stop_daemon
	done
else
	echo "note: this osd-targetd has no --quirk: the quirk cases did not run"
fi
echo PASS
