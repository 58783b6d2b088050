#!/bin/bash
# mount_fuse: osdfs-mount end to end (see CMakeLists.txt).
#   mount_test.sh OSDFS_MOUNT FSOP FSX [OSDFS_CLI]
# Exit status: 0 passed, 1 failed, 77 skipped (not root, or no FUSE here).
set -u
MOUNT_BIN=$1 FSOP=$2 FSX=$3 CLI=${4:-}

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "no fusermount3"
. "$(dirname "$0")/unmount.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-mount-test.XXXXXX") || exit 1
TGT=$WORK/target MNT=$WORK/mnt MODEL=$WORK/model LOG=$WORK/mount.log
mkdir -p "$MNT" "$MODEL"
PID=
CHECKS=0

is_mounted() { awk -v m="$MNT" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo; }

cleanup() {
	if is_mounted; then
		fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID" 2>/dev/null
		wait "$PID" 2>/dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	[ -s "$LOG" ] && { echo "--- osdfs-mount output:"; cat "$LOG"; }
	exit 1
}

# expect WHAT EXPECTED ACTUAL
expect() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	CHECKS=$((CHECKS + 1))
}

# op EXPECTED fsop-args...: the outcome of one system call
op() {
	local want=$1
	shift
	expect "$*" "$want" "$("$FSOP" "$@")"
}

field() { "$FSOP" stat "$1" | cut -d' ' -f"$2"; }  # 1 ino 2 nlink 3 mode 4 uid 5 gid 6 size

# start_mount OPTIONS [FLAG]: osdfs-mount -f in the background, then wait (bounded)
# until the kernel lists the mount. A background job of a script starts with
# SIGINT ignored, and libfuse leaves ignored signals alone: restore it.
start_mount() {
	env --default-signal=INT "$MOUNT_BIN" -f ${2:-} -o "$1" "$TGT" "$MNT" >"$LOG" 2>&1 &
	PID=$!
	for _ in $(seq 1 400); do
		is_mounted && return 0
		if ! kill -0 "$PID" 2>/dev/null; then
			wait "$PID"
			local rc=$?
			grep -q "Operation not permitted" "$LOG" && skip "FUSE mounts not permitted here"
			fail "osdfs-mount -o $1 exited with $rc before mounting"
		fi
		sleep 0.05
	done
	fail "no mount after 20 s"
}

# stop_mount HOW: unmount with fusermount3, umount or a signal, then wait
# (bounded) for osdfs-mount to flush everything and exit 0.
stop_mount() {
	case $1 in
	fusermount) unmount_busy_retry fusermount3 -u "$MNT" || fail "fusermount3 -u" ;;
	umount) unmount_busy_retry umount "$MNT" || fail "umount" ;;
	TERM|INT) kill -"$1" "$PID" ;;
	esac
	for _ in $(seq 1 600); do
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$PID" 2>/dev/null && fail "osdfs-mount still running 30 s after $1"
	wait "$PID"
	expect "exit status after $1" 0 "$?"
	PID=
	is_mounted && fail "still mounted after $1"
	echo "ok: unmounted by $1, osdfs-mount exited 0"
}

# ---- options are checked before anything is touched ----
check_usage() {
	"$MOUNT_BIN" "$@" "$TGT" "$MNT" >/dev/null 2>"$WORK/usage.err"
	expect "osdfs-mount $* exit status" 2 "$?"
	[ -s "$WORK/usage.err" ] || fail "osdfs-mount $*: no message"
}
check_usage -o pid=0x1ffffffffffffffff
check_usage -o pid=4294967296x
check_usage -o pid=0x100
check_usage -o attr_timeout=-1
check_usage -o entry_timeout=abc
check_usage -o security=weird
check_usage -o osd_version=3
check_usage -o format=10G
check_usage -o no_such_option
check_usage -o max_threads=0
check_usage -o mkfs,ro
"$MOUNT_BIN" -f -o mkfs,security=capkey,keyfile=/nonexistent "$TGT" "$MNT" 2>"$WORK/usage.err"
expect "mkfs with a missing key file: exit status" 1 "$?"
grep -q /nonexistent "$WORK/usage.err" || fail "missing key file: no message naming it"
"$MOUNT_BIN" -o mkfs "iscsi://host/iqn" "$MNT" 2>"$WORK/usage.err"
expect "iscsi URL exit status" 2 "$?"
grep -q "iscsi://host/iqn: .*lun" "$WORK/usage.err" ||
	fail "no clear message for a bad iSCSI URL: $(cat "$WORK/usage.err")"
