package dev.leasehold.docs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class ContentsTest {

    @Test
    void theTableOfContentsListsEveryPageAndEverySectionOfIt() {
        Guide guide = Guide.of(Fixture.repository());
        if (Fixture.updating()) {
            Snippets.write(guide.root().resolve(Guide.CONTENTS), Contents.expected(guide));
            guide = Guide.of(Fixture.repository());
        }
        List<String> problems = Contents.problems(guide);
        assertThat(problems).as(String.join("\n", problems)).isEmpty();
    }

    @Test
    void aMissingPageOrSectionIsFound(@TempDir Path root) throws Exception {
        Fixture.minimal(root);
        Fixture.write(root, "docs/a.md", "# A\n\n## First `one`\n\n### not listed\n\n## Second\n");
        Fixture.write(root, "docs/b.md", "# B\n");
        Fixture.write(root, "docs/README.md", """
                # Guide

                ## Group

                - [A](a.md): the first page
                  - [First `one`](a.md#first-one)

                Text.
                """);

        List<String> problems = Contents.problems(Guide.of(root));

        assertThat(problems).containsExactly("docs/README.md: does not list docs/b.md",
                "docs/README.md:7: the sections listed differ from the pages' headings: expected\n"
                        + "      - [Second](a.md#second)\n  found\n    \n  (-Ddocs.update=true rewrites the lists)");
        assertThat(Contents.expected(Guide.of(root))).contains("  - [First `one`](a.md#first-one)\n  - [Second](a.md#second)\n\nText.");
        Files.writeString(root.resolve("docs/README.md"), Contents.expected(Guide.of(root)));
        assertThat(Contents.pages(Guide.of(root))).containsExactly("docs/a.md");
    }
}
