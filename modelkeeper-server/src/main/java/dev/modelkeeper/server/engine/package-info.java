/**
 * The engine: the one façade every transport calls ({@code Engine}), model names resolved once to a
 * target ({@code ModelResolver}), the inference path ({@code InferenceService}), what is known of
 * models that are not resident ({@code ModelEvents}), and the server's state. Uses the request,
 * admission, execution, memory and errors rooms; no transport, no wire library, no observability
 * library.
 */
package dev.modelkeeper.server.engine;
