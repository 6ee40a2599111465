package dev.ratelimit.core.memory;

import java.lang.management.ManagementFactory;
import java.time.Duration;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks that deciding on a key the store already tracks allocates nothing, allowed or denied, by counting the
 * bytes this thread allocates over many decisions.
 */
class InMemoryAllocationTests {

	private static final int DECISIONS = 20_000;

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void decidingOnAnExistingKeyAllocatesNothing(Algorithm algorithm) {
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter limiter = InMemoryRateLimitStore.builder().timeSource(clock).build()
			.limiter(RateLimitPolicy.of("p", algorithm, 1000, Duration.ofSeconds(1)));
		String key = "hot";
		// half a permit's worth of time per request: about half of them are allowed
		long step = Duration.ofMillis(1).toNanos() / 2;
		long[] now = { 0 };
		int[] allowed = { 0 };
		Runnable decisions = () -> {
			for (int i = 0; i < DECISIONS; i++) {
				now[0] += step;
				clock.set(now[0]);
				allowed[0] += limiter.tryAcquire(key) ? 1 : 0;
			}
		};
		// fills the sliding log's ring to its final size and loads every class on the way
		decisions.run();
		allowed[0] = 0;
		long before = allocatedBytes();
		decisions.run();
		long allocated = allocatedBytes() - before;
		// one object per decision would be at least 16 bytes each
		assertThat(allocated).as("bytes allocated by %d decisions", DECISIONS).isLessThan(DECISIONS);
		assertThat(allowed[0]).as("allowed and denied decisions were both measured").isBetween(1, DECISIONS - 1);
	}

	private static long allocatedBytes() {
		return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
			.getThreadAllocatedBytes(Thread.currentThread().getId());
	}

}
