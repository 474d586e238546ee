#!/bin/sh
# tests/wine_run.sh starts a program again only when it failed without writing to stdout, and
# passes on the program's output and status either way. A fake "wine" stands for Wine.
set -u
runner="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Fails silently on its first start, then succeeds with output.
cat >"$dir/flaky" <<'FAKE'
#!/bin/sh
if [ ! -f "$FAKE_DIR/started" ]; then : >"$FAKE_DIR/started"; exit 3; fi
echo "ran $*"
FAKE
# Writes, then fails: a real failure, never retried.
cat >"$dir/failing" <<'FAKE'
#!/bin/sh
echo "starts" >>"$FAKE_DIR/log"
echo "test output"
exit 1
FAKE
# Fails silently every time.
cat >"$dir/silent" <<'FAKE'
#!/bin/sh
echo "starts" >>"$FAKE_DIR/log"
exit 5
FAKE
chmod +x "$dir/flaky" "$dir/failing" "$dir/silent"
export FAKE_DIR="$dir"

out=$("$runner" "$dir/flaky" prog.exe --arg 2>"$dir/err") || fail "a silent first failure was not retried"
[ "$out" = "ran prog.exe --arg" ] || fail "the retry's output was '$out'"
grep -q "starting it again" "$dir/err" || fail "the retry was not reported"

out=$("$runner" "$dir/failing" prog.exe 2>/dev/null)
status=$?
[ "$status" -eq 1 ] || fail "a failure with output returned $status"
[ "$out" = "test output" ] || fail "the failing program's output was '$out'"
[ "$(wc -l <"$dir/log")" -eq 1 ] || fail "a failure with output was retried"

rm -f "$dir/log"
"$runner" "$dir/silent" prog.exe 2>/dev/null
status=$?
[ "$status" -eq 5 ] || fail "a silent failure twice returned $status"
[ "$(wc -l <"$dir/log")" -eq 2 ] || fail "a silent failure ran other than twice"
echo "PASS"
