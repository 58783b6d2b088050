#!/bin/sh
# Compiles every public header on its own, as C99 with -pedantic and as C++,
# so that no header depends on another being included first or on our build.
set -eu
include=${1:?usage: check-headers.sh INCLUDE_DIR CC CXX}
cc=${2:?}
cxx=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
for h in $(cd "$include" && find . -name '*.h' | sed 's|^\./||' | sort); do
	printf '#include <%s>\n#include <%s>\nint main(void) { return 0; }\n' "$h" "$h" >"$work/t.c"
	"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$include" "$work/t.c" ||
		{ echo "FAILED (C99): $h"; exit 1; }
	if [ -n "$cxx" ]; then
		"$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -fsyntax-only -x c++ -I"$include" "$work/t.c" ||
			{ echo "FAILED (C++): $h"; exit 1; }
	fi
	n=$((n + 1))
done
echo "headers: $n public headers compile alone as C99 and C++"
