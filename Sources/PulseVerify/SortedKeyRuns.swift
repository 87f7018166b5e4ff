#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PulseArchive
import PulseSystem
import PulseStore

/// The keys of one table (or the values of one reference column) as an archive streams past,
/// sorted in bounded memory: a few megabytes at a time are sorted and spilled as a run to a
/// private file that has no name on disk (the keys may come from an encrypted archive, and no
/// kill may leave them behind), and the runs are merged when asked. `verify` finds repeated keys and dangling
/// references this way, without a database and without holding a table in memory.
///
/// Keys are compared by their encoding (`KeyEncoding`), which is equal exactly when the
/// store's unique index would call two values equal.
///
/// Each key may carry a payload of a fixed size (`payloadSize` bytes, 0 for `verify`), kept
/// beside the key's bytes beyond 16 and spilled with it: `diff` stores a digest of each row
/// there, so two archives' runs can be merge-joined by key and compared by content.
final class SortedKeyRuns {
    /// One key with the index of the row it came from.
    private struct Entry {
        var key: SortKey
        /// Where the key's bytes beyond the first 16 are, in `bytes`.
        var offset: Int
        var row: Int
    }

    private let name: String
    /// The runs spilled so far, back to back; made at the first spill.
    private(set) var runFile: SystemFile?
    private var runFileLength: Int64 = 0
    private let memoryBudget: Int
    /// The bytes every key carries beside it.
    let payloadSize: Int
    /// Per key, its bytes beyond the first 16 then its payload, back to back.
    private var bytes: [UInt8] = []
    private var entries: [Entry] = []
    private var runs: [Run] = []
    private var scratch: [UInt8] = []

    /// - Parameters:
    ///   - name: what messages call the runs.
    ///   - memoryBudget: bytes of keys held before a run is spilled. 2 MB keeps `verify`'s
    ///     peak within 3 MB from 1 to 10 years of data (docs/performance.md); merging costs one
    ///     open file and a 64 KB buffer per run, about 15 runs for the 10-year reference's
    ///     largest table. The runs share one file.
    ///   - payloadSize: the bytes each key carries (`add(_:row:payload:)`).
    init(name: String, memoryBudget: Int = 2 << 20, payloadSize: Int = 0) {
        self.name = name
        self.memoryBudget = memoryBudget
        self.payloadSize = payloadSize
    }

    func add(_ value: FieldValue, row: Int) throws {
        precondition(payloadSize == 0, "a key of runs with a payload needs its payload")
        try add(value, row: row, payload: [])
    }

    /// Adds a key with its payload, exactly `payloadSize` bytes.
    func add(_ value: FieldValue, row: Int, payload: [UInt8]) throws {
        precondition(payload.count == payloadSize, "a payload of \(payload.count) bytes for runs of \(payloadSize)")
        let offset = bytes.count
        let key = SortKey(value, rest: &bytes, scratch: &scratch)
        if payloadSize > 0 { bytes.append(contentsOf: payload) }
        entries.append(Entry(key: key, offset: offset, row: row))
        if bytes.count + entries.count * MemoryLayout<Entry>.stride >= memoryBudget { try spill() }
    }

    /// Sorts what is left in memory; a small remainder stays there, a large one is spilled.
    /// Either way the buffers are let go: a table's keys are complete.
    func seal() throws {
        guard !entries.isEmpty else { return }
        if bytes.count + entries.count * MemoryLayout<Entry>.stride > memoryBudget / 16 {
            try spill()
        } else {
            sortEntries()
            runs.append(.memory(MemoryRun(bytes: bytes, entries: entries.map { ($0.key, $0.offset, $0.row) }, payloadSize: payloadSize)))
        }
        bytes = []
        entries = []
    }

    /// How many runs went to the run file.
    var spilledRuns: Int {
        runs.count { if case .file = $0 { true } else { false } }
    }

    /// A fresh cursor over every key added, in key order (ties by row).
    func cursor() throws -> Cursor {
        try seal()
        return Cursor(try runs.map { try $0.open() })
    }

