#!/usr/bin/env bash
# The whole test suite: lint, typecheck, migration drift, build, then every vitest project
# (contracts, server integration, web unit, end-to-end in Chromium).
set -uo pipefail
cd "$(dirname "$0")/.."

step() {
  local name="$1"; shift
  echo "▶ $name"
  local start=$SECONDS
  if ! "$@"; then
    echo "✖ $name failed" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "✔ $name ($((SECONDS - start))s)"
}

step "Test environment" bash scripts/ensure-test-env.sh
step "Prisma client" npm run --silent db:generate
step "Lint and format" npx biome ci --reporter=summary .
step "Typecheck" npm run --silent typecheck
step "Migration drift" npm run --silent db:check
step "Build web app" npx vite build apps/web --logLevel warn
step "Build server" npm run --silent build:server

echo "▶ Tests"
mkdir -p test-results
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@"
status=$?
node scripts/test-summary.mjs test-results/vitest.json || status=1
exit $status
