package dev.ratelimit.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DecisionTests {

	private static final Decision TAKEN = new Decision(true, 10, 7, 0, 3_000, 0, 42);

	@Test
	void isTakenOnlyWhenAllowedFromTheStoresState() {
		assertThat(TAKEN.taken()).isTrue();
		assertThat(new Decision(true, 10, 7, 0, 3_000, 0).taken()).as("a failure policy's allowed decision").isFalse();
		assertThat(new Decision(false, 10, 0, 1_000, 3_000, 0, 42).taken()).as("a denial").isFalse();
		assertThat(new Decision(true, 10, 7, 0, 3_000, 0, Decision.NOT_TAKEN).taken()).isFalse();
	}

	@Test
	void equalsADecisionThatSaysTheSameTakenAtAnotherInstant() {
		Decision later = new Decision(true, 10, 7, 0, 3_000, 0, 1_000_042);
		Decision untaken = new Decision(true, 10, 7, 0, 3_000, 0);
		assertThat(later).isEqualTo(TAKEN).hasSameHashCodeAs(TAKEN);
		assertThat(untaken).isEqualTo(TAKEN).hasSameHashCodeAs(TAKEN);
	}

	@Test
	void differsFromADecisionThatSaysAnythingElse() {
		List<Decision> others = List.of(new Decision(false, 10, 7, 0, 3_000, 0, 42),
				new Decision(true, 11, 7, 0, 3_000, 0, 42), new Decision(true, 10, 6, 0, 3_000, 0, 42),
				new Decision(true, 10, 7, 1, 3_000, 0, 42), new Decision(true, 10, 7, 0, 3_001, 0, 42),
				new Decision(true, 10, 7, 0, 3_000, 1, 42));
		for (Decision other : others) {
			assertThat(other).isNotEqualTo(TAKEN);
			assertThat(TAKEN).isNotEqualTo(other);
		}
		assertThat(TAKEN).isNotEqualTo("a decision").isNotEqualTo(null);
	}

	@Test
	void givesItsTimesAsDurations() {
		Decision decision = new Decision(true, 3, 0, 1_500, 2_000_000_001, 7, 0);
		assertThat(decision.retryAfter()).isEqualTo(Duration.ofNanos(1_500));
		assertThat(decision.resetAfter()).isEqualTo(Duration.ofSeconds(2, 1));
		assertThat(decision.delay()).isEqualTo(Duration.ofNanos(7));
	}

}
