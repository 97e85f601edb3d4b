package dev.leasehold.docs;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class LinksTest {

    @Test
    void everyLinkOfTheGuideLeadsToAFileAndHeadingThatExist() {
        List<String> problems = Links.problems(Guide.of(Fixture.repository()));
        assertThat(problems).as("broken links:\n" + String.join("\n", problems)).isEmpty();
    }

    @Test
    void brokenLinksAreFoundWithTheirLine(@TempDir Path root) {
        Fixture.minimal(root);
        Fixture.write(root, "docs/b.md", "# Page B\n\n## Fair turns: `KeyLine` and more\n\n## Fair turns: `KeyLine` and more\n");
        Fixture.write(root, "src/Code.java", "class Code {}\n");
        Fixture.write(root, "docs/a.md", """
                # Page A

                [works](b.md#fair-turns-keyline-and-more) [the second one](b.md#fair-turns-keyline-and-more-1)
                [a file](../src/Code.java) [a folder](../src) [here](#page-a) [web](https://example.org/x#y)
                [missing file](c.md)
                [missing anchor](b.md#fair-turns)
                [missing anchor here](#page-b)
                [not markdown](../src/Code.java#L1) [outside](../../elsewhere.md) [absolute](/docs/b.md)
                <a href="b.md#nowhere">raw html</a>
                """);

        List<String> problems = Links.problems(Guide.of(root));

        assertThat(problems).hasSize(7);
        assertThat(problems.get(0)).startsWith("docs/a.md:5: (c.md) names docs/c.md, which does not exist");
        assertThat(problems.get(1)).startsWith("docs/a.md:6: (b.md#fair-turns) names #fair-turns, which is no heading of docs/b.md");
        assertThat(problems.get(2)).startsWith("docs/a.md:7: (#page-b) names #page-b, which is no heading of docs/a.md");
        assertThat(problems.get(3)).startsWith("docs/a.md:8: (../src/Code.java#L1) has an anchor into src/Code.java");
        assertThat(problems.get(4)).startsWith("docs/a.md:8: (../../elsewhere.md) leads out of the repository");
        assertThat(problems.get(5)).startsWith("docs/a.md:8: (/docs/b.md) is absolute");
        assertThat(problems.get(6)).startsWith("docs/a.md:9: (b.md#nowhere) names #nowhere");
    }

    @Test
    void anchorsAreGitHubs() {
        assertThat(Anchors.slug("Async locking: tryLockAsync, and Mono/Flux with Reactor"))
            .isEqualTo("async-locking-trylockasync-and-monoflux-with-reactor");
        assertThat(Anchors.slug("Local hand-off: a hot key costs Redis almost nothing"))
            .isEqualTo("local-hand-off-a-hot-key-costs-redis-almost-nothing");
        assertThat(Anchors.slug("@DistributedLock")).isEqualTo("distributedlock");
        assertThat(Anchors.slug("The demo: ./demo.sh")).isEqualTo("the-demo-demosh");
        assertThat(Anchors.slug("Redis 7 and 6.2")).isEqualTo("redis-7-and-62");
    }
}
