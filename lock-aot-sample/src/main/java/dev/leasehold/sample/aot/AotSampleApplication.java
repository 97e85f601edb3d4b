package dev.leasehold.sample.aot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A small application on the Leasehold starter, processed ahead of time in this module's build. */
@SpringBootApplication
public class AotSampleApplication {

    public static void main(String[] args) {
        SpringApplication.run(AotSampleApplication.class, args);
    }
}
