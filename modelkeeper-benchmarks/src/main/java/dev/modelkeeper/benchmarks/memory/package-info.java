/**
 * The per-model memory probe: one model loaded and run alone in a fresh process, its resident
 * memory read from {@code /proc} ({@code ModelAlone}), and the demo repository written for the
 * memory scripts.
 */
package dev.modelkeeper.benchmarks.memory;
