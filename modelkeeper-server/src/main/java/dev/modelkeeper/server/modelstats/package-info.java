/**
 * Triton's statistics extension over REST: {@code GET /v2/models/stats}, {@code
 * /v2/models/{m}/stats} and {@code /v2/models/{m}/versions/{v}/stats} ({@code StatsRoutes}). Uses
 * the engine and the http room's plumbing; knows no other transport.
 */
package dev.modelkeeper.server.modelstats;
