package dev.ratelimit.spring.web.internal;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The limits of the calls of one bean method, and what a call's key and cost expressions read of it.
 *
 * @param limits the limits
 * @param method the method, as declared in the bean's class
 * @param match the limits as a request's are found, with no template variables
 * @param parameterNames the method's parameters' names, empty if they were not compiled in
 * @param readsPrincipal whether the limits read the authenticated user, which a call then looks up
 */
public record LimitedMethod(EndpointLimits limits, Method method, LimitCatalog.Match match,
		List<String> parameterNames, boolean readsPrincipal) {

	LimitedMethod(EndpointLimits limits, Method method) {
		this(limits, method, new LimitCatalog.Match(limits, Map.of()),
				ParameterBinding.of(method).stream().map(ParameterBinding::variable).toList(), limits.readsPrincipal());
	}

	/**
	 * Returns a call of the method as its limits see it.
	 * @param arguments the call's arguments
	 * @param principal the authenticated user of the calling context, or null
	 */
	public MethodCall call(@Nullable Object[] arguments, @Nullable Principal principal) {
		return new MethodCall(this.method.getDeclaringClass().getSimpleName() + "." + this.method.getName(),
				this.parameterNames, arguments, principal);
	}

}
