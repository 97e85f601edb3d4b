#!/usr/bin/env bash
# Teeth of the deterministic explorer (docs/testing-leasehold.md): each defect fixed in an earlier wave is put back
# (a patch in scripts/explorer-teeth/) in a scratch git worktree of HEAD, and the explorer runs on it for up to
# LIMIT seconds (default 300). Prints, per defect: found or not, after how long, and the first violation.
#   scripts/explorer-teeth.sh [LIMIT_SECONDS] [FIRST_SEED]
set -euo pipefail
repo="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
limit="${1:-300}"
seed="${2:-$(( $(date +%s) % 1000000 ))}"
results=()
for patch in "$repo"/scripts/explorer-teeth/*.patch; do
  name="$(basename "$patch" .patch)"
  scratch="$(mktemp -d)"
  git -C "$repo" worktree add --detach -q "$scratch/wt" HEAD
  git -C "$scratch/wt" apply "$patch"
  log="$scratch/explorer.log"
  # offline when the local Maven repository has everything (it does once the build ran)
  (cd "$scratch/wt" && ./mvnw -B -o -pl lock-autoconfigure -am test -Pexplorer \
      -Dexplorer.seconds="$limit" -Dexplorer.seed="$seed" > "$log" 2>&1) || true
  found="$(grep -m1 'Explorer: first violation after' "$log" || true)"
  if [ -n "$found" ]; then
    results+=("$name | found | ${found#Explorer: first violation after }")
  else
    summary="$(grep -m1 '^Explorer: ' "$log" || echo 'the explorer did not run: see the log')"
    results+=("$name | NOT found | $summary")
    cp "$log" "/tmp/explorer-teeth-$name.log"
  fi
  git -C "$repo" worktree remove --force "$scratch/wt"
  rm -rf "$scratch"
done
echo "Explorer teeth (limit ${limit} s per defect, first seed ${seed}):"
printf '%s\n' "${results[@]}"
