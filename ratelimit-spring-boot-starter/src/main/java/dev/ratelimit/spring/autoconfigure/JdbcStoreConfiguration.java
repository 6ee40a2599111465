package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;

import javax.sql.DataSource;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.jdbc.JdbcRateLimitStore;
import dev.ratelimit.spring.RateLimitConfigurationException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.jdbc.metadata.CompositeDataSourcePoolMetadataProvider;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadata;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadataProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The PostgreSQL store over the application's {@link DataSource}, with {@code ratelimit.store=jdbc} or where
 * {@link StoreSelection} chooses it: the threads its asynchronous calls wait on, as many as the data source's pool
 * has connections, and the scheduler that deletes its idle rows.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(StoreSelection.Jdbc.class)
class JdbcStoreConfiguration {

	/** Threads for the asynchronous calls when the pool does not tell its size: HikariCP's default pool size. */
	static final int DEFAULT_THREADS = 10;

	private static final Log logger = LogFactory.getLog(RateLimitAutoConfiguration.class);

	private static final String POOL_METADATA = "org.springframework.boot.jdbc.metadata.DataSourcePoolMetadataProvider";

	@Bean
	@ConditionalOnMissingBean
	JdbcStoreThreads rateLimitJdbcThreads(ObjectProvider<DataSource> dataSource, ListableBeanFactory beans) {
		DataSource available = dataSource.getIfUnique();
		Integer max = (available != null && ClassUtils.isPresent(POOL_METADATA, getClass().getClassLoader()))
				? PoolSize.max(available, beans) : null;
		return new JdbcStoreThreads((max != null && max > 0) ? max : DEFAULT_THREADS);
	}

	@Bean
	@ConditionalOnMissingBean(RateLimitStore.class)
	JdbcRateLimitStore rateLimitStore(RateLimitProperties properties, ObjectProvider<DataSource> dataSource,
			TimeSource timeSource, JdbcStoreThreads threads, Environment environment,
			ConfigurableListableBeanFactory beans) {
		DataSource database = dataSource.getIfUnique();
		if (database == null) {
			throw new RateLimitConfigurationException(
					"ratelimit.store is jdbc, but there is no DataSource: the PostgreSQL store keeps its state in the "
							+ "application's database, and none or several DataSource beans are defined.",
					"Let Spring Boot connect (spring-boot-starter-jdbc, the PostgreSQL driver and spring.datasource.*), "
							+ "define one DataSource bean (or mark one @Primary), or set ratelimit.store=memory.");
		}
		RateLimitProperties.Jdbc jdbc = properties.getJdbc();
		Duration cleanupInterval = jdbc.getCleanupInterval();
		if (cleanupInterval == null || cleanupInterval.isNegative()) {
			throw invalid("ratelimit.jdbc.cleanup-interval", "must be zero or positive, was " + cleanupInterval);
		}
		JdbcRateLimitStore.Builder builder = JdbcRateLimitStore.builder(database).createSchema(jdbc.isCreateSchema());
		try {
			builder.tableName(jdbc.getTableName());
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw invalid("ratelimit.jdbc.table-name", ex.getMessage());
		}
		try {
			builder.keyPrefix(jdbc.getKeyPrefix());
		}
		catch (NullPointerException ex) {
			throw invalid("ratelimit.jdbc.key-prefix", ex.getMessage());
		}
		try {
			builder.timeout(jdbc.getTimeout());
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw invalid("ratelimit.jdbc.timeout", ex.getMessage());
		}
		builder.failurePolicy(jdbc.getFailurePolicy());
		try {
			builder.inFlightLease(jdbc.getInFlightLease());
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw invalid("ratelimit.jdbc.in-flight-lease", ex.getMessage());
		}
		if (timeSource instanceof ManualTimeSource manual) {
			// the test kit's clock: a test moves it, so the database's own must not decide
			CallersClock clock = new CallersClock(manual);
			builder.timeSource(clock).executor(clock.asking(threads.decisions()));
		}
		else {
			builder.executor(threads.decisions());
		}
		JdbcRateLimitStore store = builder.build();
		threads.cleanEvery(cleanupInterval, store);
		String automatic = StoreSelection.automaticJdbc(environment, beans);
		logger.info("Rate limits are kept in PostgreSQL, table " + jdbc.getTableName()
				+ (jdbc.getKeyPrefix().isEmpty() ? "" : ", keys prefixed '" + jdbc.getKeyPrefix() + "'")
				+ ((automatic != null) ? " (" + automatic + ")" : "") + "; the " + jdbc.getFailurePolicy()
				+ " failure policy decides calls that take over " + jdbc.getTimeout() + "; asynchronous decisions wait on up to "
				+ threads.threads() + " threads; "
				+ (cleanupInterval.isZero() ? "idle rows are kept (ratelimit.jdbc.cleanup-interval is 0)"
						: "idle rows are deleted every " + cleanupInterval));
		return store;
	}

	private static RateLimitConfigurationException invalid(String property, @Nullable String message) {
		return new RateLimitConfigurationException("Invalid " + property + ": " + message,
				"Update " + property + " in your application's configuration.");
	}

	/** The most connections of the data source's pool, as Spring Boot's pool metadata tells it. */
	private static final class PoolSize {

		static @Nullable Integer max(DataSource dataSource, ListableBeanFactory beans) {
			try {
				DataSourcePoolMetadata metadata = new CompositeDataSourcePoolMetadataProvider(
						beans.getBeanProvider(DataSourcePoolMetadataProvider.class).orderedStream().toList())
					.getDataSourcePoolMetadata(dataSource);
				return (metadata != null) ? metadata.getMax() : null;
			}
			catch (RuntimeException ex) {
				return null;
			}
		}

	}

}
