package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests of how the suite reads the machine's load, waits for a quiet machine and states the load in its report.
 */
class MachineLoadTests {

	@Test
	void readsTheThreeLoadAveragesOfProcLoadavg() {
		assertThat(Machine.LoadAverage.parse("0.52 1.58 2.59 2/431 12345\n"))
			.isEqualTo(new Machine.LoadAverage(0.52, 1.58, 2.59));
	}

	@Test
	void rejectsALineThatIsNoLoadAverageQuotingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> Machine.LoadAverage.parse("0.52 busy\n"))
			.withMessage("not a load average line: '0.52 busy'");
		assertThatIllegalArgumentException().isThrownBy(() -> new Machine.LoadAverage(-1, 0, 0))
			.withMessageContaining("not -1.0, 0.0, 0.0");
	}

	@Test
	void readsTheMachinesOwnLoad() {
		assertThat(Machine.loadAverage().oneMinute()).isNotNegative();
		assertThat(Machine.quietThreshold()).isEqualTo(Machine.QUIET_PER_CORE * Machine.cores());
	}

	@Test
	void waitsUntilTheLoadFallsToTheThreshold() throws InterruptedException {
		List<Duration> pauses = new ArrayList<>();
		Machine.LoadAverage quiet = Machine.awaitQuiet(readings(3.0, 1.5, 0.9, 0.1), 1.0, 10, Duration.ofSeconds(5),
				pauses::add);
		assertThat(quiet.oneMinute()).isEqualTo(0.9);
		assertThat(pauses).containsExactly(Duration.ofSeconds(5), Duration.ofSeconds(5));
	}

	@Test
	void givesUpAfterItsReadingsWithTheLastOne() throws InterruptedException {
		List<Duration> pauses = new ArrayList<>();
		Machine.LoadAverage busy = Machine.awaitQuiet(readings(3.0, 2.5, 2.0, 0.1), 1.0, 3, Duration.ofSeconds(5),
				pauses::add);
		assertThat(busy.oneMinute()).isEqualTo(2.0);
		assertThat(pauses).hasSize(2);
	}

	@Test
	void doesNotWaitOnAQuietMachine() throws InterruptedException {
		List<Duration> pauses = new ArrayList<>();
		assertThat(Machine.awaitQuiet(readings(0.2), 1.0, 10, Duration.ofSeconds(5), pauses::add).oneMinute())
			.isEqualTo(0.2);
		assertThat(pauses).isEmpty();
	}

	@Test
	void statesWhetherTheRunStartedAboveTheThreshold() {
		Suite.Quietness busy = new Suite.Quietness(new Machine.LoadAverage(1.25, 1, 1), 1.0);
		assertThat(busy.quiet()).isFalse();
		assertThat(busy.describe()).startsWith(
				"load average before the run 1.25 (1 min), 1.00 (5 min), 1.00 (15 min), ABOVE the quiet threshold of 1.00");
		assertThat(new Suite.Quietness(new Machine.LoadAverage(1.0, 3, 3), 1.0).quiet()).isTrue();
	}

	@Test
	void describesTheLoadAtAMarkAndOverTheReadingsSince() {
		try (LoadMonitor monitor = LoadMonitor.manual(readings(0.4, 9, 1.0, 2.0, 3.0), Duration.ofSeconds(5))) {
			LoadMonitor.Mark start = monitor.mark();
			assertThat(monitor.since(start)).isEqualTo("1-minute load average 0.40 at the start, no reading during it");
			monitor.read();
			LoadMonitor.Mark later = monitor.mark();
			monitor.read();
			monitor.read();
			assertThat(monitor.since(later)).isEqualTo(
					"1-minute load average 1.00 at the start, 2.50 mean and 3.00 most over 2 readings 5 s apart during it");
			assertThat(monitor.since(start)).contains("4.67 mean and 9.00 most over 3 readings");
		}
	}

	@Test
	void marksTheReportOfABusyRunAndStatesEachSectionsLoadUnderItsHeading() {
		try (LoadMonitor monitor = LoadMonitor.manual(readings(2.0, 2.0, 3.0, 1.0), Duration.ofSeconds(5))) {
			Suite.Report report = new Suite.Report(Suite.Mode.QUICK, "--busy-ok",
					new Suite.Quietness(new Machine.LoadAverage(2.0, 1, 1), 1.0), monitor);
			report.begin();
			monitor.read();
			report.section("## Redis\n\nThe table.\n");
			String rendered = report.render();
			assertThat(rendered).contains("> **BUSY MACHINE")
				.contains("## Redis\n\nLoad: 1-minute load average 2.00 at the start, 3.00 mean and 3.00 most over 1 "
						+ "readings 5 s apart during it.\n\nThe table.\n");
		}
	}

	@Test
	void leavesTheReportOfAQuietRunUnmarked() {
		try (LoadMonitor monitor = LoadMonitor.manual(readings(0.1), Duration.ofSeconds(5))) {
			Suite.Report report = new Suite.Report(Suite.Mode.QUICK, "",
					new Suite.Quietness(new Machine.LoadAverage(0.1, 0.1, 0.1), 1.0), monitor);
			assertThat(report.render()).doesNotContain("BUSY").contains("within the quiet threshold of 1.00");
		}
	}

	/** The 1-minute loads given, one a reading, the last one repeated. */
	private static Supplier<Machine.LoadAverage> readings(double... oneMinute) {
		List<Double> values = new ArrayList<>();
		for (double value : oneMinute) {
			values.add(value);
		}
		Iterator<Double> next = values.iterator();
		double[] last = { oneMinute[0] };
		return () -> {
			if (next.hasNext()) {
				last[0] = next.next();
			}
			return new Machine.LoadAverage(last[0], 0, 0);
		};
	}

}
