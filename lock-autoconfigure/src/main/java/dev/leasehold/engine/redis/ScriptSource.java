package dev.leasehold.engine.redis;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/** The text of the protocol's {@code .lua} resources, as sent to Redis. */
public final class ScriptSource {

    private static final String QUEUE_MARKER = "-- @queue.lua\n";

    private static final String DEFINITIONS_MARKER = "-- @owner.lua and fence.lua\n";

    private ScriptSource() {
    }

    /** One {@code .lua} resource as it is. */
    static String text(String name) {
        return RedisScript.of(new ClassPathResource(name + ".lua", ScriptSource.class)).getScriptAsString();
    }

    /** A script that reads the exclusive lock's value: {@code owner.lua} (the value's format) in front of it. */
    static String withOwner(String name) {
        return text("owner") + "\n" + text(name);
    }

    /** A script that grants fencing tokens without the queue's functions: {@code owner.lua} and {@code fence.lua} in front. */
    static String withFence(String name) {
        return text("owner") + "\n" + text("fence") + "\n" + text(name);
    }

    /**
     * A script of the fair queue: {@code owner.lua} and {@code fence.lua} in front of its body (or where it says
     * {@code -- @owner.lua and fence.lua}, after a quiet path that defines nothing), and {@code queue.lua} where the body
     * says {@code -- @queue.lua} (after its uncontended path, which so does not pay for defining the queue's
     * functions). Public for tests that seed Redis's script cache.
     */
    public static String withQueue(String name) {
        String body = text(name);
        if (!body.contains(QUEUE_MARKER)) {
            throw new IllegalStateException(name + ".lua has no '" + QUEUE_MARKER.strip() + "' line");
        }
        String definitions = text("owner") + "\n" + text("fence") + "\n";
        body = body.replace(QUEUE_MARKER, text("queue"));
        // a script whose quiet path comes first says where the definitions go (none is made on that path)
        return body.contains(DEFINITIONS_MARKER) ? body.replace(DEFINITIONS_MARKER, definitions) : definitions + body;
    }
}
