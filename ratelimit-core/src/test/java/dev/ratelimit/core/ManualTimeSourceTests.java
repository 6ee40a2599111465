package dev.ratelimit.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ManualTimeSourceTests {

	@Test
	void movesOnlyWhenTold() {
		ManualTimeSource clock = new ManualTimeSource(5);
		assertThat(clock.nanoTime()).isEqualTo(5);
		assertThat(clock.advance(Duration.ofNanos(10)).nanoTime()).isEqualTo(15);
		assertThat(clock.advance(Duration.ZERO).nanoTime()).isEqualTo(15);
		assertThat(clock.set(15).set(20).nanoTime()).isEqualTo(20);
		assertThat(new ManualTimeSource().nanoTime()).isZero();
	}

	@Test
	void neverMovesBack() {
		ManualTimeSource clock = new ManualTimeSource(100);
		assertThatIllegalArgumentException().isThrownBy(() -> clock.advance(Duration.ofNanos(-1)))
			.withMessageContaining("cannot move back");
		assertThatIllegalArgumentException().isThrownBy(() -> clock.set(99))
			.withMessageContaining("from 100 ns to 99 ns");
		assertThat(clock.nanoTime()).isEqualTo(100);
	}

	@Test
	void endsAWaitOnceMovedPastItsEnd() throws Exception {
		ManualTimeSource clock = new ManualTimeSource(100);
		CompletableFuture<Void> later = clock.after(20);
		CompletableFuture<Void> sooner = clock.after(10);
		assertThat(clock.after(0)).isDone();
		assertThat(clock.waits()).isEqualTo(2);
		assertThat(sooner).isNotDone();
		clock.advance(Duration.ofNanos(9));
		assertThat(sooner).isNotDone();
		clock.set(110);
		assertThat(sooner).isDone();
		assertThat(later).isNotDone();
		assertThat(clock.waits()).isOne();
		clock.advance(Duration.ofNanos(100));
		assertThat(later).isDone();
		assertThat(clock.waits()).isZero();
	}

	@Test
	void sleepsUntilAnotherThreadMovesIt() throws Exception {
		ManualTimeSource clock = new ManualTimeSource();
		Thread sleeper = new Thread(() -> {
			try {
				clock.sleep(Duration.ofSeconds(1).toNanos());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		sleeper.start();
		// the sleeper waits for the clock, not for time: it is still waiting however long this takes
		sleeper.join(100);
		assertThat(sleeper.isAlive()).isTrue();
		clock.advance(Duration.ofSeconds(1));
		sleeper.join(TimeUnit.SECONDS.toMillis(30));
		assertThat(sleeper.isAlive()).isFalse();
	}

}
