package dev.leasehold.engine.redis;

import java.nio.charset.StandardCharsets;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/** A Lua script of the protocol, loaded from its {@code .lua} resource, with its SHA-1 for EVALSHA. */
record LockScript(String name, String sha1, byte[] body) {

    static LockScript load(String name) {
        RedisScript<Object> script = RedisScript.of(new ClassPathResource(name + ".lua", LockScript.class));
        return new LockScript(name, script.getSha1(), script.getScriptAsString().getBytes(StandardCharsets.UTF_8));
    }

    /** The same script as Spring Data Redis's {@link RedisScript}, for {@code RedisTemplate.execute}. */
    <T> RedisScript<T> as(Class<T> resultType) {
        return RedisScript.of(new String(body, StandardCharsets.UTF_8), resultType);
    }

    static final LockScript ACQUIRE_EXCLUSIVE = load("acquire_exclusive");

    static final LockScript ACQUIRE_SHARED = load("acquire_shared");

    static final LockScript RELEASE_EXCLUSIVE = load("release_exclusive");

    static final LockScript RELEASE_SHARED = load("release_shared");

    static final LockScript RENEW_EXCLUSIVE = load("renew_exclusive");

    static final LockScript RENEW_SHARED = load("renew_shared");

    static final LockScript IS_LOCKED = load("is_locked");

    static final LockScript RAISE_FENCE = load("raise_fence");

    static final LockScript WITHDRAW_WRITER = load("withdraw_writer");

    static final LockScript INSPECT = load("inspect");
}
