#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The one thread allowed to use a C handle (a SQLite connection and its statements, a zlib
/// stream, a libcrypto context) at a given moment.
///
/// The C libraries we use are not safe for two threads at once (SQLite is opened
/// `SQLITE_OPEN_NOMUTEX`), and the thread sanitizer cannot see races inside them, since they
/// are not instrumented. So the type that owns a handle checks, on every use and when it frees
/// the handle, that the calling thread is the owner, and traps otherwise: a misuse is a
/// programming error found by the first test that reaches it, not heap corruption found once
/// in a thousand runs.
///
/// A handle changes threads only through an explicit hand-off: the owner `release`s it (from
/// then on no thread may use it), and the receiving thread `adopt`s it after the hand-off's
/// own synchronization (a queue, a semaphore, a thread's start or join). `BackgroundWorker` does
/// both for the handles its work holds.
public final class HandleOwner: Sendable {
    /// What the handle is, for the trap's message ("SQLite connection /tmp/x/tables.sqlite").
    public let handle: String
    /// The owning thread's identity, or 0 while the handle is between two threads.
    private let thread: Atomic<UInt>

    /// A handle owned by the calling thread.
    public init(_ handle: String) {
        self.handle = handle
        thread = Atomic(Self.currentThread)
    }

    /// The calling thread's identity: never 0.
    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        pthread_self()
        #endif
    }

    /// Traps unless the calling thread owns the handle.
    @inline(__always)
    public func check() {
        let owner = thread.load(ordering: .relaxed)
        if owner != Self.currentThread { misuse(owner) }
    }

    /// Whether the calling thread owns the handle (for an owner's own preconditions).
    public var isOwnedByCurrentThread: Bool { thread.load(ordering: .relaxed) == Self.currentThread }

    @inline(never)
    private func misuse(_ owner: UInt) -> Never {
        preconditionFailure(owner == 0
            ? "\(handle) used while it is being handed to another thread"
            : "\(handle) used by a thread that does not own it")
    }

    /// Gives the handle up, to be adopted by another thread; the calling thread must own it.
    public func release() {
        check()
        thread.store(0, ordering: .releasing)
    }

    /// Makes the calling thread the owner of a handle that was released.
    public func adopt() {
        let (exchanged, owner) = thread.compareExchange(expected: 0, desired: Self.currentThread, ordering: .acquiring)
        precondition(exchanged, "\(handle) adopted while \(owner == Self.currentThread ? "this thread" : "another thread") still owns it")
    }
}

/// Something that holds C handles: it names their owners so that whoever hands it to another
/// thread hands them over too. A wrapper names its own handles and those of what it wraps;
/// the requirement has no default, so no conforming type can forget to answer.
public protocol HandleHolder {
    var handleOwners: [HandleOwner] { get }
}
