package dev.ratelimit.docs;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.RateLimitExceededException;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Runs the examples of the documentation that are no sample's, in one application as a user would write them:
 * its beans start, their limits apply, and the body of a 429 is the application's own.
 */
class DocumentationExamplesTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class))
		.withBean(ManualTimeSource.class, ManualTimeSource::new)
		.withUserConfiguration(RequestBeans.class, PinController.class, QuoteService.class, PartnerClient.class,
				PatientPartnerClient.class)
		.withPropertyValues("ratelimit.policies.partner-api.limit=2", "ratelimit.policies.partner-api.window=10s");

	@Test
	void limitsTheCallsOfAServicePerCustomer() {
		this.runner.run((context) -> {
			QuoteService quotes = context.getBean(QuoteService.class);
			for (int i = 0; i < 3; i++) {
				assertThat(quotes.quote("alice")).isEqualTo("quote for alice");
			}
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> quotes.quote("alice"));
			assertThat(quotes.quote("bob")).isEqualTo("quote for bob");
			assertThat(quotes.place(new Order("alice")).join().customerId()).isEqualTo("alice");
		});
	}

	@Test
	void limitsCallsToThePartnerInCode() {
		this.runner.run((context) -> {
			PartnerClient partner = context.getBean(PartnerClient.class);
			assertThat(partner.quote("alice")).isEqualTo("partner's quote for alice");
			assertThat(partner.tryQuote("alice")).isTrue();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> partner.quote("alice"));
			assertThat(partner.tryQuote("alice")).isFalse();
			assertThat(partner.takeTwo("bob").allowed()).isTrue();
			assertThat(partner.takeTwo("bob").allowed()).isFalse();
		});
	}

	@Test
	void waitsForThePartnersPermitNoLongerThanTwoSeconds() {
		this.runner.run((context) -> {
			PatientPartnerClient partner = context.getBean(PatientPartnerClient.class);
			assertThat(partner.quoteWithin("alice")).isEqualTo("partner's quote for alice");
			assertThat(partner.quoteLater("alice").join()).isEqualTo("partner's quote for alice");
			// the next permit is due in 5 s, later than the 2 s either call waits
			assertThatExceptionOfType(PatientPartnerClient.PartnerBusyException.class)
				.isThrownBy(() -> partner.quoteWithin("alice"));
			assertThat(partner.quoteLater("alice").join()).isEqualTo("busy");
		});
	}

	@Test
	void countsOnlyTheWrongPinsAndAnswersWithTheApplicationsBody() {
		this.runner.run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			for (int i = 0; i < 3; i++) {
				assertThat(mvc.post().uri("/pin").param("pin", "0000")).hasStatus(403);
			}
			assertThat(mvc.post().uri("/pin").param("pin", "4711")).hasStatus(429)
				.bodyJson()
				.extractingPath("$.path")
				.isEqualTo("/pin");
		});
	}

}
