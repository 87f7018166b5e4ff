import Foundation
import PulseSystem

/// A visitor call on its way to the worker. Kept outside the generic class so that queuing one
/// needs no generic metadata at run time; a row travels without its table (the worker knows it
/// from the `begin` before it).
private enum VisitorCall {
    case begin(ArchiveTable)
    case row(ArchiveRow, Int)
    case end(ArchiveTable, Int)
    case setting(String, String)
    case attachment(String, ArchiveBytes)
    case document(DocumentPath, JSONNode, [UInt8]?)
    case documentFile(DocumentPath, ArchiveBytes)
    case extensionRow(ExtensionTable, JSONNode, Int)
}

/// Delivers a read's visitor calls to `base` on a thread of its own, in order, so that
/// decompressing and parsing (the reader's thread) and what the visitor does with the rows
/// (inserting them into SQLite) use both cores. Calls travel in batches of at most
/// `batchSize` calls or `capacity` × 64 KB of what they carry (1 MB by default: rows' text,
/// attachments, documents, settings); the queue holds `capacity` batches, or that many bytes
/// (or one larger value alone), so memory stays bounded whatever the archive holds.
///
/// An error the base visitor throws reaches the reader at its next call, like an error thrown
/// in place; `finish` returns the base visitor once everything was delivered.
///
/// The base visitor's C handles (a staging connection) belong to the worker's thread from
/// `init` until `finish` or `stop` returns, then to the thread that called it
/// (`BackgroundWorker`): the reader's thread cannot touch them meanwhile, and the worker
/// cannot after.
///
/// The thread and the queue are the system layer's (`BackgroundWorker`, `BoundedQueue`); this
/// adapter knows the visitor's calls, so it lives with them in the codec, where import, verify
/// and diff all reach it.
package final class BackgroundVisitor<Base: ArchiveVisitor & HandleHolder>: BackgroundWorker, ArchiveVisitor, @unchecked Sendable {
    private var base: Base
    private let batchSize: Int
    private let queue: BoundedQueue<[VisitorCall]>
    /// Filled on the reader's thread only, with the bytes its calls carry.
    private var pending: [VisitorCall] = []
    private var pendingBytes = 0
    /// Bytes a batch carries per unit of the queue's capacity.
    private static var bytesPerUnit: Int { 64 << 10 }
    /// The bytes at which a batch is handed over however few calls it has.
    private let batchBytes: Int
    /// The table whose rows are being delivered, on the worker's thread only.
    private var table: ArchiveTable?
    /// What the base visitor threw; written by the worker before `finished` is signalled.
    private var deliveryError: Error?
    /// Batches delivered, on their way back to the reader's thread to be freed there (guarded
    /// by `deliveredLock`). Their rows were allocated on that thread, and glibc frees a block
    /// fastest on the thread that allocated it: freed on the worker, they cost it a lock on
    /// the reader's heap each.
    private var delivered: [[VisitorCall]] = []
    private let deliveredLock = NSLock()

    package init(_ base: Base, batchSize: Int = 256, capacity: Int = 16) throws {
        self.base = base
        self.batchSize = batchSize
        batchBytes = capacity * Self.bytesPerUnit
        queue = BoundedQueue(capacity: capacity)
        super.init()
        try start(named: "pulse-archive staging", handingOver: base.handleOwners)
    }

    /// Waits until every call was delivered, and returns the base visitor.
    /// - Throws: the first error the base visitor threw.
    package func finish() throws -> Base {
        if !pending.isEmpty { try pushPending() }
        queue.close()
        join()
        if let deliveryError { throw deliveryError }
        return base
    }

    /// The error the base visitor threw, if any, after the calls it is delivering (a read that
    /// failed asks which problem came first). Calls still waiting are dropped.
    package func stop() -> Error? {
        queue.fail(CancellationError())
        join()
        return deliveryError
    }

    /// - Parameter bytes: what the call carries beyond a row's size (an attachment's contents).
    private func submit(_ call: VisitorCall, bytes: Int = 0) throws {
        pending.append(call)
        pendingBytes += bytes
        if pending.count >= batchSize || pendingBytes >= batchBytes {
            try pushPending()
            pending.reserveCapacity(batchSize)
            deliveredLock.lock()
            let done = delivered
            delivered = []
            deliveredLock.unlock()
            withExtendedLifetime(done) {}  // freed here, on the reader's thread
        }
    }

    private func pushPending() throws {
        try queue.push(pending, weight: 1 + pendingBytes / Self.bytesPerUnit)
        pending = []
        pendingBytes = 0
    }

    override package func drain() {
        do {
            while let batch = try queue.pop() {
                do {
                    for call in batch { try deliver(call) }
                    deliveredLock.lock()
                    delivered.append(batch)
                    deliveredLock.unlock()
                } catch {
                    deliveryError = error
                    queue.fail(error)  // the reader throws it at its next hand-off
                    return
                }
            }
        } catch {
            // Stopped by the reader: nothing more to deliver.
        }
    }

    private func deliver(_ call: VisitorCall) throws {
        switch call {
        case .begin(let table):
            self.table = table
            try base.beginTable(table)
        case .row(let row, let index): try base.visit(row: row, at: index, of: table!)
        case .end(let table, let count):
            self.table = nil
            try base.endTable(table, rowCount: count)
        case .setting(let key, let value): try base.visitSetting(key: key, value: value)
        case .attachment(let name, let contents): try base.visitAttachment(name: name, contents: contents)
        case .document(let path, let node, let bytes): try base.visitDocument(path, document: node, originalBytes: bytes)
        case .documentFile(let path, let contents): try base.visitDocumentFile(path, contents: contents)
        case .extensionRow(let table, let row, let index): try base.visitExtensionRow(table, row: row, at: index)
        }
    }

    package func beginTable(_ table: ArchiveTable) throws { try submit(.begin(table)) }
    package func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws { try submit(.row(row, index), bytes: row.textBytes) }
    package func endTable(_ table: ArchiveTable, rowCount: Int) throws { try submit(.end(table, rowCount)) }
    package func visitSetting(key: String, value: String) throws { try submit(.setting(key, value), bytes: key.utf8.count + value.utf8.count) }
    /// A spilled value weighs nothing in the queue: its bytes wait in their scratch file.
    package func visitAttachment(name: String, contents: ArchiveBytes) throws {
        try submit(.attachment(name, contents), bytes: name.utf8.count + contents.bytesInMemory)
    }
    package func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        try submit(.document(path, document, originalBytes), bytes: document.approximateBytes + (originalBytes?.count ?? 0))
    }
    package func visitDocumentFile(_ path: DocumentPath, contents: ArchiveBytes) throws {
        try submit(.documentFile(path, contents), bytes: contents.bytesInMemory)
    }
    package func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        try submit(.extensionRow(table, row, index), bytes: row.approximateBytes)
    }
}
