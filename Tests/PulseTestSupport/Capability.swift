import Foundation
import Testing

/// Tests that need something of the machine (a read-only mount, `chattr`, `script`, `/proc`):
/// skipped where it is missing, except under `CI=true`, where a skip would hide a gap in what
/// CI proves, so the test runs and fails naming what is missing.
///
///     @Test("…", .enabled(if: Capability.enabled(ReadOnly.isAvailable)))
///     func readOnly() throws {
///         try Capability.require(ReadOnly.isAvailable, "a read-only bind mount (root, mount)")
///         …
enum Capability {
    /// `CI=true`: every capability is required.
    static let requiredByCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// For `.enabled(if:)`: whether the test runs. Always under `CI=true`.
    static func enabled(_ available: Bool) -> Bool { available || requiredByCI }

    /// The first line of a test gated by `enabled`: fails the test under `CI=true` when the
    /// capability is missing (elsewhere the trait skipped it already).
    static func require(_ available: Bool, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(available, "missing capability: \(what); CI=true makes a skipped test a failure", sourceLocation: sourceLocation)
    }
}
