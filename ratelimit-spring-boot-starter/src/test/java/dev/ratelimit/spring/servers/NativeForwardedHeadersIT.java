package dev.ratelimit.spring.servers;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.jetty.JettyWebServer;
import org.springframework.boot.jetty.reactive.JettyReactiveWebServerFactory;
import org.springframework.boot.jetty.servlet.JettyServletWebServerFactory;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.tomcat.reactive.TomcatReactiveWebServerFactory;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that on Tomcat and on Jetty, with Spring MVC and with WebFlux, a request is keyed by the address its
 * connection came from even under {@code server.forward-headers-strategy=native}: Tomcat's
 * {@code RemoteIpValve} believes the {@code X-Forwarded-For} of any client on a private or loopback address,
 * Jetty's {@code ForwardedRequestCustomizer} that of every client. Maven runs these tests in a JVM of their own,
 * the one with Jetty's servlet container: Spring Boot would prefer Jetty to Tomcat in every other test.
 */
class NativeForwardedHeadersIT {

	private final HttpClient http = HttpClient.newHttpClient();

	enum Server {

		SPRING_MVC_ON_TOMCAT(ServletApp.class, WebApplicationType.SERVLET, TomcatServletWebServerFactory.class,
				TomcatWebServer.class),

		SPRING_MVC_ON_JETTY(ServletApp.class, WebApplicationType.SERVLET, JettyServletWebServerFactory.class,
				JettyWebServer.class),

		WEBFLUX_ON_TOMCAT(ReactiveApp.class, WebApplicationType.REACTIVE, TomcatReactiveWebServerFactory.class,
				TomcatWebServer.class),

		WEBFLUX_ON_JETTY(ReactiveApp.class, WebApplicationType.REACTIVE, JettyReactiveWebServerFactory.class,
				JettyWebServer.class);

		final Class<?> application;

		final WebApplicationType type;

		final Class<?> factory;

		final Class<? extends WebServer> webServer;

		Server(Class<?> application, WebApplicationType type, Class<?> factory, Class<? extends WebServer> webServer) {
			this.application = application;
			this.type = type;
			this.factory = factory;
			this.webServer = webServer;
		}

	}

	@ParameterizedTest
	@EnumSource(Server.class)
	void keysBySocketPeerWhateverTheNativeStrategyBelieved(Server server) throws Exception {
		SpringApplication application = new SpringApplication(server.application);
		application.setWebApplicationType(server.type);
		// a bean definition, so that Spring Boot's customizers, the forwarded-header strategy's among them, apply
		application.addInitializers((context) -> ((GenericApplicationContext) context).registerBean(server.factory));
		try (ConfigurableApplicationContext context = application.run("--server.port=0",
				"--server.forward-headers-strategy=native")) {
			WebServer webServer = ((WebServerApplicationContext) context).getWebServer();
			assertThat(webServer).isInstanceOf(server.webServer);
			int port = webServer.getPort();
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

	@TestApplication
	@Import(ServletController.class)
	static class ServletApp {

	}

	@RestController
	static class ServletController {

		@GetMapping("/address")
		String address(HttpServletRequest request) {
			return request.getRemoteAddr();
		}

		@GetMapping("/limited")
		@RateLimited(limit = 2, window = "1h", name = "limited")
		String limited() {
			return "limited";
		}

	}

	@TestApplication
	@Import(ReactiveController.class)
	static class ReactiveApp {

	}

	@RestController
	static class ReactiveController {

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
