package dev.ratelimit.core.testing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Reading {@code INFO commandstats} as Redis 7 writes it, and the difference of two snapshots.
 */
class CommandStatsTests {

	private static final String BEFORE = """
			# Commandstats\r
			cmdstat_evalsha:calls=3,usec=41,usec_per_call=13.67,rejected_calls=0,failed_calls=1\r
			cmdstat_set:calls=2,usec=5,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r
			cmdstat_info:calls=7,usec=300,usec_per_call=42.86,rejected_calls=0,failed_calls=0\r
			""";

	private static final String AFTER = """
			# Commandstats\r
			cmdstat_evalsha:calls=5,usec=70,usec_per_call=14.00,rejected_calls=0,failed_calls=1\r
			cmdstat_set:calls=2,usec=5,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r
			cmdstat_client|pause:calls=1,usec=3,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r
			cmdstat_info:calls=8,usec=340,usec_per_call=42.50,rejected_calls=0,failed_calls=0\r
			""";

	@Test
	void readsTheCallsOfEveryCommand() {
		CommandStats stats = CommandStats.parse(AFTER);
		assertThat(stats.calls("evalsha")).isEqualTo(5);
		assertThat(stats.calls("client|pause")).isEqualTo(1);
		assertThat(stats.calls("eval")).isZero();
		assertThat(stats.asMap()).containsOnlyKeys("evalsha", "set", "client|pause", "info");
	}

	@Test
	void tellsWhatRanBetweenTwoSnapshots() {
		CommandStats ran = CommandStats.parse(AFTER).since(CommandStats.parse(BEFORE));
		assertThat(ran.asMap()).containsExactly(entry("client|pause", 1L),
				entry("evalsha", 2L), entry("info", 1L));
	}

	@Test
	void refusesSnapshotsAcrossARestart() {
		CommandStats later = CommandStats.parse(BEFORE.replace("evalsha:calls=3", "evalsha:calls=4"));
		assertThatIllegalArgumentException().isThrownBy(() -> CommandStats.parse(BEFORE).since(later))
			.withMessageContaining("Redis ran evalsha fewer times than in the earlier snapshot");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> CommandStats.parse("cmdstat_info:calls=1").since(CommandStats.parse(BEFORE)))
			.withMessageContaining("Redis ran evalsha before the earlier snapshot but not since");
	}

	@Test
	void namesALineItCannotRead() {
		assertThatIllegalArgumentException().isThrownBy(() -> CommandStats.parse("cmdstat_get:usec=3"))
			.withMessage("No calls= in the commandstats line 'cmdstat_get:usec=3'");
	}

}
