#!/usr/bin/env bash
# PostgreSQL for the history store's tests (tests/fixtures/postgres.py): Debian's postgresql,
# its default cluster started, and a role that may create the throwaway test databases.
# Idempotent: an installed, running cluster and an existing role are left as they are.
set -euo pipefail
ROLE=flagci
if ! command -v pg_lsclusters >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
fi
cluster=$(pg_lsclusters --no-header | head -n1)
if [ -z "$cluster" ]; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -n1)
  pg_createcluster "$version" main
  cluster=$(pg_lsclusters --no-header | head -n1)
fi
read -r version name port status _ <<<"$cluster"
if [ "$status" != "online" ]; then
  pg_ctlcluster "$version" "$name" start
fi
as_postgres() { runuser -u postgres -- "$@"; }
if ! as_postgres psql -p "$port" -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'" | grep -q 1; then
  as_postgres psql -p "$port" -qc "CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD '$ROLE'"
fi
echo "postgresql://$ROLE:$ROLE@127.0.0.1:$port/postgres"
