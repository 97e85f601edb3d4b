package dev.leasehold.benchmarks;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import dev.leasehold.benchmarks.load.SecondJvm;

/**
 * Runs every benchmark and writes the report ({@code --results=PATH}, also printed). With the argument
 * {@code worker} it is the second JVM of scenario 4 instead. Exits with 2 when mutual exclusion was
 * violated anywhere, so the build fails loudly.
 */
public final class BenchmarkMain {

    private BenchmarkMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals(SecondJvm.WORKER_ARGUMENT)) {
            SecondJvm.serve(args);
            System.exit(0);
        }
        Settings settings = Settings.parse(args);
        Measurements measurements = new BenchmarkSuite(settings).run();
        String report = new Report(measurements, settings).render();
        if (settings.results() != null) {
            Files.createDirectories(settings.results().toAbsolutePath().getParent());
            Files.writeString(settings.results(), report, StandardCharsets.UTF_8);
            BenchmarkSuite.log("wrote " + settings.results().toAbsolutePath());
        }
        System.out.println();
        System.out.println(report);
        // Lettuce, Redisson and Spring leave non-daemon threads behind; the work is done
        System.exit(measurements.totalViolations() > 0 ? 2 : 0);
    }
}