    /// The rows whose key an earlier row already has, by row index: (row, first row, key); at
    /// most the first `limit` of them, so memory stays bounded, with the count of all.
    func repeats(keeping limit: Int = .max) throws -> (first: [(row: Int, firstRow: Int, key: FieldValue)], count: Int) {
        var found: [(row: Int, firstRow: Int, key: FieldValue)] = []
        var count = 0
        let cursor = try self.cursor()
        var previous = SortKey.none, previousRest: [UInt8] = []
        var firstRow = -1
        while try cursor.next() {
            if firstRow >= 0, cursor.key == previous, cursor.rest == previousRest {
                count += 1
                found.append((cursor.row, firstRow, previous.value(rest: previousRest)))
                if limit < Int.max / 2, found.count >= 2 * limit {
                    found.sort { $0.row < $1.row }
                    found.removeSubrange(limit...)
                }
            } else {
                previous = cursor.key
                previousRest = cursor.rest
                firstRow = cursor.row
            }
        }
        found.sort { $0.row < $1.row }
        return (Array(found.prefix(limit)), count)
    }

    /// How many of `references` (with repeats) name no key of `self`.
    func countMissing(_ references: SortedKeyRuns) throws -> Int {
        let keys = try cursor(), wanted = try references.cursor()
        var missing = 0
        var hasKey = try keys.next()
        while try wanted.next() {
            while hasKey, Cursor.compare(keys, wanted) < 0 { hasKey = try keys.next() }
            if !hasKey || Cursor.compare(keys, wanted) != 0 { missing += 1 }
        }
        return missing
    }

    private func sortEntries() {
        bytes.withUnsafeBufferPointer { base in
            entries.sort { a, b in
                if a.key != b.key { return a.key < b.key }
                let order = KeyEncoding.compare(UnsafeBufferPointer(rebasing: base[a.offset..<a.offset + a.key.restCount]),
                                                UnsafeBufferPointer(rebasing: base[b.offset..<b.offset + b.key.restCount]))
                return order != 0 ? order < 0 : a.row < b.row
            }
        }
    }

    /// Appends the sorted buffer as a run to the run file: per key its `SortKey` words, the
    /// row, then the bytes beyond 16 and the payload, little-endian.
    private func spill() throws {
        sortEntries()
        if runFile == nil { runFile = try PrivateFiles.unnamedFile("the run file of \(name)") }
        let file = runFile!
        let start = runFileLength
        var out: [UInt8] = []
        out.reserveCapacity(1 << 18)
        func flush() throws {
            try file.write(out, at: runFileLength)
            runFileLength += Int64(out.count)
            out.removeAll(keepingCapacity: true)
        }
        for entry in entries {
            entry.key.append(to: &out)
            appendLittleEndian(UInt64(entry.row), to: &out)
            out.append(contentsOf: bytes[entry.offset..<entry.offset + entry.key.restCount + payloadSize])
            if out.count >= 1 << 18 { try flush() }
        }
        try flush()
        runs.append(.file(file, start: start, end: runFileLength, payloadSize: payloadSize))
        bytes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
    }

    // MARK: - Runs and their merge

    private enum Run {
        case memory(MemoryRun)
        /// The bytes `start..<end` of the run file.
        case file(SystemFile, start: Int64, end: Int64, payloadSize: Int)

        func open() throws -> RunReader {
            switch self {
            case .memory(let run): return MemoryRunReader(run)
            case .file(let file, let start, let end, let payloadSize): return FileRunReader(file, start: start, end: end, payloadSize: payloadSize)
            }
        }
    }

    private struct MemoryRun {
        let bytes: [UInt8]
        let entries: [(SortKey, Int, Int)]
        let payloadSize: Int
    }

    fileprivate class RunReader {
        var key = SortKey.none
        var rest: [UInt8] = []
        var payload: [UInt8] = []
        var row = 0
        func advance() throws -> Bool { false }
    }

    private final class MemoryRunReader: RunReader {
        private let run: MemoryRun
        private var next = 0

        init(_ run: MemoryRun) { self.run = run }

        override func advance() throws -> Bool {
            guard next < run.entries.count else { return false }
            let (key, offset, row) = run.entries[next]
            next += 1
            self.key = key
            rest.removeAll(keepingCapacity: true)
            if key.restCount > 0 { rest.append(contentsOf: run.bytes[offset..<offset + key.restCount]) }
            if run.payloadSize > 0 {
                payload.removeAll(keepingCapacity: true)
                payload.append(contentsOf: run.bytes[offset + key.restCount..<offset + key.restCount + run.payloadSize])
            }
            self.row = row
            return true
        }
    }

    private final class FileRunReader: RunReader {
        private let file: SystemFile
        private let payloadSize: Int
        /// The next byte of the run in the file, and the end of the run.
        private var position: Int64
        private let runEnd: Int64
        private var buffer = [UInt8](repeating: 0, count: 1 << 16)
        private var start = 0
        private var end = 0

