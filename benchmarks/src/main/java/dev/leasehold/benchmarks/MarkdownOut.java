package dev.leasehold.benchmarks;

/** The results file as it is written: lines of Markdown, and rows of the targets table. */
final class MarkdownOut {

    private final StringBuilder text = new StringBuilder();

    void line(String line) {
        text.append(line).append('\n');
    }

    void line() {
        text.append('\n');
    }

    void target(String target, String contender, String figure, boolean met, double value) {
        line(Figures.targetRow(target, contender, figure, met, value));
    }

    @Override
    public String toString() {
        return text.toString();
    }
}
