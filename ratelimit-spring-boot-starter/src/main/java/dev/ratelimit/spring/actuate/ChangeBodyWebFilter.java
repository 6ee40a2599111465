package dev.ratelimit.spring.actuate;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Refuses, on WebFlux, the body of a change of the {@code ratelimit} endpoint that {@link ChangeBodies} refuses,
 * and hands every other body on as it came.
 */
final class ChangeBodyWebFilter implements WebFilter {

	private final @Nullable String path;

	/** @param path the endpoint's path, such as {@code /actuator/ratelimit}, null if it is not served */
	ChangeBodyWebFilter(@Nullable String path) {
		this.path = path;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		String requested = exchange.getRequest().getPath().pathWithinApplication().value();
		if (this.path == null || exchange.getRequest().getMethod() != HttpMethod.POST
				|| !requested.startsWith(this.path + "/")) {
			return chain.filter(exchange);
		}
		return DataBufferUtils.join(exchange.getRequest().getBody())
			.map(ChangeBodyWebFilter::bytes)
			.defaultIfEmpty(new byte[0])
			.flatMap((body) -> {
				String refusal = ChangeBodies.refusal(body);
				if (refusal != null) {
					exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
					exchange.getResponse().getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
					DataBuffer problem = exchange.getResponse().bufferFactory().wrap(ChangeBodies.problem(refusal));
					return exchange.getResponse().writeWith(Mono.just(problem));
				}
				ServerHttpRequestDecorator read = new ServerHttpRequestDecorator(exchange.getRequest()) {

					@Override
					public Flux<DataBuffer> getBody() {
						return Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(body)));
					}

				};
				return chain.filter(exchange.mutate().request(read).build());
			});
	}

	private static byte[] bytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

}
