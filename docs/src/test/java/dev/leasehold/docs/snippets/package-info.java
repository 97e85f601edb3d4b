/**
 * The Java examples of the README and of docs/*.md: each page shows the lines between {@code tag::x[]} and
 * {@code end::x[]} of these files (lines ending in {@code docs:hide} left out), and the build checks that they
 * are equal (SnippetsTest). Compiled as test sources, never run as tests.
 */
package dev.leasehold.docs.snippets;
