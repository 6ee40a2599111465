package dev.ratelimit.spring.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.FailLoudly;
import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The fleet's channel on a real Redis, subscribed to by {@link FleetSubscription}: a reset made by one instance
 * frees the key on another that denied it locally, with no heartbeat at all (the second instance's heartbeat runs
 * on a manual scheduler that never beats), so the message alone did it, at once rather than within a heartbeat;
 * and a subscription stopped while it opens leaves neither an error nor a subscriber behind.
 */
@ExtendWith({ RedisExtension.class, OutputCaptureExtension.class })
class FleetMessagesIT {

	private static final RateLimitPolicy API = RateLimitPolicy.of("api", Algorithm.GCRA, 1, Duration.ofMinutes(1));

	@Test
	void forgetsTheLocalDenialsOfAKeyResetElsewhereAsSoonAsItHearsOfIt(TestRedis redis) throws Exception {
		String prefix = "fleet-messages:" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
		LettuceConnectionFactory connections = connections(redis);
		RedisRateLimitStore resetting = store(redis, prefix);
		RedisRateLimitStore denying = store(redis, prefix);
		FleetSubscription subscription = subscribed(redis, connections, denying);
		try {
			assertThat(denying.limiter(API).decide("client").allowed()).isTrue();
			assertThat(denying.limiter(API).decide("client").allowed()).isFalse();
			resetting.reset("client", API);
			await().atMost(2, TimeUnit.SECONDS)
				.untilAsserted(() -> assertThat(denying.limiter(API).decide("client").allowed()).isTrue());
		}
		finally {
			subscription.stop();
			resetting.close();
			denying.close();
			connections.destroy();
		}
	}

	@Test
	void readsAChangeAnnouncedElsewhereOffTheClientsThreadAsSoonAsItHearsOfIt(TestRedis redis) throws Exception {
		String prefix = "fleet-changes:" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
		LettuceConnectionFactory connections = connections(redis);
		RedisRateLimitStore changing = store(redis, prefix);
		RedisRateLimitStore listening = store(redis, prefix);
		List<String> read = new CopyOnWriteArrayList<>();
		// as the starter's runtime changes do: read what changed, from Redis, when told
		listening.sharedChanges().orElseThrow().onChange(() -> read.add(Thread.currentThread().getName() + " "
				+ listening.sharedChanges().orElseThrow().read(List.of("api")).get("api")));
		FleetSubscription subscription = subscribed(redis, connections, listening);
		try {
			RateLimitStore.SharedChange lowered = new RateLimitStore.SharedChange(1, Duration.ofSeconds(5), 1);
			changing.sharedChanges().orElseThrow().share("api", lowered);
			await().atMost(2, TimeUnit.SECONDS).until(() -> !read.isEmpty());
			assertThat(read).containsExactly("ratelimit-fleet-messages " + lowered);
		}
		finally {
			subscription.stop();
			changing.close();
			listening.close();
			connections.destroy();
		}
	}

	@Test
	void stopsWhileSubscribingWithoutAnError(TestRedis redis, CapturedOutput output) {
		LettuceConnectionFactory connections = connections(redis);
		RedisRateLimitStore store = store(redis, "fleet-stop:");
		try {
			// an application closed as it starts stops its subscription at any point of its opening: 0 to 10 ms in
			for (int i = 0; i < 50; i++) {
				FleetSubscription subscription = new FleetSubscription(connections, store);
				subscription.start();
				LockSupport.parkNanos(i * 200_000L);
				subscription.stop();
			}
			// what a stopped subscription still opens, it closes: none stays subscribed
			await().atMost(10, TimeUnit.SECONDS)
				.until(() -> redis.commands().pubsubNumsub(store.fleetChannel()).get(store.fleetChannel()) == 0);
			assertThat(output).doesNotContain(RedisMessageListenerContainer.class.getSimpleName());
		}
		finally {
			store.close();
			connections.destroy();
		}
	}

	/** The store's subscription, started and subscribed, which happens off the starting thread. */
	private static FleetSubscription subscribed(TestRedis redis, LettuceConnectionFactory connections,
			RedisRateLimitStore store) {
		FleetSubscription subscription = new FleetSubscription(connections, store);
		subscription.start();
		await().atMost(10, TimeUnit.SECONDS)
			.until(() -> redis.commands().pubsubNumsub(store.fleetChannel()).get(store.fleetChannel()) == 1);
		return subscription;
	}

	/** The application's connection factory, started. */
	private static LettuceConnectionFactory connections(TestRedis redis) {
		URI uri = URI.create(redis.uri());
		LettuceConnectionFactory connections = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(uri.getHost(), uri.getPort()));
		connections.afterPropertiesSet();
		connections.start();
		return connections;
	}

	private static RedisRateLimitStore store(TestRedis redis, String prefix) {
		return RedisRateLimitStore.builder(redis.executor())
			.keyPrefix(prefix)
			.scheduler(new ManualScheduler(new ManualTimeSource()))
			.timeout(Duration.ofSeconds(10))
			.failurePolicy(FailurePolicy.DENY)
			.onFailure(FailLoudly.ON_REDIS_FAILURE)
			.build();
	}

}
