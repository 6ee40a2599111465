package dev.ratelimit.core.memory;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A caller that must not wait, such as an event loop, asks the in-memory store for its decisions as stages: on a
 * hot key whose word it keeps losing to other threads it retries at once rather than park, and the store still
 * admits exactly what one thread alone would. The JVM counts every park, sleep and wait of each thread.
 */
class InMemoryNoWaitTests {

	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	private static final int THREAD_COUNT = 4 * Runtime.getRuntime().availableProcessors();

	private static final int ATTEMPTS = 5_000;

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void neverParksADecisionAskedForAsAStageAndAdmitsWhatOneThreadWould(Algorithm algorithm) throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("hot", algorithm, 1_000, Duration.ofHours(1));
		RateLimitPolicy other = RateLimitPolicy.of("other", algorithm, 100_000, Duration.ofHours(1));
		// time stands still, so that every thread's decisions draw from one quota
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(new ManualTimeSource()).build();
		InMemoryRateLimitStore alone = InMemoryRateLimitStore.builder().timeSource(new ManualTimeSource()).build();
		long expected = 0;
		for (int i = 0; i < THREAD_COUNT * ATTEMPTS; i++) {
			expected += alone.limiter(policy).decide("client").allowed() ? 1 : 0;
		}
		CyclicBarrier start = new CyclicBarrier(THREAD_COUNT);
		AtomicLong waits = new AtomicLong();
		AtomicInteger allowed = new AtomicInteger();
		List<Thread> threads = new ArrayList<>();
		for (int t = 0; t < THREAD_COUNT; t++) {
			boolean stacked = t % 2 == 0;
			Thread thread = new Thread(() -> {
				try {
					start.await(10, TimeUnit.SECONDS);
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
				long before = waits(Thread.currentThread());
				for (int i = 0; i < ATTEMPTS; i++) {
					List<KeyedPolicy> limits = stacked
							? List.of(new KeyedPolicy("client", policy), new KeyedPolicy("client", other))
							: List.of(new KeyedPolicy("client", policy));
					List<Decision> decisions = store.decideAllAsync(limits).toCompletableFuture().join();
					if (decisions.get(0).allowed()) {
						allowed.incrementAndGet();
					}
				}
				waits.addAndGet(waits(Thread.currentThread()) - before);
			});
			thread.start();
			threads.add(thread);
		}
		for (Thread thread : threads) {
			thread.join(TimeUnit.SECONDS.toMillis(60));
		}
		assertThat(waits.get()).as("parks, sleeps and waits").isZero();
		assertThat(allowed.get()).isEqualTo(expected);
	}

	private static long waits(Thread thread) {
		ThreadInfo info = THREADS.getThreadInfo(thread.getId());
		return info.getWaitedCount();
	}

}
