#!/usr/bin/env bash
# Teeth of the deterministic explorer (docs/testing-leasehold.md): each defect fixed earlier is put back (a patch in
# scripts/explorer-teeth/: D* from earlier waves, I31-* issue 31's items, the engine parts against c89b3b7's code; FS*
# the free-key stalls, against 23cd2a1's; LV1 the fair queue's liveness heartbeat (001d2bb's fix), against 917edd1's;
# RD* readers, against ff96e5d's; RA* replica acknowledgement, against 8abfa29 (wave 11's replica explorer), each in the
# production code and in the explorer's copy of its rule, ReplicaAcks: the explorer runs the engine above the LockServer
# seam, run with EXPLORER_OPTS=-Dexplorer.replica-ack=true; QR* the quorum rounds, against wave11-quorum-explorer's, run
# with EXPLORER_OPTS=-Dexplorer.quorum=true; LOOK2 against 49bd022's; CL* a Cluster slot's migration, issue 31's
# defect 5, against wave12-cluster-explorer's, in the production code and in the explorer's mirror of the script,
# SimCluster, run with EXPLORER_OPTS=-Dexplorer.cluster=true)
# in a scratch git worktree of HEAD, and the explorer runs on it for up to LIMIT seconds (default 300). A violation
# counts only if the same seed passes on HEAD without the patch (a run that fails there too is a finding of its own,
# listed, and the search goes on from the next seed). Prints, per defect: found or not, after how long, the rule.
#   [EXPLORER_OPTS='-Dexplorer.quorum=true ...'] scripts/explorer-teeth.sh [LIMIT_SECONDS] [FIRST_SEED] [PATCH_NAME_PATTERN]
# EXPLORER_OPTS: more -D options for every explorer run (with and without the patch), split on spaces.
# A patch whose first line is "Test: Class#method" must make that real-Redis test fail, or it is reported as
# reverting nothing (TEETH_SKIP_TESTS=1 skips that check).
set -euo pipefail
shopt -s extglob # PATCH_NAME_PATTERN may be '@(D5|I31-2)*'
repo="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
limit="${1:-300}"
seed="${2:-$(( $(date +%s) % 1000000 ))}"
pattern="${3:-*}"
mvn_explorer() { # dir, seed, seconds, runs, log, [more -D options]
  (cd "$1" && ./mvnw -B -o -pl lock-autoconfigure -am test -Pexplorer -Dexplorer.seed="$2" \
      -Dexplorer.seconds="$3" -Dexplorer.runs="$4" ${EXPLORER_OPTS:-} "${@:6}" > "$5" 2>&1) || true
}
scratch="$(mktemp -d)"
git -C "$repo" worktree add --detach -q "$scratch/head" HEAD
results=()
for patch in "$repo"/scripts/explorer-teeth/$pattern.patch; do
  name="$(basename "$patch" .patch)"
  git -C "$repo" worktree add --detach -q "$scratch/wt" HEAD
  if ! git -C "$scratch/wt" apply "$patch" 2> "$scratch/apply.err"; then
    # a patch that no longer applies is reported, not skipped silently: regenerate it against HEAD
    results+=("$name | STALE: does not apply to HEAD ($(head -1 "$scratch/apply.err"))")
    echo "${results[-1]}" >&2
    git -C "$repo" worktree remove --force "$scratch/wt"
    continue
  fi
  # a patch may name, on a first line "Test: Class#method", the real-Redis test its defect fails: with the patch
  # applied that test must fail, or the patch reverts nothing any more (the fix moved; I31-4 did) and is reported so
  defect_test="$(sed -n '1s/^Test: //p' "$patch")"
  if [ -n "$defect_test" ] && [ -z "${TEETH_SKIP_TESTS:-}" ]; then
    if (cd "$scratch/wt" && ./mvnw -B -o -q -pl lock-autoconfigure -am test -Dtest="$defect_test" \
        -Dsurefire.failIfNoSpecifiedTests=false > "$scratch/defect-test.log" 2>&1); then
      results+=("$name | REVERTS NOTHING: $defect_test passes with the patch (regenerate it against HEAD)")
      echo "${results[-1]}" >&2
      git -C "$repo" worktree remove --force "$scratch/wt"
      continue
    fi
  fi
  began=$(date +%s)
  from="$seed"
  verdict=""
  also=""
  while [ -z "$verdict" ]; do
    left=$(( limit - ($(date +%s) - began) ))
    if [ "$left" -le 5 ]; then
      verdict="NOT found | within ${limit} s from seed ${seed}${also}"
      break
    fi
    log="$scratch/explorer.log"
    mvn_explorer "$scratch/wt" "$from" "$left" 1000000000 "$log"
    found="$(grep -a -m1 'Explorer: first violation after' "$log" || true)"
    if [ -z "$found" ]; then
      summary="$(grep -a -m1 '^Explorer: ' "$log" || echo 'the explorer did not run: see the log')"
      cp "$log" "/tmp/explorer-teeth-$name.log"
      verdict="NOT found | $summary${also}"
      break
    fi
    failed_seed="$(sed -E 's/.*, seed ([0-9]+)\).*/\1/' <<< "$found")"
    rule="$(sed -E 's/.*seed [0-9]+\): //' <<< "$found")"
    # the same seed on HEAD, run again and again for 15 s (a run does not always replay step for step)
    mvn_explorer "$scratch/head" "$failed_seed" 15 1000000000 "$scratch/head.log" -Dexplorer.repeat=true
    if grep -a -q 'Explorer: first violation after' "$scratch/head.log"; then
      also="$also; seed $failed_seed fails without the patch too ($(cut -c1-80 <<< "$rule"))"
      from=$(( failed_seed + 1 ))
    else
      verdict="found | ${found#Explorer: first violation after } | $(( $(date +%s) - began )) s wall${also}"
    fi
  done
  results+=("$name | $verdict")
  echo "$name | $verdict" >&2 # as it goes
  git -C "$repo" worktree remove --force "$scratch/wt"
done
git -C "$repo" worktree remove --force "$scratch/head"
rm -rf "$scratch"
echo "Explorer teeth (limit ${limit} s per defect, first seed ${seed}; wall time includes the builds):"
printf '%s\n' "${results[@]}"
