package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reset of every client on a real Redis: the states of the store's own key prefix go, over as many SCAN steps
 * as they take, and nothing else does, neither the fleet's keys nor any key of another prefix, even one whose
 * glob characters would match it; and an instance that still expected a state does not bring it back.
 */
@ExtendWith(RedisExtension.class)
class RedisResetAllIT {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final RateLimitPolicy HOURLY = RateLimitPolicy.of("api", Algorithm.GCRA, 3, Duration.ofHours(1));

	private final OpenStores stores = new OpenStores();

	private final ManualTimeSource clock = new ManualTimeSource();

	private TestRedis redis;

	private RedisCommands<String, String> commands;

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
		this.commands = redis.commands();
	}

	@AfterEach
	void closeStores() {
		this.stores.closeAll();
	}

	@Test
	void deletesTheStatesOfItsPrefixOverManyStepsAndNoOtherKey() {
		String base = "reset-all:" + RUN + ":";
		// another prefix that starts with it, and one that its glob characters would match unescaped
		RedisRateLimitStore own = store(base + "a*?[b]:");
		RedisRateLimitStore longer = store(base + "a*?[b]:x");
		RedisRateLimitStore matching = store(base + "aZZb:");
		int clients = 2 * PrefixReset.KEYS_PER_STEP + 100;
		for (int i = 0; i < clients; i++) {
			own.limiter(HOURLY).decide("client-" + i);
		}
		for (RateLimitStore other : List.of(longer, matching)) {
			other.limiter(HOURLY).decide("client-0");
		}
		RateLimitStore.SharedChange lowered = new RateLimitStore.SharedChange(1, Duration.ofHours(1), 1);
		own.sharedChanges().orElseThrow().share("api", lowered);
		assertThat(states(base + "a*?[b]:")).hasSize(clients);
		List<String> others = new ArrayList<>(keys(base + "a*?[b]:x"));
		others.addAll(keys(base + "aZZb:"));

		own.resetAll().orElseThrow().resetAll();

		assertThat(states(base + "a*?[b]:")).isEmpty();
		assertThat(keys(base + "a*?[b]:")).as("the fleet's keys, and the marks of the released states")
			.contains(base + "a*?[b]:{%fleet}:control");
		assertThat(own.sharedChanges().orElseThrow().read(List.of("api"))).isEqualTo(Map.of("api", lowered));
		List<String> othersAfter = new ArrayList<>(keys(base + "a*?[b]:x"));
		othersAfter.addAll(keys(base + "aZZb:"));
		assertThat(othersAfter).containsExactlyInAnyOrderElementsOf(others).isNotEmpty();
		assertThat(own.limiter(HOURLY).decide("client-7").remaining()).isEqualTo(2);
	}

	@Test
	void isNotUndoneByAnotherInstanceThatStillExpectedAState() {
		String prefix = "reset-all:" + RUN + ":shared:";
		RedisRateLimitStore resetting = store(prefix);
		RateLimiter other = store(prefix).limiter(HOURLY);
		other.decide("client");
		assertThat(other.decide("client").remaining()).isEqualTo(1);

		resetting.resetAll().orElseThrow().resetAll();

		assertThat(other.decide("client").remaining()).as("a fresh key's, not the one the other instance knew")
			.isEqualTo(2);
	}

	private RedisRateLimitStore store(String prefix) {
		return this.stores.track(RedisRateLimitStore.builder(this.redis.executor())
			.keyPrefix(prefix)
			.timeSource(this.clock)
			.failurePolicy(FailurePolicy.DENY)
			.timeout(Duration.ofSeconds(10))
			.onFailure(FailLoudly.ON_REDIS_FAILURE)
			.build());
	}

	/** Every key of {@code prefix}: its clients', their marks, the fleet's. */
	private List<String> keys(String prefix) {
		String pattern = prefix.replaceAll("([*?\\[\\]])", "\\\\$1") + "{*";
		List<String> found = new ArrayList<>();
		ScanIterator.scan(this.commands, ScanArgs.Builder.matches(pattern).limit(1000))
			.forEachRemaining(found::add);
		return found;
	}

	/** The clients' states of {@code prefix}, without the marks beside them. */
	private List<String> states(String prefix) {
		return keys(prefix).stream()
			.filter((key) -> !key.contains("{%fleet}") && !key.endsWith("!released") && !key.endsWith("!restored"))
			.toList();
	}

}
