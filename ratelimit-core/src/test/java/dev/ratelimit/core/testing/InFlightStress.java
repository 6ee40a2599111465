package dev.ratelimit.core.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimitStore.InFlight.Permit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads released at once, each taking a permit in flight of one key again and again and giving it back at
 * once, spread over the instances of a fleet: how many were held at once, which must never exceed the limit.
 */
public final class InFlightStress {

	private InFlightStress() {
	}

	/**
	 * Runs {@code threads} threads, thread t on instance {@code t % instances.size()}, each asking
	 * {@code attempts} times for a permit of the key {@code hot} under {@code report}, and checks that some were
	 * granted.
	 * @param instances the limits in flight of each instance
	 * @param threads how many threads ask at once
	 * @param attempts how many times each asks
	 * @param limit the limit in flight
	 * @return the most permits held at once
	 * @throws Exception if a thread failed, or did not end within a minute
	 */
	public static int mostHeldAtOnce(List<RateLimitStore.InFlight> instances, int threads, int attempts, long limit)
			throws Exception {
		AtomicInteger holding = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicInteger granted = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> senders = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				RateLimitStore.InFlight instance = instances.get(t % instances.size());
				senders.add(pool.submit(() -> {
					start.await();
					for (int i = 0; i < attempts; i++) {
						Permit permit = instance.acquire("report", "hot", limit).toCompletableFuture().join();
						if (permit.granted()) {
							granted.incrementAndGet();
							most.accumulateAndGet(holding.incrementAndGet(), Math::max);
							holding.decrementAndGet();
							permit.release();
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> sender : senders) {
				sender.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(granted.get()).as("permits granted").isPositive();
		return most.get();
	}

}
