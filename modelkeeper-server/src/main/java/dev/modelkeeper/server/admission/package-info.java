/**
 * Admission: the in-flight byte budget that bounds what requests hold in memory ({@code
 * InflightBytes}, {@code RequestBytes}) and the pool of off-heap buffers large bodies are received
 * into ({@code DirectBuffers}). Uses the errors room only.
 */
package dev.modelkeeper.server.admission;
