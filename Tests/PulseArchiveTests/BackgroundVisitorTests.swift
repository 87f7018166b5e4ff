import Foundation
import Testing
import PulseSystem
@testable import PulseArchive
@testable import PulseTestSupport

/// A visitor whose first attachment waits until the test lets it go, and which records the
/// attachments it is given, in order.
private final class StalledVisitor: ArchiveVisitor, HandleHolder, @unchecked Sendable {
    let release = DispatchSemaphore(value: 0)
    var handleOwners: [HandleOwner] { [] }
    private(set) var names: [String] = []

    /// Rows are not what this test hands over.
    func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {}

    func visitAttachment(name: String, contents: ArchiveBytes) throws {
        if names.isEmpty { release.wait() }
        names.append(name)
    }
}

/// A count shared between two threads.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

@Suite("BackgroundVisitor: calls handed to a second thread")
struct BackgroundVisitorTests {
    @Test("attachments are handed over by their bytes: a reader runs at most a few MB ahead of a stalled worker, then every call arrives in order",
          .timeLimit(.minutes(2)))
    func attachmentsAreBoundedByBytes() throws {
        let base = StalledVisitor()
        let visitor = try BackgroundVisitor(base)
        let submitted = Counter()
        let total = 64, size = 256 << 10  // 16 MB in all; at most 4 MB may wait
        let reader = Thread {
            for i in 0..<total {
                try? visitor.visitAttachment(name: "a\(i)", contents: ArchiveBytes([UInt8](repeating: UInt8(i), count: size)))
                submitted.increment()
            }
        }
        reader.start()
        // Wait until the reader is blocked: the count stops moving for half a second. A
        // stop that comes early only makes the check below weaker, never false; every wait
        // here ends by a deadline, so a reader that never blocks or never finishes fails the
        // test instead of hanging it.
        let deadline = Date().addingTimeInterval(60)
        var last = -1
        while submitted.value != last || submitted.value < 8 {
            guard Date() < deadline else {
                Issue.record("the reader did not settle within 60 s: \(submitted.value) of \(total) submitted")
                base.release.signal()
                return
            }
            last = submitted.value
            Thread.sleep(forTimeInterval: 0.5)
        }
        #expect(submitted.value * size <= 4 << 20, "the reader ran \(submitted.value * size >> 20) MB ahead of a stalled worker")
        base.release.signal()
        while submitted.value < total {
            guard Date() < deadline else {
                Issue.record("the reader submitted \(submitted.value) of \(total) within 60 s of a released worker")
                return
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let delivered = try visitor.finish()
        #expect(delivered.names == (0..<total).map { "a\($0)" })
    }
}
