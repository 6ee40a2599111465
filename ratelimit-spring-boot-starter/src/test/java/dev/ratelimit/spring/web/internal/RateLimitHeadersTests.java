package dev.ratelimit.spring.web.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Tests that the draft headers are RFC 9651 lists with the expected members.
 */
class RateLimitHeadersTests {

	private static final List<RateLimitPolicy> POLICIES = List.of(
			RateLimitPolicy.of("DemoController.gcra", Algorithm.GCRA, 10, Duration.ofSeconds(10)),
			RateLimitPolicy.of("per-day:v2", Algorithm.SLIDING_LOG, 1000, Duration.ofDays(1)),
			RateLimitPolicy.of("half-second", Algorithm.FIXED_WINDOW, 5, Duration.ofMillis(500)));

	private static final List<Decision> DECISIONS = List.of(new Decision(true, 10, 3, 0, 7_000_000_000L, 0),
			new Decision(true, 1000, 999, 0, 86_399_000_000_001L, 0), new Decision(true, 5, 0, 0, 1, 0));

	@Test
	void writesPolicyAsStructuredList() {
		String header = RateLimitHeaders.policy(POLICIES);
		assertThat(header)
			.isEqualTo("\"DemoController.gcra\";q=10;w=10, \"per-day:v2\";q=1000;w=86400, \"half-second\";q=5;w=1");
		assertThat(StructuredList.parse(header)).extracting(Member::value)
			.containsExactly("DemoController.gcra", "per-day:v2", "half-second");
		assertThat(StructuredList.parse(header).get(1).parameters()).containsExactly(Map.entry("q", 1000L),
				Map.entry("w", 86400L));
	}

	@Test
	void writesRateLimitWithSecondsRoundedUp() {
		String header = RateLimitHeaders.rateLimit(POLICIES, DECISIONS);
		assertThat(header)
			.isEqualTo("\"DemoController.gcra\";r=3;t=7, \"per-day:v2\";r=999;t=86400, \"half-second\";r=0;t=1");
		assertThat(StructuredList.parse(header)).hasSize(3);
	}

	@Test
	void roundsNanosecondsUpToSeconds() {
		assertThat(RateLimitHeaders.seconds(0)).isZero();
		assertThat(RateLimitHeaders.seconds(1)).isEqualTo(1);
		assertThat(RateLimitHeaders.seconds(1_000_000_000L)).isEqualTo(1);
		assertThat(RateLimitHeaders.seconds(1_000_000_001L)).isEqualTo(2);
	}

	@Test
	void independentParserReadsTheHeaders() throws Exception {
		String script = "const sh = require('structured-headers');"
				+ "for (const h of process.argv.slice(1)) console.log(JSON.stringify("
				+ "sh.parseList(h).map(([value, params]) => [value, Object.fromEntries(params)])));";
		List<String> command = List.of("node", "-e", script, RateLimitHeaders.policy(POLICIES),
				RateLimitHeaders.rateLimit(POLICIES, DECISIONS));
		Process process;
		try {
			process = new ProcessBuilder(command).redirectErrorStream(true).start();
		}
		catch (IOException ex) {
			assumeTrue(false, "node is not installed");
			return;
		}
		assumeTrue(process.waitFor(30, TimeUnit.SECONDS), "node did not answer");
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assumeTrue(!output.contains("Cannot find module"), "npm structured-headers is not installed");
		assertThat(process.exitValue()).as(output).isZero();
		assertThat(output).contains("[\"DemoController.gcra\",{\"q\":10,\"w\":10}]",
				"[\"per-day:v2\",{\"q\":1000,\"w\":86400}]", "[\"DemoController.gcra\",{\"r\":3,\"t\":7}]");
	}

	record Member(String value, Map<String, Long> parameters) {
	}

	/**
	 * A strict parser of the RFC 9651 lists these headers use: members are strings with integer parameters.
	 */
	static final class StructuredList {

		private final String input;

		private int position;

		private StructuredList(String input) {
			this.input = input;
		}

		static List<Member> parse(String input) {
			StructuredList parser = new StructuredList(input);
			List<Member> members = new ArrayList<>();
			while (true) {
				members.add(parser.member());
				parser.skip(' ', '\t');
				if (parser.position == input.length()) {
					return members;
				}
				parser.expect(',');
				parser.skip(' ', '\t');
				assertThat(parser.position).as("trailing comma in %s", input).isLessThan(input.length());
			}
		}

		private Member member() {
			expect('"');
			StringBuilder value = new StringBuilder();
			char c;
			while ((c = next()) != '"') {
				assertThat(c).as("string character in %s", this.input).isBetween(' ', '~').isNotEqualTo('\\');
				value.append(c);
			}
			Map<String, Long> parameters = new LinkedHashMap<>();
			while (this.position < this.input.length() && this.input.charAt(this.position) == ';') {
				this.position++;
				skip(' ');
				String key = key();
				expect('=');
				assertThat(parameters.put(key, integer())).as("duplicate parameter %s", key).isNull();
			}
			return new Member(value.toString(), parameters);
		}

		private String key() {
			int start = this.position;
			char first = next();
			assertThat(first == '*' || (first >= 'a' && first <= 'z')).as("key start in %s", this.input).isTrue();
			while (this.position < this.input.length() && isKeyChar(this.input.charAt(this.position))) {
				this.position++;
			}
			return this.input.substring(start, this.position);
		}

		private static boolean isKeyChar(char c) {
			return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '*';
		}

		private long integer() {
			int start = this.position;
			while (this.position < this.input.length() && Character.isDigit(this.input.charAt(this.position))) {
				this.position++;
			}
			assertThat(this.position - start).as("integer digits in %s", this.input).isBetween(1, 15);
			return Long.parseLong(this.input.substring(start, this.position));
		}

		private void skip(char... whitespace) {
			while (this.position < this.input.length() && new String(whitespace).indexOf(this.input.charAt(this.position)) >= 0) {
				this.position++;
			}
		}

		private void expect(char expected) {
			assertThat(next()).as("character %d of %s", this.position, this.input).isEqualTo(expected);
		}

		private char next() {
			assertThat(this.position).as("end of %s", this.input).isLessThan(this.input.length());
			return this.input.charAt(this.position++);
		}

	}

}
