package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;

import org.springframework.data.redis.core.script.RedisScript;

/** A Lua script of the protocol, loaded from its {@code .lua} resource, with its SHA-1 for EVALSHA. */
record LockScript(String name, String sha1, byte[] body) {

    static LockScript load(String name) {
        return of(name, ScriptSource.text(name));
    }

    /** A script that reads the exclusive lock's value: {@code owner.lua} goes in front of it. */
    static LockScript loadWithOwner(String name) {
        return of(name, ScriptSource.withOwner(name));
    }

    /**
     * A script of the fair queue: {@code owner.lua} and {@code fence.lua} go in front of its body, and {@code queue.lua} where
     * the body says {@code -- @queue.lua} (after its uncontended path, which so does not pay for defining
     * the queue's functions).
     */
    static LockScript loadWithQueue(String name) {
        return of(name, ScriptSource.withQueue(name));
    }

    static LockScript loadWithFence(String name) {
        return of(name, ScriptSource.withFence(name));
    }

    private static LockScript of(String name, String text) {
        RedisScript<Object> script = RedisScript.of(text);
        return new LockScript(name, script.getSha1(), text.getBytes(StandardCharsets.UTF_8));
    }

    /** The same script as Spring Data Redis's {@link RedisScript}, for {@code RedisTemplate.execute}. */
    <T> RedisScript<T> as(Class<T> resultType) {
        return RedisScript.of(new String(body, StandardCharsets.UTF_8), resultType);
    }

    static final LockScript ACQUIRE_EXCLUSIVE = loadWithQueue("acquire_exclusive");

    static final LockScript ACQUIRE_SHARED = loadWithQueue("acquire_shared");

    static final LockScript RELEASE_EXCLUSIVE = loadWithQueue("release_exclusive");

    static final LockScript RELEASE_SHARED = loadWithQueue("release_shared");

    static final LockScript RENEW_EXCLUSIVE = loadWithOwner("renew_exclusive");

    static final LockScript RENEW_EXCLUSIVE_MANY = loadWithOwner("renew_exclusive_many");

    static final LockScript RENEW_EXCLUSIVE_NODE = loadWithOwner("renew_exclusive_node");

    static final LockScript RENEW_SHARED = load("renew_shared");

    static final LockScript IS_LOCKED = load("is_locked");

    static final LockScript RAISE_FENCE = load("raise_fence");

    static final LockScript WITHDRAW = loadWithQueue("withdraw");

    static final LockScript KEEP_ALIVE = load("keep_alive");

    static final LockScript LOOK = load("look");

    static final LockScript RESERVE_FENCES = loadWithFence("reserve_fences");

    static final LockScript INSPECT = loadWithOwner("inspect");
}
