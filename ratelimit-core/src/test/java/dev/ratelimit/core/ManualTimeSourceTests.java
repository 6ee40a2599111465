package dev.ratelimit.core;

import java.time.Duration;

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

}
