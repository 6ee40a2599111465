package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.testing.FleetScenario;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

/**
 * The fleet of three stores on one real Redis, each instance on a client of its own opened as the starter
 * opens it for an application with Spring Boot's default Redis settings, through each of the starter's
 * executors. Together they admit exactly what one store admits.
 */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ExecutorFleetIT {


	private static final Duration TEN_SECONDS = Duration.ofSeconds(10);

	private static final int REPETITIONS = 20;

	private final Map<Executor, FleetScenario> fleets = new EnumMap<>(Executor.class);

	private TestRedis redis;

	/** The starter's executors, each opened on the connection factory Spring Boot would configure. */
	enum Executor {

		SPRING_DATA_REDIS_ON_LETTUCE {

			@Override
			FleetScenario.Client open(TestRedis redis) {
				AbstractScriptExecutorIT.Connection connection = SpringDataRedisScriptExecutorIT
					.open(AbstractScriptExecutorIT.standalone(redis));
				return new FleetScenario.Client(connection.executor(), connection);
			}

		},

		JEDIS {

			@Override
			FleetScenario.Client open(TestRedis redis) {
				// the pool the starter sizes by default for Tomcat's 200 request threads
				JedisScriptExecutor executor = new JedisScriptExecutor(
						new JedisConnectionFactory(AbstractScriptExecutorIT.standalone(redis)), FleetScenario.TIMEOUT, 200);
				return new FleetScenario.Client(executor, executor);
			}

		};

		/** Opens one instance's client, with connections of its own. */
		abstract FleetScenario.Client open(TestRedis redis);

	}

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@AfterAll
	void stopFleets() {
		this.fleets.values().forEach(FleetScenario::close);
	}

	private FleetScenario fleet(Executor executor) {
		return this.fleets.computeIfAbsent(executor,
				(kind) -> new FleetScenario(this.redis, () -> kind.open(this.redis), FleetScenario.TIMEOUT));
	}

	static Stream<Arguments> everyAlgorithmOnEveryExecutor() {
		return Arrays.stream(Executor.values())
			.flatMap((executor) -> Arrays.stream(Algorithm.values())
				.map((algorithm) -> Arguments.of(executor, algorithm)));
	}

	@ParameterizedTest
	@MethodSource("everyAlgorithmOnEveryExecutor")
	void admitsExactlyTheLimitAcrossTheFleet(Executor executor, Algorithm algorithm) {
		fleet(executor).run(List.of(RateLimitPolicy.of("fleet", algorithm, 10, TEN_SECONDS)), 300, REPETITIONS);
	}

	@ParameterizedTest
	@EnumSource(Executor.class)
	void admitsExactlyAHundredOfThreeThousandAcrossTheFleet(Executor executor) {
		fleet(executor).run(List.of(RateLimitPolicy.of("fleet", Algorithm.SLIDING_LOG, 100, TEN_SECONDS)), 3000,
				REPETITIONS);
	}

	@ParameterizedTest
	@EnumSource(Executor.class)
	void admitsExactlyTheTightestOfStackedLimitsAcrossTheFleet(Executor executor) {
		fleet(executor).run(List.of(RateLimitPolicy.of("burst", Algorithm.GCRA, 10, TEN_SECONDS),
				RateLimitPolicy.of("window", Algorithm.SLIDING_WINDOW_COUNTER, 20, TEN_SECONDS)), 300, REPETITIONS);
	}

}
