package dev.ratelimit.spring.autoconfigure;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;

/**
 * Keeps what a test prints off the console unless the test fails, for tests whose application logs errors on
 * purpose (a handler that throws, a start that fails), so that a green build shows no expected stack trace.
 * Registered before {@link org.springframework.boot.test.system.OutputCaptureExtension}, it still lets the test
 * read the output.
 */
final class QuietOutput implements BeforeEachCallback, AfterEachCallback {

	private static final Namespace NAMESPACE = Namespace.create(QuietOutput.class);

	@Override
	public void beforeEach(ExtensionContext context) {
		ByteArrayOutputStream buffer = new ByteArrayOutputStream();
		context.getStore(NAMESPACE).put("state", new State(System.out, System.err, buffer));
		PrintStream quiet = new PrintStream(buffer, true, StandardCharsets.UTF_8);
		System.setOut(quiet);
		System.setErr(quiet);
	}

	@Override
	public void afterEach(ExtensionContext context) {
		State state = context.getStore(NAMESPACE).remove("state", State.class);
		System.setOut(state.out());
		System.setErr(state.err());
		if (context.getExecutionException().isPresent()) {
			state.out().print(state.buffer().toString(StandardCharsets.UTF_8));
		}
	}

	private record State(PrintStream out, PrintStream err, ByteArrayOutputStream buffer) {
	}

}
