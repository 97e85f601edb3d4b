package dev.leasehold.docs;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.jayway.jsonpath.JsonPath;
import dev.leasehold.engine.key.Phase;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Parts of the guide that list what the code has: they must list exactly that. */
class ReferenceTablesTest {

    private static final Pattern CODE = Pattern.compile("`([^`]+)`");

    @Test
    void thePropertiesTableListsEveryPropertyOfTheConfigurationMetadataWithItsDefault() throws IOException {
        Map<String, String> documented = new LinkedHashMap<>();
        for (String row : Guide.read(Fixture.repository(), "docs/properties.md").text().lines().toList()) {
            if (row.startsWith("| `leasehold.")) {
                String[] cells = row.split("\\|");
                Matcher name = CODE.matcher(cells[1]);
                Matcher value = CODE.matcher(cells[2]);
                name.find();
                documented.put(name.group(1), value.find() ? value.group(1) : cells[2].trim());
            }
        }
        Map<String, String> metadata = metadata();
        assertThat(documented.keySet()).as("the properties of docs/properties.md").containsExactlyInAnyOrderElementsOf(metadata.keySet());
        metadata.forEach((property, value) -> assertThat(documented.get(property)).as("the default of " + property).isEqualTo(value));
    }

    @Test
    void theKeyLineDiagramHasTheStatesOfKeyLine() {
        Page page = Guide.read(Fixture.repository(), "docs/how-it-works.md");
        String diagram = page.codeBlocks().stream().filter(block -> "mermaid".equals(block.getInfo())).findFirst().orElseThrow().getLiteral();
        List<String> states = new ArrayList<>();
        Matcher transition = Pattern.compile("^\\s*(\\[\\*]|\\w+)\\s*-->\\s*(\\w+)", Pattern.MULTILINE).matcher(diagram);
        while (transition.find()) {
            for (String state : List.of(transition.group(1), transition.group(2))) {
                if (!state.equals("[*]") && !states.contains(state)) {
                    states.add(state);
                }
            }
        }
        assertThat(diagram).startsWith("stateDiagram-v2");
        String readmeDiagram = Guide.read(Fixture.repository(), "README.md").codeBlocks().stream()
            .filter(block -> "mermaid".equals(block.getInfo())).findFirst().orElseThrow().getLiteral();
        assertThat(readmeDiagram).as("the README's KeyLine diagram").isEqualTo(diagram);
        assertThat(states).containsExactlyInAnyOrderElementsOf(Arrays.stream(Phase.values()).map(Enum::name).toList());
    }

    /** leasehold.* of the configuration metadata the annotation processor wrote: name to default ("empty"). */
    private static Map<String, String> metadata() throws IOException {
        Map<String, String> properties = new LinkedHashMap<>();
        for (URL url : Collections.list(ReferenceTablesTest.class.getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
            String json;
            try (InputStream in = url.openStream()) {
                json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            List<Map<String, Object>> all = JsonPath.read(json, "$.properties[*]");
            for (Map<String, Object> property : all) {
                String name = (String) property.get("name");
                if (name.startsWith("leasehold.") && String.valueOf(property.get("sourceType")).startsWith("dev.leasehold")) {
                    Object value = property.get("defaultValue");
                    properties.put(name, value == null ? "empty" : String.valueOf(value));
                }
            }
        }
        assertThat(properties).as("leasehold.* in the configuration metadata").isNotEmpty();
        return properties;
    }
}
