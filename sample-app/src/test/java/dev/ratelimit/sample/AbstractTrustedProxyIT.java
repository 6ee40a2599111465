package dev.ratelimit.sample;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With 127.0.0.3 as the one trusted proxy, the client that it forwards is the client, while everyone else
 * still cannot choose its own.
 */
@TestPropertySource(properties = "ratelimit.client-address.trusted-proxies=127.0.0.3")
abstract class AbstractTrustedProxyIT extends AbstractForwardedHeadersIT {

	@Test
	void limitsEachClientThatTheTrustedProxyForwardsOnItsOwn() {
		LoopbackClient proxy = new LoopbackClient("127.0.0.3", this.port);
		for (int i = 0; i < 10; i++) {
			assertThat(proxy.get("/demo/gcra", "X-Forwarded-For", "6.6.6.6, 198.51.100.1").status()).isEqualTo(200);
		}
		assertThat(proxy.get("/demo/gcra", "X-Forwarded-For", "198.51.100.1").status()).isEqualTo(429);
		assertThat(proxy.get("/demo/gcra", "Forwarded", "for=198.51.100.1").status()).isEqualTo(429);
		assertThat(proxy.get("/demo/gcra", "X-Forwarded-For", "198.51.100.2").status()).isEqualTo(200);
		assertThat(proxy.get("/demo/gcra", "Forwarded", "for=\"[2001:db8:1:2::1]:4711\"").status()).isEqualTo(200);
	}

	@Test
	void countsTheFailedLoginsOfEachClientThatTheTrustedProxyForwardsOnItsOwn() {
		LoopbackClient proxy = new LoopbackClient("127.0.0.3", this.port);
		String wrong = "Basic " + Base64.getEncoder().encodeToString("alice:wrong".getBytes(StandardCharsets.UTF_8));
		String right = "Basic "
				+ Base64.getEncoder().encodeToString("alice:alice-password".getBytes(StandardCharsets.UTF_8));
		for (int i = 0; i < 5; i++) {
			assertThat(proxy.get("/demo/user", "X-Forwarded-For", "6.6.6.6, 198.51.100.7", "Authorization", wrong)
				.status()).isEqualTo(401);
		}
		assertThat(proxy.get("/demo/user", "X-Forwarded-For", "198.51.100.7", "Authorization", right).status())
			.isEqualTo(429);
		assertThat(proxy.get("/demo/user", "X-Forwarded-For", "198.51.100.8", "Authorization", right).status())
			.isEqualTo(200);
	}

	@Test
	void exemptsTheExemptAddressBehindTheTrustedProxy() {
		LoopbackClient proxy = new LoopbackClient("127.0.0.3", this.port);
		for (int i = 0; i < 20; i++) {
			LoopbackClient.Response response = proxy.get("/demo/gcra", "X-Forwarded-For", "127.0.0.77");
			assertThat(response.status()).isEqualTo(200);
			assertThat(response.header("RateLimit")).isNull();
		}
	}

}
