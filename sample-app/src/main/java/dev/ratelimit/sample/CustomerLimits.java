package dev.ratelimit.sample;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.spring.LimitResolver;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Component;

/**
 * Gives each signed-in customer the quota of its record under the {@code customer} limit; everyone else, and
 * every other limit, keeps the declared limits.
 */
@Component
public class CustomerLimits implements LimitResolver {

	private final CustomerRecords records;

	CustomerLimits(CustomerRecords records) {
		this.records = records;
	}

	@Override
	public @Nullable RateLimitPolicy resolve(String client, RateLimitPolicy declared) {
		if (!declared.name().equals("customer") || !client.startsWith("user:")) {
			return null;
		}
		return this.records.quota(client.substring("user:".length()))
			.map((quota) -> declared.withLimit(quota.limit(), quota.window()))
			.orElse(null);
	}

}
