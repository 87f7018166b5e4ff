import Foundation

/// A thread that runs `drain` once: a subclass overrides `drain` with its loop (usually over a
/// `BoundedQueue`), calls `start(named:)`, and `join`s before it uses what the thread made. The
/// non-generic base keeps a generic subclass's type out of the thread's closure.
open class BackgroundWorker: @unchecked Sendable {
    private let finished = DispatchSemaphore(value: 0)
    /// Whether `join` has returned; used by the owning thread only.
    private var joined = false

    public init() {}

    /// Waits until `drain` has returned; any number of times.
    public final func join() {
        guard !joined else { return }
        finished.wait()
        joined = true
    }

    public final func start(named name: String) {
        let worker: BackgroundWorker = self
        let thread = Thread {
            worker.drain()
            worker.finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// The thread's work; runs once, on the thread `start(named:)` started.
    open func drain() {}
}
