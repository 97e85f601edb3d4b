#!/bin/bash
# Redis instructions per uncontended cycle, a count that load on the machine does not move (docs/benchmarks.md):
# redis-server (on a free port) under valgrind's callgrind, UncontendedCycleCostTest run against it with N1 and N2
# measured cycles after the same warm-up; the difference of the two counts per cycle, for the command processing
# (readQueryFromClient) and the scripts (evalShaCommand).
#   benchmarks/redis-instructions/cycle.sh <worktree> <label>     Leasehold as built in <worktree>
#   benchmarks/redis-instructions/cycle.sh floor floor             the bare floor (SET NX PX, EVALSHA compare-and-delete)
#   KEYS_N=6 ARGS_N=8 benchmarks/redis-instructions/cycle.sh args args-6-8   an EVALSHA of 'return 1' with that many
#                                                                   keys and arguments (what each one costs)
# Needs valgrind, redis-server, redis-cli, python3; writes /tmp/redis-instructions/<label>.
set -u
WT=$1; LABEL=$2; HERE=$(cd "$(dirname "$0")" && pwd); OUT=/tmp/redis-instructions/$LABEL; mkdir -p "$OUT"
N1=${N1:-500}; N2=${N2:-2500}; WARM=${WARM:-500}
for n in $N1 $N2; do
  PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$n.out" redis-server --port "$PORT" --save '' \
    --appendonly no --bind 127.0.0.1 > "$OUT/redis.$n.log" 2>&1 &
  VPID=$!
  for i in $(seq 1 120); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.5; done
  if [ "$WT" = floor ]; then
    python3 "$HERE/floor-cycles.py" "$PORT" "$WARM" && python3 "$HERE/floor-cycles.py" "$PORT" "$n"
  elif [ "$WT" = args ]; then
    python3 "$HERE/args-cost.py" "$PORT" "$WARM" "$KEYS_N" "$ARGS_N" && python3 "$HERE/args-cost.py" "$PORT" "$n" "$KEYS_N" "$ARGS_N"
  else
    (cd "$WT" && LEASEHOLD_TEST_REDIS_URL=redis://127.0.0.1:$PORT ./mvnw -B -o -q -pl lock-autoconfigure test \
      -Dtest=UncontendedCycleCostTest -Dsurefire.failIfNoSpecifiedTests=false -Dcycle-cost.warm-up=$WARM \
      -Dcycle-cost.cycles=$n > "$OUT/test.$n.log" 2>&1)
    grep -m1 "uncontended cycle" "$OUT/test.$n.log"
  fi
  redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1
  wait $VPID
done
python3 "$HERE/per-cycle.py" "$OUT" "$N1" "$N2" "$LABEL"
