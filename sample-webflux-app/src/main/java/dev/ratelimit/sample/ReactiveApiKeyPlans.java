package dev.ratelimit.sample;

import java.util.Map;

import dev.ratelimit.spring.webflux.ReactivePlanResolver;
import reactor.core.publisher.Mono;

import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;

/**
 * Puts each client on the plan of its API key, as the Spring MVC sample's {@code ApiKeyPlans} does: a request
 * without a key is on {@code free}; one with a key the application does not know is not recognised (empty), and
 * shares its address' quota under the declaration's own limits with every key its address invents.
 */
@Component
public class ReactiveApiKeyPlans implements ReactivePlanResolver {

	private static final Map<String, String> PLANS = Map.of("free-key", "free", "pro-key", "pro");

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		String key = exchange.getRequest().getHeaders().getFirst("X-Api-Key");
		return Mono.justOrEmpty((key != null) ? PLANS.get(key) : "free");
	}

}
