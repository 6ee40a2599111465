package dev.ratelimit.sample;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that {@code docs/operations.md} shows the sample's {@code shadow} profile, which the shadow sample tests
 * run, as it is.
 */
class RolloutDocumentationTests {

	@Test
	void showsTheShadowProfileAsTheSampleHasIt() throws IOException {
		String profile = new ClassPathResource("application-shadow.yml").getContentAsString(StandardCharsets.UTF_8);
		assertThat(Files.readString(Path.of("..", "docs", "operations.md"))).contains("```yaml\n" + profile + "```\n");
	}

}
