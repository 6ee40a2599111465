package dev.ratelimit.spring.autoconfigure;

import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.TimeSource;

/**
 * A test's manual clock as the PostgreSQL store reads it when its calls run on threads of their own: at the
 * instant the call was asked for, on the caller's thread, as the Redis store reads it when it sends a call, so
 * that a test that moves the clock once it has its answer never moves a decision still on its way.
 */
final class CallersClock implements TimeSource {

	private final ManualTimeSource clock;

	private final ThreadLocal<Long> asked = new ThreadLocal<>();

	CallersClock(ManualTimeSource clock) {
		this.clock = clock;
	}

	/** Runs each call on {@code executor} at the clock's instant when the call was handed to it. */
	Executor asking(Executor executor) {
		return (call) -> {
			long now = this.clock.nanoTime();
			executor.execute(() -> {
				this.asked.set(now);
				try {
					call.run();
				}
				finally {
					this.asked.remove();
				}
			});
		};
	}

	@Override
	public long nanoTime() {
		Long now = this.asked.get();
		return (now != null) ? now : this.clock.nanoTime();
	}

	@Override
	public Instant instant() {
		// ManualTimeSource counts its nanoseconds from the Unix epoch
		return Instant.EPOCH.plusNanos(nanoTime());
	}

	@Override
	public void sleep(long nanos) throws InterruptedException {
		this.clock.sleep(nanos);
	}

	@Override
	public CompletableFuture<Void> after(long nanos) {
		return this.clock.after(nanos);
	}

}
