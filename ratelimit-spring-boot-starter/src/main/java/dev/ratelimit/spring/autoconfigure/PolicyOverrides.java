package dev.ratelimit.spring.autoconfigure;

import java.beans.PropertyDescriptor;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

import dev.ratelimit.spring.web.internal.PolicyNames;
import dev.ratelimit.spring.web.internal.PolicyOverride;

import org.springframework.beans.BeanUtils;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

/**
 * Binds the {@code ratelimit.policies.<name>.*} overrides, read from every property source however the name is
 * written. Policy names match by their {@linkplain PolicyNames#canonical(String) canonical form}: letters and
 * digits only, ignoring case, so that {@code DemoController.gcra} is overridden by
 * {@code ratelimit.policies.DemoController.gcra.limit}, {@code ratelimit.policies[DemoController.gcra].limit}
 * and {@code RATELIMIT_POLICIES_DEMOCONTROLLER_GCRA_LIMIT} alike. Spring Boot's own map binding cannot do this:
 * it takes the first element after {@code policies} as the whole name, so a dotted name would need brackets,
 * which environment variables cannot write.
 */
final class PolicyOverrides {

	private static final Map<String, String> FIELDS = fields();

	private static final String PLANS = "plans";

	private PolicyOverrides() {
	}

	/**
	 * Returns the overrides of the environment, by the canonical name of their policy. Where one field is set
	 * under two spellings of a name, the one in the property source of higher precedence wins, as it would for
	 * any other property.
	 */
	static Map<String, PolicyOverride> bind(Environment environment) {
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
				String canonical = PolicyNames.canonical(original.toString());
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
		Map<String, PolicyOverride> overrides = new LinkedHashMap<>();
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
			overrides.put(canonical, new PolicyOverride(written.get(canonical), PropertiesLimitSettings.values(values),
					List.copyOf(origins.getOrDefault(canonical, Set.of())), Set.copyOf(roots.keySet())));
		});
		return overrides;
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

}
