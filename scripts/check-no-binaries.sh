#!/usr/bin/env bash
# Fails when git tracks build output: an executable binary (ELF or Mach-O
# anywhere; PE or any file holding NUL bytes when it has the executable bit).
# It reads what git stores (the index), not the working tree. Build output
# belongs in bin/, which is ignored.
set -eu # no pipefail: head closes cat-file's pipe early on purpose
cd "$(git rev-parse --show-toplevel)"
bad=0
while IFS= read -r -d '' entry; do
	meta=${entry%%$'\t'*}
	path=${entry#*$'\t'}
	read -r mode sha _ <<<"$meta"
	[ "$mode" = 100644 ] || [ "$mode" = 100755 ] || continue
	magic=$(git cat-file blob "$sha" | head -c 4 | od -An -tx1 | tr -d ' \n')
	case "$magic" in
	7f454c46 | cffaedfe | cefaedfe | feedface | feedfacf)
		echo "tracked binary: $path (executable format, magic $magic)" >&2
		bad=1
		continue
		;;
	esac
	[ "$mode" = 100755 ] || continue
	if [ "${magic:0:4}" = 4d5a ] || [ "$(git cat-file blob "$sha" | head -c 65536 | tr -d -c '\000' | wc -c)" -gt 0 ]; then
		echo "tracked binary: $path (executable bit and binary content)" >&2
		bad=1
	fi
done < <(git ls-files -s -z)
if [ "$bad" -ne 0 ]; then
	echo "build output must not be in git: git rm --cached the file(s) above; make build writes to bin/" >&2
	exit 1
fi
echo "no tracked binaries"
