package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.testing.FleetScenario;
import dev.ratelimit.core.testing.LettuceScriptExecutor;
import dev.ratelimit.core.testing.StressScenario;

/**
 * The {@link StressScenario fleet under stress}, each instance on a plain Lettuce client of its own: every fault,
 * every algorithm.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class RedisFleetStressIT {

	private StressScenario scenario;

	@BeforeAll
	void startRedis() {
		this.scenario = new StressScenario((server) -> {
			LettuceScriptExecutor executor = LettuceScriptExecutor.standalone(server.uri());
			return new FleetScenario.Client(executor, executor);
		});
	}

	@AfterAll
	void stopRedis() {
		if (this.scenario != null) {
			this.scenario.close();
		}
	}

	static Stream<Arguments> cases() {
		return Stream.of(StressScenario.Fault.values())
			.flatMap((fault) -> Stream.of(Algorithm.values()).map((algorithm) -> Arguments.of(fault, algorithm)));
	}

	@ParameterizedTest(name = "{0}, {1}")
	@MethodSource("cases")
	void staysWithinItsBoundsThroughTheFault(StressScenario.Fault fault, Algorithm algorithm) {
		this.scenario.run(fault,
				RateLimitPolicy.of("stress", algorithm, StressScenario.LIMIT, Duration.ofHours(1)), "Lettuce");
	}

}
