package dev.leasehold.faults;

import java.util.ArrayList;
import java.util.List;

/** The rows the fault suite measured, printed as a Markdown table (the table of docs/failure-modes.md). */
final class FaultTable {

    record Row(String fault, SectionLog.Verdict verdict, long recoveryMillis, String recoveryFrom, String userSees) {

        String markdown() {
            return "| " + fault + " | " + verdict.sections() + " | " + verdict.overlaps() + " | " + verdict.refused()
                    + " | " + verdict.violations().size() + " | " + recoveryMillis + " ms " + recoveryFrom + " | "
                    + userSees + " |";
        }
    }

    static final String HEADER = "| fault | critical sections | overlapping sections (double grants) | late writes refused by fencing "
            + "| invariant violations | time to recover | what the application sees |\n|---|---|---|---|---|---|---|";

    private static final List<Row> rows = new ArrayList<>();

    private FaultTable() {
    }

    static synchronized void add(Row row) {
        rows.add(row);
        System.out.println("FAULT ROW " + row.markdown());
    }

    static synchronized String markdown() {
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        rows.forEach(row -> text.append(row.markdown()).append('\n'));
        return text.toString();
    }
}
