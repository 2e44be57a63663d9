#!/usr/bin/env bash
# check_format.sh SOURCE_DIR: every C++ source of the tree (src/, apps/, models/, tests/) is
# as clang-format 14 writes it with the tree's .clang-format (Debian bookworm's
# clang-format; scripts/setup.sh --tests installs it). Another major version formats
# differently: the check is then skipped with a message, and so it is without clang-format.
# A failure lists the files; `clang-format -i FILE...` fixes them.
set -uo pipefail
root=${1:?usage: check_format.sh SOURCE_DIR}
cd "$root" || exit 1
tool=""
for t in clang-format-14 clang-format; do
  if command -v "$t" >/dev/null && [[ $("$t" --version) =~ version\ 14\. ]]; then tool=$t; break; fi
done
if [[ -z $tool ]]; then
  echo "skipped: no clang-format 14 on PATH (the tree is formatted with it; install clang-format-14)"
  exit 0
fi
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.hpp' 'apps/*.cpp' 'apps/*.hpp' 'models/*.cpp' \
  'models/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'examples/*.cpp' 'examples/*.hpp' 2>/dev/null || find src apps models tests examples -name '*.[ch]pp')
((${#files[@]} > 0)) || { echo "FAIL: no sources found under $root"; exit 1; }
bad=()
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  "$tool" --style=file "$f" | cmp -s - "$f" || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "FAIL: ${#bad[@]} of ${#files[@]} sources differ from $tool --style=file; run: $tool -i ${bad[*]}"
  exit 1
fi
echo "ok: ${#files[@]} sources as $tool writes them"
