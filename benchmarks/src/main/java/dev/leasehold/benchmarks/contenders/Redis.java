package dev.leasehold.benchmarks.contenders;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.TimeoutOptions;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Where the benchmark's own redis-server listens (always loopback). */
public record Redis(String host, int port) {

    public String url() {
        return "redis://" + host + ":" + port;
    }

    /** A fresh Spring Data Redis factory on Lettuce with default settings, as an application would have. */
    public LettuceConnectionFactory newConnectionFactory() {
        LettuceClientConfiguration client = LettuceClientConfiguration.builder()
            .clientOptions(ClientOptions.builder().timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(10))).build())
            .build();
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port), client);
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /**
     * A fresh Spring Data Redis factory on Jedis, as Spring Boot builds it for
     * {@code spring.data.redis.client-type=jedis}: pooled (8 connections), 10 s read timeout.
     */
    public JedisConnectionFactory newJedisConnectionFactory() {
        JedisClientConfiguration client = JedisClientConfiguration.builder()
            .readTimeout(Duration.ofSeconds(10))
            .usePooling()
            .build();
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration(host, port), client);
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }
}
