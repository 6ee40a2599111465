package dev.ratelimit.benchmarks;

import java.time.Duration;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests that the gateway's limiter gets the same rate and burst as our token bucket, and its script where the
 * gateway keeps it.
 */
class GatewayLimiterTests {

	@Test
	void configuresTheGatewayWithTheTokenBucketsRatePerSecondAndBurst() {
		RateLimitPolicy policy = RateLimitPolicy.of("bench", Algorithm.TOKEN_BUCKET, 500, Duration.ofMillis(100));
		RedisRateLimiter.Config config = GatewayLimiter.config(policy.withBurst(7_000));
		assertThat(config.getReplenishRate()).isEqualTo(5_000);
		assertThat(config.getBurstCapacity()).isEqualTo(7_000);
		assertThat(config.getRequestedTokens()).isEqualTo(1);
	}

	@Test
	void raisesABurstBelowOneSecondOfTokensToTheLeastTheGatewayAccepts() {
		// the ALLOWED load: 10^8 per second, burst 10^5, a bucket the gateway refuses to hold
		RedisRateLimiter.Config config = GatewayLimiter.config(Load.ALLOWED.peerPolicy());
		assertThat(config.getReplenishRate()).isEqualTo(100_000_000);
		assertThat(config.getBurstCapacity()).isEqualTo(100_000_000);
	}

	@Test
	void refusesARateThatIsNoWholeNumberPerSecondNamingThePolicy() {
		RateLimitPolicy third = RateLimitPolicy.of("slow", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(3));
		assertThatIllegalArgumentException().isThrownBy(() -> GatewayLimiter.config(third))
			.withMessage("the gateway's rate is a whole number per second up to 2147483647, not 1 per PT3S (slow)");
	}

	@Test
	void findsTheGatewaysOwnScript() throws Exception {
		assertThat(RedisSection.script(RedisContender.GATEWAY)).contains("local tokens_key = KEYS[1]")
			.contains("setex");
	}

}
