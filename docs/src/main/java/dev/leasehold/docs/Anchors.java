package dev.leasehold.docs;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.Node;
import org.commonmark.node.Text;

/**
 * The anchors GitHub gives headings (its "slugger"): the heading's text, lower case, without punctuation other
 * than {@code -} and {@code _}, each space a {@code -}; a repeated one gets {@code -1}, {@code -2}... The HTML
 * guide gives its headings the same ids, so a {@code page.md#anchor} link works on GitHub and in the HTML.
 */
final class Anchors {

    private final Map<String, Integer> seen = new HashMap<>();

    /** The anchor of the next heading of a page with this text (headings in document order). */
    String next(String headingText) {
        String slug = slug(headingText);
        Integer count = seen.get(slug);
        seen.put(slug, count == null ? 1 : count + 1);
        return count == null ? slug : slug + "-" + count;
    }

    static String slug(String text) {
        StringBuilder slug = new StringBuilder();
        text.toLowerCase(Locale.ROOT).codePoints().forEach(c -> {
            if (c == ' ') {
                slug.append('-');
            }
            else if (c == '-' || c == '_' || Character.isLetterOrDigit(c) || Character.getType(c) == Character.NON_SPACING_MARK) {
                slug.appendCodePoint(c);
            }
        });
        return slug.toString();
    }

    /** The text a reader sees in a heading (code spans without their backticks, links by their text). */
    static String text(Node heading) {
        StringBuilder text = new StringBuilder();
        heading.accept(new AbstractVisitor() {
            @Override
            public void visit(Text node) {
                text.append(node.getLiteral());
            }

            @Override
            public void visit(Code node) {
                text.append(node.getLiteral());
            }
        });
        return text.toString();
    }
}
