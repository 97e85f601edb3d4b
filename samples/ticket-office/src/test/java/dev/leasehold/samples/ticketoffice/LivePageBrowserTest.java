package dev.leasehold.samples.ticketoffice;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.leasehold.test.redis.RedisServerExtension;
import tools.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The live page in a real headless Chromium, during a booking load through two nodes: its figures move, and
 * once the load stops they equal what the API and Actuator say; its cluster panel shows both nodes taking
 * turns on the show's key, and the one not holding it queued in Redis. Saves {@code target/live-page.png}.
 * Skipped, with how to install them, where Chromium or its driver is missing: it never passes without a browser.
 */
@Timeout(180)
class LivePageBrowserTest {

    private static final String INSTALL = "Chromium and chromedriver are needed for the live page's browser test: "
            + "apt-get install chromium chromium-driver";

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    static TicketOfficeNode node;

    /** A second instance on the same Redis and database: the cluster panel shows both. */
    static TicketOfficeNode otherNode;

    static WebDriver browser;

    static Path profile;

    /**
     * Starts the browser and the node, or skips the test (an assumption in the test itself, so the report
     * counts it as skipped with the reason, where a class-level one would show no test at all).
     */
    @BeforeEach
    void start() throws Exception {
        File chromium = onPath("chromium", "chromium-browser", "google-chrome");
        File driver = onPath("chromedriver");
        if (chromium == null || driver == null) {
            System.err.println("SKIPPED LivePageBrowserTest: " + INSTALL);
        }
        assumeTrue(chromium != null && driver != null, INSTALL);
        if (browser != null) {
            return;
        }
        node = TicketOfficeNode.start("live-node", redis.server(), "live", "live:", "--ticket-office.payment-time=5ms");
        otherNode = TicketOfficeNode.start("live-node-2", redis.server(), "live", "live:",
                "--ticket-office.payment-time=5ms");
        profile = Files.createTempDirectory("leasehold-chromium-");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium);
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-dev-shm-usage", "--window-size=1400,1000", "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver)
            .usingAnyFreePort()
            .build();
        browser = new ChromeDriver(service, options);
    }

    @AfterAll
    static void stop() throws Exception {
        if (browser != null) {
            browser.quit();
        }
        if (otherNode != null) {
            otherNode.close();
        }
        if (node != null) {
            node.close();
        }
        if (profile != null) {
            try (var files = Files.walk(profile)) {
                files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Test
    void theLivePageFollowsALoadRunAndMatchesTheApi() throws Exception {
        long showId = node.createShow("Live", 1_000_000);
        browser.get(node.url + "/");
        Await.until(Duration.ofSeconds(20), "the page refreshed twice", () -> number("refreshes") >= 2);
        assertThat(browser.findElement(By.id("node")).getText()).isEqualTo("live-node");

        String self = node.getJson("/actuator/leasehold").path("instanceId").asString();
        String other = otherNode.getJson("/actuator/leasehold").path("instanceId").asString();
        try (BookingLoad load = BookingLoad.start(List.of(node, otherNode), showId, Integer.MAX_VALUE, 8, true)) {
            long acquiredBefore = figure("acquisitions-total");
            long seatsBefore = figure("seats-left");
            Await.until(Duration.ofSeconds(30), "the acquisitions and seats left change on the page",
                    () -> figure("acquisitions-total") > acquiredBefore && figure("seats-left") < seatsBefore);
            Await.until(Duration.ofSeconds(30), "the page shows a rate and a wait p99",
                    () -> figure("acquisitions-rate") > 0 && !value("wait-p99").isEmpty());
            AtomicBoolean sawHeld = new AtomicBoolean();
            Await.until(Duration.ofSeconds(30), "the page shows a lock held by this node, with its key", () -> {
                if (figure("locks-held") > 0 && browser.findElement(By.id("held-rows")).getText().contains("show:" + showId)) {
                    sawHeld.set(true);
                }
                return sawHeld.get();
            });
            Await.until(Duration.ofSeconds(30), "the chart has a few seconds of history", () -> number("points") >= 5);

            // the cluster panel follows the show under load: both nodes hold its key in turns, and the node
            // not holding it is seen waiting in the key's queue in Redis
            Await.until(Duration.ofSeconds(30), "the cluster panel follows the show",
                    () -> ("show:" + showId).equals(value("cluster-key")));
            Set<String> holdersSeen = new HashSet<>();
            Set<String> queuedSeen = new HashSet<>();
            Await.until(Duration.ofSeconds(30), "both nodes seen holding the key, and queued for it", () -> {
                // read in one script: the panel redraws 20 times a second
                List<?> seen = (List<?>) ((JavascriptExecutor) browser).executeScript("return [document.getElementById("
                        + "'holder').dataset.instance, [...document.querySelectorAll('#queue li[data-instance]')]"
                        + ".map(li => li.dataset.instance)]");
                holdersSeen.add((String) seen.get(0));
                ((List<?>) seen.get(1)).forEach(queued -> queuedSeen.add((String) queued));
                return holdersSeen.containsAll(List.of(self, other)) && !queuedSeen.isEmpty();
            });
            assertThat(holdersSeen).isSubsetOf(self, other, "");
            assertThat(queuedSeen).isSubsetOf(self, other);
            Await.until(Duration.ofSeconds(30), "the strip shows both nodes' turns",
                    () -> number("strip-holders") == 2 && figure("turns") >= 2);
            assertThat(browser.findElement(By.id("strip")).getSize().getHeight()).isGreaterThan(40);
            Path screenshot = Path.of("target", "live-page.png");
            Files.createDirectories(screenshot.getParent());
            Files.copy(((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath(), screenshot,
                    StandardCopyOption.REPLACE_EXISTING);
            assertThat(load.errors).isEmpty();
        }

        // the load stopped: the figures settle on what the API says
        Await.until(Duration.ofSeconds(30), "the page's figures equal the API's", () -> {
            JsonNode shows = node.getJson("/api/shows");
            long seatsLeft = 0;
            long oversold = 0;
            for (JsonNode show : shows) {
                seatsLeft += show.path("seatsLeft").asLong();
                oversold += show.path("oversold").asLong();
            }
            long held = node.getJson("/actuator/leasehold").path("held").size();
            long acquired = Math.round(node.metric("leasehold.lock.acquire", "tag=result:acquired", "COUNT"));
            long lost = Math.round(node.metric("leasehold.lock.lost", "", "COUNT"));
            double p99 = node.getJson("/api/lock-waits").path("p99Millis").asDouble() / 1000;
            return figure("seats-left") == seatsLeft && figure("oversold") == oversold && oversold == 0
                    && figure("locks-held") == held && figure("acquisitions-total") == acquired
                    && figure("lost") == lost && Math.abs(Double.parseDouble(value("wait-p99")) - p99) < 1e-9;
        });
        assertThat(browser.findElement(By.cssSelector("#show-rows tr[data-show-id='" + showId + "']")).getText())
            .contains("Live");
    }

    private static String value(String id) {
        return browser.findElement(By.id(id)).getDomAttribute("data-value");
    }

    private static long figure(String id) {
        String value = value(id);
        return value == null || value.isEmpty() ? -1 : Math.round(Double.parseDouble(value));
    }

    private static long number(String bodyAttribute) {
        String value = browser.findElement(By.tagName("body")).getDomAttribute("data-" + bodyAttribute);
        return value == null ? 0 : Long.parseLong(value);
    }

    private static File onPath(String... names) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String name : names) {
            for (String dir : path.split(File.pathSeparator)) {
                File candidate = new File(dir, name);
                if (candidate.isFile() && candidate.canExecute()) {
                    return candidate;
                }
            }
        }
        return null;
    }
}
