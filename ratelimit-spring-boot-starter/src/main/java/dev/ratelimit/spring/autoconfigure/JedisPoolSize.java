package dev.ratelimit.spring.autoconfigure;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.thread.Threading;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * The size of the Jedis executor's pool, which bounds how many decisions are in Redis at once, and why requests
 * may still find every connection in use: {@code ratelimit.redis.pool-size} if set, else as many connections as
 * the servlet container has request threads, or as the application's Jedis pool if that is larger.
 * @param size the pool size, which the executor checks
 * @param warning what to tell the application's operators at startup, if requests can exhaust the pool
 */
record JedisPoolSize(int size, @Nullable String warning) {

	static final String PROPERTY = "ratelimit.redis.pool-size";

	/** Spring Boot's default most request threads, for Tomcat and for Jetty alike. */
	private static final int DEFAULT_MAX_THREADS = 200;

	/** What happens once every connection is in use, for the warnings. */
	private static final String CONSEQUENCE = "a decision that finds every connection in use waits up to "
			+ "ratelimit.redis.max-wait for one, then the failure policy decides";

	static JedisPoolSize of(RateLimitProperties.Redis redis, Environment environment,
			JedisConnectionFactory connectionFactory, @Nullable ClassLoader classLoader) {
		RequestThreads threads = RequestThreads.of(environment, classLoader);
		Integer configured = redis.getPoolSize();
		int size = (configured != null) ? configured
				: Math.max(applicationPoolSize(connectionFactory.getClientConfiguration()),
						(threads != null) ? threads.max() : 0);
		if (Threading.VIRTUAL.isActive(environment)) {
			return new JedisPoolSize(size, "Requests run on virtual threads (spring.threads.virtual.enabled), any "
					+ "number of them at once, but the rate limiter's Jedis pool holds " + size + " connections ("
					+ PROPERTY + "): beyond " + size + " concurrent decisions, " + CONSEQUENCE + ". Set " + PROPERTY
					+ " for the most requests deciding at once, or use Lettuce, whose calls share one connection.");
		}
		if (threads != null && size < threads.max()) {
			return new JedisPoolSize(size,
					"The rate limiter's Jedis pool holds " + size + " connections (" + PROPERTY + "), but "
							+ threads.container() + " runs up to " + threads.max() + " requests at once ("
							+ threads.property() + "): beyond " + size + " concurrent decisions, " + CONSEQUENCE
							+ ". Set " + PROPERTY + " to " + threads.max() + " or more.");
		}
		return new JedisPoolSize(size, null);
	}

	/** The pool size the application gave Jedis, or Commons Pool's default, which Spring Data Redis uses. */
	private static int applicationPoolSize(JedisClientConfiguration client) {
		return client.getPoolConfig()
			.filter((pool) -> client.isUsePooling())
			.map((pool) -> pool.getMaxTotal())
			.filter((maxTotal) -> maxTotal > 0)
			.orElse(GenericObjectPoolConfig.DEFAULT_MAX_TOTAL);
	}

	/** The embedded servlet container's most request threads, as Spring Boot configures them. */
	private record RequestThreads(String container, String property, int max) {

		static @Nullable RequestThreads of(Environment environment, @Nullable ClassLoader classLoader) {
			if (ClassUtils.isPresent("org.apache.catalina.startup.Tomcat", classLoader)) {
				return of(environment, "Tomcat", "server.tomcat.threads.max");
			}
			if (ClassUtils.isPresent("org.eclipse.jetty.server.Server", classLoader)) {
				return of(environment, "Jetty", "server.jetty.threads.max");
			}
			return null;
		}

		private static RequestThreads of(Environment environment, String container, String property) {
			return new RequestThreads(container, property,
					environment.getProperty(property, Integer.class, DEFAULT_MAX_THREADS));
		}

	}

}
