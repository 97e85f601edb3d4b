package dev.leasehold.benchmarks.scale;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.leasehold.test.redis.TestRedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;

/** What the Scale part reads from its own redis-server: memory, key counts, subscriptions, existing keys. */
final class ServerStats {

    private ServerStats() {
    }

    /** {@code used_memory} from {@code INFO memory}, in bytes. */
    static long usedMemory(TestRedisServer redis) {
        return infoField(redis.command("INFO", "memory"), "used_memory");
    }

    static long keys(TestRedisServer redis) {
        return Long.parseLong(redis.command("DBSIZE").trim());
    }

    /** Keys without an expiry: {@code keys - expires} of db0 in {@code INFO keyspace}. */
    static long keysWithoutTtl(TestRedisServer redis) {
        String info = redis.command("INFO", "keyspace");
        for (String line : info.split("\r?\n")) {
            // db0:keys=12,expires=12,avg_ttl=0
            if (line.startsWith("db0:")) {
                long keys = Long.parseLong(line.replaceAll(".*keys=(\\d+).*", "$1"));
                long expires = Long.parseLong(line.replaceAll(".*expires=(\\d+).*", "$1"));
                return keys - expires;
            }
        }
        return 0;
    }

    /** Channel subscriptions (sub + psub + ssub) over every client connection of the server. */
    static long subscriptions(TestRedisServer redis) {
        long total = 0;
        for (String line : redis.command("CLIENT", "LIST").split("\r?\n")) {
            for (String field : line.split(" ")) {
                if (field.startsWith("sub=") || field.startsWith("psub=") || field.startsWith("ssub=")) {
                    total += Long.parseLong(field.substring(field.indexOf('=') + 1));
                }
            }
        }
        return total;
    }

    /** Script calls (what a client sends: EVAL, EVALSHA) in a commandstats delta. */
    static long scriptCalls(Map<String, Long> calls) {
        return calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L) + calls.getOrDefault("fcall", 0L);
    }

    static long allCalls(Map<String, Long> calls) {
        return calls.values().stream().mapToLong(Long::longValue).sum();
    }

    /** How many of {@code keys} exist, asked 1,000 at a time. */
    static long existing(TestRedisServer redis, List<String> keys) {
        RedisClient client = RedisClient.create("redis://" + redis.host() + ":" + redis.port());
        try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
            long found = 0;
            for (int from = 0; from < keys.size(); from += 1000) {
                List<byte[]> batch = new ArrayList<>();
                for (String key : keys.subList(from, Math.min(keys.size(), from + 1000))) {
                    batch.add(key.getBytes(StandardCharsets.UTF_8));
                }
                found += connection.sync().exists(batch.toArray(byte[][]::new));
            }
            return found;
        }
        finally {
            client.shutdown();
        }
    }

    private static long infoField(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).trim());
            }
        }
        throw new IllegalStateException("INFO gave no " + field);
    }
}
