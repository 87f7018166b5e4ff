import Foundation
import Testing
import PulseSystem
import PulseSQLite

/// A worker that runs a closure on its thread with the handles it was given.
private final class ClosureWorker: BackgroundWorker, @unchecked Sendable {
    private let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
    override func drain() { body() }
}

/// Runs `body` on a thread of its own, without handing anything over, and waits for it.
private func onAnotherThread(_ body: @escaping () -> Void) throws {
    let worker = ClosureWorker(body)
    try worker.start(named: "pulse-archive test", handingOver: [])
    worker.join()
}

@Suite("One owner per C handle: every use out of turn traps")
struct HandleOwnershipTests {
    /// What the trapped process printed: the trap names the handle and the misuse.
    static func stderr(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test("a connection handed to a worker is used there, then by the joining thread again")
    func handOffRoundTrip() throws {
        let database = try SQLiteDatabase(path: ":memory:", create: true)
        try database.execute("CREATE TABLE t (x INTEGER)")
        let worker = ClosureWorker {
            try! database.execute("INSERT INTO t VALUES (1)")
            let statement = try! database.prepare("SELECT count(*) FROM t")
            _ = try! statement.step()
        }
        try worker.start(named: "pulse-archive test", handingOver: database.handleOwners)
        #expect(!database.owner.isOwnedByCurrentThread, "the starting thread gave the connection up")
        worker.join()
        #expect(database.owner.isOwnedByCurrentThread)
        #expect(try database.integer("SELECT count(*) FROM t") == 1)
    }

    @Test("closing a connection while one of its statements is alive traps (sqlite3_close, never a zombie)")
    func closeWithLiveStatement() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let database = try! SQLiteDatabase(path: ":memory:", create: true)
            let statement = try! database.prepare("SELECT 1")
            database.close()
            withExtendedLifetime(statement) {}
        }
        #expect(Self.stderr(result).contains("closed with 1 statements alive"), "\(Self.stderr(result))")
    }

    @Test("a connection used by a thread it was not handed to traps")
    func connectionUsedByAnotherThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let database = try! SQLiteDatabase(path: ":memory:", create: true)
            try onAnotherThread { try? database.execute("SELECT 1") }
        }
        #expect(Self.stderr(result).contains("used by a thread that does not own it"), "\(Self.stderr(result))")
    }

    @Test("a statement finalized by a thread that does not own its connection traps")
    func statementReleasedByAnotherThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let database = try! SQLiteDatabase(path: ":memory:", create: true)
            var statement: SQLiteStatement? = try! database.prepare("SELECT 1")
            _ = statement
            let box = NSLock()
            try onAnotherThread {
                box.lock()
                statement = nil
                box.unlock()
            }
        }
        #expect(Self.stderr(result).contains("used by a thread that does not own it"), "\(Self.stderr(result))")
    }

    @Test("a connection used while it is on its way to a worker traps")
    func connectionUsedInTransit() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let database = try! SQLiteDatabase(path: ":memory:", create: true)
            database.owner.release()
            try? database.execute("SELECT 1")
        }
        #expect(Self.stderr(result).contains("used while it is being handed to another thread"), "\(Self.stderr(result))")
    }

    @Test("a handle adopted while another thread owns it traps")
    func adoptWhileOwned() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let owner = HandleOwner("a test handle")
            owner.adopt()
        }
        #expect(Self.stderr(result).contains("adopted while this thread still owns it"), "\(Self.stderr(result))")
    }
}
