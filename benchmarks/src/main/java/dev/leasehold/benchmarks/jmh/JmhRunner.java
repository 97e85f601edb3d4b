package dev.leasehold.benchmarks.jmh;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import dev.leasehold.benchmarks.contenders.Redis;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/** Runs every JMH benchmark of this package, briefly (their own annotations say how long), on the suite's server. */
public final class JmhRunner {

    static final String HOST_PROPERTY = "bench.redis.host";

    static final String PORT_PROPERTY = "bench.redis.port";

    /** One row of the report. */
    public record Result(String benchmark, double score, double error, String unit) {
    }

    private JmhRunner() {
    }

    public static List<Result> run(Redis redis) throws Exception {
        Options options = new OptionsBuilder()
            .include(JmhRunner.class.getPackageName().replace(".", "\\.") + "\\..*")
            .jvmArgsAppend("-D" + HOST_PROPERTY + "=" + redis.host(), "-D" + PORT_PROPERTY + "=" + redis.port())
            .build();
        Collection<RunResult> results = new Runner(options).run();
        List<Result> rows = new ArrayList<>();
        for (RunResult result : results) {
            var primary = result.getPrimaryResult();
            String name = result.getParams().getBenchmark();
            rows.add(new Result(name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1), primary.getScore(),
                    primary.getScoreError(), primary.getScoreUnit()));
        }
        return rows;
    }

    /** The suite's server when the fork was started by {@link #run}, else null. */
    static Redis suiteRedis() {
        String port = System.getProperty(PORT_PROPERTY);
        return port == null ? null : new Redis(System.getProperty(HOST_PROPERTY, "127.0.0.1"), Integer.parseInt(port));
    }
}
