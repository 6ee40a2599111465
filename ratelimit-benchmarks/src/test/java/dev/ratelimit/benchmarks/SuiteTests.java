package dev.ratelimit.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests of the suite's command line.
 */
class SuiteTests {

	@Test
	void runsTheQuickSuiteOfEverySectionByDefault() {
		Suite.Options options = Suite.Options.parse(new String[0]);
		assertThat(options.mode()).isEqualTo(Suite.Mode.QUICK);
		assertThat(options.sections()).containsExactly("memory", "footprint", "redis", "postgres", "http");
		assertThat(options.out()).isEqualTo(Path.of("ratelimit-benchmarks", "target", "results"));
		assertThat(options.waitQuiet()).isEqualTo(Duration.ofMinutes(3));
		assertThat(options.busyOk()).isFalse();
	}

	@Test
	void readsHowLongToWaitForAQuietMachineAndWhetherToRunOnABusyOne() {
		Suite.Options options = Suite.Options.parse(new String[] { "--wait-quiet", "0", "--busy-ok" });
		assertThat(options.waitQuiet()).isZero();
		assertThat(options.busyOk()).isTrue();
	}

	@Test
	void rejectsAWaitThatIsNotWholeSecondsNamingIt() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Suite.Options.parse(new String[] { "--wait-quiet", "1.5" }))
			.withMessage("--wait-quiet takes whole seconds, at least 0, not '1.5'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Suite.Options.parse(new String[] { "--wait-quiet", "-1" }))
			.withMessage("--wait-quiet takes whole seconds, at least 0, not '-1'");
	}

	@Test
	void readsModeOutputAndSections() {
		Suite.Options options = Suite.Options.parse(new String[] { "full", "--out", "x", "--only", "redis,memory" });
		assertThat(options.mode()).isEqualTo(Suite.Mode.FULL);
		assertThat(options.out()).isEqualTo(Path.of("x"));
		assertThat(options.sections()).containsExactly("redis", "memory");
	}

	@Test
	void rejectsAnUnknownArgumentNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> Suite.Options.parse(new String[] { "--fast" }))
			.withMessage("unknown argument '--fast'");
	}

	@Test
	void rejectsAnOptionWithoutItsValue() {
		assertThatIllegalArgumentException().isThrownBy(() -> Suite.Options.parse(new String[] { "--out" }))
			.withMessage("--out needs a value");
	}

	@Test
	void rejectsAnUnknownSection() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Suite.Options.parse(new String[] { "--only", "memory,disk" }))
			.withMessage("unknown section 'disk' in --only, expected some of [memory, footprint, redis, postgres, http]");
	}

	@Test
	void knowsAskingForHelp() {
		assertThat(CommandLine.wantsHelp(new String[] { "full", "--help" })).isTrue();
		assertThat(CommandLine.wantsHelp(new String[] { "-h" })).isTrue();
		assertThat(CommandLine.wantsHelp(new String[] { "full" })).isFalse();
	}

	@Test
	void namesEveryProgramAChosenSectionLacksBeforeRunning() {
		assertThat(Suite.missingTools(new LinkedHashSet<>(List.of("memory", "redis", "http")), "redis-server"::equals))
			.containsExactly("the redis section needs redis-benchmark on the PATH",
					"the http section needs redis-benchmark on the PATH", "the http section needs wrk on the PATH");
		assertThat(Suite.missingTools(new LinkedHashSet<>(List.of("memory", "footprint")), (tool) -> false)).isEmpty();
	}

}
