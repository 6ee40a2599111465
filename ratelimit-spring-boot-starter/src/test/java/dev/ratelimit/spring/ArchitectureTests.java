package dev.ratelimit.spring;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.ratelimit.core.testing.PublicApi;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import dev.ratelimit.core.RateLimitStore;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The structure of the starter, as {@code docs/architecture.md} draws it: the request path, the operations and
 * the stacks reach the store through its port only, the request path reads no properties class, no package
 * circles back, one stack never knows the other, only the test kit reads spring-test, and the public types
 * outside internal packages are the ones {@code docs/reference.md} lists.
 */
class ArchitectureTests {

	private static final JavaClasses STARTER = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.ratelimit.spring");

	@Test
	void theRequestPathTheOperationsAndTheStacksReachTheStoreThroughItsPortOnly() {
		noClasses().that()
			.resideInAnyPackage("..spring.web..", "..spring.changes..", "..spring.observability..", "..spring.server..",
					"..spring.actuate..", "..spring.webmvc..", "..spring.webflux..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.ratelimit.core.redis..", "dev.ratelimit.core.memory..")
			.check(STARTER);
	}

	@Test
	void nothingAsksWhichClassAStoreIs() {
		classes().should(new ArchCondition<JavaClass>("never test whether a store is of a class of its own") {

			@Override
			public void check(JavaClass type, ConditionEvents events) {
				type.getInstanceofChecks()
					.stream()
					.filter((check) -> check.getRawType().isAssignableTo(RateLimitStore.class))
					.forEach((check) -> events.add(SimpleConditionEvent.violated(check, type.getName() + " tests whether a store is a "
							+ check.getRawType().getName() + " in " + check.getSourceCodeLocation())));
			}

		}).check(STARTER);
	}

	@Test
	void theRequestPathReadsPlainValuesNotProperties() {
		noClasses().that()
			.resideInAPackage("dev.ratelimit.spring.web..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.ratelimit.spring.autoconfigure..")
			.check(STARTER);
	}

	@Test
	void noPackageDependsOnAnotherThatDependsOnItBack() {
		slices().matching("dev.ratelimit.spring.(*)..").should().beFreeOfCycles().check(STARTER);
	}

	@Test
	void oneWebStackNeverKnowsTheOther() {
		noClasses().that()
			.resideInAPackage("dev.ratelimit.spring.webmvc..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.ratelimit.spring.webflux..")
			.check(STARTER);
		noClasses().that()
			.resideInAPackage("dev.ratelimit.spring.webflux..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.ratelimit.spring.webmvc..")
			.check(STARTER);
	}

	@Test
	void onlyTheTestKitReadsSpringTestWhichApplicationsRunWithout() {
		noClasses().that()
			.resideOutsideOfPackage("dev.ratelimit.spring.test..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.test..", "org.springframework.mock..")
			.check(STARTER);
	}

	@Test
	void publicTypesAreTheOnesTheReadmeLists() {
		assertThat(PublicApi.of(STARTER)).isEqualTo(PublicApi.listedInTheReference("ratelimit-spring-boot-starter")).hasSizeLessThanOrEqualTo(32);
	}

}
