package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

import dev.ratelimit.core.ManualTimeSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The test's clock as the PostgreSQL store reads it on its own threads.
 */
class CallersClockTests {

	private final ManualTimeSource manual = new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));

	private final CallersClock clock = new CallersClock(this.manual);

	@Test
	void readsTheInstantACallWasAskedAtWhileItRunsLater() {
		List<Runnable> later = new ArrayList<>();
		Executor asking = this.clock.asking(later::add);
		List<Instant> read = new ArrayList<>();
		asking.execute(() -> read.add(this.clock.instant()));
		this.manual.advance(Duration.ofSeconds(1));
		later.forEach(Runnable::run);
		assertThat(read).containsExactly(Instant.parse("2026-01-01T00:00:00Z"));
	}

	@Test
	void readsTheClockItselfOutsideACall() {
		this.manual.advance(Duration.ofSeconds(1));
		assertThat(this.clock.nanoTime()).isEqualTo(this.manual.nanoTime());
		assertThat(this.clock.instant()).isEqualTo(this.manual.instant());
	}

}
