package dev.ratelimit.spring.autoconfigure;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailurePolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.beans.BeanUtils;
import org.springframework.core.ResolvableType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that the configuration metadata that the build generates, which IDEs read, describes every field a
 * policy override and a rule take, with their types as bound, and offers the values of the fields that have a
 * fixed set.
 */
class ConfigurationMetadataTests {

	private final DocumentContext metadata = read();

	@ParameterizedTest
	@CsvSource({ "ratelimit.policies.*., dev.ratelimit.spring.autoconfigure.RateLimitProperties$Policy",
			"ratelimit.rules[*]., dev.ratelimit.spring.autoconfigure.RateLimitProperties$Rule" })
	void describesEveryNestedFieldWithItsType(String prefix, Class<?> type) {
		PropertyDescriptor[] fields = Arrays.stream(BeanUtils.getPropertyDescriptors(type))
			.filter((field) -> field.getWriteMethod() != null)
			.toArray(PropertyDescriptor[]::new);
		assertThat(fields).hasSizeGreaterThanOrEqualTo(8);
		for (PropertyDescriptor field : fields) {
			Map<String, Object> property = property(prefix + dashed(field.getName()));
			assertThat(property).as(field.getName()).isNotNull();
			assertThat((String) property.get("description")).as(field.getName()).isNotBlank().endsWith(".");
			assertThat(property.get("type")).as(field.getName())
				.isEqualTo(ResolvableType.forMethodReturnType(field.getReadMethod()).toString());
		}
		assertThat(this.metadata.<List<String>>read("$.properties[*].name")
			.stream()
			.filter((name) -> name.startsWith(prefix))).hasSameSizeAs(fields);
	}

	@Test
	void describesThePolicyOverrides() {
		assertThat((String) property("ratelimit.policies").get("description")).contains("ignoring case");
	}

	@ParameterizedTest
	@CsvSource({ "ratelimit.default-algorithm", "ratelimit.policies.*.algorithm", "ratelimit.rules[*].algorithm" })
	void offersEveryAlgorithm(String property) {
		assertThat(hintValues(property)).containsExactlyElementsOf(Arrays.stream(Algorithm.values())
			.map((algorithm) -> algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-'))
			.toList());
	}

	@ParameterizedTest
	@CsvSource({ "ratelimit.policies.*.key", "ratelimit.rules[*].key" })
	void offersEveryKeyForm(String property) {
		assertThat(hintValues(property)).containsExactly("ip", "user", "header:", "bean:", "spel:");
	}

	@Test
	void offersEveryFailurePolicyAndStore() {
		assertThat(hintValues("ratelimit.redis.failure-policy")).containsExactlyInAnyOrderElementsOf(Arrays
			.stream(FailurePolicy.values())
			.map((policy) -> policy.name().toLowerCase(Locale.ROOT))
			.toList());
		assertThat(hintValues("ratelimit.store")).containsExactlyElementsOf(Arrays
			.stream(RateLimitProperties.StoreType.values())
			.map((store) -> store.name().toLowerCase(Locale.ROOT))
			.toList());
	}

	@ParameterizedTest
	@CsvSource({ "ratelimit.near-limit-share, java.lang.Double, 0.2",
			"ratelimit.health.down-when-failing, java.lang.Boolean, false" })
	void describesTheOperationalPropertiesWithTheirDefaults(String name, String type, String defaultValue) {
		Map<String, Object> property = property(name);
		assertThat(property.get("type")).isEqualTo(type);
		assertThat(String.valueOf(property.get("defaultValue"))).isEqualTo(defaultValue);
		assertThat((String) property.get("description")).isNotBlank().endsWith(".");
	}

	private Map<String, Object> property(String name) {
		List<Map<String, Object>> found = this.metadata.read("$.properties[?(@.name == '" + name + "')]");
		assertThat(found).as(name).hasSize(1);
		return found.get(0);
	}

	private List<String> hintValues(String name) {
		return this.metadata.read("$.hints[?(@.name == '" + name + "')].values[*].value");
	}

	private static String dashed(String camelCase) {
		return camelCase.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
	}

	private static DocumentContext read() {
		try (InputStream json = ConfigurationMetadataTests.class
			.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(json).isNotNull();
			return JsonPath.parse(json);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
