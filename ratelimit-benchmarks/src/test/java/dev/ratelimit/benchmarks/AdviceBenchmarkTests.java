package dev.ratelimit.benchmarks;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Checks that every contender of {@link AdviceBenchmark} limits the method it measures: with a limit of one, the
 * first call answers and the second is refused.
 */
class AdviceBenchmarkTests {

	@ParameterizedTest
	@ValueSource(strings = { "bare", "ratelimit-argument", "ratelimit-global", "resilience4j-bare", "resilience4j" })
	void limitsTheMethodItMeasures(String contender) {
		AdviceBenchmark benchmark = new AdviceBenchmark();
		benchmark.contender = contender;
		benchmark.limit = 1;
		benchmark.setUp();
		try {
			assertThat(benchmark.oneThread()).isEqualTo("customer-42");
			Throwable refused = catchThrowable(benchmark::oneThread);
			if (contender.equals("bare")) {
				assertThat(benchmark.oneThread()).isEqualTo("denied");
			}
			else {
				assertThat(refused).as("the second call's refusal")
					.hasMessageContaining(contender.startsWith("ratelimit") ? "Rate limit exceeded" : "quotes");
			}
		}
		finally {
			benchmark.tearDown();
		}
	}

}
