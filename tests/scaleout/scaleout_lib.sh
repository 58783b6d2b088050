# Shared by the scaleout tests (sourced): osd-targetd processes on
# 127.0.0.1, each on its own store and free port, killed on exit.
# Needs WORK (or mount_prepare) and TARGETD set by the sourcing script.

. "${BASH_SOURCE[0]%/*}/../mount/unmount.sh"

declare -a PID URL DEV_ID   # by slot: daemon pid, iSCSI URL, store number
NDEV=0 NEXT_ID=0
KILLS=0 REBUILT=0 VERIFIED_FILES=0 VERIFIED_BYTES=0

cleanup_extra() { :; }  # the sourcing script may redefine it

cleanup() {
	cleanup_extra
	local p
	for p in "${PID[@]}"; do
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$WORK"
}

fail() {
	echo "FAIL: $*"
	[ -s "$WORK/osdfs.log" ] && { echo "--- tool messages:"; tail -20 "$WORK/osdfs.log"; }
	exit 1
}

skip() { echo "SKIP: $*"; exit 77; }

# mount_prepare NAME SIGNAL: for the tests through osdfs-mount. Skips (77)
# without root, /dev/fuse or fusermount3; makes WORK (osdfs-NAME.*) with an
# empty mount point MNT in it. On exit (mount_cleanup, then cleanup) a
# daemon the test SIGSTOPped (STOPPED) continues, MNT is unmounted and the
# mount process (MPID) gets SIGNAL, before the daemons are killed.
mount_prepare() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	command -v fusermount3 >/dev/null || skip "no fusermount3"
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/osdfs-$1.XXXXXX") || exit 1
	MNT=$WORK/mnt MPID= STOPPED= MOUNT_SIGNAL=$2
	mkdir -p "$MNT"
	trap 'mount_cleanup; cleanup' EXIT
}

is_mounted() { awk -v m="$MNT" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo; }

