package dev.ratelimit.sample;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that the documentation shows the sample's {@code shadow} profile, which the shadow sample tests run, as
 * it is.
 */
class RolloutDocumentationTests {

	@ParameterizedTest
	@ValueSource(strings = { "../README.md", "../docs/starter.md" })
	void showsTheShadowProfileAsTheSampleHasIt(String document) throws IOException {
		String profile = new ClassPathResource("application-shadow.yml").getContentAsString(StandardCharsets.UTF_8);
		assertThat(Files.readString(Path.of(document))).contains("```yaml\n" + profile + "```\n");
	}

}
