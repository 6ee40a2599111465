package dev.ratelimit.sample;

import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.PostgresServerProcess;
import dev.ratelimit.core.testing.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the sample application on a real server with its {@code postgres} profile, against the test run's
 * PostgreSQL. The store reads the test's clock instead of the database's (the test kit's {@code @ManualClock}), so
 * that the same tests drive it, and keys of its own prefix, so that no other application context shares its state
 * or has it reset.
 * <p>
 * Runs when {@code POSTGRES_URL} is set or {@code initdb} and {@code pg_ctl} are found, or when
 * {@code POSTGRES_REQUIRED=true}, which makes a missing PostgreSQL fail the run.
 */
@ActiveProfiles("postgres")
@DirtiesContext
@ExtendWith(PostgresExtension.class)
@EnabledIf("postgresAvailable")
class PostgresSampleIT extends AbstractSampleIT {

	private static final String KEY_PREFIX = "sample-it:" + System.nanoTime() + ":";

	private static volatile String postgresUrl;

	private final TestPostgres postgres;

	@LocalServerPort
	private int port;

	PostgresSampleIT(TestPostgres postgres) {
		this.postgres = postgres;
		postgresUrl = postgres.url();
	}

	/** The sample's DataSource on the PostgreSQL of the run: resolved before the context starts, which reads it. */
	@DynamicPropertySource
	static void postgres(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", () -> postgresUrl);
		registry.add("spring.datasource.username", () -> "postgres");
		registry.add("ratelimit.jdbc.key-prefix", () -> KEY_PREFIX);
	}

	@Test
	void keepsEachKeysStateInTheTable() {
		LoopbackClient client = new LoopbackClient("127.0.0.9", this.port);
		assertThat(client.get("/demo/gcra").status()).isEqualTo(200);
		assertThat(this.postgres.queryForLong("SELECT count(*) FROM ratelimit_state WHERE key LIKE '" + KEY_PREFIX
				+ "%127.0.0.9%' AND policy = 'DemoController.gcra'")).isEqualTo(1);
	}

	@Test
	void namesTheStoreInTheActuatorEndpoint() {
		SampleClient.on(this.port)
			.get()
			.uri("/actuator/ratelimit")
			.headers((headers) -> headers.setBasicAuth("admin", "admin-password"))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.store.type")
			.isEqualTo("jdbc")
			.jsonPath("$.store.deciding")
			.isEqualTo(true);
	}

	static boolean postgresAvailable() {
		String url = System.getenv("POSTGRES_URL");
		return (url != null && !url.isBlank()) || PostgresServerProcess.binaries() != null
				|| "true".equalsIgnoreCase(System.getenv("POSTGRES_REQUIRED"));
	}

}
