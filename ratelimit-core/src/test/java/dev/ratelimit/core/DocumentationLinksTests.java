package dev.ratelimit.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.core.testing.Documentation;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the README and of {@code docs/} leads somewhere: to a file of the repository, and, for a
 * link to a heading, to a heading of that file, named as GitHub names its anchors.
 */
class DocumentationLinksTests {

	private static final Path ROOT = Documentation.ROOT;

	private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

	private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+)$");

	@Test
	void everyRelativeLinkResolves() throws IOException {
		List<String> broken = new ArrayList<>();
		int links = 0;
		for (Path page : Documentation.pages()) {
			List<String> lines = Files.readAllLines(page);
			boolean code = false;
			for (int i = 0; i < lines.size(); i++) {
				String line = lines.get(i);
				if (line.startsWith("```")) {
					code = !code;
					continue;
				}
				Matcher link = LINK.matcher(line);
				while (!code && link.find()) {
					String target = link.group(1);
					if (target.contains("://") || target.startsWith("mailto:")) {
						continue;
					}
					links++;
					String problem = problem(page, target);
					if (problem != null) {
						broken.add(ROOT.relativize(page) + ":" + (i + 1) + " " + target + ": " + problem);
					}
				}
			}
		}
		assertThat(links).as("relative links read").isGreaterThan(50);
		assertThat(broken).isEmpty();
	}

	private static String problem(Path page, String target) throws IOException {
		int hash = target.indexOf('#');
		String file = (hash < 0) ? target : target.substring(0, hash);
		Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
		if (!Files.exists(resolved)) {
			return "no such file";
		}
		if (hash >= 0 && resolved.toString().endsWith(".md")
				&& !anchors(resolved).contains(target.substring(hash + 1))) {
			return "no such heading";
		}
		return null;
	}

	/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, numbered. */
	private static Set<String> anchors(Path page) throws IOException {
		Set<String> anchors = new HashSet<>();
		Map<String, Integer> seen = new HashMap<>();
		boolean code = false;
		for (String line : Files.readAllLines(page)) {
			if (line.startsWith("```")) {
				code = !code;
			}
			Matcher heading = HEADING.matcher(line);
			if (code || !heading.matches()) {
				continue;
			}
			String anchor = heading.group(1)
				.trim()
				.toLowerCase(Locale.ROOT)
				.replaceAll("[^\\p{L}\\p{N}\\- _]", "")
				.replace(' ', '-');
			int count = seen.merge(anchor, 1, Integer::sum);
			anchors.add((count == 1) ? anchor : anchor + "-" + (count - 1));
		}
		return anchors;
	}

}
