package dev.leasehold.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The table of contents, {@code docs/README.md} (GitHub shows it when the folder is opened): hand-written groups
 * of pages, one list item per page ({@code - [Title](page.md): what it covers}), and under each item a link to
 * every section ({@code ##}) of that page, which the build keeps equal to the page's headings.
 */
final class Contents {

    private static final Pattern PAGE_ITEM = Pattern.compile("^- \\[.+?]\\(([\\w.-]+\\.md)\\).*$");

    private static final String SECTION_ITEM = "  - ";

    private Contents() {
    }

    /** The pages in the order the table of contents lists them (paths from the repository's root). */
    static List<String> pages(Guide guide) {
        List<String> pages = new ArrayList<>();
        for (String line : guide.page(Guide.CONTENTS).orElseThrow().text().lines().toList()) {
            Matcher item = PAGE_ITEM.matcher(line);
            if (item.matches()) {
                pages.add("docs/" + item.group(1));
            }
        }
        return pages;
    }

    /** docs/README.md as it must be: every page item followed by the links to that page's sections. */
    static String expected(Guide guide) {
        List<String> out = new ArrayList<>();
        List<String> lines = guide.page(Guide.CONTENTS).orElseThrow().text().lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            out.add(lines.get(i));
            Matcher item = PAGE_ITEM.matcher(lines.get(i));
            if (!item.matches()) {
                continue;
            }
            while (i + 1 < lines.size() && lines.get(i + 1).startsWith(SECTION_ITEM)) {
                i++;
            }
            guide.page("docs/" + item.group(1)).ifPresent(page -> {
                List<String> source = page.text().lines().toList();
                page.sections().stream().filter(section -> section.level() == 2).forEach(section -> {
                    String title = source.get(section.line() - 1).replaceFirst("^#+\\s*", "").replaceFirst("\\s+#+\\s*$", "");
                    out.add(SECTION_ITEM + "[" + title + "](" + item.group(1) + "#" + section.anchor() + ")");
                });
            });
        }
        return String.join("\n", out) + "\n";
    }

    /** Pages the table of contents does not list, and sections it lists wrongly; empty when it is right. */
    static List<String> problems(Guide guide) {
        List<String> problems = new ArrayList<>();
        List<String> listed = pages(guide);
        for (Page page : guide.pages()) {
            if (page.file().startsWith("docs/") && !page.file().equals(Guide.CONTENTS) && !listed.contains(page.file())) {
                problems.add(Guide.CONTENTS + ": does not list " + page.file());
            }
        }
        String actual = guide.page(Guide.CONTENTS).orElseThrow().text();
        String expected = expected(guide);
        if (!expected.equals(actual)) {
            List<String> want = expected.lines().toList();
            List<String> have = actual.lines().toList();
            int line = 0;
            while (line < Math.min(want.size(), have.size()) && want.get(line).equals(have.get(line))) {
                line++;
            }
            problems.add(Guide.CONTENTS + ":" + (line + 1) + ": the sections listed differ from the pages' headings: expected\n    "
                    + (line < want.size() ? want.get(line) : "(nothing)") + "\n  found\n    " + (line < have.size() ? have.get(line) : "(nothing)")
                    + "\n  (-Ddocs.update=true rewrites the lists)");
        }
        return problems;
    }
}
