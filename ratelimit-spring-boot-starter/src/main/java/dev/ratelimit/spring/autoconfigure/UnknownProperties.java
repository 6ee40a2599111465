package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.spring.RateLimitConfigurationException;

import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

/**
 * Stops the start at the first property under {@code ratelimit} that the starter does not read: Spring Boot
 * ignores unknown fields, so a misspelt {@code method} or {@code algoritm} would otherwise leave a limit
 * applying to every method or with the default algorithm, without a word.
 */
final class UnknownProperties {

	private UnknownProperties() {
	}

	static void check(Environment environment) {
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (source instanceof IterableConfigurationPropertySource iterable) {
				iterable.stream().filter(PropertySchema.ROOT::isAncestorOf).forEach((name) -> check(iterable, name));
			}
		}
	}

	private static void check(IterableConfigurationPropertySource source, ConfigurationPropertyName name) {
		PropertySchema.Unknown unknown = PropertySchema.check(name);
		if (unknown == null) {
			return;
		}
		ConfigurationProperty property = source.getConfigurationProperty(name);
		String origin = (property != null && property.getOrigin() != null) ? " (" + property.getOrigin() + ")"
				: "";
		throw new RateLimitConfigurationException("Unknown property " + name + origin + ((unknown.suggestion() != null)
				? ": did you mean " + unknown.suggestion() + "?" : ": the rate limiter reads no such property."),
				"Fix the property's name, or remove it. docs/starter.md lists every property.");
	}

}
