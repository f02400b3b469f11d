#!/usr/bin/env bash
# The README's Quickstart, as a script that runs as written: serve the API, register a
# player, deposit, play hands until a tie, go to war, rotate the seeds, and re-derive the
# hand from the revealed seed with `casino-war verify`. A test runs it (tests/test_quickstart.py).
#
#   bash docs/quickstart.sh            (with .venv/bin on PATH, from the repository root)
#
# CASINO_WAR (the command, default casino-war), PORT (default 8000) and
# CASINO_WAR_DATABASE_URL (default a fresh SQLite file quickstart.db here) may be set.
set -euo pipefail

CW=${CASINO_WAR:-casino-war}
PORT=${PORT:-8000}
API=http://127.0.0.1:$PORT
export CASINO_WAR_DATABASE_URL=${CASINO_WAR_DATABASE_URL:-sqlite:///quickstart.db}
json() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }

$CW serve --port "$PORT" 2> quickstart-server.log &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true' EXIT
until curl -sf "$API/ready" > /dev/null; do sleep 0.2; done

OPERATOR=$($CW token create --role operator --name back-office)
post() {  # post TOKEN PATH BODY: a state-changing request, with a fresh Idempotency-Key
  curl -sf -X POST "$API$2" -H "Authorization: Bearer $1" \
    -H "Idempotency-Key: $(python3 -c 'import uuid; print(uuid.uuid4())')" \
    -H "Content-Type: application/json" -d "$3"
}

PLAYER_JSON=$(post "$OPERATOR" /v1/players '{"display_name": "Ada"}')
PLAYER_ID=$(echo "$PLAYER_JSON" | json '["id"]')
PLAYER=$(echo "$PLAYER_JSON" | json '["token"]')        # shown only in this response
post "$OPERATOR" /v1/cashier/deposits \
  "{\"player_id\": $PLAYER_ID, \"amount\": 500000, \"currency\": \"USD\"}" > /dev/null

COMMITMENT=$(curl -sf "$API/v1/me/seeds" -H "Authorization: Bearer $PLAYER" \
  | json '["server_seed_hash"]')
echo "committed to server seed hash $COMMITMENT"

TABLE_ID=$(curl -sf "$API/v1/tables" -H "Authorization: Bearer $PLAYER" | json '["items"][0]["id"]')
while true; do                                          # deal until the first deal ties
  HAND=$(post "$PLAYER" /v1/hands "{\"table_id\": $TABLE_ID, \"bet\": 1000, \"tie_bet\": 100}")
  [ "$(echo "$HAND" | json '["status"]')" = awaiting_decision ] && break
done
HAND_ID=$(echo "$HAND" | json '["id"]')
NONCE=$(echo "$HAND" | json '["fairness"]["nonce"]')
echo "hand $HAND_ID tied: $(echo "$HAND" | json '["player_card"]') against $(echo "$HAND" | json '["dealer_card"]')"

SETTLED=$(post "$PLAYER" "/v1/hands/$HAND_ID/decision" '{"action": "war"}')
echo "war: $(echo "$SETTLED" | json '["outcome"]'), net $(echo "$SETTLED" | json '["net"]')"

ROTATION=$(post "$PLAYER" /v1/me/seeds/rotate '{}')
SERVER_SEED=$(echo "$ROTATION" | json '["revealed"]["server_seed"]')
CLIENT_SEED=$(echo "$ROTATION" | json '["revealed"]["client_seed"]')

# Anyone can now re-derive the hand with no database and no server:
$CW verify --server-seed "$SERVER_SEED" --client-seed="$CLIENT_SEED" --nonce "$NONCE" \
  --bet 1000 --tie-bet 100 --action war --server-seed-hash "$COMMITMENT"
