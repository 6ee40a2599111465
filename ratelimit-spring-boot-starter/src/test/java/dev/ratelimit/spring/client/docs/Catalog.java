package dev.ratelimit.spring.client.docs;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;
import org.springframework.web.client.RestClient;

/**
 * The example of docs/client.md: a service calling a rate-limited API through Spring Boot's
 * {@code RestClient.Builder}.
 */
@Service
public class Catalog {

	private final RestClient restClient;

	public Catalog(RestClient.Builder builder, @Value("${catalog.url}") String url) {
		this.restClient = builder.baseUrl(url).build();
	}

	public String item(String id) {
		return this.restClient.get().uri("/items/{id}", id).retrieve().body(String.class);
	}

}
