#!/usr/bin/env bash
# The whole test suite: the test environment and both builds, then the tests (every vitest project:
# contracts, server integration, web unit, end-to-end in Chromium) while lint, typecheck and the
# migration drift check run beside them. Prints each step's time and the ten slowest test files.
#
#   npm test                              everything
#   npm test -- --load                    the shake-out: the same with two busy processes beside it
#   npm test -- --repeat 20 <file...>     only those tests, 20 runs in a row (with --load too)
#   npm test -- <vitest args>             e.g. --project server, or a file path (the checks still run)
set -uo pipefail
cd "$(dirname "$0")/.."

LOAD="${TEST_LOAD:-0}"
REPEAT=0
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --load) LOAD=1 ;;
    --repeat) REPEAT="${2:-}"; shift ;;
    --repeat=*) REPEAT="${1#--repeat=}" ;;
    *) ARGS+=("$1") ;;
  esac
  shift
done
if ! [[ "$REPEAT" =~ ^[0-9]+$ ]]; then
  echo "--repeat takes a number of runs, e.g. --repeat 20 apps/server/src/app.test.ts" >&2
  exit 2
fi

SUITE_START=$SECONDS
STEPS=test-results/steps
rm -rf "$STEPS" && mkdir -p "$STEPS"
BUSY=()
cleanup() { [ ${#BUSY[@]} -gt 0 ] && kill "${BUSY[@]}" 2>/dev/null; }
trap cleanup EXIT

failed() {
  echo "✖ $1 failed" >&2
  echo "0 passed, 1 failed"
  exit 1
}

# One step in the foreground: its output as it comes, then its time.
step() {
  local name="$1"; shift
  echo "▶ $name"
  local start=$SECONDS
  "$@" || failed "$name"
  echo "✔ $name ($((SECONDS - start))s)"
}

# Steps in the background, each writing to its own log; `finish` waits for them and reports.
BG_NAMES=()
BG_PIDS=()
background() {
  local name="$1"; shift
  local log="$STEPS/${#BG_NAMES[@]}.log"
  ( start=$SECONDS; "$@" >"$log" 2>&1; rc=$?; echo "$rc $((SECONDS - start))" >"$log.done"; exit $rc ) &
  BG_NAMES+=("$name")
  BG_PIDS+=($!)
}
finish() {
  local bad=0 i
  for i in "${!BG_PIDS[@]}"; do
    wait "${BG_PIDS[$i]}"
    local log="$STEPS/$i.log" rc secs
    read -r rc secs <"$log.done"
    if [ "$rc" = 0 ]; then
      echo "✔ ${BG_NAMES[$i]} (${secs}s)"
    else
      echo "✖ ${BG_NAMES[$i]} failed (${secs}s):" >&2
      tail -n 60 "$log" >&2
      bad=1
    fi
  done
  BG_NAMES=()
  BG_PIDS=()
  return $bad
}

if [ "$LOAD" = 1 ]; then
  # Two processes that never wait, so every timing assumption in a test meets a busy machine.
  for _ in 1 2; do node -e 'for (;;) {}' & BUSY+=($!); done
  echo "▶ Load mode: ${#BUSY[@]} busy processes beside the suite"
fi

step "Test environment" bash scripts/ensure-test-env.sh
step "Prisma client" npm run --silent db:generate

# The repeat mode: the named tests again and again, counting the runs that failed (a flaky test fails
# some). End-to-end runs build what is stale themselves (tests/e2e/global-setup.ts).
if [ "$REPEAT" -gt 0 ]; then
  if [ ${#ARGS[@]} -eq 0 ]; then echo "--repeat needs the test files (or a vitest filter) to run" >&2; exit 2; fi
  bad=0
  for run in $(seq 1 "$REPEAT"); do
    start=$SECONDS
    if npx vitest run --reporter=dot "${ARGS[@]}" >"$STEPS/repeat.log" 2>&1; then
      echo "✔ run $run of $REPEAT ($((SECONDS - start))s)"
    else
      bad=$((bad + 1))
      cp "$STEPS/repeat.log" "$STEPS/repeat-$run-failed.log"
      echo "✖ run $run of $REPEAT failed ($((SECONDS - start))s): $STEPS/repeat-$run-failed.log"
      grep -E "FAIL|AssertionError|Error:" "$STEPS/repeat.log" | head -n 8
    fi
  done
  echo "$((REPEAT - bad)) of $REPEAT runs passed"
  [ "$bad" = 0 ]
  exit $?
fi

# The end-to-end and deploy tests run what these build.
background "Build web app" env NODE_ENV=production npx vite build apps/web --logLevel warn
background "Build server" npm run --silent build:server
echo "▶ Builds"
finish || failed "Builds"

# Checks that need no test database run while the tests do, at the lowest CPU priority: they take
# the moments the tests leave the cores idle (waiting on timers, sockets, child processes) rather
# than slowing the tests down.
background "Lint and format" nice -n 19 npx biome ci --reporter=summary --colors=off .
background "Import rules" nice -n 19 npm run --silent lint:imports
background "Typecheck" nice -n 19 npm run --silent typecheck
background "Migration drift" nice -n 19 npm run --silent db:check

echo "▶ Tests"
tests_start=$SECONDS
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "${ARGS[@]}"
status=$?
echo "✔ Tests ran ($((SECONDS - tests_start))s)"

echo "▶ Checks beside the tests"
checks=()
finish || checks=(--checks-failed)

echo "Whole suite: $((SECONDS - SUITE_START))s"
# Its last line is the one CI reads: "N passed, N failed, N skipped".
node scripts/test-summary.mjs test-results/vitest.json --slowest 10 "${checks[@]}" || status=1
exit $status
