package dev.ratelimit.spring.redis;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.JedisPoolConfig;

import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the executor's own Jedis client is configured from the application's.
 */
class JedisClientsTests {

	@Test
	void boundsEveryWaitByTheRateLimitersTimeoutWhateverTheApplicationConfigured() {
		JedisPoolConfig applicationPool = new JedisPoolConfig();
		applicationPool.setMaxWait(Duration.ofMinutes(1));
		JedisClientConfiguration client = JedisClientConfiguration.builder()
			.connectTimeout(Duration.ofMinutes(1))
			.readTimeout(Duration.ofMinutes(1))
			.customize((builder) -> builder.timeoutMillis(60_000))
			.usePooling()
			.poolConfig(applicationPool)
			.build();
		DefaultJedisClientConfig config = JedisClients.config(client, 150, null, RedisPassword.none(), 0);
		ConnectionPoolConfig pool = JedisClients.pool(client, Duration.ofMillis(150), 8);
		assertThat(config.getConnectionTimeoutMillis()).isEqualTo(150);
		assertThat(config.getSocketTimeoutMillis()).isEqualTo(150);
		assertThat(pool.getMaxWaitDuration()).isEqualTo(Duration.ofMillis(150));
		assertThat(pool.getBlockWhenExhausted()).isTrue();
	}

	@Test
	void keepsTheApplicationsCredentialsDatabaseAndName() {
		JedisClientConfiguration client = JedisClientConfiguration.builder().clientName("orders").build();
		DefaultJedisClientConfig config = JedisClients.config(client, 100, "app", RedisPassword.of("secret"), 3);
		assertThat(config.getUser()).isEqualTo("app");
		assertThat(config.getPassword()).isEqualTo("secret");
		assertThat(config.getDatabase()).isEqualTo(3);
		assertThat(config.getClientName()).isEqualTo("orders");
		assertThat(config.isSsl()).isFalse();
	}

	@Test
	void keepsEveryConnectionOfThePoolSizeItIsGivenIdle() {
		JedisPoolConfig applicationPool = new JedisPoolConfig();
		applicationPool.setMaxTotal(32);
		applicationPool.setMaxIdle(16);
		applicationPool.setMinIdle(2);
		JedisClientConfiguration client = JedisClientConfiguration.builder()
			.usePooling()
			.poolConfig(applicationPool)
			.build();
		ConnectionPoolConfig pool = JedisClients.pool(client, Duration.ofMillis(100), 200);
		assertThat(pool.getMaxTotal()).isEqualTo(200);
		assertThat(pool.getMaxIdle()).isEqualTo(200);
		assertThat(pool.getMinIdle()).isEqualTo(2);
	}

	@Test
	void usesTls() {
		JedisClientConfiguration client = JedisClientConfiguration.builder().useSsl().build();
		assertThat(JedisClients.config(client, 100, null, RedisPassword.none(), 0).isSsl()).isTrue();
	}

}
