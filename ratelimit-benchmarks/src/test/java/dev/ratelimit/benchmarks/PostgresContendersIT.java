package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openjdk.jmh.annotations.Param;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every PostgreSQL contender on a real PostgreSQL, so that a contender that cannot run, or that does not
 * limit, shows before a benchmark run is spent on it: each keeps its rows in the database and, with a burst of five,
 * allows exactly five of many concurrent requests on a key. Says nothing about speed.
 */
@ExtendWith(PostgresExtension.class)
class PostgresContendersIT {

	private static final int BURST = 5;

	@Test
	void everyContenderDecidesInItsTableUnderTheBenchmarkLoad(TestPostgres postgres) throws Exception {
		for (String contender : contenders()) {
			try (PostgresContender opened = PostgresContender.open(contender, postgres.url(),
					Load.ALLOWED.peerPolicy())) {
				for (int i = 0; i < 20; i++) {
					assertThat(opened.limiter.tryAcquire("user:" + (i % 4))).as(contender).isTrue();
				}
				opened.checkEveryDecisionCameFromPostgres();
				assertThat(postgres.queryForLong("SELECT count(*) FROM " + PostgresContender.table(contender))).as(contender)
					.isEqualTo(4);
			}
		}
	}

	@Test
	void everyContenderAllowsItsBurstAndNoMoreToConcurrentCallers(TestPostgres postgres) throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("five", Algorithm.TOKEN_BUCKET, BURST, Duration.ofHours(1));
		for (String contender : contenders()) {
			try (PostgresContender opened = PostgresContender.open(contender, postgres.url(), policy)) {
				assertThat(allowedOf(opened, "user:a", 8, 4)).as(contender).isEqualTo(BURST);
				assertThat(allowedOf(opened, "user:b", 1, 1)).as(contender + ", another key").isEqualTo(1);
				opened.checkEveryDecisionCameFromPostgres();
			}
		}
	}

	/** Asks for {@code key} {@code calls} times from each of {@code callers} threads, all released at once. */
	private static int allowedOf(PostgresContender opened, String key, int callers, int calls) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(callers);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Integer>> allowed = new ArrayList<>();
			for (int t = 0; t < callers; t++) {
				allowed.add(threads.submit(() -> {
					start.await();
					int count = 0;
					for (int i = 0; i < calls; i++) {
						count += opened.limiter.tryAcquire(key) ? 1 : 0;
					}
					return count;
				}));
			}
			start.countDown();
			int total = 0;
			for (Future<Integer> future : allowed) {
				total += future.get(30, TimeUnit.SECONDS);
			}
			return total;
		}
		finally {
			threads.shutdown();
		}
	}

	private static String[] contenders() throws NoSuchFieldException {
		return PostgresBenchmark.class.getField("contender").getAnnotation(Param.class).value();
	}

}
