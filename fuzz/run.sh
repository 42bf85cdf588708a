#!/bin/sh
# run.sh CORPUS BIN SECONDS TARGET... - run each fuzz target (BIN/fuzz_TARGET)
# for SECONDS on a copy of its seed corpus (CORPUS/TARGET), inside BIN/run/,
# so the source tree is never written.  A crash, leak, timeout (5 s per
# input), memory blow-up or sanitizer report fails the target; its input is
# kept in BIN/artifacts/TARGET/.  Ends with "N passed, N failed"; the exit
# status is non-zero when any failed.
set -u
corpus=$1 bin=$2 seconds=$3
shift 3
passed=0
failed=0
for t in "$@"; do
	work=$bin/run/$t
	art=$bin/artifacts/$t
	log=$bin/run/$t.log
	rm -rf "$work" "$art"
	mkdir -p "$work" "$art"
	cp "$corpus/$t"/* "$work"/
	if "$bin/fuzz_$t" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$art/" "$work" >"$log" 2>&1; then
		passed=$((passed + 1))
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
		echo "PASS: fuzz_$t: $runs runs, $cov, corpus $(ls "$work" | wc -l) files"
	else
		failed=$((failed + 1))
		echo "FAIL: fuzz_$t: see $log; the input is in $art/"
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 10
	fi
done
echo "$passed passed, $failed failed"
test "$failed" -eq 0
