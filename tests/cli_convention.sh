#!/usr/bin/env bash
# The command-line convention (docs/architecture.md, "Command lines"), checked on every binary
# and script: --help exits 0 and prints something on stdout; a binary given an unknown flag exits
# 2 with exactly one line on stderr (a script is not run with a bad flag: some of them install or
# build before they parse).
#
#   cli_convention.sh SOURCE_DIR BINARY...   (a BINARY may be "PATH SUBCOMMAND")
set -uo pipefail
src=$1
shift
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/panama_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for bin in "$@"; do
  read -r -a cmd <<<"$bin"
  timeout 30 "${cmd[@]}" --help >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$tmp/out" ]; then
    echo "FAIL: '$bin --help' exited $rc with $(wc -l <"$tmp/out") line(s) on stdout"
    fail=1
  fi
  timeout 30 "${cmd[@]}" --no-such-flag-xyz >"$tmp/out" 2>"$tmp/err"
  rc=$?
  lines=$(wc -l <"$tmp/err")
  if [ $rc -ne 2 ] || [ "$lines" -ne 1 ]; then
    echo "FAIL: '$bin --no-such-flag-xyz' exited $rc with $lines line(s) on stderr (want 2 and 1):"
    head -5 "$tmp/err"
    fail=1
  fi
done
# Every script: its own files only (rtl_configs is data; pypanama/ is a package, not a file).
for s in "$src"/scripts/*; do
  [ -f "$s" ] || continue
  case "$(basename "$s")" in rtl_configs) continue ;; esac
  if head -1 "$s" | grep -q python; then run=(/usr/bin/python3 "$s"); else run=(bash "$s"); fi
  timeout 30 "${run[@]}" --help >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$tmp/out" ]; then
    echo "FAIL: 'scripts/$(basename "$s") --help' exited $rc with $(wc -l <"$tmp/out") line(s) on stdout"
    head -3 "$tmp/err"
    fail=1
  fi
done
[ $fail -eq 0 ] && echo "PASS: every binary and script follows the command-line convention"
exit $fail
