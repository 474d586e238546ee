#!/bin/sh
# The emulator of the Windows tests (tests/windows.cmake): runs "$2..." under the Wine of "$1".
# Wine has been seen to exit non-zero before the program ran at all: no output and 0.00 s, once
# in CI on a test that only splits an empty string, never when run again. A program that fails
# without having written a byte to stdout is therefore started once more, and this says so on
# stderr. Every gtest program writes to stdout before its first test runs, so a test that fails
# for itself is never started again: its failure counts.
wine=$1
shift
attempt() {
    out=$(mktemp)
    st=$(mktemp)
    { "$wine" "$@"; echo $? >"$st"; } | tee "$out"
    status=$(cat "$st")
    written=$(wc -c <"$out")
    rm -f "$out" "$st"
}
attempt "$@"
if [ "$status" -ne 0 ] && [ "$written" -eq 0 ]; then
    echo "wine_run.sh: Wine exited with $status before the program wrote anything; starting it again" >&2
    attempt "$@"
fi
exit "$status"
