package dev.ratelimit.sample;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads the {@code ratelimit.decisions} counters of the application under test, and checks a limit in shadow
 * mode with them.
 */
final class Decisions {

	private Decisions() {
	}

	/**
	 * Sends 30 requests to {@code /demo/gcra}, 10 per 10 seconds in shadow mode: each answers 200 with its body
	 * and without rate limit headers, and 20 count as {@code shadow_rejected}.
	 */
	static void assertShadowedGcra(MeterRegistry registry, LoopbackClient client) {
		long before = count(registry, "DemoController.gcra", "shadow_rejected");
		for (int i = 0; i < 30; i++) {
			LoopbackClient.Response response = client.get("/demo/gcra");
			assertThat(response.status()).as("request %d", i + 1).isEqualTo(200);
			assertThat(response.body()).isEqualTo("gcra\n");
			assertThat(response.header("RateLimit")).isNull();
			assertThat(response.header("RateLimit-Policy")).isNull();
			assertThat(response.header("Retry-After")).isNull();
		}
		assertThat(count(registry, "DemoController.gcra", "shadow_rejected") - before).isEqualTo(20);
	}

	/** Returns how many requests {@code policy} decided with {@code outcome}, 0 before its first decision. */
	static long count(MeterRegistry registry, String policy, String outcome) {
		Counter counter = registry.find("ratelimit.decisions").tags("policy", policy, "outcome", outcome).counter();
		return (counter != null) ? Math.round(counter.count()) : 0;
	}

}
