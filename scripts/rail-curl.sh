#!/usr/bin/env bash
# A signed request to Rail with curl and openssl only — the worked example of
# docs/authentication.md.
#
#   scripts/rail-curl.sh METHOD PATH-WITH-QUERY [JSON-BODY]
#   scripts/rail-curl.sh GET /api/v1/rail/settings
#   scripts/rail-curl.sh PATCH /api/v1/rail/settings '{"callbackUrl":"https://example.com/hooks"}'
#
# Credentials come from RAIL_KEY_ID and RAIL_SIGNING_SECRET, else from the sandbox partner that
# `npm start` saved in its data directory (RAIL_DATA_DIR, default .rail): sandbox-partner.json.
# The server is RAIL_URL, else the address the running `npm start` recorded in the data
# directory's runtime.json, else http://127.0.0.1:$PORT (8080 when PORT is not set).
# It prints Rail's answer; an error status (4xx, 5xx) also makes it exit non-zero (22, curl's),
# so that a script or CI step built on it stops there.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 METHOD PATH-WITH-QUERY [JSON-BODY]" >&2
  exit 2
fi
method=$1
path=$2
body=${3:-}
data_dir=${RAIL_DATA_DIR:-.rail}
# A string field of a one-object JSON file; empty when the file or the field is missing.
field_of() { { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" "$2" 2>/dev/null || true; } | head -n 1; }
running=$(field_of apiUrl "$data_dir/runtime.json")
base=${RAIL_URL:-${running:-http://127.0.0.1:${PORT:-8080}}}
credentials=${RAIL_CREDENTIALS_FILE:-$data_dir/sandbox-partner.json}
field() { field_of "$1" "$credentials"; }
key_id=${RAIL_KEY_ID:-$(field keyId)}
secret=${RAIL_SIGNING_SECRET:-$(field signingSecret)}

timestamp=$(date +%s)
body_sha256=$(printf '%s' "$body" | openssl dgst -sha256 -hex | sed 's/^.* //')
# canonical = timestamp \n METHOD \n path-with-query \n hex(sha256(body))
signature=$(printf '%s\n%s\n%s\n%s' "$timestamp" "$method" "$path" "$body_sha256" |
  openssl dgst -sha256 -hmac "$secret" -hex | sed 's/^.* //')

args=(-sS -X "$method" "$base$path"
  -H "X-Rail-Key-Id: $key_id"
  -H "X-Rail-Timestamp: $timestamp"
  -H "X-Rail-Signature: v1=$signature")
if [ -n "$body" ]; then
  args+=(-H 'Content-Type: application/json' --data-raw "$body")
fi
status=0
curl --fail-with-body "${args[@]}" || status=$?
echo
exit "$status"
