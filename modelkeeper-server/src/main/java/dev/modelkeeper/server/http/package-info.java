/**
 * The REST plumbing the REST transports share: the front door (body intake within the in-flight
 * budget, compressed bodies inflated within it, origin guard, errors as JSON with their HTTP
 * status), routes, the JSON codec, and the HTTP-only refusals (403, 408, 415). Uses the engine-side
 * rooms; knows no REST transport.
 */
package dev.modelkeeper.server.http;
