package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.FleetScenario;
import dev.ratelimit.core.testing.StressScenario;

/**
 * The {@link StressScenario fleet under stress} on the starter's Jedis executor, whose calls block their thread
 * and whose every wait the maximum wait bounds, opened as the starter opens it: every fault, on GCRA and the
 * sliding log, the two ends of the algorithms' state sizes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class JedisFleetStressIT {

	private StressScenario scenario;

	@BeforeAll
	void startRedis() {
		this.scenario = new StressScenario((server) -> {
			JedisScriptExecutor executor = new JedisScriptExecutor(
					new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", server.port())),
					RedisRateLimitStore.defaultMaxWait(Duration.ofMillis(100)), 64);
			return new FleetScenario.Client(executor, executor);
		});
	}

	@AfterAll
	void stopRedis() {
		if (this.scenario != null) {
			this.scenario.close();
		}
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(StressScenario.Fault.class)
	void staysWithinItsBoundsThroughTheFaultOnGcra(StressScenario.Fault fault) {
		this.scenario.run(fault,
				RateLimitPolicy.of("stress", Algorithm.GCRA, StressScenario.LIMIT, Duration.ofHours(1)), "Jedis");
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(StressScenario.Fault.class)
	void staysWithinItsBoundsThroughTheFaultOnTheSlidingLog(StressScenario.Fault fault) {
		this.scenario.run(fault,
				RateLimitPolicy.of("stress", Algorithm.SLIDING_LOG, StressScenario.LIMIT, Duration.ofHours(1)),
				"Jedis");
	}

}
