package dev.leasehold.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The repository the tests check (docs.root), and small repositories of their own to show the checks fail. */
final class Fixture {

    private Fixture() {
    }

    /** The repository this build runs in. */
    static Path repository() {
        return Path.of(System.getProperty("docs.root", "..")).toAbsolutePath().normalize();
    }

    static boolean updating() {
        return Boolean.getBoolean("docs.update");
    }

    /** Writes {@code text} to {@code file} under {@code root} (folders made) and returns root. */
    static Path write(Path root, String file, String text) {
        try {
            Path path = root.resolve(file);
            Files.createDirectories(path.getParent());
            Files.writeString(path, text);
            return root;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** A repository with the three files every guide has. */
    static Path minimal(Path root) {
        write(root, "README.md", "# Project\n\nSee the [guide](docs/README.md).\n");
        write(root, "CHANGELOG.md", "# Changelog\n");
        write(root, "docs/README.md", "# Guide\n");
        return root;
    }
}
