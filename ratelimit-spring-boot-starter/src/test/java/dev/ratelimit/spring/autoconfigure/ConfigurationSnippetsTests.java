package dev.ratelimit.spring.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.core.testing.Documentation;
import dev.ratelimit.core.testing.Documentation.Snippet;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.PropertiesPropertySourceLoader;
import org.springframework.boot.env.PropertySourceLoader;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ByteArrayResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every YAML and properties snippet of the README and of {@code docs/} is configuration an application starts
 * with: under {@code ratelimit}, every property is one the starter reads, and the whole binds to
 * {@link RateLimitProperties} and the policy overrides as at startup; every other property is one that the
 * configuration metadata on the class path describes, Spring Boot's own included.
 */
class ConfigurationSnippetsTests {

	private static final Pattern PROPERTY = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]+)\",\\s*\"type\"\\s*:\\s*\"([^\"]+)\"");

	@Test
	void everyYamlAndPropertiesSnippetBinds() throws IOException {
		Map<String, String> metadata = metadata();
		List<Snippet> snippets = Documentation.snippets("yaml", "properties");
		assertThat(snippets).as("configuration snippets read").hasSizeGreaterThan(20);
		List<String> problems = new ArrayList<>();
		for (Snippet snippet : snippets) {
			try {
				StandardEnvironment environment = new StandardEnvironment();
				for (PropertySource<?> source : load(snippet)) {
					environment.getPropertySources().addFirst(source);
					for (String name : ((EnumerablePropertySource<?>) source).getPropertyNames()) {
						if (!name.startsWith("ratelimit.") && !described(name, metadata)) {
							problems.add(snippet + ": no metadata describes " + name);
						}
					}
				}
				UnknownProperties.check(environment);
				RateLimitProperties properties = Binder.get(environment)
					.bindOrCreate("ratelimit", RateLimitProperties.class);
				PropertiesLimitSettings.of(properties, PolicyOverrides.bind(environment));
			}
			catch (RuntimeException ex) {
				problems.add(snippet + ": " + ex.getMessage());
			}
		}
		assertThat(problems).isEmpty();
	}

	private static List<PropertySource<?>> load(Snippet snippet) throws IOException {
		PropertySourceLoader loader = snippet.language().equals("yaml") ? new YamlPropertySourceLoader()
				: new PropertiesPropertySourceLoader();
		return loader.load(snippet.toString(),
				new ByteArrayResource(snippet.text().getBytes(StandardCharsets.UTF_8), snippet.toString()));
	}

	/** Whether a property is described, or is a key of a described map, once its list indexes are left out. */
	private static boolean described(String name, Map<String, String> metadata) {
		String property = name.replaceAll("\\[\\d+]", "");
		if (metadata.containsKey(property)) {
			return true;
		}
		return metadata.entrySet()
			.stream()
			.anyMatch((entry) -> entry.getValue().startsWith("java.util.Map<")
					&& property.startsWith(entry.getKey() + "."));
	}

	/** The properties that the configuration metadata of every jar and folder of the class path describes. */
	private static Map<String, String> metadata() throws IOException {
		Map<String, String> properties = new TreeMap<>();
		ClassLoader classLoader = ConfigurationSnippetsTests.class.getClassLoader();
		for (String file : List.of("META-INF/spring-configuration-metadata.json",
				"META-INF/additional-spring-configuration-metadata.json")) {
			Enumeration<URL> resources = classLoader.getResources(file);
			while (resources.hasMoreElements()) {
				try (InputStream json = resources.nextElement().openStream()) {
					Matcher property = PROPERTY.matcher(new String(json.readAllBytes(), StandardCharsets.UTF_8));
					while (property.find()) {
						properties.put(property.group(1), property.group(2));
					}
				}
			}
		}
		return properties;
	}

}
