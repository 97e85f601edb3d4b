/**
 * The Java examples of the README and of docs/*.md: each page shows the lines between {@code tag::x[]} and
 * {@code end::x[]} of these files (lines ending in {@code docs:hide} left out), and the build checks that they
 * are equal (SnippetsTest). Compiled as test sources, not run as tests, but {@code testcontainers}: its test runs
 * where a Docker engine does and is reported skipped elsewhere.
 */
package dev.leasehold.docs.snippets;
