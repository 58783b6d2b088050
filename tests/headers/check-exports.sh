#!/bin/sh
# exported_symbols: every shared library exports only public names (osd_,
# osdfs_ followed by a letter or digit); internals (osd__, osdfs__, lay_)
# stay hidden, so applications cannot come to depend on them and
# a library is never bound to another's private code.
#   check-exports.sh LIB.so...
status=0
for lib in "$@"; do
	bad=$(nm -D --defined-only "$lib" | awk '$3 !~ /^LIB/ { print $3 }' |
		sed 's/@.*//' | grep -v '^osd_[a-z0-9]' | grep -v '^osdfs_[a-z0-9]')
	n=$(nm -D --defined-only "$lib" | awk '$3 !~ /^LIB/' | wc -l)
	if [ -n "$bad" ]; then
		echo "FAIL: $lib exports internal names:"
		echo "$bad" | head -20
		status=1
	else
		echo "$lib: $n public names, no internal ones"
	fi
done
exit $status
