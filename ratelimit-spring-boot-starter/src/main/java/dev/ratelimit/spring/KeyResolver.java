package dev.ratelimit.spring;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Tells who a request comes from, for limits declared with {@code key = "bean:<name>"}, where
 * {@code <name>} is the name of a bean implementing this interface.
 * <p>
 * It runs before the handler's arguments are resolved, on the thread serving the request, and must be
 * thread-safe. Long keys and keys with characters that do not belong in a store key are hashed before they
 * reach the store.
 */
@FunctionalInterface
public interface KeyResolver {

	/**
	 * Returns the key of {@code request}.
	 * @param request the request being limited
	 * @return the key, or {@code null} to fall back to the client address
	 */
	@Nullable String resolve(HttpServletRequest request);

}
