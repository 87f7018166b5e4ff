import Foundation

/// A value behind a lock.
package final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    package init(_ value: Value) { self.value = value }

    package func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }

    /// Runs `body` with the lock taken and never gives it back: for the last step of a process.
    package func holdForever(_ body: (inout Value) -> Void) {
        lock.lock()
        body(&value)
    }
}
