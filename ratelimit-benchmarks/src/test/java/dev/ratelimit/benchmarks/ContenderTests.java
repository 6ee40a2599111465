package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks that the benchmarks compare like with like: every contender, ours or a peer's, grants the same burst on
 * a fresh key, and the load meant to allow everything allows a whole burst at once.
 */
class ContenderTests {

	private static final RateLimitPolicy SLOW = RateLimitPolicy.of("slow", Algorithm.TOKEN_BUCKET, 10,
			Duration.ofHours(1));

	static Stream<String> contenders() {
		return Stream.of(Contender.OURS, Contender.PEERS, Contender.BARE_PEERS).flatMap(Stream::of);
	}

	@ParameterizedTest
	@MethodSource("contenders")
	void grantsTheSameBurstThenDenies(String name) {
		Contender contender = Contender.create(name, SLOW, 1024);
		long allowed = IntStream.range(0, 20).filter((i) -> contender.tryAcquire("user:1")).count();
		// Guava lends one permit from the future when its bucket is empty and makes the next caller pay for it;
		// a leaky bucket serves one request while its queue holds a burst of others
		long expected = (name.startsWith("guava") || name.equals("LEAKY_BUCKET")) ? SLOW.burst() + 1 : SLOW.burst();
		assertThat(allowed).isEqualTo(expected);
	}

	@ParameterizedTest
	@MethodSource("contenders")
	void keyedContendersKeepKeysApart(String name) {
		Contender contender = Contender.create(name, SLOW, 1024);
		IntStream.range(0, 20).forEach((i) -> contender.tryAcquire("user:1"));
		assertThat(contender.tryAcquire("user:2")).isEqualTo(!name.endsWith("-bare"));
	}

	@ParameterizedTest
	@EnumSource(Load.class)
	void everyPeerFollowsTheLoadsPolicy(Load load) {
		RateLimitPolicy policy = load.peerPolicy();
		assertThat(policy.burst()).isEqualTo(policy.limit());
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy ours = load.policy(algorithm);
			assertThat(ours.limit()).isEqualTo(policy.limit());
			assertThat(ours.window()).isEqualTo(policy.window());
			assertThat(ours.capacity()).isEqualTo(policy.burst());
		}
	}

	@ParameterizedTest
	@MethodSource("contenders")
	void allowedLoadAllowsAWholeBurstAtOnce(String name) {
		Contender contender = Contender.create(name, Load.ALLOWED, 1024);
		long burst = Load.ALLOWED.peerPolicy().burst();
		long allowed = IntStream.range(0, (int) burst).filter((i) -> contender.tryAcquire("user:1")).count();
		assertThat(allowed).isEqualTo(burst);
	}

}
