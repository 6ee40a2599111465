package dev.ratelimit.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.PostgresServerProcess;
import dev.ratelimit.core.testing.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
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
@ExtendWith(PostgresExtension.class)
@EnabledIf("postgresAvailable")
class PostgresSampleIT extends AbstractSampleIT {

	private static final String KEY_PREFIX = "sample-it:" + System.nanoTime() + ":";

	private static volatile String postgresUrl;

	private final TestPostgres postgres;

	@LocalServerPort
	private int port;

	@Autowired
	private ManualTimeSource time;

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

	/**
	 * The PostgreSQL store keeps no limits in flight yet (docs/starter.md), as the start warns: three reports of
	 * one client run at once, and a fourth is not refused either.
	 */
	@Test
	@Override
	void holdsAtMostTwoReportsOfAClientInFlightAndTakesThemBackWhenTheyEnd() throws Exception {
		LoopbackClient client = new LoopbackClient("127.0.0.12", this.port);
		List<LoopbackClient.Response> reports = reports(client, "/demo/concurrent", 3);
		assertThat(reports).extracting(LoopbackClient.Response::status).containsOnly(200);
	}

	/** Without permits in flight there is nothing to take back: a failing report answers its problem. */
	@Test
	@Override
	void takesBackThePermitsOfReportsThatFailOrWhoseClientWentAway() throws Exception {
		LoopbackClient client = new LoopbackClient("127.0.0.13", this.port);
		LoopbackClient.Response failed = reports(client, "/demo/concurrent?fail=true", 1).get(0);
		assertThat(failed.status()).isEqualTo(500);
		assertThat(failed.body()).contains("the report failed");
	}

	/** Sends {@code count} reports at once, waits, bounded, until all wait for the clock, then ends them. */
	private List<LoopbackClient.Response> reports(LoopbackClient client, String path, int count) throws Exception {
		ExecutorService clients = Executors.newFixedThreadPool(count);
		try {
			int before = this.time.waits();
			List<Future<LoopbackClient.Response>> sent = new ArrayList<>();
			for (int i = 0; i < count; i++) {
				sent.add(clients.submit(() -> client.get(path)));
			}
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (this.time.waits() < before + count) {
				assertThat(System.nanoTime()).as("%d reports under way in time", count).isLessThan(deadline);
				Thread.onSpinWait();
			}
			this.time.advance(Duration.ofSeconds(2));
			List<LoopbackClient.Response> responses = new ArrayList<>();
			for (Future<LoopbackClient.Response> response : sent) {
				responses.add(response.get(30, TimeUnit.SECONDS));
			}
			return responses;
		}
		finally {
			clients.shutdownNow();
		}
	}

	static boolean postgresAvailable() {
		String url = System.getenv("POSTGRES_URL");
		return (url != null && !url.isBlank()) || PostgresServerProcess.binaries() != null
				|| "true".equalsIgnoreCase(System.getenv("POSTGRES_REQUIRED"));
	}

}
