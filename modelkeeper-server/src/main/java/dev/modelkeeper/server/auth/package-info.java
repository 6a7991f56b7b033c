/**
 * Authentication of the state-changing endpoints: the bearer token ({@code BearerAuth}) and its
 * refusal ({@code UnauthorizedException}). Uses the errors room only.
 */
package dev.modelkeeper.server.auth;
