#!/usr/bin/env bash
# Leasehold demo: two instances of the ticket-office sample book seats concurrently through one Redis.
#
#   ./demo.sh              with @DistributedLock: oversold must be 0
#   ./demo.sh --no-lock    the same load without the lock: see what it prevents
#   ./demo.sh --quorum     quorum mode: the locks live on five local Redis nodes (leasehold.quorum.nodes), and
#                          two of the five are killed (SIGKILL) in the middle of the load: oversold must stay 0
#
#   ./demo.sh --watch      a longer load (30000 attempts for 8000 seats, about a minute) to watch the turns on
#                          the live page; asks for Enter before the load (when run in a terminal), and leaves
#                          the nodes up afterwards like --keep
#
# Options: --attempts N (2000)  --seats N (500)  --threads N (32)  --keep (leave the nodes up until Enter/Ctrl-C)
# Redis: by default the demo starts its OWN server (a redis-server from the PATH, else the binary packaged in
# the embedded-redis artifact) on a free loopback port, without persistence, and stops it at the end: it never
# touches a Redis already running on this machine (127.0.0.1:6379 included). To run on an existing Redis, ask
# for it: --redis redis://[:password@]host:port (or --spring.data.redis.host=... and/or
# --spring.data.redis.port=...; SPRING_DATA_REDIS_PASSWORD is used); its keys go under a prefix of their own.
# --quorum starts five more servers of that binary on free loopback ports as the quorum nodes; spring.data.redis
# stays configured but holds no lock keys then. Needs only Java 17+ (the Maven wrapper fetches Maven).
# Database: a fresh H2 database served by its own JVM (both nodes reach it over TCP alike), or
# SPRING_DATASOURCE_URL/_USERNAME/_PASSWORD (PostgreSQL).
# Stops everything it started on exit and on Ctrl-C.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")" && pwd)"
cd "$ROOT"

LOCK_ARG=""
QUORUM=no
KEEP=no
ATTEMPTS=2000
SEATS=500
THREADS=32
WATCH=no
# an existing Redis only when asked on the command line (SPRING_DATA_REDIS_HOST/PORT in the shell are not an ask:
# they may be there for another application)
REDIS_ASKED=""
REDIS_HOST=127.0.0.1
REDIS_PORT=6379
parse_redis_url() { # redis://[user:password@]host[:port][/db]
    local rest="${1#redis://}"
    if [ "$rest" = "$1" ]; then echo "--redis wants redis://host:port, got $1" >&2; exit 2; fi
    rest="${rest%%/*}"
    if [[ "$rest" == *@* ]]; then
        local auth="${rest%@*}"
        export SPRING_DATA_REDIS_PASSWORD="${auth#*:}"
        rest="${rest##*@}"
    fi
    REDIS_HOST="${rest%%:*}"
    if [[ "$rest" == *:* ]]; then REDIS_PORT="${rest##*:}"; else REDIS_PORT=6379; fi
}
while [ $# -gt 0 ]; do
    case "$1" in
        --no-lock) LOCK_ARG="--no-lock" ;;
        --quorum) QUORUM=yes ;;
        --keep) KEEP=yes ;;
        --watch) WATCH=yes; KEEP=yes; ATTEMPTS=30000; SEATS=8000 ;;
        --redis) parse_redis_url "$2"; REDIS_ASKED="--redis $2"; shift ;;
        --redis=*) parse_redis_url "${1#*=}"; REDIS_ASKED="$1" ;;
        --attempts) ATTEMPTS="$2"; shift ;;
        --seats) SEATS="$2"; shift ;;
        --threads) THREADS="$2"; shift ;;
        --spring.data.redis.host=*) REDIS_HOST="${1#*=}"; REDIS_ASKED="${REDIS_ASKED:+$REDIS_ASKED }$1" ;;
        --spring.data.redis.port=*) REDIS_PORT="${1#*=}"; REDIS_ASKED="${REDIS_ASKED:+$REDIS_ASKED }$1" ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "Unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/leasehold-demo.XXXXXX")"
