package dev.ratelimit.spring.webmvc;

import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.PlanResolver;
import dev.ratelimit.spring.RateLimitExemption;
import dev.ratelimit.spring.web.internal.LimitedRequest;
import dev.ratelimit.spring.web.internal.ResolverTypes;
import dev.ratelimit.spring.web.internal.WebStack;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Spring MVC as the shared decision path sees it: the handler methods of its request mappings, the servlet
 * types of its resolver beans, and the rules that Spring Security's own filters answer before the interceptor.
 */
final class WebMvcStack implements WebStack {

	/** Spring MVC's resolver types: {@link KeyResolver}, {@link PlanResolver} and {@link RateLimitExemption}. */
	private static final ResolverTypes RESOLVERS = new ResolverTypes(
			new ResolverTypes.Type<>(KeyResolver.class, (resolver, request) -> resolver.resolve(servlet(request))),
			new ResolverTypes.Type<>(PlanResolver.class, (resolver, request) -> resolver.resolve(servlet(request))),
			new ResolverTypes.Type<>(RateLimitExemption.class,
					(exemption, request) -> exemption.isExempt(servlet(request))));

	private static final boolean SPRING_SECURITY_PRESENT = ClassUtils
		.isPresent("org.springframework.security.web.FilterChainProxy", WebMvcStack.class.getClassLoader());

	private final ObjectProvider<RequestMappingHandlerMapping> handlerMappings;

	private final ListableBeanFactory beanFactory;

	WebMvcStack(ObjectProvider<RequestMappingHandlerMapping> handlerMappings, ListableBeanFactory beanFactory) {
		this.handlerMappings = handlerMappings;
		this.beanFactory = beanFactory;
	}

	@Override
	public void forEachHandler(BiConsumer<HandlerMethod, List<String>> action) {
		this.handlerMappings.orderedStream()
			.forEach((mapping) -> mapping.getHandlerMethods().forEach((info, handler) -> action.accept(handler,
					routes(info))));
	}

	@Override
	public ResolverTypes resolvers() {
		return RESOLVERS;
	}

	@Override
	public String name() {
		return "Spring MVC";
	}

	@Override
	public Map<String, String> securityAnsweredPaths() {
		return SPRING_SECURITY_PRESENT ? SecurityFilters.answeredPaths(this.beanFactory) : Map.of();
	}

	private static List<String> routes(RequestMappingInfo info) {
		return WebStack.routes(info.getMethodsCondition().getMethods().stream().map(Enum::name).toList(),
				info.getPatternValues());
	}

	private static HttpServletRequest servlet(LimitedRequest request) {
		return ((ServletLimitedRequest) request).request();
	}

}
