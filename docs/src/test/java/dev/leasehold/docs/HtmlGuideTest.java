package dev.leasehold.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class HtmlGuideTest {

    private static final String REPOSITORY = "https://github.com/leasehold/leasehold";

    private static final Pattern HREF = Pattern.compile("(?:href|src)=\"([^\"]*)\"");

    @Test
    void theGuideRendersToHtmlWhoseLinksAllWork(@TempDir Path out) throws IOException {
        List<String> written = HtmlGuide.render(Guide.of(Fixture.repository()), out, REPOSITORY, System.getProperty("docs.mermaid"));

        assertThat(written).contains("index.html", "CHANGELOG.html", "docs/index.html", "docs/how-it-works.html", "docs/failure-modes.html");
        String landing = Files.readString(out.resolve("index.html"));
        assertThat(landing).contains("<title>Leasehold · Leasehold</title>", "href=\"docs/redis.html#redis-clients-lettuce-and-jedis\"",
                "<h2 id=\"quick-start\">Quick start</h2>", "<a href=\"docs/index.html\">Reference guide</a>");
        String howItWorks = Files.readString(out.resolve("docs/how-it-works.html"));
        assertThat(howItWorks).contains("<pre class=\"mermaid\">stateDiagram-v2", "src=\"../js/mermaid.min.js\"",
                "<h2 id=\"one-key-inside-a-jvm-keyline\">");
        assertThat(Files.readString(out.resolve("docs/benchmarks.html"))).contains("href=\"" + REPOSITORY + "/blob/main/benchmarks/RESULTS.md\"");
        assertThat(out.resolve("js/mermaid.min.js")).isNotEmptyFile();
        List<String> broken = brokenLinks(out);
        assertThat(broken).as(String.join("\n", broken)).isEmpty();
    }

    /** Every relative href or src of the HTML names a file of the output, and its #anchor an id in that file. */
    private static List<String> brokenLinks(Path out) throws IOException {
        List<String> broken = new ArrayList<>();
        List<Path> pages;
        try (Stream<Path> files = Files.walk(out)) {
            pages = files.filter(file -> file.toString().endsWith(".html")).toList();
        }
        for (Path page : pages) {
            Matcher link = HREF.matcher(Files.readString(page));
            while (link.find()) {
                String href = link.group(1);
                if (href.startsWith("https://") || href.startsWith("http://") || href.startsWith("mailto:")) {
                    continue;
                }
                int hash = href.indexOf('#');
                Path target = hash == 0 ? page : page.getParent().resolve(hash < 0 ? href : href.substring(0, hash)).normalize();
                if (!Files.isRegularFile(target)) {
                    broken.add(out.relativize(page) + ": " + href + " (no such file)");
                }
                else if (hash >= 0 && !Files.readString(target).contains("id=\"" + href.substring(hash + 1) + "\"")) {
                    broken.add(out.relativize(page) + ": " + href + " (no such id)");
                }
            }
        }
        return broken;
    }
}
