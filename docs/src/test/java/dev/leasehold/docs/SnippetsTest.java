package dev.leasehold.docs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class SnippetsTest {

    @Test
    void everyJavaKotlinAndYamlExampleIsTheSourceTheBuildCompilesOrLoads() {
        if (Fixture.updating()) {
            System.out.println("docs.update: rewrote " + Snippets.update(Guide.of(Fixture.repository())));
        }
        List<String> problems = Snippets.problems(Guide.of(Fixture.repository()));
        assertThat(problems).as("stale or unchecked examples:\n" + String.join("\n", problems)).isEmpty();
    }

    @Test
    void theGuideHasExamplesOfEveryCheckedKind() {
        List<Snippets.Snippet> marked = Snippets.all(Guide.of(Fixture.repository())).stream().filter(s -> s.source() != null).toList();
        assertThat(marked).extracting(Snippets.Snippet::language).contains("java", "kotlin", "yaml");
        assertThat(marked.size()).isGreaterThanOrEqualTo(17);
    }

    private static final String SOURCE = """
            package x;

            class Example {

                // tag::call[]
                void call() {
                    // ...
                    int hidden = 1; // docs:hide
                    // tag::inner[]
                    System.out.println();
                    // end::inner[]
                }
                // end::call[]
            }
            """;

    @Test
    void aRegionIsItsTaggedLinesWithoutHiddenOnesOrOtherMarkers(@TempDir Path root) {
        Fixture.write(root, "src/Example.java", SOURCE);

        assertThat(Snippets.region(root, "src/Example.java", "call")).isEqualTo("""
                void call() {
                    // ...
                    System.out.println();
                }""");
        assertThat(Snippets.region(root, "src/Example.java", "inner")).isEqualTo("System.out.println();");
    }

    @Test
    void aStaleExampleAnUnmarkedOneAndAMissingTagOrFileAreFound(@TempDir Path root) {
        Fixture.minimal(root);
        Fixture.write(root, "src/Example.java", SOURCE);
        Fixture.write(root, "docs/page.md", """
                # Page

                <!-- snippet: src/Example.java#call -->
                ```java
                void call() {
                    // ...
                    System.out.println("changed in the docs only");
                }
                ```

                ```java
                class NotFromASource {}
                ```

                <!-- snippet: src/Example.java#nothing -->
                ```java
                x
                ```

                <!-- snippet: src/Missing.java#call -->
                ```java
                x
                ```

                ```bash
                echo not checked
                ```
                """);

        List<String> problems = Snippets.problems(Guide.of(root));

        assertThat(problems).hasSize(4);
        assertThat(problems.get(0)).startsWith("docs/page.md:4: differs from src/Example.java#call at its line 3: the source has\n"
                + "        System.out.println();\n  the docs have\n        System.out.println(\"changed in the docs only\");");
        assertThat(problems.get(1)).startsWith("docs/page.md:11: a java block without a <!-- snippet: file#tag --> marker");
        assertThat(problems.get(2)).startsWith("docs/page.md:16: names tag nothing, which src/Example.java does not have");
        assertThat(problems.get(3)).startsWith("docs/page.md:21: names src/Missing.java, which does not exist");
    }

    @Test
    void updatingCopiesTheSourcesIntoTheDocs(@TempDir Path root) throws Exception {
        Fixture.minimal(root);
        Fixture.write(root, "src/Example.java", SOURCE);
        Fixture.write(root, "docs/page.md", """
                # Page

                - an item

                  <!-- snippet: src/Example.java#inner -->
                  ```java
                  old
                  more old
                  ```

                after
                """);

        assertThat(Snippets.update(Guide.of(root))).containsExactly("docs/page.md");

        assertThat(Files.readString(root.resolve("docs/page.md"))).isEqualTo("""
                # Page

                - an item

                  <!-- snippet: src/Example.java#inner -->
                  ```java
                  System.out.println();
                  ```

                after
                """);
        assertThat(Snippets.problems(Guide.of(root))).isEmpty();
    }
}
