package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.spring.LimitResolver;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.actuate.RateLimitHealthIndicator;
import dev.ratelimit.spring.changes.internal.PolicyChanges;
import dev.ratelimit.spring.method.internal.LimitedMethodsPostProcessor;
import dev.ratelimit.spring.observability.internal.DecisionObserver;
import dev.ratelimit.spring.observability.internal.MicrometerRateLimitMetrics;
import dev.ratelimit.spring.observability.internal.NearLimit;
import dev.ratelimit.spring.observability.internal.ObservedDecisions;
import dev.ratelimit.spring.observability.internal.PolicyPlans;
import dev.ratelimit.spring.observability.internal.RateLimitMetrics;
import dev.ratelimit.spring.redis.JedisScriptExecutor;
import dev.ratelimit.spring.redis.SpringDataRedisScriptExecutor;
import dev.ratelimit.spring.server.internal.OriginCustomizer;
import dev.ratelimit.spring.server.internal.OriginValve;
import dev.ratelimit.spring.web.internal.ClientAddresses;
import dev.ratelimit.spring.web.internal.ClientLimits;
import dev.ratelimit.spring.web.internal.LimitSettings;
import dev.ratelimit.spring.web.internal.Networks;
import dev.ratelimit.spring.web.internal.RequestDecisions;
import dev.ratelimit.spring.web.internal.ShadowLog;
import dev.ratelimit.spring.web.internal.UnresolvedKeys;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.observation.ObservationRegistry;
import org.apache.catalina.Valve;
import org.apache.catalina.valves.ValveBase;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnNotWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jetty.JettyWebServerFactory;
import org.springframework.boot.tomcat.TomcatWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;