PIDS=()
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if [ ${#PIDS[@]} -gt 0 ]; then
        say "Stopping what the demo started (pids ${PIDS[*]})"
        for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
        for pid in "${PIDS[@]}"; do
            for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
        done
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'echo; exit 130' INT
trap 'exit 143' TERM

# --- Java ---------------------------------------------------------------------------------------------
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA="$(command -v java || true)"; fi
if [ -z "$JAVA" ]; then echo "The demo needs Java 17 or newer (java on the PATH, or JAVA_HOME)." >&2; exit 1; fi

# --- build what the demo needs -------------------------------------------------------------------------
# The jar's own time is the fixed project.build.outputTimestamp (reproducible builds), so it cannot tell whether
# a source changed since: a stamp file touched after each successful build can.
JAR="$ROOT/samples/ticket-office/target/ticket-office.jar"
STAMP="$ROOT/samples/ticket-office/target/demo-build.stamp"
# (main sources only: the jar holds no test)
if [ ! -f "$JAR" ] || [ ! -f "$STAMP" ] || [ -n "$(find "$ROOT/pom.xml" "$ROOT/lock-autoconfigure/src/main" "$ROOT/lock-autoconfigure/pom.xml" \
        "$ROOT/lock-starter/pom.xml" "$ROOT/samples/ticket-office/src/main" "$ROOT/samples/ticket-office/pom.xml" \
        -newer "$STAMP" -type f 2>/dev/null | head -1)" ]; then
    say "Building the ticket-office sample (./mvnw -pl samples/ticket-office -am package -DskipTests)"
    ./mvnw -B -q -pl samples/ticket-office -am package -DskipTests
    touch "$STAMP"
else
    say "The ticket-office sample is up to date (no source newer than its last build)"
fi

# --- Redis ---------------------------------------------------------------------------------------------
redis_answers() { # host port: true when a Redis server replies PONG (or asks for a password that we have)
    local reply
    reply="$(timeout 3 bash -c '
        exec 3<>"/dev/tcp/$1/$2" || exit 1
        if [ -n "${SPRING_DATA_REDIS_PASSWORD:-}" ]; then
            printf "AUTH %s\r\n" "$SPRING_DATA_REDIS_PASSWORD" >&3; read -r -t 2 _ <&3
        fi
        printf "PING\r\n" >&3; read -r -t 2 line <&3; printf "%s" "$line"' _ "$1" "$2" 2>/dev/null || true)"
    [[ "$reply" == +PONG* ]]
}
redis_key_count() { # host port prefix: how many keys start with prefix (KEYS walks the whole server: fine for a demo)
    timeout 5 bash -c '
        exec 3<>"/dev/tcp/$1/$2" || exit 1
        if [ -n "${SPRING_DATA_REDIS_PASSWORD:-}" ]; then
            printf "AUTH %s\r\n" "$SPRING_DATA_REDIS_PASSWORD" >&3; read -r -t 2 _ <&3
        fi
        pattern="$3*"
        printf "*2\r\n\$4\r\nKEYS\r\n\$%d\r\n%s\r\n" "${#pattern}" "$pattern" >&3
        read -r -t 2 line <&3; line="${line#\*}"; printf "%s" "${line%$'"'"'\r'"'"'}"' _ "$1" "$2" "$3" 2>/dev/null || echo "?"
}
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
    local port
    for _ in $(seq 1 100); do
        port=$((10000 + RANDOM % 22000))   # below the kernel's ephemeral range (32768+), where clients' ports come from
        if port_free "$port"; then echo "$port"; return 0; fi
    done
    echo "No free port found" >&2; return 1
}
start_redis() { # binary: starts it on a free loopback port, without persistence
    REDIS_HOST=127.0.0.1
    REDIS_PORT="$(free_port)"
    mkdir -p "$WORK/redis"
    "$1" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK/redis" \
        --protected-mode no > "$WORK/redis.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 100); do redis_answers 127.0.0.1 "$REDIS_PORT" && return 0; sleep 0.1; done
    echo "Redis did not start:" >&2; tail -20 "$WORK/redis.log" >&2; exit 1
}

