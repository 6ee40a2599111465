package dev.ratelimit.spring.web.internal;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.spring.LimitResolver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ClientLimits}: the resolver's answers, kept for their time to live, and the declared limits
 * wherever an answer cannot be used, said in the log.
 */
@ExtendWith(OutputCaptureExtension.class)
class ClientLimitsTests {

	private static final RateLimitPolicy DECLARED = RateLimitPolicy.of("customer", Algorithm.GCRA, 1,
			Duration.ofSeconds(10));

	private final ManualTimeSource time = new ManualTimeSource();

	private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.time).build();

	@Test
	void keepsAnAnswerForItsTimeToLiveThenAsksAgain() {
		AtomicInteger asked = new AtomicInteger();
		ClientLimits limits = limits((client, declared) -> declared.withLimit(5 + asked.getAndIncrement(),
				Duration.ofSeconds(10)), 100);
		assertThat(limits.policy("user:alice", DECLARED).limit()).isEqualTo(5);
		this.time.advance(Duration.ofSeconds(59));
		assertThat(limits.policy("user:alice", DECLARED).limit()).as("kept").isEqualTo(5);
		assertThat(limits.policy("user:bob", DECLARED).limit()).as("another client").isEqualTo(6);
		this.time.advance(Duration.ofSeconds(1));
		assertThat(limits.policy("user:alice", DECLARED).limit()).as("asked again").isEqualTo(7);
		assertThat(limits.policy("user:alice", DECLARED.withLimit(2, Duration.ofSeconds(10))).limit())
			.as("asked again for a changed policy")
			.isEqualTo(8);
	}

	@Test
	void keepsNoMoreAnswersThanItsMaximum() {
		AtomicInteger asked = new AtomicInteger();
		ClientLimits limits = limits((client, declared) -> {
			asked.incrementAndGet();
			return null;
		}, 2);
		for (int round = 0; round < 2; round++) {
			for (String client : new String[] { "a", "b", "c" }) {
				assertThat(limits.policy(client, DECLARED)).isSameAs(DECLARED);
			}
		}
		assertThat(asked).as("a and b kept, c asked each time").hasValue(4);
	}

	@Test
	void decidesByTheDeclaredLimitsWhatItCannotUseAndSaysWhy(CapturedOutput output) {
		ClientLimits renamed = limits((client, declared) -> RateLimitPolicy.of("other", Algorithm.GCRA, 5,
				Duration.ofSeconds(10)), 100);
		assertThat(renamed.policy("user:alice", DECLARED)).isSameAs(DECLARED);
		assertThat(output).contains("Limits of client 'user:alice' under 'customer' from the LimitResolver refused "
				+ "(its policy is named 'other', not 'customer': return declared.withLimit(limit, window)): decided "
				+ "by the declared GCRA 1/PT10S");
		ClientLimits invalid = limits((client, declared) -> declared.withLimit(0, Duration.ofSeconds(10)), 100);
		assertThat(invalid.policy("user:bob", DECLARED)).isSameAs(DECLARED);
		assertThat(output).contains("Limits of client 'user:bob' under 'customer' from the LimitResolver refused "
				+ "(limit of policy 'customer' must be at least 1, was 0)");
	}

	private ClientLimits limits(LimitResolver resolver, int maxAnswers) {
		return new ClientLimits(resolver, this.store, this.time, Duration.ofMinutes(1), maxAnswers);
	}

}
