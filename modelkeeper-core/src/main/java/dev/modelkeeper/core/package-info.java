/**
 * The lifecycle manager, ModelKeeper's public API: {@code ModelManager} and its compositions
 * ({@code BaseModelManager}, {@code ModelManagerDecorator}, {@code WithFixedSizeCache}), leases,
 * budgets, lifecycle events and typed exceptions. Needs only the JDK (and JSpecify's nullness
 * annotations: every type is non-null unless marked {@code @Nullable}, checked by NullAway).
 */
@NullMarked
package dev.modelkeeper.core;

import org.jspecify.annotations.NullMarked;