        init(_ file: SystemFile, start: Int64, end: Int64, payloadSize: Int) {
            self.file = file
            position = start
            runEnd = end
            self.payloadSize = payloadSize
        }

        /// Makes `count` bytes available from `start`; false at a clean end of the file.
        private func fill(_ count: Int) throws -> Bool {
            if end - start >= count { return true }
            if start > 0 {
                buffer.replaceSubrange(0..<end - start, with: buffer[start..<end])
                end -= start
                start = 0
            }
            if buffer.count < count { buffer += [UInt8](repeating: 0, count: count - buffer.count) }
            while end < count {
                let wanted = Int(min(Int64(buffer.count - end), runEnd - position))
                let n = wanted == 0 ? 0 : try buffer.withUnsafeMutableBytes {
                    try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[end..<end + wanted]), at: position)
                }
                position += Int64(n)
                if n == 0 {
                    if end == 0 { return false }
                    throw VerifyError(.damagedScratchFile, "\(file.path) ends inside a record")
                }
                end += n
            }
            return true
        }

        override func advance() throws -> Bool {
            guard try fill(SortKey.encodedSize + 8) else { return false }
            key = buffer.withUnsafeBytes { SortKey(reading: $0, at: start) }
            start += SortKey.encodedSize
            var row: UInt64 = 0
            withUnsafeMutableBytes(of: &row) { $0.copyBytes(from: buffer[start..<start + 8]) }
            self.row = Int(UInt64(littleEndian: row))
            start += 8
            rest.removeAll(keepingCapacity: true)
            if key.restCount > 0 {
                guard try fill(key.restCount) else { throw VerifyError(.damagedScratchFile, "\(file.path) ends inside a record") }
                rest.append(contentsOf: buffer[start..<start + key.restCount])
                start += key.restCount
            }
            if payloadSize > 0 {
                guard try fill(payloadSize) else { throw VerifyError(.damagedScratchFile, "\(file.path) ends inside a record") }
                payload.removeAll(keepingCapacity: true)
                payload.append(contentsOf: buffer[start..<start + payloadSize])
                start += payloadSize
            }
            return true
        }
    }

    /// The runs merged, smallest key first: a binary heap of run readers by their current key.
    final class Cursor {
        private var readers: [RunReader]
        private var heap: [Int] = []
        private var started = false

        fileprivate init(_ readers: [RunReader]) {
            self.readers = readers
        }

        /// The current key (valid after `next()` returned true).
        var key: SortKey { readers[heap[0]].key }
        var rest: [UInt8] { readers[heap[0]].rest }
        /// The current key's payload (`payloadSize` bytes).
        var payload: [UInt8] { readers[heap[0]].payload }
        /// The current key as a value, for reports.
        var value: FieldValue { key.value(rest: rest) }
        var row: Int { readers[heap[0]].row }

        func next() throws -> Bool {
            if !started {
                started = true
                for (i, reader) in readers.enumerated() where try reader.advance() { heap.append(i) }
                for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
            } else if !heap.isEmpty {
                if try !readers[heap[0]].advance() {
                    heap[0] = heap[heap.count - 1]
                    heap.removeLast()
                }
                if !heap.isEmpty { siftDown(0) }
            }
            return !heap.isEmpty
        }

        /// The order of the two cursors' current keys (rows aside).
        static func compare(_ a: Cursor, _ b: Cursor) -> Int {
            compare(a.readers[a.heap[0]], b.readers[b.heap[0]])
        }

        private static func compare(_ a: RunReader, _ b: RunReader) -> Int {
            if a.key != b.key { return a.key < b.key ? -1 : 1 }
            return a.key.restCount == 0 ? 0 : KeyEncoding.compare(a.rest, b.rest)
        }

        private func precedes(_ a: Int, _ b: Int) -> Bool {
            let order = Self.compare(readers[a], readers[b])
            return order != 0 ? order < 0 : readers[a].row < readers[b].row
        }

        private func siftDown(_ start: Int) {
            var i = start
            while true {
                let left = 2 * i + 1, right = left + 1
                var smallest = i
                if left < heap.count, precedes(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, precedes(heap[right], heap[smallest]) { smallest = right }
                if smallest == i { return }
                heap.swapAt(i, smallest)
                i = smallest
            }
        }
    }
}

func appendLittleEndian<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
    var v = value.littleEndian
    withUnsafeBytes(of: &v) { out.append(contentsOf: $0) }
}

