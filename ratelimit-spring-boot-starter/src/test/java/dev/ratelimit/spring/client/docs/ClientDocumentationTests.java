package dev.ratelimit.spring.client.docs;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.spring.client.RateLimitClientAutoConfiguration;
import dev.ratelimit.spring.client.RateLimitClientCustomizer;
import dev.ratelimit.spring.client.RateLimitClientInterceptor;
import dev.ratelimit.spring.client.RateLimitClientProperties;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every snippet of {@code docs/client.md}: the tests below execute its Java snippets, which
 * {@code DocumentationSnippetsTests} finds in this folder's sources, and load its properties snippets as they are.
 */
class ClientDocumentationTests {

	private static final Path DOCUMENT = Path.of("..", "docs", "client.md");

	private static final Pattern SNIPPET = Pattern.compile("```(\\w+)\\n(.*?)```", Pattern.DOTALL);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RestClientAutoConfiguration.class, RateLimitClientAutoConfiguration.class));

	@Test
	void everyPropertiesSnippetEnablesTheClientSide() throws IOException {
		assertThat(snippets("properties")).hasSize(2).allSatisfy((snippet) -> this.contextRunner
			.withPropertyValues(propertyValues(snippet))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitClientInterceptor.class)
				.hasSingleBean(RateLimitClientCustomizer.class)));
	}

	@Test
	void documentedDefaultsAreTheDefaultsAndCoverEveryKey() throws IOException {
		String defaults = snippets("properties").get(1);
		Properties properties = new Properties();
		properties.load(new StringReader(defaults));
		assertThat(new TreeSet<>(properties.stringPropertyNames())).isEqualTo(new TreeSet<>(metadataKeys()));
		String document = Files.readString(DOCUMENT);
		assertThat(metadataKeys()).allSatisfy((key) -> assertThat(document).contains("| `" + key + "` |"));
		this.contextRunner.withPropertyValues(propertyValues(defaults))
			.run((context) -> assertThat(context.getBean(RateLimitClientProperties.class)).usingRecursiveComparison()
				.ignoringFields("enabled")
				.isEqualTo(new RateLimitClientProperties()));
	}

	@Test
	void restClientOneLiner() throws IOException {
		try (ScriptedServer server = new ScriptedServer()) {
			server.reply(429, "", "Retry-After", "0").reply(200, "widget");
			RestClient restClient = RestClient.builder()
					.requestInterceptor(RateLimitClientInterceptor.builder().build())
					.build();
			assertThat(restClient.get().uri(server.url() + "/items/42").retrieve().body(String.class))
				.isEqualTo("widget");
			assertThat(server.received()).containsExactly("GET /items/42", "GET /items/42");
		}
	}

	@Test
	void restTemplateOneLiner() throws IOException {
		try (ScriptedServer server = new ScriptedServer()) {
			server.reply(429, "", "Retry-After", "0").reply(200, "widget");
			RestTemplate restTemplate = new RestTemplate();
			restTemplate.getInterceptors().add(RateLimitClientInterceptor.builder().build());
			assertThat(restTemplate.getForObject(server.url() + "/items/42", String.class)).isEqualTo("widget");
			assertThat(server.received()).containsExactly("GET /items/42", "GET /items/42");
		}
	}

	@Test
	void serviceUsingSpringBootsBuilderRetries() throws IOException {
		try (ScriptedServer server = new ScriptedServer()) {
			server.reply(429, "", "Retry-After", "0").reply(200, "widget");
			this.contextRunner.withPropertyValues("ratelimit.client.enabled=true", "catalog.url=" + server.url())
				.withUserConfiguration(Catalog.class)
				.run((context) -> assertThat(context.getBean(Catalog.class).item("42")).isEqualTo("widget"));
			assertThat(server.received()).containsExactly("GET /items/42", "GET /items/42");
		}
	}

	@Test
	void builderSettings() throws IOException {
		RateLimitClientInterceptor interceptor = RateLimitClientInterceptor.builder()
				.baseDelay(Duration.ofMillis(200))
				.maxDelay(Duration.ofSeconds(5))
				.maxAttempts(5)
				.maxTotalWait(Duration.ofSeconds(10))
				.retryNonIdempotent(true)
				.build();
		RestClient restClient = RestClient.builder().requestInterceptor(interceptor).build();
		try (ScriptedServer server = new ScriptedServer()) {
			for (int i = 0; i < 5; i++) {
				server.reply(429, "", "Retry-After", "0");
			}
			server.reply(429, "", "Retry-After", "11");
			assertThat(post(restClient, server.url())).isEqualTo(429);
			assertThat(post(restClient, server.url())).isEqualTo(429);
			assertThat(server.received()).hasSize(6).containsOnly("POST /orders {}");
		}
	}

	@Test
	void injectedTimeSleepingAndRandomness() throws IOException {
		List<Duration> waits = new ArrayList<>();
		RateLimitClientInterceptor interceptor = RateLimitClientInterceptor.builder()
				.clock(Clock.fixed(Instant.parse("2025-01-01T00:00:00Z"), ZoneOffset.UTC))
				.sleeper(waits::add)
				.random(new SplittableRandom(42))
				.build();
		RestClient restClient = RestClient.builder().requestInterceptor(interceptor).build();
		try (ScriptedServer server = new ScriptedServer()) {
			server.reply(429, "", "Retry-After", "Wed, 01 Jan 2025 00:00:05 GMT").reply(429, "").reply(200, "widget");
			assertThat(restClient.get().uri(server.url() + "/items/42").retrieve().body(String.class))
				.isEqualTo("widget");
			long secondBackoffCeiling = Duration.ofSeconds(2).toNanos();
			assertThat(waits).containsExactly(Duration.ofSeconds(5),
					Duration.ofNanos(new SplittableRandom(42).nextLong(secondBackoffCeiling + 1)));
		}
	}

	private static int post(RestClient restClient, String url) {
		return restClient.post()
			.uri(url + "/orders")
			.body("{}")
			.exchange((request, response) -> response.getStatusCode().value());
	}

	private static List<String> snippets(String language) throws IOException {
		List<String> snippets = new ArrayList<>();
		Matcher matcher = SNIPPET.matcher(Files.readString(DOCUMENT));
		while (matcher.find()) {
			if (matcher.group(1).equals(language)) {
				snippets.add(matcher.group(2));
			}
		}
		return snippets;
	}

	private static String[] propertyValues(String snippet) {
		return snippet.lines().map(String::strip).filter((line) -> !line.isEmpty()).toArray(String[]::new);
	}

	private static List<String> metadataKeys() throws IOException {
		String metadata = Files.readString(Path.of("target", "classes", "META-INF", "spring-configuration-metadata.json"));
		Matcher matcher = Pattern.compile("\"name\": \"(ratelimit\\.client\\.[a-z-]+)\"").matcher(metadata);
		List<String> keys = new ArrayList<>();
		while (matcher.find()) {
			keys.add(matcher.group(1));
		}
		return keys;
	}

}
