package dev.ratelimit.spring.webflux;

import java.util.concurrent.ScheduledExecutorService;

import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.web.internal.RequestDecisions;
import dev.ratelimit.spring.web.internal.WebStack;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

/**
 * Auto-configuration of rate limiting for Spring WebFlux: a handler adapter ahead of WebFlux's own that decides
 * {@link dev.ratelimit.spring.RateLimited} and {@code ratelimit.rules} once a request's handler is known, and a
 * {@code WebFilter} ahead of Spring Security's for the rules marked {@code before-security}. Decisions never
 * block: the Redis store is asked asynchronously, on a client that does not block its caller.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnWebApplication(type = Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
public final class RateLimitWebFluxAutoConfiguration {

	/**
	 * Order of the filter that decides the rules marked {@code before-security}: just before Spring Security's
	 * {@code WebFilterChainProxy}, which WebFlux security orders at -100.
	 */
	public static final int FILTER_ORDER = -110;

	@Bean
	WebStack rateLimitWebStack(ObjectProvider<RequestMappingHandlerMapping> handlerMappings,
			ListableBeanFactory beanFactory) {
		return new WebFluxStack(handlerMappings, beanFactory);
	}

	@Bean
	@ConditionalOnMissingBean(ReactiveRateLimitExceededHandler.class)
	ReactiveRateLimitExceededHandler rateLimitExceededHandler() {
		return (exchange, rejection) -> rejection.toProblemDetail();
	}

	@Bean
	@ConditionalOnMissingBean
	ExchangeDecisions rateLimitExchangeDecisions(RequestDecisions decisions,
			ReactiveRateLimitExceededHandler exceededHandler, ServerCodecConfigurer codecs,
			@Qualifier(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME) ScheduledExecutorService releases) {
		return new ExchangeDecisions(decisions, exceededHandler, codecs.getWriters(),
				Schedulers.fromExecutorService(releases, RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME));
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitHandlerAdapter rateLimitHandlerAdapter(LimitCatalog catalog, ExchangeDecisions decisions,
			ObjectProvider<HandlerAdapter> adapters) {
		return new RateLimitHandlerAdapter(catalog, decisions, adapters);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitExceptionHandler rateLimitExceptionHandler(ExchangeDecisions decisions) {
		return new RateLimitExceptionHandler(decisions);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitWebFilter rateLimitWebFilter(LimitCatalog catalog, ExchangeDecisions decisions) {
		return new RateLimitWebFilter(catalog, decisions);
	}

	/** The number of held requests as a gauge, for a Micrometer registry. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterBinder.class)
	static class HeldRequestsMetricsConfiguration {

		@Bean
		MeterBinder rateLimitHeldRequestsMetrics(ExchangeDecisions decisions) {
			return (registry) -> Gauge.builder("ratelimit.requests.held", decisions, ExchangeDecisions::held)
				.description("Requests a leaky bucket holds until their slot")
				.register(registry);
		}

	}

}
