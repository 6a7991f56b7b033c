/**
 * Model swap time: where one cold load's time goes ({@code LoadPath}), against ONNX Runtime's bare
 * session creation on the same file in the same run, with and without pre-optimized forms. The
 * churn of swaps over HTTP is {@code scripts/bench-swap.sh}.
 */
package dev.modelkeeper.benchmarks.swap;