[ -e "$TGT" ] && fail "a rejected command created the target"
echo "ok: bad options rejected with exit 2 (incl. 65-bit pid, bad iscsi:// URL)"

# ---- first mount: a fresh filesystem; 0x100000000 needs all 64 bits ----
# (-d: the log then also shows any forget that does not match our counts)
chmod 711 "$WORK" # other users reach the mount point (permission checks)
start_mount mkfs,format=256M,pid=0x100000000,allow_other -d
echo "ok: mkfs and mount on partition 0x100000000"

mkdir -p "$WORK/mnt2"
"$MOUNT_BIN" -f -o pid=0x100000000 "$TGT" "$WORK/mnt2" >"$WORK/second.out" 2>&1
expect "second mount exit status" 1 "$?"
grep -q "in use\|mounted by" "$WORK/second.out" || fail "second mount: no clear reason"
echo "ok: second mount refused: $(head -1 "$WORK/second.out")"

cd "$MNT" || fail "cd $MNT"

# create, write, read back
printf 'hello, osdfs\n' > f1 && expect "read back" "hello, osdfs" "$(cat f1)"
printf 'more\n' >> f1 && expect "append" "$(printf 'hello, osdfs\nmore')" "$(cat f1)"
head -c 3000000 /dev/urandom > "$WORK/rand"
cp "$WORK/rand" big && cmp -s big "$WORK/rand" || fail "3 MB file differs"
expect "3 MB size" 3000000 "$(field big 6)"
op EEXIST create-excl f1
op OK create-excl f2
op EISDIR open-write .
op ENOENT open-write missing/x
echo "ok: create, write, append, read back (3 MB), O_EXCL"

# rename: plain, replacing, NOREPLACE, EXCHANGE, directories across parents
ino=$(field f2 1)
op OK rename f2 f3
expect "rename keeps inode" "$ino" "$(field f3 1)"
op ENOENT stat f2
printf 'old\n' > target
op OK rename f1 target
expect "replaced content" "$(printf 'hello, osdfs\nmore')" "$(cat target)"
op ENOENT stat f1
printf 'a\n' > xa; printf 'b\n' > xb
op EEXIST rename xa xb noreplace
op OK rename xa xb exchange
expect "exchange a" "b" "$(cat xa)"; expect "exchange b" "a" "$(cat xb)"
op OK rename xa xnew noreplace
op ENOENT rename nothere x
mkdir -p p1/sub/deep p2 e1 e2 full/x
expect "p1 nlink" 3 "$(field p1 2)"; expect "p2 nlink" 2 "$(field p2 2)"
op OK rename p1/sub p2/sub
expect "p1 nlink after" 2 "$(field p1 2)"; expect "p2 nlink after" 3 "$(field p2 2)"
[ -d p2/sub/deep ] || fail "subtree did not move"
expect "'..' of the moved directory" "$(field p2 1)" "$(field p2/sub/.. 1)"
op OK rename e1 e2
op ENOTEMPTY rename p2 full
op EISDIR rename xb full
op ENOTDIR rename full xb
op EINVAL rename p2 p2/sub/deep/inside
echo "ok: rename (same dir, replace, noreplace, exchange, dirs across parents, errors)"

# hard links and unlink
op OK link xb l1
expect "nlink after link" 2 "$(field xb 2)"
expect "same inode" "$(field xb 1)" "$(field l1 1)"
op OK unlink xb
expect "nlink after unlink" 1 "$(field l1 2)"
expect "content via link" a "$(cat l1)"
op EPERM link p2 dirlink
op EEXIST link l1 l1
op EISDIR unlink p2
op ENOENT unlink nothere
op ENOTDIR unlink l1/x
op "OK nlink=0 size=11 same" unlinked-io tmpfile
op ENOENT stat tmpfile
echo "ok: link/unlink, link counts, open-unlinked file"

# symbolic links
op OK symlink l1 s1
op "OK l1" readlink s1
expect "read through symlink" a "$(cat s1)"
expect "symlink size" 2 "$(field s1 6)"
op OK symlink "nowhere/at/all" dangling
op "OK nowhere/at/all" readlink dangling
[ -e dangling ] && fail "dangling link resolves"
long=$(printf 'x%.0s' $(seq 1 1000))
op OK symlink "$long" slong
op "OK $long" readlink slong
op EINVAL readlink l1
echo "ok: symlink/readlink (short, long, dangling)"

