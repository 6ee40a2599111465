package dev.ratelimit.core.redis;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

class RedisClockTests {

	private final ManualTimeSource local = new ManualTimeSource(5_000_000_000L);

	private final RedisClock clock = new RedisClock(this.local);

	@Test
	void knowsNoDeadlineBeforeItsFirstObservation() {
		assertThat(this.clock.redisTime(this.local.nanoTime())).isEmpty();
	}

	@Test
	void keepsTheEstimateOfTheQuickestReplyBecauseEveryOtherIsLate() {
		// Redis read 1000 s when the local clock read 5 s; one reply took 40 ms longer to arrive
		this.clock.observe(1_000_000_000L, 5_000_000_000L);
		this.clock.observe(1_001_000_000L, 6_040_000_000L);
		assertThat(this.clock.redisTime(7_000_000_000L)).isEqualTo("1002000000");
	}

	@Test
	void followsAStepOfRedisClockWithinTwoPeriods() {
		this.clock.observe(1_000_000_000L, 5_000_000_000L);
		// Redis now reads one hour less: a failover to a replica with a skewed clock
		this.local.advance(Duration.ofSeconds(10));
		this.clock.observe(1_000_000_000L - 3_600_000_000L + 10_000_000L, this.local.nanoTime());
		assertThat(this.clock.redisTime(this.local.nanoTime())).isEqualTo("1010000000");
		this.local.advance(Duration.ofSeconds(10));
		this.clock.observe(1_000_000_000L - 3_600_000_000L + 20_000_000L, this.local.nanoTime());
		assertThat(this.clock.redisTime(this.local.nanoTime())).isEqualTo(Long.toString(1_000_000_000L - 3_600_000_000L + 20_000_000L));
	}

}
