package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisSentineled;
import redis.clients.jedis.UnifiedJedis;

import org.springframework.data.redis.connection.NamedNode;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

/**
 * Builds a Jedis client for the same Redis as a {@link JedisConnectionFactory}, with the same credentials and
 * TLS, but with a pool of the rate limiter's size and every wait (connecting, reading a reply, borrowing from
 * the pool, following cluster redirections) bounded by the rate limiter's timeout rather than the
 * application's.
 */
final class JedisClients {

	/** Jedis' own default, which Spring Data Redis also applies. */
	private static final int DEFAULT_MAX_REDIRECTS = 5;

	private JedisClients() {
	}

	static UnifiedJedis create(JedisConnectionFactory connectionFactory, Duration timeout, int poolSize) {
		JedisClientConfiguration client = connectionFactory.getClientConfiguration();
		int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
		ConnectionPoolConfig pool = pool(client, timeout, poolSize);
		if (connectionFactory.isRedisClusterAware()) {
			RedisClusterConfiguration cluster = Objects.requireNonNull(connectionFactory.getClusterConfiguration());
			Integer redirects = cluster.getMaxRedirects();
			return new JedisCluster(hostsAndPorts(cluster.getClusterNodes()),
					config(client, millis, cluster.getUsername(), cluster.getPassword(), 0),
					(redirects != null) ? redirects : DEFAULT_MAX_REDIRECTS, timeout, pool);
		}
		if (connectionFactory.isRedisSentinelAware()) {
			RedisSentinelConfiguration sentinel = Objects.requireNonNull(connectionFactory.getSentinelConfiguration());
			NamedNode master = Objects.requireNonNull(sentinel.getMaster(), "the Sentinel master must be named");
			return new JedisSentineled(Objects.requireNonNull(master.getName()),
					config(client, millis, sentinel.getUsername(), sentinel.getPassword(), sentinel.getDatabase()), pool,
					hostsAndPorts(sentinel.getSentinels()),
					config(client, millis, sentinel.getSentinelUsername(), sentinel.getSentinelPassword(), 0));
		}
		RedisStandaloneConfiguration standalone = connectionFactory.getStandaloneConfiguration();
		return new JedisPooled(new HostAndPort(standalone.getHostName(), standalone.getPort()),
				config(client, millis, standalone.getUsername(), standalone.getPassword(), standalone.getDatabase()),
				pool);
	}

	static ConnectionPoolConfig pool(JedisClientConfiguration client, Duration timeout, int size) {
		ConnectionPoolConfig pool = new ConnectionPoolConfig();
		pool.setMaxTotal(size);
		// with Commons Pool's default of 8 idle connections, every burst would close the others and reopen them
		pool.setMaxIdle(size);
		if (client.isUsePooling()) {
			client.getPoolConfig().ifPresent((configured) -> pool.setMinIdle(Math.min(configured.getMinIdle(), size)));
		}
		// a caller waits, up to the timeout, for a connection another caller returns
		pool.setBlockWhenExhausted(true);
		pool.setMaxWait(timeout);
		return pool;
	}

	static DefaultJedisClientConfig config(JedisClientConfiguration client, int timeoutMillis,
			@Nullable String username, RedisPassword password, int database) {
		DefaultJedisClientConfig.Builder builder = DefaultJedisClientConfig.builder();
		client.getCustomizer().ifPresent((customizer) -> customizer.customize(builder));
		builder.connectionTimeoutMillis(timeoutMillis).socketTimeoutMillis(timeoutMillis).database(database);
		if (username != null) {
			builder.user(username);
		}
		password.toOptional().map(String::new).ifPresent(builder::password);
		client.getClientName().ifPresent(builder::clientName);
		if (client.isUseSsl()) {
			builder.ssl(true);
			client.getSslSocketFactory().ifPresent(builder::sslSocketFactory);
			client.getSslParameters().ifPresent(builder::sslParameters);
			client.getHostnameVerifier().ifPresent(builder::hostnameVerifier);
		}
		return builder.build();
	}

	private static Set<HostAndPort> hostsAndPorts(Set<RedisNode> nodes) {
		return nodes.stream()
			.map((node) -> new HostAndPort(Objects.requireNonNull(node.getHost()), node.getPortOr(6379)))
			.collect(Collectors.toSet());
	}

}