# chmod, chown, utimens, truncate
chmod 4751 l1; expect "chmod" 104751 "$(field l1 3)"
chown 1234:5678 l1; expect "chown uid" 1234 "$(field l1 4)"; expect "chown gid" 5678 "$(field l1 5)"
op OK utimens l1 1000000000.123456789 2000000000.5
expect "utimens" "1000000000.123456789 2000000000.000000005" "$("$FSOP" times l1 | cut -d' ' -f1,2)"
op OK utimens l1 omit 1500000000.0
expect "UTIME_OMIT keeps atime" "1000000000.123456789 1500000000.000000000" \
	"$("$FSOP" times l1 | cut -d' ' -f1,2)"
before=$(date +%s)
op OK utimens l1 now omit
at=$("$FSOP" times l1 | cut -d' ' -f1 | cut -d. -f1)
[ "$at" -ge "$before" ] && [ "$at" -le $((before + 60)) ] || fail "UTIME_NOW gave $at"
expect "UTIME_OMIT keeps mtime" 1500000000 "$("$FSOP" times l1 | cut -d' ' -f2 | cut -d. -f1)"
CHECKS=$((CHECKS + 1))
printf '0123456789' > t; truncate -s 4 t; expect "shrink" 0123 "$(cat t)"
truncate -s 10000 t; expect "grow size" 10000 "$(field t 6)"
[ -z "$(tail -c +5 t | tr -d '\0')" ] || fail "grown part is not zeros"
op OK punch big 4096 8192
[ -z "$(dd if=big bs=4096 skip=1 count=2 status=none | tr -d '\0')" ] || fail "punched range not zeros"
expect "punch keeps size" 3000000 "$(field big 6)"
# beyond the maximum file size (2^62 bytes, OSDFS_MAX_FILE_SIZE): EFBIG, size kept
op EFBIG truncate big 4611686018427387905
op EFBIG ftruncate big 4611686018427387905
op EFBIG truncate big 9223372036854775807
op EFBIG ftruncate big 9223372036854775807
expect "size after refused truncates" 3000000 "$(field big 6)"
echo "ok: chmod, chown, utimens (ns, UTIME_NOW, UTIME_OMIT), truncate, punch hole, EFBIG"

# directories
op OK mkdir d 0750
expect "mkdir mode" 40750 "$(field d 3)"
op EEXIST mkdir d 0755
touch d/file
op ENOTEMPTY rmdir d
op ENOTDIR rmdir l1
op ENOENT rmdir nothere
rm d/file; op OK rmdir d
op ENOENT stat d
mkdir many; for i in $(seq 1 300); do : > "many/entry-$i"; done
expect "300 entries listed" "$(seq 1 300 | sed 's/^/entry-/' | sort)" "$(ls many | sort)"
expect "ls -a adds . and .." 302 "$(ls -a many | wc -l)"
rm -r many
echo "ok: mkdir/rmdir (ENOTEMPTY, EEXIST, ENOTDIR), readdir of 300 entries"

# extended attributes
op OK setxattr l1 user.color blue
op "OK blue" getxattr l1 user.color
op EEXIST setxattr l1 user.color red create
op ENODATA setxattr l1 user.size big replace
op OK setxattr l1 user.color red replace
op "OK red" getxattr l1 user.color
op OK setxattr l1 user.size big
op "OK user.color user.size" listxattr l1
op OK removexattr l1 user.size
op ENODATA removexattr l1 user.size
op ENODATA getxattr l1 user.none
echo "ok: setxattr/getxattr/listxattr/removexattr (create/replace flags)"

# permissions: the kernel enforces them (default_permissions), and new
# inodes belong to the caller
if command -v setpriv >/dev/null; then
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	printf 'secret\n' > secret && chmod 600 secret
	expect "other user reads a 0600 file" EACCES "$(as_nobody "$FSOP" open-write secret)"
	as_nobody cat secret >/dev/null 2>&1 && fail "other user read a 0600 file"
	op OK mkdir shared 0777
	chmod 777 shared # mkdir(2) applied the umask
	op OK mkdir private 0755
	expect "other user creates in a 0755 directory" EACCES \
		"$(as_nobody "$FSOP" create-excl private/x)"
	expect "other user creates in a 0777 directory" OK \
		"$(as_nobody "$FSOP" create-excl shared/mine)"
	expect "owner of the new file" "65534 65534" "$(field shared/mine 4) $(field shared/mine 5)"
	expect "other user chmods root's file" EPERM "$(as_nobody "$FSOP" chmod secret 777)"
	rm -r shared private secret
	echo "ok: permissions enforced for another user (allow_other); new files are the caller's"
