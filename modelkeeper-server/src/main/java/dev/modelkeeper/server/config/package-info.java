/**
 * The server's settings: immutable records, each default written once, each check naming its
 * setting ({@code InvalidConfigException}). Uses the core's and onnx's option types and the request
 * room's tracer; nothing else of the server.
 */
package dev.modelkeeper.server.config;
