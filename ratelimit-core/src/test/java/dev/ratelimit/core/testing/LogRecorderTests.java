package dev.ratelimit.core.testing;

import java.lang.System.Logger.Level;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a {@link System.Logger} writes reaches the recorder, counted by level and by stack trace, and nothing
 * more once it is closed.
 */
class LogRecorderTests {

	private static final String NAME = LogRecorderTests.class.getName() + ".store";

	@Test
	void countsTheLinesOfOneLoggerByLevelAndStackTrace() {
		System.Logger logger = System.getLogger(NAME);
		try (LogRecorder log = LogRecorder.record(NAME)) {
			logger.log(Level.WARNING, "Redis did not decide", new IllegalStateException("expected in this test"));
			logger.log(Level.WARNING, "still failing");
			logger.log(Level.INFO, "decides again");
			logger.log(Level.DEBUG, "detail");
			System.getLogger(NAME + "-other").log(Level.WARNING, "another logger's line");
			assertThat(log.lines()).isEqualTo(4);
			assertThat(log.linesWithStackTrace()).isEqualTo(1);
			assertThat(log.lines(Level.WARNING)).isEqualTo(2);
			assertThat(log.lines(Level.INFO)).isEqualTo(1);
			assertThat(log.lines(Level.DEBUG)).isEqualTo(1);
			assertThat(log.lines(Level.ERROR)).isZero();
			assertThat(log.messages()).containsExactly("Redis did not decide", "still failing", "decides again",
					"detail");
		}
	}

	@Test
	void givesTheLoggerBackAsItWasWhenClosed() {
		Logger logger = Logger.getLogger(NAME);
		logger.setLevel(java.util.logging.Level.SEVERE);
		LogRecorder log = LogRecorder.record(NAME);
		assertThat(logger.getUseParentHandlers()).isFalse();
		log.close();
		System.getLogger(NAME).log(Level.ERROR, "after the recording");
		assertThat(log.lines()).isZero();
		assertThat(logger.getLevel()).isEqualTo(java.util.logging.Level.SEVERE);
		assertThat(logger.getUseParentHandlers()).isTrue();
		logger.setLevel(null);
	}

}
