package dev.ratelimit.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;

/**
 * The public API of a module: its public top-level types outside packages named {@code internal}, and the ones
 * that {@code docs/reference.md} lists for it, so that a test can hold the one against the other.
 */
public final class PublicApi {

	private static final Pattern LISTED = Pattern.compile("(?m)^- `(dev\\.ratelimit\\.[\\w.]+)`");

	private PublicApi() {
	}

	/**
	 * Returns the public top-level types of {@code classes} outside internal packages, by their names.
	 * @param classes a module's main classes
	 * @return their fully qualified names, sorted
	 */
	public static Set<String> of(JavaClasses classes) {
		return classes.stream()
			.filter((type) -> type.getModifiers().contains(JavaModifier.PUBLIC))
			.filter((type) -> type.isTopLevelClass() && !type.getPackageName().contains(".internal"))
			.map(JavaClass::getName)
			.collect(Collectors.toCollection(TreeSet::new));
	}

	/**
	 * Returns the types that {@code docs/reference.md} lists under the heading of {@code module}, one per line
	 * starting with {@code - `dev.ratelimit....`}.
	 * @param module the module's artifact id, the heading of its list
	 * @return their fully qualified names, sorted; empty when the page has no such heading
	 */
	public static Set<String> listedInTheReference(String module) {
		String reference;
		try {
			reference = Files.readString(Path.of("..", "docs", "reference.md"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		int section = reference.indexOf("\n## " + module + "\n");
		if (section < 0) {
			return Set.of();
		}
		int end = reference.indexOf("\n#", section + 1);
		Matcher listed = LISTED.matcher(reference.substring(section, (end > 0) ? end : reference.length()));
		Set<String> types = new TreeSet<>();
		while (listed.find()) {
			types.add(listed.group(1));
		}
		return types;
	}

}
