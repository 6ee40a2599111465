package dev.ratelimit.spring.actuate;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;
import org.springframework.http.HttpStatus;

/**
 * The {@link RateLimitEndpoint ratelimit} endpoint's operations that change something, over the web: each
 * answers what it could not do with a status and an RFC 9457 problem body whose {@code detail} says why, which
 * Spring Boot's error page would leave out: 404 for a policy that no endpoint has, 400 for a value the policy
 * cannot take (nothing changes), and 503 when the store's server did not carry it out (nothing changes either).
 */
@EndpointWebExtension(endpoint = RateLimitEndpoint.class)
public final class RateLimitEndpointWebExtension {

	private final RateLimitEndpoint endpoint;

	public RateLimitEndpointWebExtension(RateLimitEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * Resets a key to its full quota under a policy, as {@link RateLimitEndpoint#reset} does.
	 * @param policy the policy's name
	 * @param key the key, as the store knows it
	 * @return its state after the reset, or a problem
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> reset(@Selector String policy,
			@Selector(match = Match.ALL_REMAINING) String[] key) {
		return answer(() -> this.endpoint.reset(policy, key));
	}

	/**
	 * Changes a policy, as {@link RateLimitEndpoint#change} does.
	 * @param policy the policy's name
	 * @param limit the new limit, or null to keep it
	 * @param window the new window, or null to keep it
	 * @param burst the new burst, or null to keep it
	 * @return the policy as changed, or a problem
	 */
	@WriteOperation
	public WebEndpointResponse<Object> change(@Selector String policy, @Nullable Long limit, @Nullable String window,
			@Nullable Long burst) {
		return answer(() -> this.endpoint.change(policy, limit, window, burst));
	}

	/**
	 * Removes the change of a policy, as {@link RateLimitEndpoint#removeChange} does.
	 * @param policy the policy's name
	 * @return the policy as declared, or a problem
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> removeChange(@Selector String policy) {
		return answer(() -> this.endpoint.removeChange(policy));
	}

	private static WebEndpointResponse<Object> answer(Supplier<Object> operation) {
		try {
			return new WebEndpointResponse<>(operation.get());
		}
		catch (RateLimitEndpoint.NoSuchPolicy ex) {
			return problem(HttpStatus.NOT_FOUND, ex.getMessage());
		}
		catch (InvalidEndpointRequestException ex) {
			return problem(HttpStatus.BAD_REQUEST, ex.getMessage());
		}
		catch (IllegalStateException ex) {
			return problem(HttpStatus.SERVICE_UNAVAILABLE, ex.getMessage());
		}
	}

	private static WebEndpointResponse<Object> problem(HttpStatus status, @Nullable String detail) {
		return new WebEndpointResponse<>(problemBody(status, detail), status.value());
	}

	/** The RFC 9457 body of a problem: its title, status and detail. */
	static Map<String, Object> problemBody(HttpStatus status, @Nullable String detail) {
		Map<String, Object> problem = new LinkedHashMap<>();
		problem.put("title", status.getReasonPhrase());
		problem.put("status", status.value());
		problem.put("detail", detail);
		return problem;
	}

}
