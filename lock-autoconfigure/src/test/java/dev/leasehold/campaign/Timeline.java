package dev.leasehold.campaign;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import javax.imageio.ImageIO;

import dev.leasehold.campaign.History.Fault;
import dev.leasehold.campaign.History.Section;
import dev.leasehold.campaign.HistoryChecker.Violation;

/**
 * The picture of one run: a lane per key with a row per instance, a bar for each critical section in that
 * instance's colour (read sections thin, sections told lost outlined in red), the faults as shaded bands
 * with their names, and each violation as a red mark at its time.
 */
final class Timeline {

    private static final Color[] PALETTE = { new Color(0x1f77b4), new Color(0x2ca02c), new Color(0xff7f0e),
            new Color(0x9467bd), new Color(0x8c564b), new Color(0x17becf) };

    private static final int WIDTH = 1800;

    private static final int LEFT = 90;

    private static final int ROW = 14;

    private Timeline() {
    }

    static void write(EngineCampaign.Run run, Path file) {
        History history = run.history();
        List<Section> sections = history.sections();
        TreeSet<String> keys = new TreeSet<>();
        TreeSet<String> instances = new TreeSet<>();
        sections.forEach(section -> {
            keys.add(section.key());
            instances.add(section.instance());
        });
        long end = Math.max(1, sections.stream().mapToLong(Section::keptUntil).max().orElse(1));
        for (Fault fault : history.faults()) {
            end = Math.max(end, fault.end());
        }
        int laneHeight = ROW * Math.max(1, instances.size()) + 16;
        int height = 60 + laneHeight * Math.max(1, keys.size()) + 40;
        BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, height);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        double scale = (WIDTH - LEFT - 20) / (double) end;
        faults(g, history.faults(), scale, height);
        Map<String, Integer> laneOf = new TreeMap<>();
        keys.forEach(key -> laneOf.put(key, laneOf.size()));
        List<String> instanceOrder = new ArrayList<>(instances);
        for (String key : keys) {
            int top = 40 + laneOf.get(key) * laneHeight;
            g.setColor(Color.DARK_GRAY);
            g.drawString(key, 8, top + laneHeight / 2);
            g.setColor(new Color(0xdddddd));
            g.drawLine(LEFT, top + laneHeight - 4, WIDTH - 20, top + laneHeight - 4);
        }
        for (Section section : sections) {
            int top = 40 + laneOf.get(section.key()) * laneHeight + instanceOrder.indexOf(section.instance()) * ROW;
            int x = LEFT + (int) (section.grantedAt() * scale);
            int w = Math.max(1, (int) ((section.keptUntil() - section.grantedAt()) * scale));
            g.setColor(PALETTE[instanceOrder.indexOf(section.instance()) % PALETTE.length]);
            int h = section.shared() ? ROW / 3 : ROW - 3;
            g.fillRect(x, top + (ROW - 3 - h), w, h);
            if (section.toldLost()) {
                g.setColor(Color.RED);
                g.drawRect(x, top, w, ROW - 3);
            }
        }
        g.setStroke(new BasicStroke(2));
        for (Violation violation : run.findings().violations()) {
            int x = LEFT + (int) (Math.min(violation.at(), end) * scale);
            g.setColor(Color.RED);
            g.fillPolygon(new int[] { x - 6, x + 6, x }, new int[] { 28, 28, 38 }, 3);
            g.drawLine(x, 38, x, height - 40);
        }
        legend(g, run, instanceOrder, end, height);
        g.dispose();
        try {
            Files.createDirectories(file.getParent());
            ImageIO.write(image, "png", file.toFile());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static void faults(Graphics2D g, List<Fault> faults, double scale, int height) {
        for (Fault fault : faults) {
            int x = LEFT + (int) (fault.start() * scale);
            int w = Math.max(2, (int) ((fault.end() - fault.start()) * scale));
            g.setColor(new Color(0, 0, 0, 30));
            g.fillRect(x, 38, w, height - 78);
            g.setColor(Color.GRAY);
            g.drawString(fault.kind(), x, height - 28 - (Math.abs(fault.kind().hashCode()) % 3) * 11 + 22);
        }
    }

    private static void legend(Graphics2D g, EngineCampaign.Run run, List<String> instances, long end, int height) {
        g.setColor(Color.BLACK);
        g.drawString(run.level() + " level, " + run.config() + ", seed " + run.seed() + ": "
                + run.history().sections().size() + " sections, " + run.history().faults().size() + " faults (grey), "
                + run.findings().violations().size() + " violations (red marks); red outline: told the lock was lost; "
                + "time axis " + History.ms(end) + " ms", 8, 16);
        int x = WIDTH - 60 * instances.size() - 20;
        for (int i = 0; i < instances.size(); i++) {
            g.setColor(PALETTE[i % PALETTE.length]);
            g.fillRect(x + i * 60, 6, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(instances.get(i), x + i * 60 + 16, 16);
        }
    }
}
