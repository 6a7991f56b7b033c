package dev.modelkeeper.server.statistics;

/**
 * The runs of one batch size: each run counts once, with the time of its phases. Immutable.
 *
 * @param batchSize the rows the runs had
 * @param computeInput preparing the inputs for the runtime (a batch's merge included)
 * @param computeInfer the runtime's own run
 * @param computeOutput reading the outputs back (a batch's split included)
 */
public record BatchStats(
    int batchSize, Timing computeInput, Timing computeInfer, Timing computeOutput) {}