REDIS_BINARY=""
REDIS_BINARY_SOURCE=""
find_redis_binary() { # sets REDIS_BINARY: redis-server from the PATH, else the one packaged in embedded-redis
    [ -n "$REDIS_BINARY" ] && return 0
    if command -v redis-server > /dev/null; then
        REDIS_BINARY="$(command -v redis-server)"
        REDIS_BINARY_SOURCE="redis-server from the PATH ($REDIS_BINARY)"
        return 0
    fi
    local version binary jar_tool
    version="$(sed -n 's:.*<embedded-redis.version>\(.*\)</embedded-redis.version>.*:\1:p' pom.xml | head -1)"
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64|Linux-amd64) binary="redis-server-6.2.6-v5-linux-amd64" ;;
        Linux-aarch64|Linux-arm64) binary="redis-server-6.2.7-linux-arm64" ;;
        Linux-i?86) binary="redis-server-6.2.7-linux-386" ;;
        Darwin-x86_64) binary="redis-server-6.2.6-v5-darwin-amd64" ;;
        Darwin-arm64) binary="redis-server-6.2.6-v5-darwin-arm64" ;;
        *) echo "No redis-server on the PATH, and embedded-redis has no binary for $(uname -sm)." >&2; exit 1 ;;
    esac
    say "No redis-server on the PATH: using the one packaged in embedded-redis $version"
    ./mvnw -B -q dependency:copy -Dartifact="com.github.codemonstur:embedded-redis:$version" -DoutputDirectory="$WORK" -Dmdep.useBaseVersion=true
    if command -v unzip > /dev/null; then
        unzip -q -o "$WORK/embedded-redis-$version.jar" "$binary" -d "$WORK"
    else
        jar_tool="$(dirname "$(readlink -f "$JAVA")")/jar"   # the JDK's jar tool, next to java
        [ -x "$jar_tool" ] || jar_tool="$(command -v jar || true)"
        if [ -z "$jar_tool" ]; then echo "Need unzip or the JDK's jar tool to unpack embedded-redis." >&2; exit 1; fi
        (cd "$WORK" && "$jar_tool" xf "embedded-redis-$version.jar" "$binary")
    fi
    chmod +x "$WORK/$binary"
    REDIS_BINARY="$WORK/$binary"
    REDIS_BINARY_SOURCE="the redis-server binary packaged in com.github.codemonstur:embedded-redis:$version ($binary)"
}

# the nodes get the server chosen here and nothing else of the shell's SPRING_DATA_REDIS_* (a URL, Sentinel or
# Cluster setting there would point them elsewhere); a password only for a Redis that was asked for
for variable in $(compgen -e | grep '^SPRING_DATA_REDIS_' || true); do
    if [ -z "$REDIS_ASKED" ] || { [ "$variable" != SPRING_DATA_REDIS_PASSWORD ] && [ "$variable" != SPRING_DATA_REDIS_USERNAME ]; }; then
        unset "$variable"
    fi
done
if [ -n "$REDIS_ASKED" ]; then
    if ! redis_answers "$REDIS_HOST" "$REDIS_PORT"; then
        echo "The Redis you asked for ($REDIS_ASKED) does not answer PING at $REDIS_HOST:$REDIS_PORT." >&2; exit 1
    fi
    REDIS_SOURCE="YOUR Redis at $REDIS_HOST:$REDIS_PORT, as asked ($REDIS_ASKED): the demo's keys and load go there"
else
    find_redis_binary
    start_redis "$REDIS_BINARY"
    REDIS_SOURCE="its own server, $REDIS_BINARY_SOURCE, started on 127.0.0.1:$REDIS_PORT (no other Redis is touched; --redis redis://host:port to use one)"
