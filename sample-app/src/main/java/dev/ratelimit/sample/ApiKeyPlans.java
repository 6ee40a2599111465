package dev.ratelimit.sample;

import java.util.Map;

import dev.ratelimit.spring.PlanResolver;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Component;

/**
 * Puts each client on the plan of its API key, as the application's own records would: a request without a
 * key is on {@code free}; one with a key the application does not know is not recognised, and shares its
 * address' quota under the declaration's own limits with every key its address invents.
 */
@Component
public class ApiKeyPlans implements PlanResolver {

	private static final Map<String, String> PLANS = Map.of("free-key", "free", "pro-key", "pro");

	@Override
	public @Nullable String resolve(HttpServletRequest request) {
		String key = request.getHeader("X-Api-Key");
		return (key != null) ? PLANS.get(key) : "free";
	}

}
