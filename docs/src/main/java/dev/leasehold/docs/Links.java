package dev.leasehold.docs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Checks every relative link of the guide: the file (or folder) it names exists in the repository, and the
 * {@code #anchor} it names is a heading of that Markdown file (GitHub's anchors). Links with a scheme
 * ({@code https:}, {@code mailto:}) are not followed: the build has no network.
 */
final class Links {

    static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

    private Links() {
    }

    /** What is broken, one line each ({@code file:line: link: why}); empty when every link works. */
    static List<String> problems(Guide guide) {
        List<String> problems = new ArrayList<>();
        for (Page page : guide.pages()) {
            for (Page.LinkTo link : page.links()) {
                check(guide, page, link.destination()).ifPresent(why ->
                        problems.add(page.file() + ":" + link.line() + ": (" + link.destination() + ") " + why));
            }
        }
        return problems;
    }

    private static Optional<String> check(Guide guide, Page page, String destination) {
        if (destination.isEmpty()) {
            return Optional.of("is empty");
        }
        if (SCHEME.matcher(destination).find()) {
            return Optional.empty();
        }
        if (destination.startsWith("/")) {
            return Optional.of("is absolute: GitHub and the HTML guide resolve it differently; make it relative");
        }
        int hash = destination.indexOf('#');
        String path = hash < 0 ? destination : destination.substring(0, hash);
        String anchor = hash < 0 ? null : destination.substring(hash + 1);
        String target = path.isEmpty() ? page.file() : resolve(page.folder(), path.replace("%20", " "));
        if (target == null) {
            return Optional.of("leads out of the repository");
        }
        Path file = guide.root().resolve(target);
        if (!Files.exists(file)) {
            return Optional.of("names " + target + ", which does not exist");
        }
        if (anchor == null) {
            return Optional.empty();
        }
        if (!target.endsWith(".md")) {
            return Optional.of("has an anchor into " + target + ", which is not Markdown");
        }
        Page linked = guide.page(target).orElseThrow();
        if (!linked.anchors().contains(anchor)) {
            return Optional.of("names #" + anchor + ", which is no heading of " + target + " (it has: "
                    + String.join(", ", linked.anchors()) + ")");
        }
        return Optional.empty();
    }

    /** {@code path} relative to {@code folder}, as a path from the repository's root; null when it leads out. */
    static String resolve(String folder, String path) {
        Path resolved = Path.of(folder).resolve(path).normalize();
        String result = resolved.toString().replace('\\', '/');
        if (result.startsWith("..") || resolved.isAbsolute()) {
            return null;
        }
        return result.isEmpty() ? "." : result;
    }
}