fi
say "Redis: $REDIS_SOURCE"

# --- quorum nodes (--quorum) ---------------------------------------------------------------------------
QUORUM_URLS=()      # redis://127.0.0.1:port of each node
QUORUM_TARGETS=()   # pid@127.0.0.1:port of each node
start_quorum_node() { # index: starts one independent redis-server on a free loopback port
    local port pid dir="$WORK/quorum-$1"
    mkdir -p "$dir"
    for _ in 1 2 3; do
        port="$(free_port)"
        "$REDIS_BINARY" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
            --protected-mode no > "$dir/redis.log" 2>&1 &
        pid=$!
        disown "$pid"   # it is killed on purpose: no "Killed" job notice from bash (the trap still stops it)
        PIDS+=("$pid")
        for _ in $(seq 1 100); do
            if redis_answers 127.0.0.1 "$port"; then
                QUORUM_URLS+=("redis://127.0.0.1:$port"); QUORUM_TARGETS+=("$pid@127.0.0.1:$port")
                echo "    quorum node $1: 127.0.0.1:$port (pid $pid)"
                return 0
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    done
    echo "Quorum node $1 did not start:" >&2; tail -20 "$dir/redis.log" >&2; exit 1
}
NODE_ARGS=()
LOAD_ARGS=()
if [ "$QUORUM" = yes ]; then
    find_redis_binary
    say "Quorum mode: five independent Redis nodes ($REDIS_BINARY_SOURCE)"
    for i in 1 2 3 4 5; do start_quorum_node "$i"; done
    NODE_ARGS+=("--leasehold.quorum.nodes=$(IFS=,; echo "${QUORUM_URLS[*]}")")
    # two of the five, chosen at random, die by SIGKILL once half of the booking attempts were answered
    first=$((RANDOM % 5)); second=$(((first + 1 + RANDOM % 4) % 5))
    KILL="${QUORUM_TARGETS[$first]},${QUORUM_TARGETS[$second]}"
    LOAD_ARGS+=(--kill-at-half "$KILL")
    echo "    two of them ($(echo "$KILL" | sed 's/[0-9]*@//g')) will be killed (SIGKILL) half-way through the load"
fi

