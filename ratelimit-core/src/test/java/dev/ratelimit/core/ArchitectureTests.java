package dev.ratelimit.core;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.ratelimit.core.testing.PublicApi;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The structure of the core, as {@code docs/architecture.md} draws it: the port knows no store, the stores stand
 * apart (the Redis and PostgreSQL stores fall back to the in-memory one only through the failure policy they
 * share in {@code internal}, which knows no other store), nothing knows Spring, and the public types are the ones
 * {@code docs/reference.md} lists.
 */
class ArchitectureTests {

	private static final JavaClasses CORE = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.ratelimit.core");

	@Test
	void thePortKnowsNoStore() {
		noClasses().that()
			.resideInAPackage("dev.ratelimit.core")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.ratelimit.core.memory..", "dev.ratelimit.core.redis..", "dev.ratelimit.core.jdbc..",
					"dev.ratelimit.core.replay..", "dev.ratelimit.core.internal..")
			.check(CORE);
	}

	@Test
	void theSharedFailurePolicyKnowsTheInMemoryStoreOnly() {
		noClasses().that()
			.resideInAPackage("dev.ratelimit.core.internal..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.ratelimit.core.redis..", "dev.ratelimit.core.jdbc..", "dev.ratelimit.core.replay..")
			.check(CORE);
	}

	@Test
	void theInMemoryStoreKnowsNoOtherStore() {
		noClasses().that()
			.resideInAPackage("dev.ratelimit.core.memory..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.ratelimit.core.redis..", "dev.ratelimit.core.jdbc..", "dev.ratelimit.core.replay..")
			.check(CORE);
	}

	@Test
	void thePostgresStoreKnowsNoOtherStore() {
		noClasses().that()
			.resideInAPackage("dev.ratelimit.core.jdbc..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.ratelimit.core.memory..", "dev.ratelimit.core.redis..", "dev.ratelimit.core.replay..")
			.check(CORE);
	}

	@Test
	void theRedisStoreKnowsNoOtherStore() {
		noClasses().that()
			.resideInAPackage("dev.ratelimit.core.redis..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.ratelimit.core.memory..", "dev.ratelimit.core.jdbc..", "dev.ratelimit.core.replay..")
			.check(CORE);
	}

	@Test
	void nothingKnowsSpring() {
		noClasses().should().dependOnClassesThat().resideInAPackage("org.springframework..").check(CORE);
	}

	@Test
	void publicTypesAreTheOnesTheReadmeLists() {
		assertThat(PublicApi.of(CORE)).isEqualTo(PublicApi.listedInTheReference("ratelimit-core")).hasSizeLessThanOrEqualTo(17);
	}

}
