package dev.ratelimit.spring.webflux;

import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import dev.ratelimit.spring.web.internal.ResolverTypes;
import dev.ratelimit.spring.web.internal.WebStack;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;

/**
 * Spring WebFlux as the shared decision path sees it: the handler methods of its annotated controllers, and the
 * reactive types of its resolver beans, whose answers {@link ReactiveResolutions} gathers before a request is
 * decided, and the paths that Spring Security's reactive filters answer before the handler adapter.
 */
final class WebFluxStack implements WebStack {

	/**
	 * WebFlux's resolver types: {@link ReactiveKeyResolver}, {@link ReactivePlanResolver} and
	 * {@link ReactiveRateLimitExemption}, each read from what it answered for the request.
	 */
	private static final ResolverTypes RESOLVERS = new ResolverTypes(
			new ResolverTypes.Type<>(ReactiveKeyResolver.class,
					(resolver, request) -> (String) ReactiveResolutions.answer(request, resolver)),
			new ResolverTypes.Type<>(ReactivePlanResolver.class,
					(resolver, request) -> (String) ReactiveResolutions.answer(request, resolver)),
			new ResolverTypes.Type<>(ReactiveRateLimitExemption.class,
					(exemption, request) -> Boolean.TRUE.equals(ReactiveResolutions.answer(request, exemption))));

	private static final boolean SPRING_SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.web.server.WebFilterChainProxy", WebFluxStack.class.getClassLoader());

	private final ObjectProvider<RequestMappingHandlerMapping> handlerMappings;

	private final ListableBeanFactory beanFactory;

	WebFluxStack(ObjectProvider<RequestMappingHandlerMapping> handlerMappings, ListableBeanFactory beanFactory) {
		this.handlerMappings = handlerMappings;
		this.beanFactory = beanFactory;
	}

	@Override
	public ResolverTypes resolvers() {
		return RESOLVERS;
	}

	@Override
	public String name() {
		return "Spring WebFlux";
	}

	@Override
	public Map<String, String> securityAnsweredPaths() {
		return SPRING_SECURITY_PRESENT ? SecurityWebFilters.answeredPaths(this.beanFactory) : Map.of();
	}

	@Override
	public void forEachHandler(BiConsumer<HandlerMethod, List<String>> action) {
		this.handlerMappings.orderedStream()
			.forEach((mapping) -> mapping.getHandlerMethods().forEach((info, handler) -> action.accept(handler,
					routes(info))));
	}

	private static List<String> routes(RequestMappingInfo info) {
		return WebStack.routes(info.getMethodsCondition().getMethods().stream().map(Enum::name).toList(),
				info.getPatternsCondition().getPatterns().stream().map(PathPattern::getPatternString).toList());
	}

}
