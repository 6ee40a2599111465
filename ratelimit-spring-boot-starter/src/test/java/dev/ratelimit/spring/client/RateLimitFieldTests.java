package dev.ratelimit.spring.client;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitFieldTests {

	@Test
	void readsExhaustedQuota() {
		assertThat(exhaustedFor("\"default\";r=0;t=10")).isEqualTo(Duration.ofSeconds(10));
	}

	@Test
	void readsParametersInAnyOrder() {
		assertThat(exhaustedFor("\"default\";t=10;r=0")).isEqualTo(Duration.ofSeconds(10));
		assertThat(exhaustedFor("\"default\";pk=:cHJvamVjdDEyMw==:;t=4;r=0")).isEqualTo(Duration.ofSeconds(4));
	}

	@Test
	void readsTokenAndQuotedNamesWithEscapes() {
		assertThat(exhaustedFor("daily;r=0;t=3")).isEqualTo(Duration.ofSeconds(3));
		assertThat(exhaustedFor("\"a \\\"quoted\\\", name; here\";r=0;t=5")).isEqualTo(Duration.ofSeconds(5));
	}

	@Test
	void ignoresQuotaThatIsNotExhausted() {
		assertThat(exhaustedFor("\"default\";r=3;t=10")).isNull();
	}

	@Test
	void takesLongestResetAmongExhaustedMembers() {
		assertThat(exhaustedFor("\"burst\";r=0;t=1, \"daily\";r=0;t=3600, \"hourly\";r=5;t=60"))
			.isEqualTo(Duration.ofSeconds(3600));
	}

	@Test
	void readsExhaustedMemberAfterOthers() {
		assertThat(exhaustedFor("\"minute\";r=9;t=30,\"second\";r=0;t=1")).isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void combinesFieldLines() {
		assertThat(RateLimitField.exhaustedFor(List.of("\"a\";r=1;t=1", "\"b\";r=0;t=2")))
			.isEqualTo(Duration.ofSeconds(2));
	}

	@Test
	void toleratesOptionalWhitespaceAndOtherItemTypes() {
		assertThat(exhaustedFor("  (\"x\" \"y\");q=1 ,\t?1;w=1.5, @1659578233, %\"caf%c3%a9\";r=0;t=2  "))
			.isEqualTo(Duration.ofSeconds(2));
	}

	@Test
	void ignoresMemberWithoutReset() {
		assertThat(exhaustedFor("\"default\";r=0")).isNull();
	}

	@Test
	void lastDuplicateParameterWins() {
		assertThat(exhaustedFor("\"default\";r=0;t=5;t=7")).isEqualTo(Duration.ofSeconds(7));
		assertThat(exhaustedFor("\"default\";r=0;t=5;r=1")).isNull();
	}

	@Test
	void readsAbsentFieldAsNull() {
		assertThat(RateLimitField.exhaustedFor(List.of())).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "\"default\";r=0;t=-1", "\"default\";r=0;t=1.5", "\"default\";r=0.0;t=1",
			"\"default\";r=\"0\";t=1", "\"default\";r=0;t", "\"default\";r=-0;t=?1" })
	void ignoresMembersWhoseValuesDoNotFit(String field) {
		assertThat(exhaustedFor(field)).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "\"default\";r=0;t=10,", "\"default\";r=0;t=10,,\"b\"", "\"default\";R=0;t=10",
			"\"default\";r=0;t=10 garbage", "\"default;r=0;t=10", "\"default\";r=0;t=1000000000000000",
			"\"default\"; r=0;t=10;", "\"default\";r=0;t=10;=", "default\";r=0;t=10", "\"default\" ;r=0;t=10",
			"\"bad \\n escape\";r=0;t=10", "\"default\";r=0;t=10, (\"open\"", "?2;r=0;t=10", ":not base64!:;r=0;t=1",
			"\"default\";r=0;t=10\u00e9", "\"caf\u00e9\";r=0;t=10", "%\"CAF%C3\";r=0;t=1", "\"a\",\t", "," })
	void ignoresWholeFieldThatDoesNotParse(String field) {
		assertThat(exhaustedFor(field)).isNull();
	}

	private static Duration exhaustedFor(String field) {
		return RateLimitField.exhaustedFor(List.of(field));
	}

}
