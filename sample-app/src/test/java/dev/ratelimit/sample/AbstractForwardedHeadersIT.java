package dev.ratelimit.sample;

import dev.ratelimit.spring.test.ManualClock;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a client on a private address gets from writing its own forwarding headers, whatever Spring Boot's
 * server.forward-headers-strategy: nothing, since Tomcat's RemoteIpValve trusts all of 127/8, 10/8 and the
 * other private ranges, and Spring's ForwardedHeaderFilter trusts everyone, but the limiter trusts only
 * ratelimit.client-address.trusted-proxies.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@ManualClock
abstract class AbstractForwardedHeadersIT {

	@LocalServerPort
	int port;

	@Test
	void aClientWritingAFreshXForwardedForEachTimeKeepsItsLimit() {
		LoopbackClient spoofer = new LoopbackClient("127.0.0.2", this.port);
		int allowed = 0;
		for (int i = 0; i < 15; i++) {
			if (spoofer.get("/demo/gcra", "X-Forwarded-For", "198.51.100." + (i + 1)).status() == 200) {
				allowed++;
			}
		}
		assertThat(allowed).isEqualTo(10);
	}

	@Test
	void aClientWritingAFreshForwardedEachTimeKeepsItsLimit() {
		LoopbackClient spoofer = new LoopbackClient("127.0.0.4", this.port);
		int allowed = 0;
		for (int i = 0; i < 15; i++) {
			if (spoofer.get("/demo/gcra", "Forwarded", "for=198.51.100." + (i + 1)).status() == 200) {
				allowed++;
			}
		}
		assertThat(allowed).isEqualTo(10);
	}

	@Test
	void aClientCannotForwardItselfIntoTheExemptAddress() {
		LoopbackClient spoofer = new LoopbackClient("127.0.0.5", this.port);
		for (int i = 0; i < 10; i++) {
			assertThat(spoofer.get("/demo/gcra", "X-Forwarded-For", "127.0.0.77").status()).isEqualTo(200);
		}
		assertThat(spoofer.get("/demo/gcra", "X-Forwarded-For", "127.0.0.77").status()).isEqualTo(429);
	}

}
