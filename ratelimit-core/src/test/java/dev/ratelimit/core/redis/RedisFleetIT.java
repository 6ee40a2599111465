package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.testing.FleetScenario;
import dev.ratelimit.core.testing.LettuceScriptExecutor;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

/**
 * Three stores on one real Redis, each on a Lettuce client of its own, admit together exactly what one store
 * admits, under a burst of 60 threads released at once, warm, newly opened and unwarmed; and reserve exactly
 * what one store reserves for requests that wait.
 */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RedisFleetIT {

	private static final Duration TEN_SECONDS = Duration.ofSeconds(10);

	private static final int REPETITIONS = 20;

	private FleetScenario fleet;

	@BeforeEach
	void startFleet(TestRedis redis) {
		if (this.fleet == null) {
			this.fleet = new FleetScenario(redis, () -> {
				LettuceScriptExecutor executor = LettuceScriptExecutor.standalone(redis.uri());
				return new FleetScenario.Client(executor, executor);
			}, FleetScenario.TIMEOUT);
		}
	}

	@AfterAll
	void stopFleet() {
		if (this.fleet != null) {
			this.fleet.close();
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void admitsExactlyTheLimitAcrossTheFleet(Algorithm algorithm) {
		this.fleet.run(List.of(RateLimitPolicy.of("fleet", algorithm, 10, TEN_SECONDS)), 300, REPETITIONS);
	}

	/** Requests that may wait a window: the burst, then a window's permits reserved, and not one more. */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "GCRA", "TOKEN_BUCKET" })
	void reservesExactlyAWindowPastTheBurstAcrossTheFleet(Algorithm algorithm) {
		this.fleet.run(List.of(RateLimitPolicy.of("fleet", algorithm, 10, TEN_SECONDS).withMaxWait(TEN_SECONDS)),
				300, REPETITIONS);
	}

	@Test
	void admitsExactlyAHundredOfThreeThousandAcrossTheFleet() {
		this.fleet.run(List.of(RateLimitPolicy.of("fleet", Algorithm.SLIDING_LOG, 100, TEN_SECONDS)), 3000,
				REPETITIONS);
	}

	@Test
	void admitsExactlyTheTightestOfStackedLimitsAcrossTheFleet() {
		this.fleet.run(List.of(RateLimitPolicy.of("burst", Algorithm.GCRA, 10, TEN_SECONDS),
				RateLimitPolicy.of("window", Algorithm.SLIDING_WINDOW_COUNTER, 20, TEN_SECONDS)), 300, REPETITIONS);
	}

}