else
	echo "note: no setpriv; the permission checks are left out"
fi

expect "statfs name max" 255 "$(stat -f -c %l .)"
echo "ok: statfs"

# data integrity (two runs at once: the loop is multithreaded), then keep
# the expected contents for the remount
"$FSX" "$MNT/fsx3" "$MODEL/fsx3" 3 1000 >"$WORK/fsx3.out" 2>&1 &
fsx3=$!
"$FSX" "$MNT/fsx1" "$MODEL/fsx1" 1 2000 || fail "mount_fsx (write-through)"
wait $fsx3 || { cat "$WORK/fsx3.out"; fail "concurrent mount_fsx"; }
cat "$WORK/fsx3.out"
cp "$WORK/rand" "$MODEL/big" && dd if=/dev/zero of="$MODEL/big" bs=4096 seek=1 count=2 \
	conv=notrunc status=none
cd / && stop_mount fusermount
grep -q "opcode: READDIRPLUS" "$LOG" || fail "the kernel never used readdirplus"
grep -q "opcode: FORGET\|opcode: BATCH_FORGET" "$LOG" || fail "no forget seen in the debug log"
grep "does not hold" "$LOG" | head -3 | grep . && fail "lookup counts differ from the kernel's"
echo "ok: readdirplus used; every forget matched a counted lookup"

# ---- second mount: everything survived; the writeback cache path with
# four worker threads ----
start_mount pid=0x100000000,writeback_cache,max_threads=4
cmp -s "$MNT/fsx1" "$MODEL/fsx1" || fail "fsx1 changed across the remount"
cmp -s "$MNT/fsx3" "$MODEL/fsx3" || fail "fsx3 changed across the remount"
cmp -s "$MNT/big" "$MODEL/big" || fail "big changed across the remount"
expect "link after remount" a "$(cat "$MNT/l1")"
op "OK l1" readlink "$MNT/s1"
op "OK red" getxattr "$MNT/l1" user.color
expect "times after remount" 1500000000 "$("$FSOP" times "$MNT/l1" | cut -d' ' -f2 | cut -d. -f1)"
echo "ok: data, links, xattrs and times survived the remount"
"$FSX" "$MNT/fsx2" "$MODEL/fsx2" 2 2000 || fail "mount_fsx (writeback cache)"
stop_mount TERM

# ---- third mount: read-only (one /dev/fuse descriptor per thread, short
# caches); both runs' data intact ----
start_mount pid=0x100000000,ro,clone_fd,attr_timeout=0.25,entry_timeout=0
cmp -s "$MNT/fsx1" "$MODEL/fsx1" || fail "fsx1 differs on the read-only mount"
cmp -s "$MNT/fsx2" "$MODEL/fsx2" || fail "fsx2 (written through the writeback cache) differs"
op EROFS create-excl "$MNT/new"
op EROFS unlink "$MNT/l1"
echo "ok: read-only mount: data intact, changes refused with EROFS"
stop_mount umount

# ---- a crash: the mount record stays; only -o force takes it over ----
start_mount pid=0x100000000
head -c 100000 /dev/urandom > "$MODEL/crash"
dd if="$MODEL/crash" of="$MNT/crash" bs=64k conv=fsync status=none || fail "dd conv=fsync"
sync "$MNT" || fail "fsync of the root directory"
kill -KILL "$PID"
wait "$PID" 2>/dev/null
PID=
fusermount3 -u -z "$MNT" || fail "cannot clear the dead mount"
"$MOUNT_BIN" -f -o pid=0x100000000 "$TGT" "$MNT" >"$WORK/stale.out" 2>&1
expect "mount over a stale record: exit status" 1 "$?"
grep -q "mounted by host" "$WORK/stale.out" || fail "no message naming the holder"
grep -q -- "-o force" "$WORK/stale.out" || fail "no hint about -o force"
echo "ok: after kill -9 the next mount is refused: $(head -1 "$WORK/stale.out")"
"$MOUNT_BIN" -f -o pid=0x100000000,ro "$TGT" "$MNT" >"$WORK/stale.out" 2>&1
expect "read-only mount over a stale record: exit status" 1 "$?"
start_mount pid=0x100000000,ro,force
cmp -s "$MNT/crash" "$MODEL/crash" || fail "fsync'd data not visible read-only"
stop_mount fusermount
echo "ok: ro,force looks at the crashed filesystem without taking it over"
"$MOUNT_BIN" -f -o pid=0x100000000 "$TGT" "$MNT" >"$WORK/stale.out" 2>&1
expect "record still there after ro,force: exit status" 1 "$?"
start_mount pid=0x100000000,force
cmp -s "$MNT/crash" "$MODEL/crash" || fail "fsync'd data lost in the crash"
cmp -s "$MNT/fsx1" "$MODEL/fsx1" || fail "fsx1 lost in the crash"
echo "ok: -o force mounts; fsync'd data survived kill -9"
stop_mount INT

