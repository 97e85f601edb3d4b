package dev.leasehold.engine.server;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Which server answers and its own version, from {@code INFO server}: {@code redis 7.0.15}, {@code valkey 8.0.1}.
 * Valkey reports {@code redis_version:7.2.4} whatever its own version, so what a feature needs is decided on
 * {@code server_name} and {@code valkey_version}, never on {@code redis_version} alone (Redis before 7.2 has no
 * {@code server_name}: it is Redis).
 *
 * @param name {@code redis} or {@code valkey} (or whatever else a compatible server calls itself)
 * @param version the server's own version, such as {@code 8.0.1}
 */
public record ServerVersion(String name, String version) {

    private static final Pattern MAJOR_MINOR = Pattern.compile("^(\\d+)(?:\\.(\\d+))?");

    /**
     * From {@code INFO server}'s fields {@code server_name}, {@code valkey_version} and {@code redis_version}
     * (null where the reply has none); null when it names no version.
     */
    public static @Nullable ServerVersion of(@Nullable String serverName, @Nullable String valkeyVersion,
            @Nullable String redisVersion) {
        String name = serverName == null || serverName.isBlank() ? "redis" : serverName.trim();
        String version = "valkey".equals(name) ? valkeyVersion : redisVersion;
        return version == null || version.isBlank() ? null : new ServerVersion(name, version.trim());
    }

    /** From the text of an {@code INFO server} reply; null when it names no version. */
    public static @Nullable ServerVersion parse(String info) {
        return of(field(info, "server_name"), field(info, "valkey_version"), field(info, "redis_version"));
    }

    private static @Nullable String field(String info, String name) {
        Matcher value = Pattern.compile("(?m)^" + Pattern.quote(name) + ":(\\S+)").matcher(info);
        return value.find() ? value.group(1) : null;
    }

    /**
     * Whether SSUBSCRIBE and SPUBLISH exist: Redis from 7.0 on, every Valkey (forked from Redis 7.2, which had
     * them). The scripts' {@code publishCommandFor} decides the same way on the server itself.
     */
    public boolean hasShardedPubSub() {
        return "valkey".equals(name) ? atLeast(7, 2) : "redis".equals(name) && atLeast(7, 0);
    }

    /** Whether the version is at least {@code major.minor} (false when it is not a number). */
    public boolean atLeast(int major, int minor) {
        Matcher numbers = MAJOR_MINOR.matcher(version);
        if (!numbers.find()) {
            return false;
        }
        int ownMajor = Integer.parseInt(numbers.group(1));
        int ownMinor = numbers.group(2) == null ? 0 : Integer.parseInt(numbers.group(2));
        return ownMajor > major || (ownMajor == major && ownMinor >= minor);
    }

    @Override
    public String toString() {
        return name + " " + version;
    }
}
