package dev.leasehold.docs;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.Heading;
import org.commonmark.node.Image;
import org.commonmark.node.Link;
import org.commonmark.node.Node;
import org.commonmark.renderer.NodeRenderer;
import org.commonmark.renderer.html.AttributeProvider;
import org.commonmark.renderer.html.HtmlNodeRendererContext;
import org.commonmark.renderer.html.HtmlRenderer;
import org.commonmark.renderer.html.HtmlWriter;

/**
 * Renders the guide to HTML: {@code README.md} to {@code index.html}, {@code docs/x.md} to {@code docs/x.html}
 * (the tree of the repository, so relative links keep working), with a side bar of every page in the order of the
 * table of contents and the sections of the page. Headings get GitHub's anchors; links to other files of the
 * repository point at the repository on GitHub; Mermaid diagrams are drawn by the bundled mermaid.min.js.
 */
public final class HtmlGuide {

    private final Guide guide;

    private final String repository;

    private HtmlGuide(Guide guide, String repository) {
        this.guide = guide;
        this.repository = repository.endsWith("/") ? repository.substring(0, repository.length() - 1) : repository;
    }

    /** {@code root out repository-url mermaid-version}. */
    public static void main(String[] args) {
        Path out = Path.of(args[1]);
        List<String> written = render(Guide.of(Path.of(args[0]).toAbsolutePath().normalize()), out, args[2], args[3]);
        System.out.println("Leasehold guide: " + written.size() + " pages in " + out.resolve("index.html"));
    }

    /** Writes the guide into {@code out}; returns the HTML files written (from {@code out}). */
    static List<String> render(Guide guide, Path out, String repository, String mermaidVersion) {
        HtmlGuide html = new HtmlGuide(guide, repository);
        List<String> written = new ArrayList<>();
        for (Page page : guide.pages()) {
            String file = htmlName(page.file());
            write(out.resolve(file), html.page(page));
            written.add(file);
        }
        copy("/dev/leasehold/docs/guide.css", out.resolve("guide.css"));
        String webjar = "/META-INF/resources/webjars/mermaid/" + mermaidVersion + "/";
        copy(webjar + "dist/mermaid.min.js", out.resolve("js/mermaid.min.js"));
        copy(webjar + "LICENSE", out.resolve("js/mermaid.LICENSE.txt"));
        return written;
    }

    /** {@code README.md} is its folder's {@code index.html}; {@code x.md} is {@code x.html}. */
    static String htmlName(String markdown) {
        String name = markdown.endsWith("README.md") ? markdown.substring(0, markdown.length() - "README.md".length()) + "index.md" : markdown;
        return name.substring(0, name.length() - ".md".length()) + ".html";
    }

    private String page(Page page) {
        String up = "../".repeat(page.folder().isEmpty() ? 0 : page.folder().split("/").length);
        Node document = Guide.PARSER.parse(page.text());
        boolean[] mermaid = {false};
        document.accept(new AbstractVisitor() {
            @Override
            public void visit(Link link) {
                link.setDestination(destination(page, link.getDestination()));
                visitChildren(link);
            }

            @Override
            public void visit(Image image) {
                image.setDestination(destination(page, image.getDestination()));
            }

            @Override
            public void visit(FencedCodeBlock block) {
                mermaid[0] |= "mermaid".equals(block.getInfo());
            }
        });
        HtmlRenderer renderer = HtmlRenderer.builder()
            .extensions(List.of(TablesExtension.create()))
            .attributeProviderFactory(context -> headingAnchors())
            .nodeRendererFactory(MermaidRenderer::new)
            .build();
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
            .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
            .append("<title>").append(escape(page.title())).append(" · Leasehold</title>\n")
            .append("<link rel=\"stylesheet\" href=\"").append(up).append("guide.css\">\n</head>\n<body>\n")
            .append(sideBar(page, up))
            .append("<main>\n").append(renderer.render(document)).append("</main>\n");
        if (mermaid[0]) {
            html.append("<script src=\"").append(up).append("js/mermaid.min.js\"></script>\n")
                .append("<script>mermaid.initialize({ startOnLoad: true });</script>\n");
        }
        return html.append("</body>\n</html>\n").toString();
    }

