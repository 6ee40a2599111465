package dev.ratelimit.spring.autoconfigure;

import java.util.Locale;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

/**
 * Which store {@code ratelimit.store} chooses, or, where it is unset, which the application's connections do:
 * the PostgreSQL store where a {@link DataSource} on PostgreSQL is defined and no Redis connection is, the
 * in-memory one otherwise. Read when beans are registered, once the data source and Redis auto-configurations
 * have defined theirs.
 */
final class StoreSelection {

	static final String PROPERTY = "ratelimit.store";

	private static final String DATASOURCE_URL = "spring.datasource.url";

	private static final String REDIS_CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

	private StoreSelection() {
	}

	/** Why the PostgreSQL store was chosen without {@code ratelimit.store}, or null if it was not. */
	static @Nullable String automaticJdbc(Environment environment, @Nullable ConfigurableListableBeanFactory beans) {
		if (environment.containsProperty(PROPERTY) || beans == null) {
			return null;
		}
		String url = environment.getProperty(DATASOURCE_URL);
		if (url == null || !url.regionMatches(true, 0, "jdbc:postgresql:", 0, "jdbc:postgresql:".length())) {
			return null;
		}
		if (beans.getBeanNamesForType(DataSource.class, true, false).length == 0) {
			return null;
		}
		ClassLoader classLoader = beans.getBeanClassLoader();
		if (ClassUtils.isPresent(REDIS_CONNECTION_FACTORY, classLoader) && beans
			.getBeanNamesForType(ClassUtils.resolveClassName(REDIS_CONNECTION_FACTORY, classLoader), true, false).length > 0) {
			return null;
		}
		return "ratelimit.store is unset, " + DATASOURCE_URL + " is PostgreSQL's and there is no Redis connection";
	}

	private static String explicit(Environment environment) {
		return environment.getProperty(PROPERTY, "").trim().toLowerCase(Locale.ROOT);
	}

	/** The PostgreSQL store: {@code ratelimit.store=jdbc}, or chosen by the application's connections. */
	static final class Jdbc extends SpringBootCondition implements ConfigurationCondition {

		@Override
		public ConfigurationPhase getConfigurationPhase() {
			return ConfigurationPhase.REGISTER_BEAN;
		}

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			Environment environment = context.getEnvironment();
			if ("jdbc".equals(explicit(environment))) {
				return ConditionOutcome.match("ratelimit.store is jdbc");
			}
			String automatic = automaticJdbc(environment, context.getBeanFactory());
			return (automatic != null) ? ConditionOutcome.match(automatic)
					: ConditionOutcome.noMatch("ratelimit.store is not jdbc, nor chosen by a PostgreSQL DataSource");
		}

	}

	/** The in-memory store: {@code ratelimit.store=memory}, or unset where the PostgreSQL store is not chosen. */
	static final class Memory extends SpringBootCondition implements ConfigurationCondition {

		@Override
		public ConfigurationPhase getConfigurationPhase() {
			return ConfigurationPhase.REGISTER_BEAN;
		}

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			Environment environment = context.getEnvironment();
			if (environment.containsProperty(PROPERTY)) {
				return "memory".equals(explicit(environment)) ? ConditionOutcome.match("ratelimit.store is memory")
						: ConditionOutcome.noMatch("ratelimit.store is " + explicit(environment));
			}
			return (automaticJdbc(environment, context.getBeanFactory()) == null)
					? ConditionOutcome.match("ratelimit.store is unset and no PostgreSQL DataSource chooses jdbc")
					: ConditionOutcome.noMatch("a PostgreSQL DataSource chooses jdbc");
		}

	}

}
