#!/usr/bin/env bash
# The newcomer's path on this clone: `npm start` in a fresh data directory, wait for /readyz,
# make one signed call with the credentials it printed (scripts/rail-curl.sh, curl + openssl),
# then stop it as a terminal would — a signal to its whole process group (SIGTERM: a background
# job of a script ignores SIGINT) — and expect a clean stop, embedded PostgreSQL included.
set -euo pipefail
cd "$(dirname "$0")/.."

data_dir=$(mktemp -d)
chmod 755 "$data_dir" # as root, embedded PostgreSQL runs as the postgres user and must enter it
log="$data_dir/start.log"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
stop_group() {
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do
    pgrep -g "$pid" >/dev/null || return 0
    sleep 0.2
  done
  return 1
}
cleanup() {
  if [ -n "${pid:-}" ] && pgrep -g "$pid" >/dev/null; then stop_group || kill -KILL -- "-$pid" 2>/dev/null || true; fi
  rm -rf "$data_dir"
}
trap cleanup EXIT

setsid env -u DATABASE_URL RAIL_DATA_DIR="$data_dir" PORT="$port" npm start >"$log" 2>&1 &
pid=$!

for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && grep -q 'signingSecret' "$log"; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then cat "$log"; echo "npm start exited early"; exit 1; fi
  sleep 0.5
done

key_id=$(sed -n 's/^  keyId  *\([^ ]*\)$/\1/p' "$log")
secret=$(sed -n 's/^  signingSecret  *\([^ ]*\)$/\1/p' "$log")
partner_id=$(sed -n 's/^  partnerId  *\([^ ]*\)$/\1/p' "$log")
[ -n "$key_id" ] && [ -n "$secret" ] || { cat "$log"; echo "no credentials printed"; exit 1; }

answer=$(RAIL_URL="http://127.0.0.1:$port" RAIL_KEY_ID="$key_id" RAIL_SIGNING_SECRET="$secret" scripts/rail-curl.sh GET /api/v1/rail/settings)
echo "signed call answered: $answer"
case "$answer" in
  *"\"partnerId\":\"$partner_id\""*) ;;
  *) echo "the signed call did not return the sandbox partner"; exit 1 ;;
esac

stop_group || { cat "$log"; echo "npm start did not stop within 30 s"; exit 1; }
pid=
grep -q 'stopped cleanly' "$log" || { cat "$log"; echo "npm start did not stop cleanly"; exit 1; }
[ ! -e "$data_dir/pgdata/postmaster.pid" ] || { echo "embedded PostgreSQL was left running"; exit 1; }
echo "newcomer path: ok"
