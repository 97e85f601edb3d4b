package dev.leasehold.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.FencedCodeBlock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Maven commands the guide gives for this repository (those that name modules with {@code -pl}) name modules,
 * profiles and tests that exist.
 */
class CommandExamplesTest {

    private static final Pattern COMMAND = Pattern.compile("\\./mvnw[^\\n]*");

    @Test
    void everyMavenCommandNamesModulesProfilesAndTestsThatExist() throws IOException {
        Path root = Fixture.repository();
        List<String> commands = commands(Guide.of(root));
        assertThat(commands).hasSizeGreaterThanOrEqualTo(8);
        String poms;
        try (Stream<Path> files = Files.walk(root)) {
            poms = String.join("\n", files.filter(file -> file.getFileName().toString().equals("pom.xml") && !file.toString().contains("/target/"))
                .map(CommandExamplesTest::read).toList());
        }
        for (String command : commands) {
            for (String module : all(command, "-pl\\s+(\\S+)")) {
                for (String name : module.split(",")) {
                    assertThat(root.resolve(name).resolve("pom.xml")).as("module of: " + command).isRegularFile();
                }
            }
            for (String profile : all(command, "\\s-P(\\S+)")) {
                assertThat(poms).as("profile of: " + command).contains("<id>" + profile + "</id>");
            }
            for (String test : all(command, "-Dtest='?([\\w.]+)'?(?:\\s|$)")) {
                assertThat(testSources(root, test)).as("test class of: " + command).isNotEmpty();
            }
        }
    }

    /** Every {@code ./mvnw ...} of the guide's code (blocks, continued lines joined, and code spans) that has -pl. */
    private static List<String> commands(Guide guide) {
        List<String> commands = new ArrayList<>();
        for (Page page : guide.pages()) {
            page.document().accept(new AbstractVisitor() {
                @Override
                public void visit(FencedCodeBlock block) {
                    collect(block.getLiteral().replace("\\\n", " "));
                }

                @Override
                public void visit(Code code) {
                    collect(code.getLiteral());
                }

                private void collect(String text) {
                    Matcher command = COMMAND.matcher(text);
                    while (command.find()) {
                        if (command.group().contains(" -pl ")) {
                            commands.add(command.group().replaceAll("\\s+#.*$", ""));
                        }
                    }
                }
            });
        }
        return commands;
    }

    private static List<String> all(String text, String regex) {
        List<String> all = new ArrayList<>();
        Matcher matcher = Pattern.compile(regex).matcher(text);
        while (matcher.find()) {
            all.add(matcher.group(1));
        }
        return all;
    }

    private static List<Path> testSources(Path root, String name) throws IOException {
        String simple = name.substring(name.lastIndexOf('.') + 1);
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(file -> file.toString().contains("/src/test/") && !file.toString().contains("/target/"))
                .filter(file -> file.getFileName().toString().equals(simple + ".java") || file.getFileName().toString().equals(simple + ".kt"))
                .toList();
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        }
        catch (IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
