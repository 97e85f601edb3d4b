package dev.leasehold.test.redis;

/**
 * A real Redis server that one test class owns. Get one from {@link TestRedisServers#start()} or
 * {@link RedisServerExtension}.
 * <p>
 * Servers started by the tests themselves can be stopped, restarted on the same port, paused and
 * resumed, so fault tests can simulate crashes and stalls. A server given through
 * {@code LEASEHOLD_TEST_REDIS_URL} cannot: fault operations then abort the calling test.
 */
public interface TestRedisServer extends AutoCloseable {

    /**
     * How this server was provided: {@code env}, {@code redis-server} (or {@code valkey-server}: a binary),
     * {@code testcontainers} or {@code embedded}.
     */
    String kind();

    String host();

    int port();

    /** {@code redis://host:port} (plus credentials and database when the environment gave them). */
    String url();

    /** Whether {@link #stop()}, {@link #start()}, {@link #pause()} and {@link #resume()} work on this server. */
    boolean controllable();

    /** Kills the server at once, as a crash would; it keeps no data. */
    void stop();

    /** Starts the server again on the same port and waits until it answers PING. */
    void start();

    /** Freezes the server process (SIGSTOP): connections stay open but nothing answers. */
    void pause();

    /** Unfreezes a paused server. */
    void resume();

    /** Sends one command over a fresh connection and returns the reply as text (for test set-up and checks). */
    default String command(String... args) {
        return RespClient.command(host(), port(), args);
    }

    /** Sends the commands in order over one fresh connection and returns the replies as text. */
    default java.util.List<String> commands(java.util.List<String[]> commands) {
        return RespClient.commands(host(), port(), commands);
    }

    /**
     * The Redis version the server reports ({@code redis_version} of {@code INFO server}), such as {@code 7.0.15}
     * or {@code 6.2.11}; Valkey reports the Redis version it is compatible with ({@code 7.2.4} for every Valkey
     * so far), see {@link #serverName()} and {@link #serverVersion()}.
     */
    default String version() {
        return infoField("redis_version");
    }

    /** {@code redis} or {@code valkey}: the {@code server_name} of {@code INFO server} (Redis before 7.2 has none). */
    default String serverName() {
        java.util.regex.Matcher name = java.util.regex.Pattern.compile("(?m)^server_name:(\\S+)")
            .matcher(command("INFO", "server"));
        return name.find() ? name.group(1) : "redis";
    }

    /** The server's own version: {@code valkey_version} on Valkey (such as {@code 8.0.1}), else {@link #version()}. */
    default String serverVersion() {
        return "valkey".equals(serverName()) ? infoField("valkey_version") : version();
    }

    private String infoField(String field) {
        java.util.regex.Matcher value = java.util.regex.Pattern.compile("(?m)^" + field + ":(\\S+)")
            .matcher(command("INFO", "server"));
        if (!value.find()) {
            throw new IllegalStateException("INFO server named no " + field);
        }
        return value.group(1);
    }

    /** Stops the server for good and frees what it used. */
    @Override
    void close();
}
