#!/usr/bin/env bash
# The dashboard workflow's work, runnable outside Actions (tests/unit/test_dashboard_workflow.py
# runs it with a stand-in gh): download the nightly runs of the last BACKFILL_DAYS days,
# back-fill the history, rebuild the dashboard, lay out the site into ./site.
#
# Needs: gh (the GitHub CLI) on PATH, authenticated by GH_TOKEN; REPOSITORY (owner/name);
# FLAGCI_HISTORY_DB (the shared history); the project's venv (make venv) or FLAGCI_BIN.
# A night with no nightly artifact yet (the first one) publishes an empty dashboard that
# says so. Works in the current folder: downloads/, results/dashboard/, site/.
set -euo pipefail

BACKFILL_DAYS=${BACKFILL_DAYS:-14}
SITE_RUNS=${SITE_RUNS:-30}
FLAGCI_BIN=${FLAGCI_BIN:-.venv/bin}

fail() {
    echo "::error::$*" >&2
    exit 1
}

[ -n "${REPOSITORY:-}" ] || fail "set REPOSITORY (owner/name of the repository whose nightly runs to read)"
[ -n "${FLAGCI_HISTORY_DB:-}" ] || fail "set the secret FLAGCI_HISTORY_DB (the shared history)"
command -v gh >/dev/null ||
    fail "gh (the GitHub CLI) is not on this runner's PATH: install it (Debian 12: apt-get install gh); see docs/github-setup.md"
[ -x "$FLAGCI_BIN/flagci" ] || fail "$FLAGCI_BIN/flagci is missing: run make venv first"

echo "::group::Download the nightly runs of the last $BACKFILL_DAYS days"
since=$(date -u -d "-$BACKFILL_DAYS days" +%Y-%m-%d)
mkdir -p downloads
ids=$(gh run list --repo "$REPOSITORY" --workflow nightly.yml --created ">=$since" \
    --limit 100 --json databaseId --jq '.[].databaseId') ||
    fail "gh run list failed for $REPOSITORY (is GH_TOKEN set, with actions: read?)"
[ -n "$ids" ] || echo "no nightly run since $since: the dashboard says the history is empty"
for id in $ids; do
    gh run download "$id" --repo "$REPOSITORY" --pattern 'results-*' --dir "downloads/$id" ||
        echo "run $id: no results artifact (still running, stopped before its upload, or expired)"
done
echo "::endgroup::"

"$FLAGCI_BIN/flagci" history backfill downloads
"$FLAGCI_BIN/flagci" dashboard --out results/dashboard
rm -rf site
"$FLAGCI_BIN/flagci" site --results downloads --dashboard results/dashboard --out site --runs "$SITE_RUNS"
