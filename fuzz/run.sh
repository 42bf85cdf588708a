#!/bin/sh
# run.sh CORPUS BIN SECONDS TARGET... - run each fuzz target (BIN/fuzz_TARGET)
# for SECONDS on a copy of its seed corpus (CORPUS/TARGET), inside BIN/run/,
# so the source tree is never written.  A crash, leak, timeout (5 s per
# input), memory blow-up or sanitizer report fails the target; its input is
# kept in BIN/artifacts/TARGET/.  FUZZ_JOBS targets run at once (default 1;
# each is one process, so CI runs one per core).  Ends with
# "N passed, N failed"; the exit status is non-zero when any failed.
set -u
corpus=$1 bin=$2 seconds=$3
shift 3
jobs=${FUZZ_JOBS:-1}

# run_one TARGET: fuzz it; its verdict goes to BIN/run/TARGET.result.
run_one() {
	t=$1
	work=$bin/run/$t
	art=$bin/artifacts/$t
	log=$bin/run/$t.log
	rm -rf "$work" "$art"
	mkdir -p "$work" "$art"
	cp "$corpus/$t"/* "$work"/
	if "$bin/fuzz_$t" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$art/" "$work" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
		echo "PASS: fuzz_$t: $runs runs, $cov, corpus $(ls "$work" | wc -l) files" \
			>"$bin/run/$t.result"
	else
		{
			echo "FAIL: fuzz_$t: see $log; the input is in $art/"
			grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 10
		} >"$bin/run/$t.result"
	fi
}

mkdir -p "$bin/run"
running=0
for t in "$@"; do
	rm -f "$bin/run/$t.result"
	run_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

passed=0
failed=0
for t in "$@"; do
	if [ -f "$bin/run/$t.result" ] && head -n 1 "$bin/run/$t.result" | grep -q '^PASS'; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	cat "$bin/run/$t.result" 2>/dev/null || echo "FAIL: fuzz_$t: no result"
done
echo "$passed passed, $failed failed"
test "$failed" -eq 0
