package dev.ratelimit.sample;

import java.net.http.HttpClient;
import java.time.Duration;

import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.test.web.servlet.client.RestTestClient;

/**
 * The client of the sample's tests, on the JDK's HTTP client: Spring's default there would be Reactor Netty's,
 * whose event loops BlockHound watches on the WebFlux sample and which, refused a lock it waited for, dropped a
 * response and left a test waiting for good. A read timeout ends such a wait in a failure instead.
 */
final class SampleClient {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private SampleClient() {
	}

	/** A client of the sample on {@code port} of the loopback interface. */
	static RestTestClient on(int port) {
		JdkClientHttpRequestFactory requests = new JdkClientHttpRequestFactory(
				HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build());
		requests.setReadTimeout(TIMEOUT);
		return RestTestClient.bindToServer(requests).baseUrl("http://127.0.0.1:" + port).build();
	}

}
