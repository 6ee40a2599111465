package dev.ratelimit.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The pages of the documentation, the README and every page of {@code docs/}, and the code blocks they show, so
 * that tests can hold each block against the code it describes.
 */
public final class Documentation {

	/** The repository's root, seen from a module's folder, where Maven runs its tests. */
	public static final Path ROOT = Path.of("..");

	private Documentation() {
	}

	/**
	 * Returns the README and every page of {@code docs/}, in that order.
	 * @return the pages' paths, relative to a module's folder
	 */
	public static List<Path> pages() {
		List<Path> pages = new ArrayList<>();
		pages.add(ROOT.resolve("README.md"));
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return pages;
	}

	/**
	 * Returns every fenced code block of every page that names one of {@code languages} after its opening fence.
	 * @param languages the languages to return, such as {@code java} or {@code yaml}
	 * @return the blocks, in the order of the pages and of the blocks in each
	 */
	public static List<Snippet> snippets(String... languages) {
		List<Snippet> snippets = new ArrayList<>();
		for (Path page : pages()) {
			List<String> lines = read(page);
			for (int i = 0; i < lines.size(); i++) {
				if (!lines.get(i).startsWith("```")) {
					continue;
				}
				String language = lines.get(i).substring(3).strip();
				int start = i;
				StringBuilder text = new StringBuilder();
				while (++i < lines.size() && !lines.get(i).startsWith("```")) {
					text.append(lines.get(i)).append('\n');
				}
				if (List.of(languages).contains(language)) {
					snippets.add(new Snippet(ROOT.relativize(page), start + 1, language, text.toString()));
				}
			}
		}
		return snippets;
	}

	private static List<String> read(Path page) {
		try {
			return Files.readAllLines(page);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * A fenced code block of a page.
	 *
	 * @param page the page, relative to the repository's root
	 * @param line the line of its opening fence, from 1
	 * @param language the language its opening fence names
	 * @param text its lines, each ending with a line break
	 */
	public record Snippet(Path page, int line, String language, String text) {

		@Override
		public String toString() {
			return this.page + ":" + this.line;
		}

	}

}
