package dev.ratelimit.spring.webflux;

import java.util.List;
import java.util.function.BiConsumer;

import dev.ratelimit.spring.web.ResolverTypes;
import dev.ratelimit.spring.web.WebStack;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;

/**
 * Spring WebFlux as the shared decision path sees it: the handler methods of its annotated controllers, and the
 * reactive types of its resolver beans, whose answers {@link ReactiveResolutions} gathers before a request is
 * decided.
 */
final class WebFluxStack implements WebStack {

	/**
	 * WebFlux's resolver types: {@link ReactiveKeyResolver}, {@link ReactivePlanResolver} and
	 * {@link ReactiveRateLimitExemption}, each read from what it answered for the request.
	 */
	static final ResolverTypes RESOLVERS = new ResolverTypes(
			new ResolverTypes.Type<>(ReactiveKeyResolver.class,
					(resolver, request) -> (String) ReactiveResolutions.answer(request, resolver)),
			new ResolverTypes.Type<>(ReactivePlanResolver.class,
					(resolver, request) -> (String) ReactiveResolutions.answer(request, resolver)),
			new ResolverTypes.Type<>(ReactiveRateLimitExemption.class,
					(exemption, request) -> Boolean.TRUE.equals(ReactiveResolutions.answer(request, exemption))));

	private final ObjectProvider<RequestMappingHandlerMapping> handlerMappings;

	WebFluxStack(ObjectProvider<RequestMappingHandlerMapping> handlerMappings) {
		this.handlerMappings = handlerMappings;
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
