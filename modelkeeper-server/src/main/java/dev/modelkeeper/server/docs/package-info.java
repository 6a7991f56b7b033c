/**
 * The API documentation: {@code /v2/openapi.json} and Swagger UI at {@code /v2/docs}, served from
 * the jar. A transport: uses the engine (for the version) and the http plumbing.
 */
package dev.modelkeeper.server.docs;
