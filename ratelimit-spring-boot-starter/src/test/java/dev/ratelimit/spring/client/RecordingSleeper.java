package dev.ratelimit.spring.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records every wait and moves a {@link MutableClock} by it instead of blocking.
 */
final class RecordingSleeper implements RateLimitClientInterceptor.Sleeper {

	private final MutableClock clock;

	private final List<Duration> sleeps = new CopyOnWriteArrayList<>();

	RecordingSleeper(MutableClock clock) {
		this.clock = clock;
	}

	@Override
	public void sleep(Duration duration) {
		this.sleeps.add(duration);
		this.clock.advance(duration);
	}

	List<Duration> sleeps() {
		return this.sleeps;
	}

}
