package dev.ratelimit.spring.web.internal;

import java.security.Principal;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.http.server.PathContainer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An exemption's expression reads the client address, which walks the forwarding headers, only when it names
 * {@code #ip}: a condition on a header, decided for every request, costs no address resolution.
 */
class ExemptionTests {

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final ClientAddresses addresses = new ClientAddresses(Networks.NONE);

	private final AddressKey address = new AddressKey(this.addresses, 64);

	@Test
	void resolvesTheClientAddressOnlyForAnExpressionThatNamesIt() {
		CountingRequest request = new CountingRequest(OriginRequest.from("198.51.100.7"));
		assertThat(exemptIf("#request.header('Authorization') == null").applies(request)).isTrue();
		assertThat(request.originsRead).hasValue(0);
		assertThat(exemptIf("#ip == '198.51.100.7'").applies(request)).isTrue();
		assertThat(request.originsRead).hasPositiveValue();
		assertThat(exemptIf("#ip == '198.51.100.8'").applies(request)).isFalse();
	}

	private Exemption exemptIf(String expression) {
		return Exemption.none(this.addresses)
			.orIf("spel:" + expression, this.parser.parseExpression(expression), this.address);
	}

	/** A request that counts how often its origin is read. */
	private static final class CountingRequest implements LimitedRequest {

		final AtomicInteger originsRead = new AtomicInteger();

		private final OriginRequest request;

		CountingRequest(OriginRequest request) {
			this.request = request;
		}

		@Override
		public String method() {
			return this.request.method();
		}

		@Override
		public PathContainer path() {
			return this.request.path();
		}

		@Override
		public String uri() {
			return this.request.uri();
		}

		@Override
		public @Nullable String header(String name) {
			return this.request.header(name);
		}

		@Override
		public @Nullable String parameter(String name) {
			return this.request.parameter(name);
		}

		@Override
		public @Nullable Principal principal() {
			return this.request.principal();
		}

		@Override
		public ClientAddresses.Origin origin() {
			this.originsRead.incrementAndGet();
			return this.request.origin();
		}

		@Override
		public Object unwrap() {
			return this;
		}

	}

}
