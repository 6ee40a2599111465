package dev.ratelimit.spring.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.spring.RateLimited;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.tomcat.reactive.TomcatReactiveWebServerFactory;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that WebFlux on Tomcat keys a request by the address its connection came from, as Spring MVC on Tomcat
 * does, even under {@code server.forward-headers-strategy=native}, whose {@code RemoteIpValve} believes the
 * {@code X-Forwarded-For} of any client on a private or loopback address.
 */
class WebFluxOnTomcatIT {

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void keysBySocketPeerWhateverTheNativeStrategyBelieved() throws Exception {
		SpringApplication application = new SpringApplication(App.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		try (ConfigurableApplicationContext context = application.run("--server.port=0",
				"--server.forward-headers-strategy=native")) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			// the application itself sees the address that the header claims
			assertThat(get(port, "/address", "198.51.100.7").body()).isEqualTo("198.51.100.7");
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				statuses.add(get(port, "/limited", "198.51.100." + i).statusCode());
			}
			// one client behind four made-up addresses: one quota, the loopback peer's
			assertThat(statuses).containsExactly(200, 200, 429, 429);
		}
	}

	private HttpResponse<String> get(int port, String path, String forwardedFor) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("X-Forwarded-For", forwardedFor)
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	@WebFluxTestApplication
	@Import(AddressController.class)
	static class App {

		@Bean
		TomcatReactiveWebServerFactory tomcat() {
			return new TomcatReactiveWebServerFactory();
		}

	}

	@RestController
	static class AddressController {

		@GetMapping("/address")
		Mono<String> address(ServerWebExchange exchange) {
			return Mono.just(exchange.getRequest().getRemoteAddress().getAddress().getHostAddress());
		}

		@GetMapping("/limited")
		@RateLimited(limit = 2, window = "1h", name = "limited")
		Mono<String> limited() {
			return Mono.just("limited");
		}

	}

}
