/**
 * The lifecycle manager, ModelKeeper's public API: {@code ModelManager} and its compositions
 * ({@code BaseModelManager}, {@code ModelManagerDecorator}, {@code WithFixedSizeCache}), leases,
 * budgets, lifecycle events and typed exceptions. Needs only the JDK.
 */
package dev.modelkeeper.core;
