package dev.ratelimit.spring.autoconfigure;

import java.beans.PropertyDescriptor;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import dev.ratelimit.spring.client.RateLimitClientProperties;
import dev.ratelimit.spring.web.internal.PolicyNames;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.core.ResolvableType;

/**
 * Every name that the starter reads under {@code ratelimit}, derived from the properties classes so that a new
 * property is known the moment it exists. It matches names as Spring Boot binds them: per element, ignoring
 * case and dashes, a dashed property possibly spread over several elements (as environment variables write
 * {@code KEY_PREFIX}), and a policy name of {@code ratelimit.policies} spanning as many elements as its dots.
 */
final class PropertySchema {

	static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("ratelimit");

	static final ConfigurationPropertyName POLICIES = ConfigurationPropertyName.of("ratelimit.policies");

	/** The fields of one policy, as they follow its name under {@code ratelimit.policies}. */
	static final Node POLICY = node(RateLimitProperties.Policy.class);

	private static final Bean RATELIMIT = ratelimit();

	private PropertySchema() {
	}

	/**
	 * Returns null if {@code name}, under {@link #ROOT}, is a known property, else the closest known name.
	 */
	static @Nullable Unknown check(ConfigurationPropertyName name) {
		Result result = RATELIMIT.match(name, ROOT.getNumberOfElements());
		return (result instanceof Unknown unknown) ? unknown : null;
	}

	/**
	 * Returns how many elements of {@code name}, under {@link #POLICIES}, form the policy's name: the fewest
	 * after which the rest is a field of a policy, or 0 if there are none.
	 */
	static int policyNameLength(ConfigurationPropertyName name) {
		int from = POLICIES.getNumberOfElements();
		for (int length = 1; from + length < name.getNumberOfElements(); length++) {
			if (POLICY.match(name, from + length) == Known.INSTANCE) {
				return length;
			}
		}
		return 0;
	}

	private static Bean ratelimit() {
		Bean root = bean(RateLimitProperties.class);
		Map<String, Property> properties = new LinkedHashMap<>(root.properties());
		// bound by the starter itself (PolicyOverrides) and by their own properties class
		properties.put("policies", new Property("policies", new MapOf(POLICY)));
		properties.put("client", new Property("client", bean(RateLimitClientProperties.class)));
		return new Bean(properties);
	}

	private static Node node(Class<?> type) {
		return node(ResolvableType.forClass(type));
	}

	private static Node node(ResolvableType type) {
		Class<?> resolved = type.toClass();
		if (Collection.class.isAssignableFrom(resolved)) {
			Node element = node(type.asCollection().getGeneric(0));
			return (element instanceof Leaf) ? Leaf.LIST : new ListOf(element);
		}
		if (Map.class.isAssignableFrom(resolved)) {
			return new MapOf(node(type.asMap().getGeneric(1)));
		}
		if (BeanUtils.isSimpleValueType(resolved) || resolved == Duration.class
				|| resolved.getName().startsWith("java.")) {
			return Leaf.SCALAR;
		}
		return bean(resolved);
	}

	private static Bean bean(Class<?> type) {
		Map<String, Property> properties = new LinkedHashMap<>();
		for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
			if (descriptor.getReadMethod() == null || descriptor.getName().equals("class")) {
				continue;
			}
			String dashed = dashed(descriptor.getName());
			ResolvableType propertyType = ResolvableType.forMethodReturnType(descriptor.getReadMethod());
			properties.put(uniform(dashed), new Property(dashed, node(propertyType)));
		}
		return new Bean(properties);
	}

	private static String dashed(String camelCase) {
		StringBuilder dashed = new StringBuilder();
		for (char c : camelCase.toCharArray()) {
			if (Character.isUpperCase(c)) {
				dashed.append('-').append(Character.toLowerCase(c));
			}
			else {
				dashed.append(c);
			}
		}
		return dashed.toString();
	}

	private static String uniform(String text) {
		return text.replace("-", "").toLowerCase(Locale.ROOT);
	}

	/** How a name matched, or the closest known name where it stopped matching. */
	sealed interface Result permits Known, Unknown {

	}

	enum Known implements Result {

		INSTANCE

	}

	/**
	 * A name that is not known.
	 * @param matched how many elements of the name are known
	 * @param suggestion the closest known name, or null if nothing near is known
	 */
	record Unknown(int matched, @Nullable String suggestion) implements Result {

		/** Returns the more helpful of two: one that suggests a name, else the one that matched more. */
		Unknown better(Unknown other) {
			if ((this.suggestion == null) != (other.suggestion == null)) {
				return (this.suggestion != null) ? this : other;
			}
			return (other.matched > this.matched) ? other : this;
		}

	}

	/** A part of the schema, matching the elements of a name from an index on. */
	sealed interface Node permits Bean, Leaf, ListOf, MapOf {

		Result match(ConfigurationPropertyName name, int from);

	}

	private record Property(String dashed, Node node) {
	}

	private record Bean(Map<String, Property> properties) implements Node {

		@Override
		public Result match(ConfigurationPropertyName name, int from) {
			Unknown deepest = new Unknown(from, suggest(name, from));
			StringBuilder joined = new StringBuilder();
			for (int to = from; to < name.getNumberOfElements(); to++) {
				joined.append(name.getElement(to, Form.UNIFORM));
				Property property = this.properties.get(joined.toString());
				if (property != null) {
					Result result = property.node().match(name, to + 1);
					if (result == Known.INSTANCE) {
						return result;
					}
					deepest = deepest.better((Unknown) result);
				}
			}
			return deepest;
		}

		private @Nullable String suggest(ConfigurationPropertyName name, int from) {
			if (from >= name.getNumberOfElements()) {
				return null;
			}
			String written = name.getElement(from, Form.UNIFORM);
			return this.properties.entrySet()
				.stream()
				.min(Comparator.comparingInt((entry) -> PolicyNames.distance(written, entry.getKey())))
				.map((entry) -> name.chop(from).append(entry.getValue().dashed()).toString())
				.orElse(null);
		}

	}

	private enum Leaf implements Node {

		SCALAR, LIST;

		@Override
		public Result match(ConfigurationPropertyName name, int from) {
			int remaining = name.getNumberOfElements() - from;
			if (remaining == 0 || (this == LIST && remaining == 1 && name.isNumericIndex(from))) {
				return Known.INSTANCE;
			}
			return new Unknown(from, null);
		}

	}

	private record ListOf(Node element) implements Node {

		@Override
		public Result match(ConfigurationPropertyName name, int from) {
			if (from >= name.getNumberOfElements()) {
				// the list written whole, as YAML writes an empty one ([]); binding checks its value
				return Known.INSTANCE;
			}
			if (!name.isNumericIndex(from)) {
				return new Unknown(from, null);
			}
			return this.element.match(name, from + 1);
		}

	}

	private record MapOf(Node value) implements Node {

		@Override
		public Result match(ConfigurationPropertyName name, int from) {
			if (from >= name.getNumberOfElements()) {
				// the map written whole, as YAML writes an empty one ({}); binding checks its value
				return Known.INSTANCE;
			}
			if (this.value instanceof Leaf) {
				return Known.INSTANCE;
			}
			Unknown deepest = new Unknown(from, null);
			for (int next = from + 1; next <= name.getNumberOfElements(); next++) {
				Result result = this.value.match(name, next);
				if (result == Known.INSTANCE) {
					return result;
				}
				deepest = deepest.better((Unknown) result);
			}
			return deepest;
		}

	}

}
