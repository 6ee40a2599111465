package dev.ratelimit.spring.client;

import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.util.Assert;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * Adds a {@link RateLimitClientInterceptor} to every {@code RestClient.Builder} and {@code RestTemplate} that
 * Spring Boot builds, once: customizing the same builder or template again does not add it twice.
 */
public final class RateLimitClientCustomizer implements RestClientCustomizer, RestTemplateCustomizer {

	private final RateLimitClientInterceptor interceptor;

	/**
	 * Creates a customizer that adds the given interceptor.
	 * @param interceptor the interceptor to add
	 */
	public RateLimitClientCustomizer(RateLimitClientInterceptor interceptor) {
		Assert.notNull(interceptor, "interceptor must not be null");
		this.interceptor = interceptor;
	}

	@Override
	public void customize(RestClient.Builder restClientBuilder) {
		restClientBuilder.requestInterceptors((interceptors) -> {
			if (!interceptors.contains(this.interceptor)) {
				interceptors.add(this.interceptor);
			}
		});
	}

	@Override
	public void customize(RestTemplate restTemplate) {
		if (!restTemplate.getInterceptors().contains(this.interceptor)) {
			restTemplate.getInterceptors().add(this.interceptor);
		}
	}

}
