package dev.ratelimit.core.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

class FailureLogTests {

	private final ManualTimeSource clock = new ManualTimeSource(0);

	private final RecordingLogger logger = new RecordingLogger();

	private final FailureLog log = new FailureLog(this.logger, "Redis", FailurePolicy.LOCAL, this.clock, Runnable::run);

	@Test
	void writesAtMostOneStackTraceAMinuteAndOneLineOfEachKindPerTenSecondsWhateverThePattern() {
		// Redis at maxmemory: every other call fails, every success ends an outage, every failure starts one
		for (int i = 0; i < 60_000; i++) {
			this.log.outageBegan(new IllegalStateException("OOM command not allowed"));
			this.log.failed(FailureKind.ERROR, new IllegalStateException("OOM command not allowed"));
			this.log.recovered();
			this.clock.advance(Duration.ofMillis(1));
		}
		// one minute: six periods of ten seconds, three kinds of line each
		assertThat(this.logger.lines).hasSizeLessThanOrEqualTo(18);
		assertThat(this.logger.lines.stream().filter((line) -> line.thrown != null)).hasSize(1);
	}

	@Test
	void countsWhatTheFailurePolicyDecidedAndWhy() {
		this.log.outageBegan(new TimeoutException("Redis did not answer within 100 ms"));
		this.log.failed(FailureKind.SLOW, new TimeoutException("late"));
		for (int i = 0; i < 41; i++) {
			this.log.failed(FailureKind.UNREACHABLE, new IllegalStateException("refused"));
		}
		this.clock.advance(Duration.ofSeconds(10));
		this.log.failed(FailureKind.UNREACHABLE, new IllegalStateException("refused"));
		this.log.recovered();
		assertThat(this.logger.lines).extracting((line) -> line.message)
			.containsExactly(
					"Redis is failing; the LOCAL failure policy decides every request until Redis answers again",
					"Redis did not decide 1 request since the last report (1 not answered in time); the LOCAL failure"
							+ " policy decided them. Last failure: java.util.concurrent.TimeoutException: late",
					"Redis did not decide 42 requests since the last report (42 with Redis unreachable); the LOCAL"
							+ " failure policy decided them. Last failure: java.lang.IllegalStateException: refused",
					"Redis decides again; the LOCAL failure policy made 43 decisions since the outage began");
		assertThat(this.logger.lines.get(0).thrown).isInstanceOf(TimeoutException.class);
		assertThat(this.logger.lines.subList(1, 4)).allSatisfy((line) -> assertThat(line.thrown).isNull());
	}

	@Test
	void countsWhatTheFailurePolicyDecidedAtTheFirstAnswerInTimeAPeriodLaterWithoutWaitingForAFailure() {
		this.log.failed(FailureKind.SLOW, new TimeoutException("late"));
		this.clock.advance(Duration.ofSeconds(1));
		this.log.failed(FailureKind.SLOW, new TimeoutException("later"));
		this.log.failed(FailureKind.SLOW, new TimeoutException("latest"));
		this.log.answered();
		assertThat(this.logger.lines).as("within the period of the first line").hasSize(1);
		this.clock.advance(Duration.ofSeconds(9));
		this.log.answered();
		this.log.answered();
		assertThat(this.logger.lines).extracting((line) -> line.message)
			.containsExactly(
					"Redis did not decide 1 request since the last report (1 not answered in time); the LOCAL failure"
							+ " policy decided them. Last failure: java.util.concurrent.TimeoutException: late",
					"Redis did not decide 2 requests since the last report (2 not answered in time); the LOCAL failure"
							+ " policy decided them. Last failure: java.util.concurrent.TimeoutException: latest");
	}

	@Test
	void countsTheFailedGiveBacksInOneLineEveryTenSeconds() {
		for (int i = 0; i < 1_000; i++) {
			this.log.giveBackFailed(new TimeoutException("late"));
		}
		this.clock.advance(Duration.ofSeconds(10));
		this.log.giveBackFailed(new TimeoutException("later"));
		assertThat(this.logger.lines).extracting((line) -> line.message)
			.containsExactly(
					"Redis did not take back the permits of 1 request since the last report; they stay taken until "
							+ "their limits free them. Last failure: java.util.concurrent.TimeoutException: late",
					"Redis did not take back the permits of 1000 requests since the last report; they stay taken "
							+ "until their limits free them. Last failure: java.util.concurrent.TimeoutException: later");
	}

	@Test
	void saysNothingOfARecoveryFromAnOutageItNeverReported() {
		this.log.recovered();
		assertThat(this.logger.lines).isEmpty();
	}

	private record Line(System.Logger.Level level, String message, @Nullable Throwable thrown) {
	}

	private static final class RecordingLogger implements System.Logger {

		final List<Line> lines = new ArrayList<>();

		@Override
		public String getName() {
			return "recording";
		}

		@Override
		public boolean isLoggable(Level level) {
			return true;
		}

		@Override
		public void log(Level level, @Nullable ResourceBundle bundle, String message, @Nullable Throwable thrown) {
			this.lines.add(new Line(level, message, thrown));
		}

		@Override
		public void log(Level level, @Nullable ResourceBundle bundle, String format, @Nullable Object... params) {
			this.lines.add(new Line(level, format, null));
		}

		@Override
		public void log(Level level, Supplier<String> supplier) {
			this.lines.add(new Line(level, supplier.get(), null));
		}

	}

}
