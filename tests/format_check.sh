#!/usr/bin/env bash
# The project's C++ follows .clang-format: lists every tracked C++ file that clang-format would
# change (run `clang-format -i FILE` to fix it); generated files (rtl_out/) are not checked.
# Skipped (77) when clang-format is not installed.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "SKIP: clang-format is not installed"; exit 77; }
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then echo "needs clang-format: $f"; bad=$((bad + 1)); fi
done < <(git ls-files '*.cpp' '*.h' ':!rtl_out' 2>/dev/null || find gen wire numerics systemc_model testbench host_driver tests -name '*.cpp' -o -name '*.h')
echo "format_check: $bad file(s) to reformat"
[ "$bad" -eq 0 ]
