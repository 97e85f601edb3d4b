package dev.leasehold.docs;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.Heading;
import org.commonmark.node.HtmlBlock;
import org.commonmark.node.HtmlInline;
import org.commonmark.node.Image;
import org.commonmark.node.Link;
import org.commonmark.node.Node;

/**
 * One Markdown file of the repository, parsed: its headings (with GitHub's anchors), links and fenced code blocks.
 * @param file the path from the repository's root, with {@code /} separators
 * @param text the Markdown
 * @param document what CommonMark parsed (with source spans: block lines are known)
 */
record Page(String file, String text, Node document) {

    private static final Pattern HTML_HREF = Pattern.compile("\\bhref=\"([^\"]*)\"");

    private static final Pattern HTML_ID = Pattern.compile("\\b(?:id|name)=\"([^\"]+)\"");

    record Section(int level, String title, String anchor, int line) {
    }

    record LinkTo(String destination, int line) {
    }

    @Override
    public String toString() {
        return file;
    }

    /** The headings in document order, each with its anchor. */
    List<Section> sections() {
        List<Section> sections = new ArrayList<>();
        Anchors anchors = new Anchors();
        document.accept(new AbstractVisitor() {
            @Override
            public void visit(Heading heading) {
                String title = Anchors.text(heading);
                sections.add(new Section(heading.getLevel(), title, anchors.next(title), line(heading)));
            }
        });
        return sections;
    }

    /** Every anchor a link may name: the headings' and any {@code id}/{@code name} of raw HTML. */
    Set<String> anchors() {
        Set<String> anchors = new LinkedHashSet<>();
        sections().forEach(section -> anchors.add(section.anchor()));
        document.accept(new AbstractVisitor() {
            @Override
            public void visit(HtmlBlock html) {
                collect(HTML_ID, html.getLiteral(), anchors);
            }

            @Override
            public void visit(HtmlInline html) {
                collect(HTML_ID, html.getLiteral(), anchors);
            }
        });
        return anchors;
    }

    /** Every link and image destination, also {@code href}s of raw HTML. */
    List<LinkTo> links() {
        List<LinkTo> links = new ArrayList<>();
        document.accept(new AbstractVisitor() {
            @Override
            public void visit(Link link) {
                links.add(new LinkTo(link.getDestination(), line(link)));
                visitChildren(link);
            }

            @Override
            public void visit(Image image) {
                links.add(new LinkTo(image.getDestination(), line(image)));
            }

            @Override
            public void visit(HtmlBlock html) {
                html(html.getLiteral(), html);
            }

            @Override
            public void visit(HtmlInline html) {
                html(html.getLiteral(), html);
            }

            private void html(String literal, Node node) {
                Set<String> hrefs = new LinkedHashSet<>();
                collect(HTML_HREF, literal, hrefs);
                hrefs.forEach(href -> links.add(new LinkTo(href, line(node))));
            }
        });
        return links;
    }

    List<FencedCodeBlock> codeBlocks() {
        List<FencedCodeBlock> blocks = new ArrayList<>();
        document.accept(new AbstractVisitor() {
            @Override
            public void visit(FencedCodeBlock block) {
                blocks.add(block);
            }
        });
        return blocks;
    }

    /** The page's title: its first heading. */
    String title() {
        return sections().stream().findFirst().map(Section::title).orElse(file);
    }

    /** The folder of this page, from the repository's root ("" at the root). */
    String folder() {
        int slash = file.lastIndexOf('/');
        return slash < 0 ? "" : file.substring(0, slash);
    }

    Path path(Path root) {
        return root.resolve(file);
    }

    /** The 1-based line a block or inline node starts on (inline nodes: their block's line). */
    static int line(Node node) {
        for (Node at = node; at != null; at = at.getParent()) {
            if (!at.getSourceSpans().isEmpty()) {
                return at.getSourceSpans().get(0).getLineIndex() + 1;
            }
        }
        return 0;
    }

    private static void collect(Pattern pattern, String html, Set<String> into) {
        Matcher matcher = pattern.matcher(html);
        while (matcher.find()) {
            into.add(matcher.group(1));
        }
    }
}