    private String sideBar(Page current, String up) {
        StringBuilder nav = new StringBuilder("<nav class=\"guide\">\n<p class=\"project\"><a href=\"").append(up).append("index.html\">Leasehold</a></p>\n<ul>\n");
        List<String> order = new ArrayList<>(List.of(Guide.LANDING, Guide.CONTENTS));
        order.addAll(Contents.pages(guide));
        order.add(Guide.CHANGELOG);
        Map<String, String> names = Map.of(Guide.LANDING, "Overview", Guide.CONTENTS, "Reference guide", Guide.CHANGELOG, "Changelog");
        for (String file : order) {
            guide.page(file).filter(page -> guide.contains(page.file())).ifPresent(page -> {
                String title = names.getOrDefault(file, page.title());
                nav.append("<li").append(page == current ? " class=\"current\"" : "").append("><a href=\"")
                    .append(up).append(htmlName(file)).append("\">").append(escape(title)).append("</a>");
                if (page == current) {
                    nav.append("\n<ul class=\"sections\">\n");
                    page.sections().stream().filter(section -> section.level() == 2 || section.level() == 3).forEach(section ->
                            nav.append("<li class=\"level").append(section.level()).append("\"><a href=\"#").append(section.anchor())
                                .append("\">").append(escape(section.title())).append("</a></li>\n"));
                    nav.append("</ul>\n");
                }
                nav.append("</li>\n");
            });
        }
        return nav.append("</ul>\n</nav>\n").toString();
    }

    /** A link of the Markdown as the HTML needs it: pages of the guide as .html, other files on GitHub. */
    String destination(Page page, String destination) {
        if (destination.isEmpty() || destination.startsWith("#") || Links.SCHEME.matcher(destination).find()) {
            return destination;
        }
        int hash = destination.indexOf('#');
        String path = hash < 0 ? destination : destination.substring(0, hash);
        String anchor = hash < 0 ? "" : destination.substring(hash);
        String target = Links.resolve(page.folder(), path);
        if (target == null) {
            return destination;
        }
        if (guide.contains(target)) {
            int slash = path.lastIndexOf('/');
            return path.substring(0, slash + 1) + htmlName(path.substring(slash + 1)) + anchor;
        }
        String kind = Files.isDirectory(guide.root().resolve(target)) ? "/tree/main/" : "/blob/main/";
        return repository + kind + (target.equals(".") ? "" : target) + anchor;
    }

    /** The ids of the headings: GitHub's anchors, counted per page as GitHub does. */
    private static AttributeProvider headingAnchors() {
        Anchors anchors = new Anchors();
        return (node, tagName, attributes) -> {
            if (node instanceof Heading) {
                attributes.put("id", anchors.next(Anchors.text(node)));
            }
        };
    }

    /** A {@code mermaid} block as {@code <pre class="mermaid">}, which mermaid.min.js turns into the diagram. */
    private static final class MermaidRenderer implements NodeRenderer {

        private final HtmlWriter html;

        MermaidRenderer(HtmlNodeRendererContext context) {
            this.html = context.getWriter();
        }

        @Override
        public Set<Class<? extends Node>> getNodeTypes() {
            return Set.of(FencedCodeBlock.class);
        }

        @Override
        public void render(Node node) {
            FencedCodeBlock block = (FencedCodeBlock) node;
            if ("mermaid".equals(block.getInfo())) {
                html.line();
                html.tag("pre", Map.of("class", "mermaid"));
                html.text(block.getLiteral());
                html.tag("/pre");
                html.line();
                return;
            }
            html.line();
            html.tag("pre");
            String language = block.getInfo() == null || block.getInfo().isBlank() ? null : block.getInfo().trim().split("\\s+")[0];
            html.tag("code", language == null ? Map.of() : Map.of("class", "language-" + language));
            html.text(block.getLiteral());
            html.tag("/code");
            html.tag("/pre");
            html.line();
        }
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static void write(Path path, String text) {
        try {
            Files.createDirectories(path.getParent());
            Files.writeString(path, text);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static void copy(String resource, Path to) {
        try (InputStream in = HtmlGuide.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the class path");
            }
            Files.createDirectories(to.getParent());
            Files.write(to, in.readAllBytes());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
