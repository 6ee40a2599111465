package dev.ratelimit.sample;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * BlockHound watches the non-blocking threads of the JVM in which the Spring MVC sample's tests run against the
 * WebFlux sample: what makes those tests fail should the limiter block an event loop.
 */
class BlockingCallsFailIT {

	@Test
	void failsABlockingCallOnANonBlockingThread() {
		assertThatExceptionOfType(RuntimeException.class)
			.isThrownBy(() -> Mono.delay(Duration.ofMillis(1)).doOnNext((tick) -> {
				try {
					Thread.sleep(1);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}).block())
			.withRootCauseInstanceOf(BlockingOperationError.class);
	}

}
