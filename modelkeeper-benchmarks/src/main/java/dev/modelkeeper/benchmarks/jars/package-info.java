/**
 * The jar-against-jar throughput benchmark: two packaged server jars (a previous release and the
 * work tree's build) each run as a child process on loopback, in interleaved rounds, under the same
 * closed-loop HTTP load generated inside the harness JVM. Entry point: {@link
 * dev.modelkeeper.benchmarks.jars.JarThroughputBench}.
 */
package dev.modelkeeper.benchmarks.jars;
