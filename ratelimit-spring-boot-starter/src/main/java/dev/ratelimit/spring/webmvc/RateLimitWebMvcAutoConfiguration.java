package dev.ratelimit.spring.webmvc;

import java.util.concurrent.ScheduledExecutorService;

import dev.ratelimit.spring.RateLimitExceededHandler;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.web.internal.RequestDecisions;
import dev.ratelimit.spring.web.internal.WebStack;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Auto-configuration of rate limiting for Spring MVC: a {@link org.springframework.web.servlet.HandlerInterceptor}
 * enforcing {@link dev.ratelimit.spring.RateLimited} and {@code ratelimit.rules}, registered through a
 * {@link WebMvcConfigurer}, a servlet filter ahead of Spring Security's filter chain for the rules marked
 * {@code before-security}, and the scheduler that releases the requests a leaky bucket holds until their slot.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnWebApplication(type = Type.SERVLET)
@ConditionalOnClass(WebMvcConfigurer.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
public final class RateLimitWebMvcAutoConfiguration {

	/** Name of the registration of the filter that decides the rules marked {@code before-security}. */
	public static final String FILTER_BEAN_NAME = "rateLimitFilter";

	/**
	 * Order of the filter that decides the rules marked {@code before-security}: just before Spring Security's
	 * filter chain, at its default order.
	 */
	public static final int FILTER_ORDER = SecurityFilterProperties.DEFAULT_FILTER_ORDER - 10;

	@Bean
	WebStack rateLimitWebStack(ObjectProvider<RequestMappingHandlerMapping> handlerMappings,
			ListableBeanFactory beanFactory) {
		return new WebMvcStack(handlerMappings, beanFactory);
	}

	@Bean
	@ConditionalOnMissingBean(RateLimitExceededHandler.class)
	DefaultRateLimitExceededHandler rateLimitExceededHandler() {
		return new DefaultRateLimitExceededHandler();
	}

	@Bean
	@ConditionalOnMissingBean
	HeldRequests rateLimitHeldRequests(
			@Qualifier(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME) ScheduledExecutorService shapingScheduler) {
		return new HeldRequests(shapingScheduler);
	}

	@Bean
	@ConditionalOnMissingBean
	ServletDecisions rateLimitServletDecisions(RequestDecisions decisions, RateLimitExceededHandler exceededHandler,
			HeldRequests heldRequests, ObjectProvider<RequestMappingHandlerAdapter> handlerAdapters) {
		return new ServletDecisions(decisions, exceededHandler, heldRequests, handlerAdapters);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitInterceptor rateLimitInterceptor(LimitCatalog catalog, ServletDecisions decisions) {
		return new RateLimitInterceptor(catalog, decisions);
	}

	/**
	 * The filter of the rules decided before Spring Security, ordered just before its filter chain, for every
	 * dispatch type that the chain sees first.
	 */
	@Bean
	@ConditionalOnMissingBean(name = FILTER_BEAN_NAME)
	FilterRegistrationBean<RateLimitFilter> rateLimitFilter(LimitCatalog catalog, ServletDecisions decisions) {
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(
				new RateLimitFilter(catalog, decisions));
		registration.setName(FILTER_BEAN_NAME);
		registration.setOrder(FILTER_ORDER);
		return registration;
	}

	/** The number of held requests as a gauge, for a Micrometer registry. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterBinder.class)
	static class HeldRequestsMetricsConfiguration {

		@Bean
		MeterBinder rateLimitHeldRequestsMetrics(HeldRequests heldRequests) {
			return (registry) -> Gauge.builder("ratelimit.requests.held", heldRequests, HeldRequests::count)
				.description("Requests a leaky bucket holds until their slot")
				.register(registry);
		}

	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitWebMvcConfigurer rateLimitWebMvcConfigurer(RateLimitInterceptor interceptor,
			ServletDecisions decisions) {
		return new RateLimitWebMvcConfigurer(interceptor, new RateLimitExceptionResolver(decisions));
	}

}
