package dev.leasehold.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.parser.IncludeSourceSpans;
import org.commonmark.parser.Parser;

/**
 * The Markdown of the guide: the landing page ({@code README.md}), the reference pages ({@code docs/*.md}, whose
 * {@code docs/README.md} is the table of contents) and {@code CHANGELOG.md}. Other Markdown files of the repository
 * (benchmark results...) are read when a link names them.
 */
final class Guide {

    static final String LANDING = "README.md";

    static final String CONTENTS = "docs/README.md";

    static final String CHANGELOG = "CHANGELOG.md";

    static final Parser PARSER = Parser.builder()
        .extensions(List.of(TablesExtension.create()))
        .includeSourceSpans(IncludeSourceSpans.BLOCKS_AND_INLINES)
        .build();

    private final Path root;

    private final List<Page> pages;

    private final Map<String, Optional<Page>> others = new HashMap<>();

    private Guide(Path root, List<Page> pages) {
        this.root = root;
        this.pages = pages;
    }

    /** The guide of the repository at {@code root}. */
    static Guide of(Path root) {
        List<String> files = new ArrayList<>(List.of(LANDING, CHANGELOG));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.map(path -> "docs/" + path.getFileName())
                .filter(file -> file.endsWith(".md"))
                .sorted()
                .forEach(files::add);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return new Guide(root, files.stream().filter(file -> Files.isRegularFile(root.resolve(file))).map(file -> read(root, file)).toList());
    }

    static Page read(Path root, String file) {
        try {
            String text = Files.readString(root.resolve(file));
            return new Page(file, text, PARSER.parse(text));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    Path root() {
        return root;
    }

    List<Page> pages() {
        return pages;
    }

    boolean contains(String file) {
        return pages.stream().anyMatch(page -> page.file().equals(file));
    }

    /** A Markdown file of the guide or elsewhere in the repository (empty when there is none). */
    Optional<Page> page(String file) {
        for (Page page : pages) {
            if (page.file().equals(file)) {
                return Optional.of(page);
            }
        }
        return others.computeIfAbsent(file, name -> Files.isRegularFile(root.resolve(name)) ? Optional.of(read(root, name)) : Optional.empty());
    }
}
