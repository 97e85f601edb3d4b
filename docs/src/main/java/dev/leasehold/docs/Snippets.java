package dev.leasehold.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.commonmark.node.FencedCodeBlock;

/**
 * The code of the guide comes from sources the build compiles or loads. A Java, Kotlin, YAML or properties block
 * must follow a marker naming its source, {@code <!-- snippet: docs/src/test/java/.../Quickstart.java#tag -->}
 * (invisible on GitHub and in the HTML), and must be exactly the lines between {@code tag::tag[]} and
 * {@code end::tag[]} in that file (Asciidoctor's convention: several regions of one tag are joined; lines of other
 * tags' markers and lines ending in {@code docs:hide} are left out; the common indentation is removed). Without
 * {@code #tag}, the whole file.
 */
final class Snippets {

    /** The languages whose blocks must come from a compiled or loaded source. */
    static final Set<String> CHECKED = Set.of("java", "kotlin", "yaml", "yml", "properties");

    private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*snippet:\\s*([^#\\s]+)(?:#([\\w.-]+))?\\s*-->\\s*$");

    private static final Pattern TAG = Pattern.compile("\\b(tag|end)::([\\w.-]+)\\[]");

    private static final Pattern HIDDEN = Pattern.compile("(//|#)\\s*docs:hide\\s*$");

    /** A code block of the guide and the source it is marked with (null when it has no marker). */
    record Snippet(Page page, FencedCodeBlock block, String language, String source, String tag) {

        int fenceLine() {
            return block.getSourceSpans().get(0).getLineIndex();
        }

        String where() {
            return page.file() + ":" + (fenceLine() + 1);
        }

        String shown() {
            String literal = block.getLiteral();
            return literal.endsWith("\n") ? literal.substring(0, literal.length() - 1) : literal;
        }
    }

    private Snippets() {
    }

    /** Every fenced code block of the guide, with its marker if it has one. */
    static List<Snippet> all(Guide guide) {
        List<Snippet> snippets = new ArrayList<>();
        for (Page page : guide.pages()) {
            List<String> lines = page.text().lines().toList();
            for (FencedCodeBlock block : page.codeBlocks()) {
                String info = block.getInfo() == null ? "" : block.getInfo().trim();
                String language = info.isEmpty() ? "" : info.split("\\s+")[0];
                int fence = block.getSourceSpans().get(0).getLineIndex();
                Matcher marker = fence > 0 ? MARKER.matcher(lines.get(fence - 1)) : null;
                boolean marked = marker != null && marker.matches();
                snippets.add(new Snippet(page, block, language, marked ? marker.group(1) : null, marked ? marker.group(2) : null));
            }
        }
        return snippets;
    }

    /** What is stale or unchecked, one line each; empty when every block equals its source. */
    static List<String> problems(Guide guide) {
        List<String> problems = new ArrayList<>();
        for (Snippet snippet : all(guide)) {
            if (snippet.source() == null) {
                if (CHECKED.contains(snippet.language())) {
                    problems.add(snippet.where() + ": a " + snippet.language() + " block without a <!-- snippet: file#tag --> "
                            + "marker on the line before it: the build neither compiles nor loads it");
                }
                continue;
            }
            String expected;
            try {
                expected = region(guide.root(), snippet.source(), snippet.tag());
            }
            catch (IllegalArgumentException ex) {
                problems.add(snippet.where() + ": " + ex.getMessage());
                continue;
            }
            if (!expected.equals(snippet.shown())) {
                problems.add(snippet.where() + ": differs from " + snippet.source() + (snippet.tag() == null ? "" : "#" + snippet.tag())
                        + firstDifference(expected, snippet.shown()));
            }
        }
        return problems;
    }

    /** Rewrites every marked block that differs from its source; returns the files it changed. */
    static List<String> update(Guide guide) {
        List<String> changed = new ArrayList<>();
        for (Page page : guide.pages()) {
            List<String> lines = new ArrayList<>(page.text().lines().toList());
            List<Snippet> snippets = all(guide).stream().filter(s -> s.page() == page && s.source() != null).toList();
            // from the bottom up, so the line numbers of the blocks above stay right
            for (int i = snippets.size() - 1; i >= 0; i--) {
                Snippet snippet = snippets.get(i);
                String expected = region(guide.root(), snippet.source(), snippet.tag());
                if (expected.equals(snippet.shown())) {
                    continue;
                }
                int open = snippet.fenceLine();
                int close = snippet.block().getSourceSpans().get(snippet.block().getSourceSpans().size() - 1).getLineIndex();
                String indent = lines.get(open).substring(0, lines.get(open).indexOf(lines.get(open).trim()));
                List<String> body = expected.lines().map(line -> line.isEmpty() ? "" : indent + line).toList();
                lines.subList(open + 1, close).clear();
                lines.addAll(open + 1, body);
            }
            String text = String.join("\n", lines) + "\n";
            if (!text.equals(page.text())) {
                write(page.path(guide.root()), text);
                changed.add(page.file());
            }
        }
        return changed;
    }

    /** The lines of {@code file} (from the repository's root) that a marker with {@code tag} names. */
    static String region(Path root, String file, String tag) {
        Path path = root.resolve(file);
        if (!Files.isRegularFile(path)) {
            throw new IllegalArgumentException("names " + file + ", which does not exist");
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(path);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        List<String> region = new ArrayList<>();
        boolean inside = tag == null;
        boolean found = tag == null;
        for (String line : lines) {
            Matcher marker = TAG.matcher(line);
            if (marker.find()) {
                if (marker.group(2).equals(tag)) {
                    inside = marker.group(1).equals("tag");
                    found = true;
                }
                continue;
            }
            if (inside && !HIDDEN.matcher(line).find()) {
                region.add(line.stripTrailing());
            }
        }
        if (!found) {
            throw new IllegalArgumentException("names tag " + tag + ", which " + file + " does not have (tag::" + tag + "[] ... end::" + tag + "[])");
        }
        while (!region.isEmpty() && region.get(0).isBlank()) {
            region.remove(0);
        }
        while (!region.isEmpty() && region.get(region.size() - 1).isBlank()) {
            region.remove(region.size() - 1);
        }
        int indent = region.stream().filter(line -> !line.isBlank())
            .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        return String.join("\n", region.stream().map(line -> line.isBlank() ? "" : line.substring(indent)).toList());
    }

    private static String firstDifference(String expected, String shown) {
        String[] want = expected.split("\n", -1);
        String[] have = shown.split("\n", -1);
        for (int i = 0; i < Math.max(want.length, have.length); i++) {
            String w = i < want.length ? want[i] : "(nothing)";
            String h = i < have.length ? have[i] : "(nothing)";
            if (!w.equals(h)) {
                return " at its line " + (i + 1) + ": the source has\n    " + w + "\n  the docs have\n    " + h
                        + "\n  (./mvnw -B -pl docs -am test -Dtest=SnippetsTest -Dsurefire.failIfNoSpecifiedTests=false -Ddocs.update=true copies the sources into the docs)";
            }
        }
        return Arrays.toString(want);
    }

    static void write(Path path, String text) {
        try {
            Files.writeString(path, text);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
