package dev.ratelimit.spring.test;

import java.util.List;
import java.util.Map;

import dev.ratelimit.core.ManualTimeSource;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.support.TestPropertySourceUtils;

/**
 * Prepares the application context of every test: the {@link ManualTimeSource} of {@link ManualClock}, the Redis
 * store reading whichever {@link ManualTimeSource} the context has, and in a web slice the in-memory store, unless
 * the test sets {@code ratelimit.store} itself.
 */
class RateLimitContextCustomizerFactory implements ContextCustomizerFactory {

	private static final String OVERRIDE_AUTO_CONFIGURATION = "org.springframework.boot.test.autoconfigure.OverrideAutoConfiguration";

	private static final List<String> WEB_SLICES = List.of(
			"org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureWebMvc",
			"org.springframework.boot.webflux.test.autoconfigure.AutoConfigureWebFlux");

	@Override
	public ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		return new Customizer(isWebSlice(testClass),
				TestContextAnnotationUtils.hasAnnotation(testClass, ManualClock.class));
	}

	/**
	 * Whether the test, or a class it is nested in, is a slice of the web layer, whose auto-configurations are only
	 * those listed for it: {@code @WebMvcTest} or {@code @WebFluxTest}.
	 */
	private static boolean isWebSlice(Class<?> testClass) {
		for (Class<?> type = testClass; type != null; type = enclosing(type)) {
			MergedAnnotations annotations = MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY);
			MergedAnnotation<?> override = annotations.get(OVERRIDE_AUTO_CONFIGURATION);
			if (override.isPresent() && !override.getBoolean("enabled")
					&& WEB_SLICES.stream().anyMatch(annotations::isPresent)) {
				return true;
			}
		}
		return false;
	}

	private static @Nullable Class<?> enclosing(Class<?> type) {
		return TestContextAnnotationUtils.searchEnclosingClass(type) ? type.getEnclosingClass() : null;
	}

	/**
	 * What the test kit adds to one test's application context.
	 * @param webSlice whether the context is a web slice, where the store is in memory unless the test says
	 * otherwise
	 * @param manualClock whether the limiters' clock is a {@link ManualTimeSource} of the kit's
	 */
	private record Customizer(boolean webSlice, boolean manualClock) implements ContextCustomizer {

		/** Below the test's own properties, above the application's. */
		private static final String SLICE_PROPERTIES = "ratelimit test kit: web slice";

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
			BeanDefinitionRegistry registry = (BeanDefinitionRegistry) context.getBeanFactory();
			if (this.manualClock) {
				registry.registerBeanDefinition("rateLimitManualClock", new RootBeanDefinition(ManualTimeSource.class));
			}
			RootBeanDefinition redisClock = new RootBeanDefinition(ManualRedisClock.class);
			redisClock.setLazyInit(true);
			registry.registerBeanDefinition("rateLimitManualRedisClock", redisClock);
			if (this.webSlice) {
				MapPropertySource memory = new MapPropertySource(SLICE_PROPERTIES, Map.of("ratelimit.store", "memory"));
				MutablePropertySources sources = context.getEnvironment().getPropertySources();
				if (sources.contains(TestPropertySourceUtils.INLINED_PROPERTIES_PROPERTY_SOURCE_NAME)) {
					sources.addAfter(TestPropertySourceUtils.INLINED_PROPERTIES_PROPERTY_SOURCE_NAME, memory);
				}
				else {
					sources.addFirst(memory);
				}
			}
		}

	}

}