mount_cleanup() {
	[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null
	is_mounted && { fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null; }
	[ -n "$MPID" ] && kill -"$MOUNT_SIGNAL" "$MPID" 2>/dev/null && wait "$MPID" 2>/dev/null
}

# mount_start OPTIONS: osdfs-mount (MOUNT_BIN) -o OPTIONS over the NDEV
# devices on MNT, in the background (MPID, its messages in WORK/osdfs.log;
# SIGINT restored for it, as in mount_test.sh); returns once mounted. Skips
# (77) where FUSE mounts are not permitted.
mount_start() {
	env --default-signal=INT "$MOUNT_BIN" -f -o "$1" "${URL[@]:0:NDEV}" "$MNT" \
		>"$WORK/osdfs.log" 2>&1 &
	MPID=$!
	wait_for "the mount" 30 "is_mounted || ! kill -0 $MPID 2>/dev/null"
	if ! is_mounted; then
		grep -q "Operation not permitted" "$WORK/osdfs.log" && skip "FUSE mounts not permitted here"
		fail "osdfs-mount exited before mounting"
	fi
}

# mount_end [SECONDS]: unmount MNT (unmount_busy_retry) and wait, at most
# SECONDS (60), for osdfs-mount to exit, which must be with status 0
mount_end() {
	local rc
	unmount_busy_retry fusermount3 -u "$MNT" || fail "fusermount3 -u"
	wait_for "osdfs-mount to exit" "${1:-60}" "! kill -0 $MPID 2>/dev/null"
	wait "$MPID"
	rc=$?
	MPID=
	[ $rc = 0 ] || fail "osdfs-mount exited $rc after the unmount"
}

# wait_for WHAT SECONDS CONDITION: poll CONDITION (a shell command) until
# it holds, at most SECONDS
wait_for() {
	local deadline=$((SECONDS + $2))
	until eval "$3"; do
		[ $SECONDS -lt $deadline ] || fail "timed out waiting for $1"
		sleep 0.02
	done
}

# start_daemon SLOT: a fresh osd-targetd on a new, empty store for SLOT
start_daemon() {
	local slot=$1 id=$NEXT_ID port
	NEXT_ID=$((NEXT_ID + 1))
	"$TARGETD" --listen 127.0.0.1:0 --port-file "$WORK/port.$id" --create \
		--iqn "iqn.2026-12.org.osd:scaleout$id" "$WORK/store.$id" \
		>>"$WORK/targetd.$id.log" 2>&1 &
	PID[$slot]=$! DEV_ID[$slot]=$id
	wait_for "osd-targetd $id to listen" 20 \
		"grep -qx '[0-9][0-9]*' '$WORK/port.$id' 2>/dev/null || ! kill -0 ${PID[$slot]}"
	kill -0 "${PID[$slot]}" 2>/dev/null || fail "osd-targetd $id exited: $(cat "$WORK/targetd.$id.log")"
	port=$(cat "$WORK/port.$id")
	URL[$slot]="iscsi://127.0.0.1:$port/iqn.2026-12.org.osd:scaleout$id/0"
}

start_devices() {
	local s
	NDEV=$1
	for ((s = 0; s < NDEV; s++)); do start_daemon "$s"; done
}

stop_devices() {
	local s
	for ((s = 0; s < NDEV; s++)); do
		[ -n "${PID[$s]}" ] && kill -TERM "${PID[$s]}" 2>/dev/null && wait "${PID[$s]}"
		PID[$s]=
		rm -rf "$WORK/store.${DEV_ID[$s]}"
	done
	NDEV=0
}

# kill_slots SLOT...: kill -9 the daemons (the devices fail)
kill_slots() {
	local s
	for s in "$@"; do
		kill -KILL "${PID[$s]}" && wait "${PID[$s]}" 2>/dev/null
		PID[$s]=
		KILLS=$((KILLS + 1))
	done
}

# replace_slot SLOT: a fresh daemon on an empty store for SLOT (its URL
# in NEW_URL; URL[SLOT] becomes it once the caller has rebuilt)
replace_slot() {
	local old=${URL[$1]}
	start_daemon "$1"
	NEW_URL=${URL[$1]}
	URL[$1]=$old
}

target_args() {
	local s
	for ((s = 0; s < NDEV; s++)); do printf -- '--target %s ' "${URL[$s]}"; done
}

# make_tree DIR UNIT_KB: files of many sizes (partial stripes, unaligned,
# empty, sparse), directories, a symlink and a hard link; the largest are a
# few UNITs
make_tree() {
	local dir=$1 unit=$(($2 * 1024)) i
	mkdir -p "$dir/d1/d2" "$dir/small"
	for n in 0 1 511 512 4095 4096 65535 65536 65537 196625 $((unit + 7)) $((2 * unit + 123)); do
		head -c "$n" /dev/urandom >"$dir/f$n"
	done
	head -c $((4 * unit)) /dev/urandom >"$dir/d1/d2/big"
	for ((i = 0; i < 10; i++)); do
		head -c $((i * 997 % 9000)) /dev/urandom >"$dir/small/s$i"
	done
	truncate -s $((16 * unit)) "$dir/d1/sparse"
	for off in 0 65536 $((3 * unit + 1000)) $((16 * unit - 3000)); do
		head -c 3000 /dev/urandom | dd of="$dir/d1/sparse" bs=3000 seek=$off oflag=seek_bytes \
			conv=notrunc status=none
	done
	ln -s ../f4096 "$dir/d1/link"
	ln "$dir/f65537" "$dir/d1/hard"
}

# data_unit_file STOREDATA SRCDIR SU: the largest store data file whose
# first 64 bytes are those of a source file at a multiple of SU (a data
# unit of row 0, not parity), at least 2 KiB long; empty if none
data_unit_file() {
	local data=$1 src=$2 su=$3 f off sig
	declare -A unit=()
	while read -r f; do
		for ((off = 0; off + 2048 <= $(stat -c %s "$f"); off += su)); do
			sig=$(od -An -tx1 -j "$off" -N 64 "$f" | tr -d ' \n')
			[[ $sig =~ ^0+$ ]] || unit[$sig]=1
		done
	done < <(find "$src" -type f)
	find "$data" -type f ! -name '*.sum' -size +2k -printf '%s %p\n' | sort -rn |
		while read -r _ f; do
			sig=$(od -An -tx1 -N 64 "$f" | tr -d ' \n')
			[ -n "${unit[$sig]:-}" ] && { echo "$f"; break; }
		done
}
