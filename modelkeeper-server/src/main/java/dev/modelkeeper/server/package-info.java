/**
 * The server: {@code ModelKeeperServer} wires the rooms below together and owns their lifetime
 * (start, readiness, graceful stop). It may use every room; no room uses it.
 *
 * <ul>
 *   <li>{@code config}: the validated settings.
 *   <li>{@code errors}: what went wrong, as a kind each transport answers in its own status.
 *   <li>{@code auth}: the bearer token of the state-changing endpoints.
 *   <li>{@code request}: an inference request as the engine takes it, and its trace.
 *   <li>{@code admission}: the in-flight byte budget every request is held to.
 *   <li>{@code execution}: per-model queues, dynamic batching and the threads that run models.
 *   <li>{@code memory}: the process memory cap and its guard.
 *   <li>{@code engine}: the one façade the transports call: models resolved, run, listed, loaded.
 *   <li>{@code observability}: metrics, traces and the status board, behind the execution room's
 *       listener and the request trace.
 *   <li>transports, each a room of its own: {@code http} (the REST plumbing), {@code oip}, {@code
 *       repository}, {@code management}, {@code status}, {@code docs}, {@code grpc}.
 * </ul>
 *
 * <p>{@code ArchitectureTest} holds the map: who may use whom, no package cycles, which rooms may
 * import Micrometer, OpenTelemetry, Javalin and grpc-java, and package sizes.
 */
package dev.modelkeeper.server;
