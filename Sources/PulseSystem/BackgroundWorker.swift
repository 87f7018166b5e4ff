import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread that runs `drain` once: a subclass overrides `drain` with its loop (usually over a
/// `BoundedQueue`), calls `start(named:handingOver:)`, and `join`s before it uses what the
/// thread made. The non-generic base keeps a generic subclass's type out of the thread's closure.
///
/// Two ownership rules make the hand-off safe for what the work holds:
/// - The thread lets go of the worker *before* it signals completion, so the reference dropped
///   after `join()` is never the thread's: whatever the work holds (prepared statements, a
///   zlib stream) is freed on the joining thread, not on the worker's while the joining thread
///   goes on using the same connection.
/// - The C handles the work uses (`handingOver`) are released by the starting thread, adopted
///   by the worker's thread for `drain`, released again when it ends, and adopted back by the
///   thread that joins: any use out of turn traps (`HandleOwner`).
open class BackgroundWorker: @unchecked Sendable {
    private let finished = DispatchSemaphore(value: 0)
    /// Whether `start` ran and `join` has not returned; used by the owning thread only.
    private var running = false
    /// The handles the work uses, owned by the worker's thread while it runs.
    private var handedOver: [HandleOwner] = []

    public init() {}

    deinit {
        // Reached only once the thread let go of the worker (after `drain`), on whichever
        // thread dropped the last reference: a worker never joined was abandoned, and that
        // thread frees what the work holds, so it takes the handles. It does not wait for the
        // signal: on the worker's own thread that would wait for itself.
        if running {
            for owner in handedOver { owner.adopt() }
        }
    }

    /// Waits until `drain` has returned and the thread let go of the worker; then the calling
    /// thread owns the handles handed over. Any number of times.
    public final func join() {
        guard running else { return }
        finished.wait()
        running = false
        for owner in handedOver { owner.adopt() }
    }

    /// Starts the thread.
    /// - Parameter owners: the handles `drain` uses, owned by the calling thread until now.
    /// - Throws: `SystemError(.io)` when the system refuses a thread (an address-space or
    ///   process limit: `ulimit -v`, `ulimit -u`); the handles stay the caller's. Foundation's
    ///   `Thread` says nothing then, and a caller would wait for the thread's work forever.
    public final func start(named name: String, handingOver owners: [HandleOwner]) throws {
        precondition(!running, "a BackgroundWorker runs once at a time")
        for owner in owners { owner.release() }
        handedOver = owners
        running = true
        let context = Unmanaged.passRetained(ThreadStart(work: WorkBox(self), finished: finished, name: name)).toOpaque()
        let refusedForTest = TestRefusal.refuses(.thread) && name.hasSuffix(" 2")
        let status = refusedForTest ? EAGAIN : Self.spawn(context)
        guard status == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            running = false
            handedOver = []
            for owner in owners { owner.adopt() }
            throw SystemError(.io, "cannot start a thread (\(name)): \(String(cString: strerror(status))); the system limits this process's threads or memory (ulimit -u, ulimit -v)")
        }
    }

    /// What a new thread needs: the work, the signal it gives when done, its name.
    private final class ThreadStart {
        let work: WorkBox
        let finished: DispatchSemaphore
        let name: String
        init(work: WorkBox, finished: DispatchSemaphore, name: String) {
            self.work = work
            self.finished = finished
            self.name = name
        }
    }

    /// Creates a detached thread (joined through `finished`) that runs the work in `context`.
    private static func spawn(_ context: UnsafeMutableRawPointer) -> Int32 {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        #if canImport(Glibc)
        var thread = pthread_t()
        return pthread_create(&thread, &attributes, { context in
            BackgroundWorker.threadMain(context!)
            return nil
        }, context)
        #else
        var thread: pthread_t?
        return pthread_create(&thread, &attributes, { context in
            BackgroundWorker.threadMain(context)
            return nil
        }, context)
        #endif
    }

    private static func threadMain(_ context: UnsafeMutableRawPointer) {
        let start = Unmanaged<ThreadStart>.fromOpaque(context).takeRetainedValue()
        Thread.current.name = start.name
        run(start.work)
        start.finished.signal()
        // The thread outlives its work for a moment, while the joining thread goes on: a
        // fatal signal taken here is handled beside the main thread's next steps.
        TestPausePoint.reached("worker.finished")
    }

    /// The thread's whole use of the worker. Not inlined, so the one reference it takes is
    /// dropped when it returns, before the caller signals completion.
    @inline(never)
    private static func run(_ work: WorkBox) {
        let worker = work.take()
        for owner in worker.handedOver { owner.adopt() }
        worker.drain()
        for owner in worker.handedOver { owner.release() }
    }

    /// The thread's work; runs once, on the thread `start` started.
    open func drain() {}

    /// Holds the worker for the thread until the thread takes it, so that the thread's closure
    /// (which `Thread` keeps until the thread exits) holds no reference of its own.
    private final class WorkBox: @unchecked Sendable {
        private var worker: BackgroundWorker?
        init(_ worker: BackgroundWorker) { self.worker = worker }
        func take() -> BackgroundWorker {
            defer { worker = nil }
            return worker!
        }
    }
}
