import Foundation

/// A first-in first-out queue between two threads that holds at most `capacity` units of
/// weight (an element weighs 1 unless its pusher says more): `push` waits while it is full,
/// `pop` while it is empty. An element heavier than what is left waits for an empty queue,
/// then goes alone. Either side can end it: `close` (no more elements; `pop` returns nil once
/// drained) or `fail` (both sides throw the error).
package final class BoundedQueue<Element>: @unchecked Sendable {
    private let capacity: Int
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var elements: [(element: Element, weight: Int)] = []
    private var load = 0
    private var closed = false
    private var failure: Error?

    package init(capacity: Int) {
        self.capacity = capacity
    }

    package func push(_ element: Element, weight: Int = 1) throws {
        condition.lock()
        defer { condition.unlock() }
        while load > 0 && load + weight > capacity && failure == nil { condition.wait() }
        if let failure { throw failure }
        elements.append((element, weight))
        load += weight
        condition.broadcast()
    }

    /// The next element; nil when the queue was closed and is drained.
    package func pop() throws -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while elements.isEmpty && !closed && failure == nil { condition.wait() }
        if let failure { throw failure }
        guard !elements.isEmpty else { return nil }
        condition.broadcast()
        let first = elements.removeFirst()
        load -= first.weight
        return first.element
    }

    package func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the queue with `error` (the first one wins) and drops what was waiting.
    package func fail(_ error: Error) {
        condition.lock()
        if failure == nil { failure = error }
        elements.removeAll()
        load = 0
        condition.broadcast()
        condition.unlock()
    }

    package var error: Error? {
        condition.lock()
        defer { condition.unlock() }
        return failure
    }
}
