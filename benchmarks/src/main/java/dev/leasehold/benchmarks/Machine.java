package dev.leasehold.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

import dev.leasehold.test.redis.TestRedisServer;

/** Where and with what the benchmark ran: printed at the top of the report. */
record Machine(Map<String, String> facts) {

    static Machine describe(TestRedisServer redis) {
        Map<String, String> facts = new LinkedHashMap<>();
        facts.put("Date", ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME.withZone(java.time.ZoneOffset.UTC)));
        facts.put("CPU", cpuModel() + ", `nproc` = " + Runtime.getRuntime().availableProcessors());
        facts.put("Memory", memory());
        facts.put("OS", System.getProperty("os.name") + " " + System.getProperty("os.version") + " ("
                + System.getProperty("os.arch") + ")");
        facts.put("Java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        facts.put("Redis", "redis-server " + infoField(redis, "redis_version") + " (" + redis.kind() + ", "
                + redis.host() + ":" + redis.port() + ", no persistence)");
        facts.put("Libraries", "Redisson " + version("org.redisson", "redisson", org.redisson.Redisson.class)
                + ", Spring Integration " + version(null, null,
                        org.springframework.integration.redis.util.RedisLockRegistry.class)
                + ", Lettuce " + version(null, null, io.lettuce.core.RedisClient.class)
                + ", Spring Boot " + version(null, null, org.springframework.boot.SpringApplication.class)
                + ", JMH " + version("org.openjdk.jmh", "jmh-core", org.openjdk.jmh.runner.Runner.class));
        return new Machine(facts);
    }

    private static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
                .filter(line -> line.startsWith("model name"))
                .map(line -> line.substring(line.indexOf(':') + 1).trim())
                .findFirst()
                .orElse("unknown model");
        }
        catch (IOException ex) {
            return "unknown model";
        }
    }

    private static String memory() {
        try {
            return Files.readAllLines(Path.of("/proc/meminfo")).stream()
                .filter(line -> line.startsWith("MemTotal:"))
                .map(line -> Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024 / 1024 + " GiB")
                .findFirst()
                .orElse("unknown");
        }
        catch (IOException ex) {
            return "unknown";
        }
    }

    static String infoField(TestRedisServer redis, String field) {
        for (String line : redis.command("INFO", "server").split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        return "unknown";
    }

    /** From the jar's Maven metadata, else its manifest. */
    private static String version(String group, String artifact, Class<?> type) {
        if (group != null) {
            try (var in = type.getClassLoader().getResourceAsStream("META-INF/maven/" + group + "/" + artifact + "/pom.properties")) {
                if (in != null) {
                    Properties properties = new Properties();
                    properties.load(in);
                    return properties.getProperty("version");
                }
            }
            catch (IOException ex) {
                // fall back to the manifest
            }
        }
        String version = type.getPackage().getImplementationVersion();
        return version != null ? version : "unknown";
    }
}
