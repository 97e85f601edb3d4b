package dev.leasehold.benchmarks.scale;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler.LegendPosition;

/**
 * The Scale run's curves as PNG pictures (XChart), drawn from the tables of a report it wrote, so a saved report
 * can be drawn again: memory per held lock, wake-up latency, and p99 wait, share and throughput against the
 * number of instances.
 * <p>
 * {@code java ... dev.leasehold.benchmarks.scale.ScalePlots SCALE-RUN.md plots-directory}
 */
public final class ScalePlots {

    private ScalePlots() {
    }

    public static void main(String[] args) throws IOException {
        draw(Path.of(args[0]), Path.of(args[1]));
    }

    /** Draws what the report has; returns the files written. */
    static List<Path> draw(Path report, Path directory) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(directory);
        Map<String, Map<String, Map<String, Double>>> tables = tables(Files.readAllLines(report));
        List<Path> written = new ArrayList<>();
        Map<String, Map<String, Double>> held = tables.get("Held locks");
        if (held != null) {
            written.add(bars(directory.resolve("scale-memory-per-lock.png"), "Memory per held lock", "bytes", held,
                    List.of("Redis bytes / lock", "client heap bytes / lock")));
        }
        Map<String, Map<String, Double>> waiters = tables.get("Many waiters");
        if (waiters != null) {
            // one picture per quantile: a p99 of seconds would flatten a p50 of milliseconds
            written.add(bars(directory.resolve("scale-wake-up-p50.png"), "Wake-up latency p50, release to grant",
                    "ms", waiters, List.of("wake-up p50 ms")));
            written.add(bars(directory.resolve("scale-wake-up-p99.png"), "Wake-up latency p99, release to grant",
                    "ms", waiters, List.of("wake-up p99 ms")));
        }
        Map<String, Map<String, Double>> instances = tables.get("Many instances on one key");
        if (instances != null) {
            written.add(curves(directory.resolve("scale-instances-p99.png"), "p99 wait vs instances (x2 threads, 1 ms section)",
                    "p99 wait ms", instances, "p99 wait ms"));
            written.add(curves(directory.resolve("scale-instances-share.png"),
                    "Smallest instance's share / fair share (target >= 0.8)", "share / fair", instances,
                    "smallest share / fair"));
            written.add(curves(directory.resolve("scale-instances-throughput.png"), "Throughput vs instances",
                    "acquisitions/s", instances, "acquisitions/s"));
        }
        return written;
    }

    private static Path bars(Path file, String title, String yTitle, Map<String, Map<String, Double>> table,
            List<String> metrics) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(800).height(450).title(title).yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(LegendPosition.InsideNW);
        List<String> rows = new ArrayList<>(table.keySet());
        for (String metric : metrics) {
            chart.addSeries(metric, rows, rows.stream().map(row -> positive(table.get(row).get(metric))).toList());
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapFormat.PNG);
        return file;
    }

    /** One line per contender: rows are named "contender xN". */
    private static Path curves(Path file, String title, String yTitle, Map<String, Map<String, Double>> table,
            String metric) throws IOException {
        XYChart chart = new XYChartBuilder().width(800).height(450).title(title).xAxisTitle("instances")
            .yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(LegendPosition.OutsideS);
        Map<String, List<double[]>> lines = new LinkedHashMap<>();
        table.forEach((row, values) -> {
            int x = row.lastIndexOf(" x");
            if (x > 0 && values.get(metric) != null) {
                lines.computeIfAbsent(row.substring(0, x), c -> new ArrayList<>())
                    .add(new double[] { Double.parseDouble(row.substring(x + 2)), values.get(metric) });
            }
        });
        lines.forEach((contender, points) -> chart.addSeries(contender, points.stream().mapToDouble(p -> p[0]).toArray(),
                points.stream().mapToDouble(p -> p[1]).toArray()));
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapFormat.PNG);
        return file;
    }

    private static double positive(Double value) {
        return value == null || value.isNaN() || value < 0 ? 0 : value;
    }

    /** "### Title: ..." sections, each a table of row -> column -> value ("n/a" left out). */
    static Map<String, Map<String, Map<String, Double>>> tables(List<String> lines) {
        Map<String, Map<String, Map<String, Double>>> tables = new LinkedHashMap<>();
        Map<String, Map<String, Double>> current = null;
        String[] columns = null;
        for (String line : lines) {
            if (line.startsWith("### ")) {
                String title = line.substring(4);
                current = new LinkedHashMap<>();
                tables.put(title.contains(":") ? title.substring(0, title.indexOf(':')) : title, current);
                columns = null;
            }
            else if (current != null && line.startsWith("|") && !line.startsWith("|---")) {
                String[] cells = line.substring(1).split("\\|");
                if (columns == null) {
                    columns = cells;
                    continue;
                }
                Map<String, Double> row = new LinkedHashMap<>();
                for (int i = 1; i < cells.length && i < columns.length; i++) {
                    String cell = cells[i].trim().replace(",", "");
                    if (!cell.equals("n/a") && !cell.isEmpty()) {
                        row.put(columns[i].trim(), Double.parseDouble(cell));
                    }
                }
                current.put(cells[0].trim(), row);
            }
        }
        return tables;
    }
}