/**
 * Auto-configuration of the {@link RateLimitStore}: in memory by default, in Redis with
 * {@code ratelimit.store=redis} through the application's Spring Data Redis connection, in PostgreSQL with
 * {@code ratelimit.store=jdbc} through the application's {@code DataSource}, which is also the default where that
 * data source is PostgreSQL's and there is no Redis connection; with Micrometer,
 * decision metrics; with an {@code ObservationRegistry}, an observation of each decision; and, with Spring
 * Boot's health module, the {@code ratelimit} health contributor. On a {@link JedisConnectionFactory} each
 * decision runs on the request's thread through a {@link JedisScriptExecutor}; on Lettuce, asynchronously
 * through a {@link SpringDataRedisScriptExecutor}.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@EnableConfigurationProperties(RateLimitProperties.class)
@Import(JdbcStoreConfiguration.class)
public final class RateLimitAutoConfiguration {

	/**
	 * Name of the {@link ScheduledExecutorService} that releases the requests a leaky bucket holds until their
	 * slot, on either web stack. A bean of this name replaces the auto-configured one; the auto-configured one is
	 * no candidate for injection by type, so that it never stands in for the application's own schedulers.
	 */
	public static final String SHAPING_SCHEDULER_BEAN_NAME = "rateLimitShapingScheduler";

	private static final String REDIS_CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

	@Bean
	@ConditionalOnMissingBean
	LimitSettings rateLimitSettings(RateLimitProperties properties, Environment environment) {
		// first, as a misspelt field would otherwise be read as part of a policy's name
		UnknownProperties.check(environment);
		return PropertiesLimitSettings.of(properties, PolicyOverrides.bind(environment));
	}

	@Bean
	@ConditionalOnMissingBean
	PolicyPlans rateLimitPolicyPlans() {
		return new PolicyPlans();
	}

	@Bean
	@ConditionalOnMissingBean
	TimeSource rateLimitTimeSource() {
		return TimeSource.system();
	}

	/**
	 * Tells the metrics and the observation of each decision that the store's failure policy made, on a store
	 * that has one, whichever store it is.
	 */
	@Bean
	StoreFailureReport rateLimitStoreFailureReport(ObjectProvider<RateLimitStore> store,
			ObjectProvider<RateLimitMetrics> metrics, ObjectProvider<DecisionObserver> observer) {
		StoreFailureReport report = new StoreFailureReport(metrics.getIfAvailable(() -> RateLimitMetrics.NONE),
				observer);
		store.ifAvailable((available) -> available.failures().ifPresent((failures) -> failures.addListener(report)));
		return report;
	}

	/**
	 * The store's name in metrics, observations, health and the endpoint: {@code memory}, {@code redis} or
	 * {@code jdbc}, which a PostgreSQL data source may have chosen without {@code ratelimit.store}.
	 */
	static String storeName(RateLimitProperties properties, Environment environment,
			ConfigurableListableBeanFactory beans) {
		return (StoreSelection.automaticJdbc(environment, beans) != null) ? "jdbc"
				: properties.getStore().name().toLowerCase(Locale.ROOT);
	}

	static InMemoryRateLimitStore inMemoryStore(RateLimitProperties properties, TimeSource timeSource) {
		try {
			return InMemoryRateLimitStore.builder().timeSource(timeSource).maxKeys(properties.getMaxKeys()).build();
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException("Invalid ratelimit.max-keys: " + ex.getMessage(),
					"Update ratelimit.max-keys in your application's configuration.");
		}
	}

	@Configuration(proxyBeanMethods = false)
	@Conditional(StoreSelection.Memory.class)
	static class InMemoryStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(RateLimitStore.class)
		InMemoryRateLimitStore rateLimitStore(RateLimitProperties properties, TimeSource timeSource) {
			return inMemoryStore(properties, timeSource);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "ratelimit.store", havingValue = "redis")
	@ConditionalOnClass(name = REDIS_CONNECTION_FACTORY)
	static class RedisStoreConfiguration {

		private static final Log logger = LogFactory.getLog(RateLimitAutoConfiguration.class);

		private static final String JEDIS = "redis.clients.jedis.UnifiedJedis";

		private static final String LETTUCE = "io.lettuce.core.RedisClient";

		@Bean
		@ConditionalOnMissingBean
		RedisScriptExecutor rateLimitRedisScriptExecutor(RateLimitProperties properties, Environment environment,
				ObjectProvider<RedisConnectionFactory> connectionFactory,
				ObjectProvider<ReactiveRedisConnectionFactory> reactiveConnectionFactory) {
			RedisConnectionFactory connections = connectionFactory.getIfUnique();
			ClassLoader classLoader = RedisStoreConfiguration.class.getClassLoader();
			if (ClassUtils.isPresent(JEDIS, classLoader) && connections instanceof JedisConnectionFactory jedis) {
				return jedisExecutor(properties.getRedis(), environment, jedis, classLoader);
			}
			ReactiveRedisConnectionFactory reactive = reactiveConnectionFactory.getIfUnique();
			if (reactive == null) {
				throw new RateLimitConfigurationException(
						"ratelimit.store is redis, but there is no Redis connection: neither a JedisConnectionFactory nor a ReactiveRedisConnectionFactory bean is defined.",
						"Let Spring Boot connect (spring-boot-starter-data-redis and spring.data.redis.*), define a RedisScriptExecutor bean, or set ratelimit.store=memory.");
			}
			return new SpringDataRedisScriptExecutor(reactive);
		}

		private static JedisScriptExecutor jedisExecutor(RateLimitProperties.Redis redis, Environment environment,
				JedisConnectionFactory jedis, @Nullable ClassLoader classLoader) {
			JedisPoolSize pool = JedisPoolSize.of(redis, environment, jedis, classLoader);
			JedisScriptExecutor executor;
			try {
				executor = new JedisScriptExecutor(jedis, maxWait(redis), pool.size());
			}
			catch (IllegalArgumentException | NullPointerException ex) {
				// the executor checks both; its message names the argument at fault
				String property = String.valueOf(ex.getMessage()).startsWith("poolSize") ? JedisPoolSize.PROPERTY
						: (redis.getMaxWait() != null) ? "ratelimit.redis.max-wait" : "ratelimit.redis.timeout";
				throw invalid(property, ex);
			}
			if (pool.warning() != null) {
				logger.warn(pool.warning());
			}
			return executor;
		}

		@Bean
		@ConditionalOnMissingBean(RateLimitStore.class)
		RedisRateLimitStore rateLimitStore(RateLimitProperties properties, TimeSource timeSource,
				RedisScriptExecutor executor, ObjectProvider<RedisRateLimitStoreBuilderCustomizer> customizers,
				ObjectProvider<RedisConnectionFactory> connectionFactory) {
			RateLimitProperties.Redis redis = properties.getRedis();
			RedisRateLimitStore.Builder builder = RedisRateLimitStore.builder(executor)
				.failurePolicy(redis.getFailurePolicy())
				.localDenials(redis.isLocalDenials())
				.fallback(inMemoryStore(properties, timeSource))
				.cluster(cluster(connectionFactory.getIfUnique()));
			configured("ratelimit.redis.key-prefix", () -> builder.keyPrefix(redis.getKeyPrefix()));
			configured("ratelimit.redis.timeout", () -> builder.timeout(redis.getTimeout()));
			configured("ratelimit.redis.in-flight-lease", () -> builder.inFlightLease(redis.getInFlightLease()));
			Duration maxWait = redis.getMaxWait();
			if (maxWait != null) {
				configured("ratelimit.redis.max-wait", () -> builder.maxWait(maxWait));
			}
			customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
			// a maximum wait shorter than the timeout is refused when the store is built
			return configured("ratelimit.redis.max-wait", builder::build);
		}

		/**
		 * Subscribes to the fleet's channel on the application's connection, so that a reset or a change made on
		 * another instance applies here at once; the heartbeat is the fallback while the subscription is down.
		 */
		@Bean
		@ConditionalOnBean({ RedisConnectionFactory.class, RedisRateLimitStore.class })
		FleetSubscription rateLimitFleetSubscription(RedisConnectionFactory connectionFactory,
				RedisRateLimitStore store) {
			return new FleetSubscription(connectionFactory, store);
		}

		/**
		 * Stops the start when the Redis store would decide on a client that blocks its caller in a reactive
		 * application: WebFlux decides on an event loop, which must never wait for Redis.
		 */
		@Bean
		@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
		InitializingBean rateLimitNonBlockingStore(ObjectProvider<RedisScriptExecutor> executors) {
			return () -> executors.ifAvailable((executor) -> {
				if (executor instanceof JedisScriptExecutor) {
					throw new RateLimitConfigurationException(
							"ratelimit.store is redis on Jedis, whose calls block the calling thread, and this is a "
									+ "reactive (Spring WebFlux) application, whose event loops must never block.",
							"Use Lettuce, Spring Data Redis' default client: remove redis.clients:jedis from the "
									+ "application, or define a RedisScriptExecutor bean that does not block.");
				}
			});
		}

		/** How long a request waits for Redis' reply: the property, or the store's default for the timeout. */
		private static Duration maxWait(RateLimitProperties.Redis redis) {
			Duration maxWait = redis.getMaxWait();
			return (maxWait != null) ? maxWait : RedisRateLimitStore.defaultMaxWait(redis.getTimeout());
		}

		/** Whether the application's connection reaches a Redis Cluster, where a stack over several keys spans slots. */
		private static boolean cluster(@Nullable RedisConnectionFactory connections) {
			ClassLoader classLoader = RedisStoreConfiguration.class.getClassLoader();
			if (ClassUtils.isPresent(JEDIS, classLoader) && connections instanceof JedisConnectionFactory jedis) {
				return jedis.isRedisClusterAware();
			}
			return ClassUtils.isPresent(LETTUCE, classLoader) && connections instanceof LettuceConnectionFactory lettuce
					&& lettuce.isClusterAware();
		}

		private static <T> T configured(String property, Supplier<T> configuration) {
			try {
				return configuration.get();
			}
			catch (IllegalArgumentException | NullPointerException ex) {
				throw invalid(property, ex);
			}
		}

		private static RateLimitConfigurationException invalid(String property, RuntimeException ex) {
			return new RateLimitConfigurationException("Invalid " + property + ": " + ex.getMessage(),
					"Update " + property + " in your application's configuration.");
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "ratelimit.store", havingValue = "redis")
	@ConditionalOnMissingClass(REDIS_CONNECTION_FACTORY)
	static class MissingRedisConfiguration {

		@Bean
		@ConditionalOnMissingBean(RateLimitStore.class)
		RateLimitStore rateLimitStore() {
			throw new RateLimitConfigurationException(
					"ratelimit.store is redis, but Spring Data Redis is not on the classpath.",
					"Add org.springframework.boot:spring-boot-starter-data-redis to the application, or set ratelimit.store=memory.");
		}

	}

	/**
	 * The path every decision takes, with Spring's web types on the class path: the client addresses past the
	 * trusted proxies, the policies changed at runtime, the decision of a request or a call, the catalog of the
	 * limits and the limiters of code, and the limits of bean methods.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HandlerMethod.class)
	@Import(LimitCatalogConfiguration.class)
	static class DecisionConfiguration {

		/** The limits of bean methods, unless {@code ratelimit.enabled} turns every limit off. */
		@Configuration(proxyBeanMethods = false)
		@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
		static class MethodLimitsConfiguration {

			/**
			 * The proxies that limit the calls of bean methods declaring {@code @RateLimited}, of their class or of
			 * their interfaces as {@code spring.aop.proxy-target-class} says; static, as a post-processor must be.
			 */
			@Bean
			@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
			static LimitedMethodsPostProcessor rateLimitLimitedMethodsPostProcessor(Environment environment) {
				return new LimitedMethodsPostProcessor(
						environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true));
			}

		}

		@Bean
		@ConditionalOnMissingBean
		ClientAddresses rateLimitClientAddresses(RateLimitProperties properties) {
			return new ClientAddresses(Networks.parse("ratelimit.client-address.trusted-proxies",
					properties.getClientAddress().getTrustedProxies()));
		}

		@Bean
		@ConditionalOnMissingBean
		PolicyChanges rateLimitPolicyChanges(RateLimitStore store) {
			return new PolicyChanges(store);
		}

		@Bean
		@ConditionalOnMissingBean
		RequestDecisions rateLimitRequestDecisions(RateLimitStore store, ObjectProvider<RateLimitMetrics> metrics,
				RateLimitProperties properties, TimeSource timeSource, PolicyChanges changes,
				ObjectProvider<DecisionObserver> observer, ObjectProvider<ClientLimits> clientLimits) {
			return new RequestDecisions(store, metrics.getIfAvailable(() -> RateLimitMetrics.NONE),
					properties.getHeaders().isLegacy(), properties.isShadowHeaders(), new UnresolvedKeys(timeSource),
					new ShadowLog(timeSource), changes, observer.getIfAvailable(), clientLimits.getIfAvailable());
		}

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnSingleCandidate(LimitResolver.class)
		ClientLimits rateLimitClientLimits(LimitResolver resolver, RateLimitStore store, TimeSource timeSource,
				RateLimitProperties properties) {
			return new ClientLimits(resolver, store, timeSource, properties.getLimitResolverTtl(),
					properties.getMaxKeys());
		}

	}

	/**
	 * In an application that serves no web requests, the line that says its controllers' declarations limit
	 * nothing.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnNotWebApplication
	static class NonWebConfiguration {

		@Bean
		UnservedDeclarations rateLimitUnservedDeclarations(ListableBeanFactory beanFactory) {
			return new UnservedDeclarations(beanFactory);
		}

	}

	/**
	 * What every web stack's rate limiting shares: the scheduler that releases held requests, and the record of a
	 * connection's origin on Tomcat and Jetty.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication
	static class WebConfiguration {

		@Bean(name = SHAPING_SCHEDULER_BEAN_NAME, defaultCandidate = false, destroyMethod = "shutdownNow")
		@ConditionalOnMissingBean(name = SHAPING_SCHEDULER_BEAN_NAME)
		ScheduledThreadPoolExecutor rateLimitShapingScheduler() {
			CustomizableThreadFactory threads = new CustomizableThreadFactory("ratelimit-shaping-");
			threads.setDaemon(true);
			// a release only hands the request back to the server, so one thread serves any number of them
			ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, threads);
			scheduler.setRemoveOnCancelPolicy(true);
			scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
			return scheduler;
		}

		/**
		 * On Tomcat, for either web stack, the valve that records the socket peer and the forwarding headers as
		 * received, before {@code RemoteIpValve} rewrites them.
		 */
		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass({ TomcatWebServerFactory.class, ValveBase.class })
		static class TomcatOriginConfiguration {

			@Bean
			WebServerFactoryCustomizer<TomcatWebServerFactory> rateLimitOriginValveCustomizer() {
				return (factory) -> {
					List<Valve> valves = new ArrayList<>();
					valves.add(new OriginValve());
					valves.addAll(factory.getEngineValves());
					factory.setEngineValves(valves);
				};
			}

		}

		/**
		 * On Jetty, for either web stack, the request customizer that records the socket peer and the forwarding
		 * headers as received, before {@code ForwardedRequestCustomizer} rewrites them.
		 */
		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass({ JettyWebServerFactory.class, HttpConfiguration.class })
		static class JettyOriginConfiguration {

			@Bean
			WebServerFactoryCustomizer<JettyWebServerFactory> rateLimitOriginCustomizer() {
				return (factory) -> factory.addServerCustomizers(OriginCustomizer::installOn);
			}

		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HealthIndicator.class)
	@ConditionalOnEnabledHealthIndicator("ratelimit")
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "ratelimitHealthContributor")
		RateLimitHealthIndicator ratelimitHealthContributor(RateLimitStore store, RateLimitProperties properties,
				Environment environment, ConfigurableListableBeanFactory beans) {
			return new RateLimitHealthIndicator(store, storeName(properties, environment, beans),
					properties.getHealth().isDownWhenFailing());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(ObservationRegistry.class)
	static class ObservationConfiguration {

		@Bean
		@ConditionalOnBean(ObservationRegistry.class)
		@ConditionalOnMissingBean
		ObservedDecisions rateLimitDecisionObserver(ObservationRegistry registry, RateLimitProperties properties,
				Environment environment, ConfigurableListableBeanFactory beans) {
			return new ObservedDecisions(registry, storeName(properties, environment, beans));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		MicrometerRateLimitMetrics rateLimitMetrics(ObjectProvider<MeterRegistry> registries,
				RateLimitProperties properties, PolicyPlans policyPlans, Environment environment,
				ConfigurableListableBeanFactory beans) {
			return new MicrometerRateLimitMetrics(registries, storeName(properties, environment, beans), policyPlans,
					NearLimit.of(properties.getNearLimitShare()));
		}

		/**
		 * {@code ratelimit.store.failing}: 1 while the store's failure policy decides requests, and
		 * {@code ratelimit.store.failing.duration}: since how long, on a store that has one; and
		 * {@code ratelimit.fleet.instances}: how many instances share its quotas, on a store shared by a fleet.
		 */
		@Bean
		MeterBinder rateLimitStoreFailingMetrics(ObjectProvider<RateLimitStore> store) {
			return (registry) -> store.ifAvailable((available) -> {
				available.failures().ifPresent((failures) -> {
					Gauge.builder("ratelimit.store.failing", failures, (each) -> each.status().failing() ? 1 : 0)
						.description("Whether Redis is failing and the failure policy decides requests")
						.register(registry);
					TimeGauge.builder("ratelimit.store.failing.duration", failures, TimeUnit.MILLISECONDS,
							(each) -> failingMillis(each.status()))
						.description("How long the failure policy has been deciding requests, 0 while Redis decides")
						.register(registry);
				});
				available.fleet()
					.ifPresent((fleet) -> Gauge.builder("ratelimit.fleet.instances", fleet, RateLimitStore.Fleet::size)
						.description("Instances sharing the Redis store's quotas, as the last heartbeat counted them")
						.register(registry));
			});
		}

		private static double failingMillis(FailureStatus status) {
			Duration failingFor = status.failingFor();
			return (failingFor != null) ? failingFor.toMillis() : 0;
		}

	}

}
