/**
 * The command line: {@code modelkeeper serve}, its options (each default declared once, in the
 * server's configuration records), the startup summary, logging and tracing set-up. Owns the
 * logging backend; the only module that starts a process.
 */
package dev.modelkeeper.cli;
