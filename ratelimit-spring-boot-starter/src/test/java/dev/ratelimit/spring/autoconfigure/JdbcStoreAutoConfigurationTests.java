package dev.ratelimit.spring.autoconfigure;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.jdbc.JdbcRateLimitStore;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.actuate.RateLimitHealthIndicator;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.LoggerFactory;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * When the PostgreSQL store is chosen, and how it is configured. No database answers here: the stores are told not
 * to create their schema, so that none is reached while the context starts.
 */
@ExtendWith(OutputCaptureExtension.class)
class JdbcStoreAutoConfigurationTests {

	private static final String POSTGRES_URL = "spring.datasource.url=jdbc:postgresql://127.0.0.1:1/none";

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class))
		.withPropertyValues("ratelimit.jdbc.create-schema=false");

	private final Logger logger = (Logger) LoggerFactory.getLogger(RateLimitAutoConfiguration.class);

	@BeforeEach
	void logInfo() {
		this.logger.setLevel(Level.INFO);
	}

	@AfterEach
	void restoreLevel() {
		this.logger.setLevel(null);
	}

	@Test
	void choosesThePostgresStoreWhenToldTo(CapturedOutput output) {
		this.runner.withPropertyValues("ratelimit.store=jdbc", POSTGRES_URL).run((context) -> {
			assertThat(context).hasSingleBean(JdbcRateLimitStore.class).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(RateLimitHealthIndicator.class).health().getDetails())
				.containsEntry("store", "jdbc");
		});
		assertThat(output).contains("Rate limits are kept in PostgreSQL, table ratelimit_state;");
	}

	@Test
	void choosesThePostgresStoreByItselfForAPostgresDataSourceWithoutRedis(CapturedOutput output) {
		this.runner.withPropertyValues(POSTGRES_URL).run((context) -> {
			assertThat(context).hasSingleBean(JdbcRateLimitStore.class).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(RateLimitHealthIndicator.class).health().getDetails())
				.containsEntry("store", "jdbc");
		});
		assertThat(output).contains("(ratelimit.store is unset, spring.datasource.url is PostgreSQL's and there is "
				+ "no Redis connection)");
	}

	@Test
	void choosesThePostgresStoreByItselfWithoutSpringDataRedisOnTheClasspath() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.withPropertyValues(POSTGRES_URL)
			.run((context) -> assertThat(context).hasSingleBean(JdbcRateLimitStore.class));
	}

	@Test
	void keepsMemoryForADataSourceThatIsNotPostgres() {
		this.runner.withPropertyValues("spring.datasource.url=jdbc:h2:mem:ratelimit")
			.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class)
				.doesNotHaveBean(JdbcRateLimitStore.class));
	}

	@Test
	void keepsMemoryForAnEmbeddedDataSource() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(DataSource.class)
			.hasSingleBean(InMemoryRateLimitStore.class)
			.doesNotHaveBean(JdbcRateLimitStore.class));
	}

	@Test
	void keepsMemoryWhenRedisIsConfiguredToo() {
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues(POSTGRES_URL)
			.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class)
				.doesNotHaveBean(JdbcRateLimitStore.class));
	}

	@Test
	void keepsMemoryWhenToldTo() {
		this.runner.withPropertyValues("ratelimit.store=memory", POSTGRES_URL)
			.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class));
	}

	@Test
	void failsClearlyWhenToldToUsePostgresWithoutADataSource() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.jdbc", "org.h2"))
			.withPropertyValues("ratelimit.store=jdbc")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageStartingWith("ratelimit.store is jdbc, but there is no DataSource"));
	}

	@Test
	void usesTheApplicationsDataSource() {
		PGSimpleDataSource own = new PGSimpleDataSource();
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withBean(DataSource.class, () -> own)
			.withPropertyValues("ratelimit.store=jdbc", "ratelimit.jdbc.create-schema=false")
			.run((context) -> assertThat(context).hasSingleBean(JdbcRateLimitStore.class)
				.getBean(JdbcStoreThreads.class)
				.extracting(JdbcStoreThreads::threads)
				.isEqualTo(JdbcStoreConfiguration.DEFAULT_THREADS));
	}

	@Test
	void waitsForTheDatabaseOnAsManyThreadsAsThePoolHasConnections() {
		this.runner.withPropertyValues("ratelimit.store=jdbc", POSTGRES_URL,
				"spring.datasource.hikari.maximum-pool-size=4")
			.run((context) -> assertThat(context.getBean(JdbcStoreThreads.class).threads()).isEqualTo(4));
	}

	@Test
	void failsClearlyOnAnInvalidTableName() {
		this.runner.withPropertyValues("ratelimit.store=jdbc", POSTGRES_URL, "ratelimit.jdbc.table-name=rate-limits")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageStartingWith("Invalid ratelimit.jdbc.table-name: "));
	}

	@Test
	void failsClearlyOnANegativeCleanupInterval() {
		this.runner.withPropertyValues("ratelimit.store=jdbc", POSTGRES_URL, "ratelimit.jdbc.cleanup-interval=-1s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageStartingWith("Invalid ratelimit.jdbc.cleanup-interval: "));
	}

	@Test
	void keepsTheLimitsInFlightOfItsLeasesAsTheyAreConfigured(CapturedOutput output) {
		this.runner.withPropertyValues("ratelimit.store=jdbc", POSTGRES_URL)
			.withUserConfiguration(ReportController.class)
			.run((context) -> assertThat(context.getBean(RateLimitStore.class).inFlight()).isPresent());
		assertThat(output).doesNotContain("declare a concurrency");
		this.runner.withPropertyValues("ratelimit.store=jdbc", POSTGRES_URL, "ratelimit.jdbc.in-flight-lease=0s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageStartingWith("Invalid ratelimit.jdbc.in-flight-lease: inFlightLease must be at least 1 ms"));
	}

	@Test
	void shutsItsThreadsDownWithTheContext() {
		AtomicReference<JdbcStoreThreads> threads = new AtomicReference<>();
		this.runner.withPropertyValues("ratelimit.store=jdbc", POSTGRES_URL)
			.run((context) -> threads.set(context.getBean(JdbcStoreThreads.class)));
		assertThatExceptionOfType(RejectedExecutionException.class)
			.isThrownBy(() -> threads.get().decisions().execute(() -> {
			}));
	}

	@Test
	void refusesACallAtOnceWhenEveryThreadIsBusyAndItsQueueFull() throws Exception {
		JdbcStoreThreads threads = new JdbcStoreThreads(1);
		CountDownLatch running = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger ran = new AtomicInteger();
		try {
			threads.decisions().execute(() -> {
				running.countDown();
				awaitQuietly(release);
				ran.incrementAndGet();
			});
			assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
			for (int i = 0; i < JdbcStoreThreads.QUEUED_PER_THREAD; i++) {
				threads.decisions().execute(ran::incrementAndGet);
			}
			assertThatExceptionOfType(RejectedExecutionException.class)
				.isThrownBy(() -> threads.decisions().execute(ran::incrementAndGet));
			release.countDown();
			CountDownLatch last = new CountDownLatch(1);
			// a refused call took nothing: once the queue drains, calls are taken again
			awaitAccepted(threads, last::countDown);
			assertThat(last.await(30, TimeUnit.SECONDS)).isTrue();
			assertThat(ran.get()).isEqualTo(1 + JdbcStoreThreads.QUEUED_PER_THREAD);
		}
		finally {
			release.countDown();
			threads.destroy();
		}
	}

	private static void awaitAccepted(JdbcStoreThreads threads, Runnable call) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (true) {
			try {
				threads.decisions().execute(call);
				return;
			}
			catch (RejectedExecutionException ex) {
				assertThat(System.nanoTime()).as("the queue drained in time").isLessThan(deadline);
				Thread.onSpinWait();
			}
		}
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			latch.await(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@RestController
	static class ReportController {

		@GetMapping("/report")
		@RateLimited(limit = 5, window = "1m", concurrency = 2, name = "reports")
		String report() {
			return "report";
		}

	}

}