# --- two nodes -----------------------------------------------------------------------------------------
KEY_PREFIX="leasehold-demo:$(date +%s)-$$:"   # this run's lock keys, apart from any other run's
mkdir -p "$WORK/data"
NODES=()
start_node() { # name: starts a node on a free port; tries another port if that one was taken meanwhile
    for _ in 1 2 3; do
        try_node "$1" && return 0
        grep -q "already in use" "$WORK/$1.log" || break
        echo "    (port taken meanwhile; another one)"
    done
    echo "$1 did not start:" >&2; tail -30 "$WORK/$1.log" >&2; exit 1
}
try_node() {
    local port pid
    port="$(free_port)"
    SPRING_DATA_REDIS_HOST="$REDIS_HOST" SPRING_DATA_REDIS_PORT="$REDIS_PORT" \
        "$JAVA" -Xmx384m -XX:TieredStopAtLevel=1 -jar "$JAR" --server.port="$port" --server.address=127.0.0.1 \
        --ticket-office.node="$1" --ticket-office.data-dir="$WORK/data" --leasehold.key-prefix="$KEY_PREFIX" \
        --logging.level.root=WARN --spring.main.banner-mode=off ${NODE_ARGS[@]+"${NODE_ARGS[@]}"} > "$WORK/$1.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    printf '    %s on http://127.0.0.1:%s ' "$1" "$port"
    for _ in $(seq 1 600); do
        if ! kill -0 "$pid" 2>/dev/null; then echo "stopped"; return 1; fi
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null \
                && timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"; printf "GET /actuator/health HTTP/1.0\r\n\r\n" >&3; grep -q "\"UP\"" <&3' "$port" 2>/dev/null; then
            echo "up"; NODES+=("http://127.0.0.1:$port"); return 0
        fi
        printf '.'; sleep 0.5
    done
    echo "not up after 5 minutes"; return 1
}
# --- the database --------------------------------------------------------------------------------------
# One H2 database server in its own JVM, which both nodes reach alike, over TCP. (H2's AUTO_SERVER file mode
# would run the database inside the first node: its transactions in-process, the other node's over TCP and
# several times slower, so that node would hold the lock longer and its bookings would queue longer.)
start_database() {
    local port pid
    for _ in 1 2 3; do
        port="$(free_port)"
        "$JAVA" -Xmx256m -cp "$JAR" -Dloader.main=org.h2.tools.Server org.springframework.boot.loader.launch.PropertiesLauncher \
            -tcp -tcpPort "$port" -baseDir "$WORK/data" -ifNotExists > "$WORK/database.log" 2>&1 &
        pid=$!
        PIDS+=("$pid")
        for _ in $(seq 1 100); do
            if grep -q "running at" "$WORK/database.log" 2>/dev/null; then
                export SPRING_DATASOURCE_URL="jdbc:h2:tcp://127.0.0.1:$port/ticket-office"
                export SPRING_DATASOURCE_USERNAME=sa SPRING_DATASOURCE_PASSWORD=""
                return 0
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill "$pid" 2>/dev/null || true
    done
    echo "The H2 database server did not start:" >&2; tail -20 "$WORK/database.log" >&2; exit 1
}
if [ -n "${SPRING_DATASOURCE_URL:-}" ]; then
    DATABASE="$SPRING_DATASOURCE_URL"
else
    start_database
    DATABASE="an H2 database server (its own JVM, $SPRING_DATASOURCE_URL)"
fi
if [ "$QUORUM" = yes ]; then LOCKS_ON="locks on the five quorum nodes"; else LOCKS_ON="one Redis"; fi
say "Starting two instances of the sample (two JVMs; $LOCKS_ON; one database: $DATABASE)"
start_node node-a
start_node node-b
say "Live page while it runs: ${NODES[0]}/  and  ${NODES[1]}/"
if [ "$WATCH" = yes ] && [ -t 0 ]; then
    say "Open a live page now; press Enter to start the load ($ATTEMPTS attempts for $SEATS seats)"
    read -r _ || true
fi

# --- the load ------------------------------------------------------------------------------------------
# in the background, so that a signal to this script stops it at once (the trap stops it with the nodes)
"$JAVA" -cp "$JAR" -Dloader.main=dev.leasehold.samples.ticketoffice.demo.LoadDriver \
    org.springframework.boot.loader.launch.PropertiesLauncher \
    --nodes "$(IFS=,; echo "${NODES[*]}")" --attempts "$ATTEMPTS" --seats "$SEATS" --threads "$THREADS" $LOCK_ARG \
    ${LOAD_ARGS[@]+"${LOAD_ARGS[@]}"} &
PIDS+=($!)
STATUS=0
wait $! || STATUS=$?
if [ "$QUORUM" = yes ]; then
    echo "  lock keys         on the quorum: leasehold.quorum.nodes=$(IFS=,; echo "${QUORUM_URLS[*]}")"
    echo "  spring.data.redis $REDIS_SOURCE; holds no lock keys ($(redis_key_count "$REDIS_HOST" "$REDIS_PORT" "$KEY_PREFIX") keys under $KEY_PREFIX)"
else
    echo "  redis             $REDIS_SOURCE"
fi
if [ "$KEEP" = yes ]; then
    say "The nodes stay up (live page ${NODES[0]}/): press Enter or Ctrl-C to stop them"
    read -r _ || true
else
    echo "  (the nodes stop now; ./demo.sh --keep leaves them up for the live page)"
fi
exit "$STATUS"
