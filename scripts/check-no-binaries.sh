#!/usr/bin/env bash
# Fails when git tracks build output: an executable binary (ELF, Mach-O, PE,
# or any file with the executable bit that holds NUL bytes). Build output
# belongs in bin/, which is ignored.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
bad=0
while IFS= read -r -d '' entry; do
	mode=${entry%% *}
	path=${entry#*$'\t'}
	[ -f "$path" ] || continue
	magic=$(head -c 4 -- "$path" | od -An -tx1 | tr -d ' \n')
	case "$magic" in
	7f454c46 | cffaedfe | cefaedfe | feedface | feedfacf | 4d5a*)
		echo "tracked binary: $path (executable format, magic $magic)" >&2
		bad=1
		continue
		;;
	esac
	if [ "$mode" = 100755 ] && [ "$(head -c 65536 -- "$path" | tr -d -c '\000' | wc -c)" -gt 0 ]; then
		echo "tracked binary: $path (executable bit and NUL bytes)" >&2
		bad=1
	fi
done < <(git ls-files -s -z)
if [ "$bad" -ne 0 ]; then
	echo "build output must not be in git: git rm --cached the file(s) above; make build writes to bin/" >&2
	exit 1
fi
echo "no tracked binaries"
