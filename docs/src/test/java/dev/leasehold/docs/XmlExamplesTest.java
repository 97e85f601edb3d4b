package dev.leasehold.docs;

import java.io.StringReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.InputSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Every Maven dependency the guide shows is an artifact this build makes, at the version it makes. */
class XmlExamplesTest {

    @Test
    void everyDependencyShownIsAModuleOfThisBuildAtItsVersion() throws Exception {
        List<String> artifacts = artifactIds(Fixture.repository());
        List<Snippets.Snippet> xml = Snippets.all(Guide.of(Fixture.repository())).stream().filter(s -> s.language().equals("xml")).toList();
        assertThat(xml).hasSizeGreaterThanOrEqualTo(2);
        for (Snippets.Snippet snippet : xml) {
            Element root = parse("<examples>" + snippet.shown() + "</examples>").getDocumentElement();
            for (Node node = root.getFirstChild(); node != null; node = node.getNextSibling()) {
                if (node instanceof Element dependency && dependency.getTagName().equals("dependency")
                        && text(dependency, "groupId").equals("dev.leasehold")) {
                    assertThat(artifacts).as(snippet.where()).contains(text(dependency, "artifactId"));
                    assertThat(text(dependency, "version")).as(snippet.where()).isEqualTo(System.getProperty("docs.version"));
                }
                // Spring Boot's parent or BOM: the version the build compiles and tests against
                if (node instanceof Element element && (element.getTagName().equals("parent") || element.getTagName().equals("dependency"))
                        && text(element, "groupId").equals("org.springframework.boot")) {
                    assertThat(text(element, "version")).as(snippet.where()).isEqualTo(System.getProperty("docs.spring-boot"));
                }
            }
        }
    }

    /** The artifactIds of the modules the root POM lists. */
    private static List<String> artifactIds(Path root) throws Exception {
        List<String> artifacts = new ArrayList<>();
        Document parent = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(root.resolve("pom.xml").toFile());
        var modules = parent.getElementsByTagName("module");
        for (int i = 0; i < modules.getLength(); i++) {
            Document module = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(root.resolve(modules.item(i).getTextContent()).resolve("pom.xml").toFile());
            artifacts.add(text(module.getDocumentElement(), "artifactId"));
        }
        return artifacts;
    }

    private static Document parse(String xml) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new InputSource(new StringReader(xml)));
    }

    /** The text of the direct child {@code name} of {@code element}. */
    private static String text(Element element, String name) {
        for (Node node = element.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element child && child.getTagName().equals(name)) {
                return child.getTextContent().trim();
            }
        }
        return "";
    }
}
