package dev.leasehold.autoconfigure;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/** The application's Redis connection factory is not one Leasehold can lock on. */
public class UnsupportedConnectionFactoryException extends IllegalStateException {

    private final String factoryType;

    UnsupportedConnectionFactoryException(RedisConnectionFactory connectionFactory) {
        super("Leasehold needs the Lettuce Redis client (Spring Boot's default), but the RedisConnectionFactory is a "
                + connectionFactory.getClass().getName());
        this.factoryType = connectionFactory.getClass().getName();
    }

    public String getFactoryType() {
        return factoryType;
    }
}
