package dev.ratelimit.spring.web;

import java.beans.PropertyDescriptor;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

import dev.ratelimit.spring.autoconfigure.PropertySchema;
import dev.ratelimit.spring.autoconfigure.RateLimitProperties;
import dev.ratelimit.spring.autoconfigure.UnknownProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

/**
 * The {@code ratelimit.policies.<name>.*} overrides, read from every property source however the name is
 * written. Policy names match by their {@linkplain #canonical(String) canonical form}: letters and digits only,
 * ignoring case, so that {@code DemoController.gcra} is overridden by
 * {@code ratelimit.policies.DemoController.gcra.limit}, {@code ratelimit.policies[DemoController.gcra].limit}
 * and {@code RATELIMIT_POLICIES_DEMOCONTROLLER_GCRA_LIMIT} alike. Spring Boot's own map binding cannot do this:
 * it takes the first element after {@code policies} as the whole name, so a dotted name would need brackets,
 * which environment variables cannot write.
 */
public final class PolicyOverrides {

	private static final Map<String, String> FIELDS = fields();

	private static final String PLANS = "plans";

	private final Map<String, Entry> overrides;

	private PolicyOverrides(Map<String, Entry> overrides) {
		this.overrides = overrides;
	}

	/**
	 * Returns the overrides of the environment. Where one field is set under two spellings of a name, the one
	 * in the property source of higher precedence wins, as it would for any other property.
	 */
	public static PolicyOverrides bind(Environment environment) {
		Map<String, Map<String, ConfigurationPropertyName>> fieldRoots = new LinkedHashMap<>();
		Map<String, String> written = new HashMap<>();
		Map<String, Set<String>> origins = new HashMap<>();
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (!(source instanceof IterableConfigurationPropertySource iterable)) {
				continue;
			}
			iterable.stream().filter(PropertySchema.POLICIES::isAncestorOf).forEach((name) -> {
				int length = PropertySchema.policyNameLength(name);
				if (length == 0) {
					// not a policy field: UnknownProperties reports it
					return;
				}
				int from = PropertySchema.POLICIES.getNumberOfElements();
				StringJoiner original = new StringJoiner(".");
				StringBuilder field = new StringBuilder();
				for (int i = from; i < name.getNumberOfElements(); i++) {
					if (i < from + length) {
						original.add(name.getElement(i, Form.ORIGINAL));
					}
					else if (field.toString().equals(PLANS)) {
						// plans.pro.limit sets the field plans, bound as a whole
						break;
					}
					else if (!name.isNumericIndex(i)) {
						// exempt[0] sets the field exempt
						field.append(name.getElement(i, Form.UNIFORM));
					}
				}
				String canonical = canonical(original.toString());
				written.putIfAbsent(canonical, original.toString());
				fieldRoots.computeIfAbsent(canonical, (key) -> new LinkedHashMap<>())
					.putIfAbsent(FIELDS.get(field.toString()), name.chop(from + length));
				ConfigurationProperty property = iterable.getConfigurationProperty(name);
				if (property != null && property.getOrigin() != null) {
					origins.computeIfAbsent(canonical, (key) -> new LinkedHashSet<>())
						.add(property.getOrigin().toString());
				}
			});
		}
		Binder binder = Binder.get(environment);
		Map<String, Entry> overrides = new LinkedHashMap<>();
		fieldRoots.forEach((canonical, roots) -> {
			RateLimitProperties.Policy values = new RateLimitProperties.Policy();
			BeanWrapper target = PropertyAccessorFactory.forBeanPropertyAccess(values);
			Map<ConfigurationPropertyName, BeanWrapper> bound = new HashMap<>();
			roots.forEach((field, root) -> {
				BeanWrapper source = bound.computeIfAbsent(root, (key) -> PropertyAccessorFactory
					.forBeanPropertyAccess(binder.bind(key, Bindable.of(RateLimitProperties.Policy.class))
						.orElseGet(RateLimitProperties.Policy::new)));
				target.setPropertyValue(field, source.getPropertyValue(field));
			});
			overrides.put(canonical, new Entry(written.get(canonical), values,
					List.copyOf(origins.getOrDefault(canonical, Set.of())), Set.copyOf(roots.keySet())));
		});
		return new PolicyOverrides(overrides);
	}

	private static Map<String, String> fields() {
		Map<String, String> fields = new HashMap<>();
		for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(RateLimitProperties.Policy.class)) {
			if (descriptor.getWriteMethod() != null) {
				fields.put(descriptor.getName().toLowerCase(Locale.ROOT), descriptor.getName());
			}
		}
		return fields;
	}

	/**
	 * Returns the form in which policy names are compared: only the letters and digits, in lower case.
	 * @param name a policy name
	 * @return its canonical form
	 */
	static String canonical(String name) {
		StringBuilder canonical = new StringBuilder(name.length());
		name.codePoints()
			.filter(Character::isLetterOrDigit)
			.map(Character::toLowerCase)
			.forEach(canonical::appendCodePoint);
		return canonical.toString();
	}

	/** Returns the override of the policy of that name, or null if none. */
	public @Nullable Entry get(String policyName) {
		return this.overrides.get(canonical(policyName));
	}

	/**
	 * Fails unless every override names one of the policies that may be overridden; an override that sets only
	 * {@code shadow} may name a rule's policy too.
	 * @param overridable the names of the policies that overrides may change
	 * @param rules the names of the policies of {@code ratelimit.rules}, whose values their rules set
	 */
	void checkMatched(Collection<String> overridable, Collection<String> rules) {
		Set<String> known = new HashSet<>();
		overridable.forEach((name) -> known.add(canonical(name)));
		Set<String> ruled = new HashSet<>();
		rules.forEach((name) -> ruled.add(canonical(name)));
		for (Map.Entry<String, Entry> entry : this.overrides.entrySet()) {
			Entry override = entry.getValue();
			boolean rule = ruled.contains(entry.getKey());
			if (known.contains(entry.getKey()) || (rule && override.shadowOnly())) {
				continue;
			}
			List<String> closest = overridable.stream()
				.sorted(Comparator.comparingInt((name) -> PropertySchema.distance(entry.getKey(), canonical(name))))
				.limit(3)
				.toList();
			throw new RateLimitConfigurationException(override.property() + " (" + override.origin() + ") "
					+ (rule ? "names a policy of ratelimit.rules, which its rule sets itself (only its shadow "
							+ "may be set here)" : "overrides no @RateLimited policy")
					+ "; the closest declared policies: " + closest + ".",
					"Use the name of a @RateLimited policy (names match ignoring case and every character but "
							+ "letters and digits), or remove the override.");
		}
	}

	/**
	 * The values that replace a declaration's.
	 * @param name the policy's name as first written in the configuration
	 * @param values the values set, the others null
	 * @param origins where the values come from
	 * @param fields the names of the fields set, as the properties of {@link RateLimitProperties.Policy}
	 */
	public record Entry(String name, RateLimitProperties.Policy values, List<String> origins, Set<String> fields) {

		/** Whether the override sets nothing but {@code shadow}, which a rule's policy may take. */
		boolean shadowOnly() {
			return this.fields.equals(Set.of("shadow"));
		}

		String property() {
			return "ratelimit.policies." + this.name;
		}

		String origin() {
			return this.origins.isEmpty() ? "unknown origin" : String.join(", ", this.origins);
		}

	}

}
