package dev.ratelimit.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.ratelimit.core.testing.Documentation;
import dev.ratelimit.core.testing.Documentation.Snippet;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java snippet of the README and of {@code docs/} is code that the build compiles: its imports are imports
 * of a Java source of one of the project's modules, the rest of it appears in that source as it is (up to
 * whitespace), and it imports every type of that source's imports that it uses, so that a reader can paste it.
 */
class DocumentationSnippetsTests {

	private static final Pattern IMPORT = Pattern.compile("(?m)^import\\s+(static\\s+)?([\\w.]+?)(\\.\\*)?\\s*;\\s*$");

	@Test
	void everyJavaSnippetShowsItsImportsAndIsInACompiledSource() throws IOException {
		List<Source> sources = sources();
		List<Snippet> snippets = Documentation.snippets("java");
		assertThat(snippets).as("Java snippets read").hasSizeGreaterThan(30);
		List<String> problems = new ArrayList<>();
		for (Snippet snippet : snippets) {
			String problem = problem(snippet, sources);
			if (problem != null) {
				problems.add(snippet + ": " + problem);
			}
		}
		assertThat(problems).isEmpty();
	}

	private static String problem(Snippet snippet, List<Source> sources) {
		Set<String> imports = imports(snippet.text());
		String code = normalized(IMPORT.matcher(snippet.text()).replaceAll(""));
		List<Source> containing = sources.stream().filter((source) -> source.text().contains(code)).toList();
		if (code.isEmpty() || containing.isEmpty()) {
			return "no Java source of the project contains it";
		}
		List<String> problems = new ArrayList<>();
		for (Source source : containing) {
			Set<String> foreign = new TreeSet<>(imports);
			foreign.removeAll(source.imports());
			Set<String> missing = source.imports()
				.stream()
				.filter((name) -> !imports.contains(name) && uses(code, name))
				.collect(Collectors.toCollection(TreeSet::new));
			if (foreign.isEmpty() && missing.isEmpty()) {
				return null;
			}
			problems.add(Documentation.ROOT.relativize(source.path()) + (foreign.isEmpty() ? ""
					: " does not import " + foreign) + (missing.isEmpty() ? "" : " imports what it uses: " + missing));
		}
		return String.join("; ", problems);
	}

	private static boolean uses(String code, String imported) {
		if (imported.endsWith(".*")) {
			return false;
		}
		String simpleName = imported.substring(imported.lastIndexOf('.') + 1);
		return Pattern.compile("(?<![\\w.])" + Pattern.quote(simpleName) + "\\b").matcher(code).find();
	}

	private static Set<String> imports(String text) {
		Set<String> imports = new TreeSet<>();
		Matcher matcher = IMPORT.matcher(text);
		while (matcher.find()) {
			imports.add(((matcher.group(1) != null) ? "static " : "") + matcher.group(2)
					+ ((matcher.group(3) != null) ? ".*" : ""));
		}
		return imports;
	}

	/** The main and test sources of every module, which the build compiles. */
	private static List<Source> sources() throws IOException {
		List<Source> sources = new ArrayList<>();
		try (Stream<Path> modules = Files.list(Documentation.ROOT)) {
			for (Path module : modules.filter((dir) -> Files.exists(dir.resolve("pom.xml"))).sorted().toList()) {
				for (String tree : List.of("src/main/java", "src/test/java")) {
					Path root = module.resolve(tree);
					if (!Files.isDirectory(root)) {
						continue;
					}
					try (Stream<Path> files = Files.walk(root)) {
						for (Path file : files.filter((path) -> path.toString().endsWith(".java")).toList()) {
							String text = Files.readString(file);
							sources.add(new Source(file, imports(text), normalized(text)));
						}
					}
				}
			}
		}
		return sources;
	}

	private static String normalized(String text) {
		return text.replaceAll("\\s+", " ").strip();
	}

	private record Source(Path path, Set<String> imports, String text) {

	}

}