# ---- a filesystem under CAPKEY security, made by the osdfs CLI ----
if [ -n "$CLI" ] && [ ! -x "$CLI" ]; then
	echo "note: $CLI is not built; the capkey part is left out"
	CLI=
fi
if [ -n "$CLI" ]; then
	TGT=$WORK/secure
	head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORK/key"
	chmod 600 "$WORK/key" # the tools refuse a key file others can read
	"$CLI" --target "$TGT" --security capkey --key-file "$WORK/key" mkfs >/dev/null ||
		fail "osdfs mkfs under capkey"
	"$MOUNT_BIN" -f -o security=capkey,keyfile="$WORK/missing" "$TGT" "$MNT" 2>"$WORK/key.err"
	expect "missing key file: exit status" 1 "$?"
	grep -q missing "$WORK/key.err" || fail "missing key file: no message naming it"
	start_mount security=capkey,keyfile="$WORK/key",osd_version=2
	printf 'capkey\n' > "$MNT/sec" || fail "write under capkey"
	stop_mount fusermount
	expect "read back by the CLI" capkey \
		"$("$CLI" --target "$TGT" --security capkey --key-file "$WORK/key" cat /sec)"
	echo "ok: mount with security=capkey,keyfile=,osd_version=2; data readable by the CLI"
	"$MOUNT_BIN" -f "$TGT" "$MNT" 2>"$WORK/nosec.err"
	expect "nosec mount of a capkey filesystem (made by the CLI): exit status" 1 "$?"
	grep -q "refused the credential" "$WORK/nosec.err" ||
		fail "nosec mount of a capkey filesystem: no clear message"
	echo "ok: a nosec mount of the CLI's capkey filesystem is refused"
fi

# ---- -o mkfs under a security method ----
TGT=$WORK/secure-mkfs
[ -s "$WORK/key" ] || head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORK/key"
chmod 600 "$WORK/key" # the tools refuse a key file others can read
start_mount mkfs,security=cmdrsp,keyfile="$WORK/key"
printf 'cmdrsp\n' > "$MNT/sec" || fail "write under cmdrsp"
stop_mount fusermount
"$MOUNT_BIN" -f "$TGT" "$MNT" 2>"$WORK/nosec.err"
expect "nosec mount of a cmdrsp filesystem: exit status" 1 "$?"
grep -q "Permission denied: the target refused the credential" "$WORK/nosec.err" ||
	fail "nosec mount of a cmdrsp filesystem: no clear message"
"$MOUNT_BIN" -f -o mkfs "$TGT" "$MNT" 2>"$WORK/nosec.err"
expect "nosec mkfs over a cmdrsp filesystem: exit status" 1 "$?"
# mkfs makes the partition first: a root command, which a keyed root refuses keyless
grep -q "the OSD's root is secured: --key-file with the root key is needed" "$WORK/nosec.err" ||
	fail "nosec mkfs: no clear message"
start_mount security=alldata,keyfile="$WORK/key",ro
expect "read back under alldata" cmdrsp "$(cat "$MNT/sec")"
stop_mount fusermount
if [ -n "$CLI" ]; then
	expect "read back by the CLI" cmdrsp \
		"$("$CLI" --target "$TGT" --security cmdrsp --key-file "$WORK/key" cat /sec)"
	"$CLI" --target "$TGT" cat /sec >/dev/null 2>&1
	expect "nosec CLI on the mount's cmdrsp filesystem: exit status" 1 "$?"
fi
echo "ok: -o mkfs,security=cmdrsp keys the partition; nosec mounts and mkfs are refused"

echo "PASS: $CHECKS checks"
