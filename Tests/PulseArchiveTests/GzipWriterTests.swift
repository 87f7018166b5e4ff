import Foundation
import Testing
@testable import PulseArchive
import PulseSystem
@testable import PulseTestSupport

/// The block-parallel gzip writer (docs/performance.md, "Parallel and rsyncable gzip") on the
/// shapes where block arithmetic breaks: every output must be one gzip member that zlib and the
/// system's gzip read back to the input, and its bytes must not depend on the thread count or
/// on how the caller cut its writes.
@Suite("Parallel gzip writer")
struct GzipWriterTests {
    static let block = GzipWriter.defaultBlockSize

    /// Seeded incompressible bytes (the seed printed by `SeededRandom`).
    static func randomBytes(_ count: Int, _ random: inout SeededRandom) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// Text that compresses like an archive: JSON rows with varying numbers.
    static func rows(_ count: Int) -> [UInt8] {
        var text = ""
        var i = 0
        while text.utf8.count < count {
            text += #"{"id":"\#(i)","value":\#(i * 7919 % 1000),"recordedAt":"2026-03-\#(10 + i % 20)T06:00:00.000Z"},"#
            i += 1
        }
        return Array(text.utf8.prefix(count))
    }

    @Test("the archive's deflate search holds for every block: a reused stream writes what a new one does, and not what plain level 6 does")
    func tunedSearchEveryBlock() throws {
        let text = Self.rows(2 * Self.block), dictionary = 32 * 1024
        let first = DeflateJob(window: Array(text[..<Self.block]), dictionaryCount: 0, isLast: false, slot: DeflateResults.Slot())
        let second = DeflateJob(window: Array(text[(Self.block - dictionary)...]), dictionaryCount: dictionary, isLast: true, slot: DeflateResults.Slot())
        let reused = try BlockDeflater(level: 6, tuning: .archive)
        _ = try reused.deflate(first)
        let again = try reused.deflate(second)
        let fresh = try BlockDeflater(level: 6, tuning: .archive).deflate(second)
        let untuned = try BlockDeflater(level: 6).deflate(second)
        #expect(again.bytes == fresh.bytes)
        #expect(untuned.bytes != fresh.bytes)
        #expect(again.contentCRC == untuned.contentCRC)
    }

    static func compress(_ content: [UInt8], threads: Int, rsyncable: Bool, writes: [Int]? = nil) throws -> [UInt8] {
        let sink = MemorySink()
        let writer = try GzipWriter(output: sink, modificationTime: 1_773_600_000, threads: threads, rsyncable: rsyncable)
        try content.withUnsafeBytes { all in
            var start = 0
            for size in writes ?? [content.count] where start < content.count {
                let end = min(content.count, start + size)
                try writer.write(UnsafeRawBufferPointer(rebasing: all[start..<end]))
                start = end
            }
            if start < content.count { try writer.write(UnsafeRawBufferPointer(rebasing: all[start...])) }
        }
        try writer.finish()
        return sink.bytes
    }

    /// Runs a shell line in `dir`; true when it exits 0.
    static func shell(_ script: String, in dir: TemporaryDirectory) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// What the system's gzip makes of `bytes`: `gzip -t` must pass, `gzip -dc` gives the content.
    static func systemGunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let dir = TemporaryDirectory()
        _ = dir.write("x.gz", Data(bytes))
        #expect(try shell("gzip -t x.gz && gzip -dc x.gz > x.out", in: dir), "gzip -t or gzip -dc refused the output")
        return Array(FileManager.default.contents(atPath: dir.file("x.out")) ?? Data())
    }

    /// `gzip -6` of `content`, without a name or time in its header.
    static func systemGzip(_ content: [UInt8]) throws -> [UInt8] {
        let dir = TemporaryDirectory()
        _ = dir.write("x", Data(content))
        #expect(try shell("gzip -6 -n x", in: dir))
        return Array(FileManager.default.contents(atPath: dir.file("x.gz")) ?? Data())
    }

    @Test("empty, 1 byte, one block, a block and a byte, 10 MiB of zeros (stored past the ratio guard), incompressible bytes: the same member for 1, 2, 3 and 7 threads, read back by zlib and gzip")
    func hostileShapes() throws {
        var random = SeededRandom.fromEnvironment("GzipWriterTests.hostileShapes")
        let shapes: [(String, [UInt8])] = [
            ("empty", []),
            ("1 byte", [0x7B]),
            ("exactly one block", Self.rows(Self.block)),
            ("one block and a byte", Self.rows(Self.block + 1)),
            ("two blocks and a half of rows", Self.rows(Self.block * 5 / 2)),
            ("10 MiB of zeros", [UInt8](repeating: 0, count: 10 << 20)),
            ("incompressible, 1 MiB and 17 bytes", Self.randomBytes((1 << 20) + 17, &random)),
        ]
        for (name, content) in shapes {
            for rsyncable in [false, true] {
                let one = try Self.compress(content, threads: 1, rsyncable: rsyncable)
                for threads in [2, 3, 7] {
                    #expect(try Self.compress(content, threads: threads, rsyncable: rsyncable) == one,
                            "\(name), rsyncable \(rsyncable): \(threads) threads wrote other bytes than 1")
                }
                #expect(try readToEnd(GzipReader(source: MemorySource(one), name: name)) == content, "\(name), rsyncable \(rsyncable)")
                #expect(try Self.systemGunzip(one) == content, "\(name), rsyncable \(rsyncable)")
                // One member: the trailer's length is the content's, and nothing follows it.
                let isize = one.suffix(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
                #expect(isize == content.count % (1 << 32), "\(name)")
                // Past the writer's inflate ratio, blocks are stored: the reader's limit
                // (200 : 1 past 8 MiB) never refuses what the writer made.
                #expect(Double(content.count) <= ArchiveLimits.standard.maxInflateRatio * Double(one.count) || content.count <= 8 << 20,
                        "\(name): \(content.count) bytes in \(one.count)")
            }
        }
    }

    @Test("how the caller cuts its writes (1 byte, odd sizes, across block and content boundaries) never changes the bytes")
    func writesOfAnySize() throws {
        var random = SeededRandom.fromEnvironment("GzipWriterTests.writesOfAnySize")
        let content = Self.rows(Self.block * 3 + 4321) + Self.randomBytes(70_000, &random) + Self.rows(200_000)
        let sizes = (0..<4000).map { _ in Int.random(in: 1...700, using: &random) }
        for rsyncable in [false, true] {
            let whole = try Self.compress(content, threads: 2, rsyncable: rsyncable)
            #expect(try Self.compress(content, threads: 3, rsyncable: rsyncable, writes: sizes) == whole, "rsyncable \(rsyncable), random write sizes")
            #expect(try Self.compress(Array(content.prefix(150_000)), threads: 1, rsyncable: rsyncable, writes: [Int](repeating: 1, count: 150_000))
                    == Self.compress(Array(content.prefix(150_000)), threads: 1, rsyncable: rsyncable), "rsyncable \(rsyncable), 1-byte writes")
        }
    }

    @Test("the parallel member stays within 1 % of zlib's single stream; rsyncable within 5 % of that")
    func size() throws {
        let content = Self.rows(4 << 20)
        let parallel = try Self.compress(content, threads: 2, rsyncable: false)
        let rsyncable = try Self.compress(content, threads: 2, rsyncable: true)
        let single = try Self.systemGzip(content)
        #expect(Double(parallel.count) <= 1.01 * Double(single.count), "\(parallel.count) against gzip -6's \(single.count)")
        #expect(Double(rsyncable.count) <= 1.05 * Double(parallel.count), "\(rsyncable.count) against \(parallel.count)")
        #expect(rsyncable != parallel, "rsyncable cut no block at a content boundary")
    }

    @Test("a sink that fails mid-stream: the writer throws its error, and released, stops its threads")
    func failingSink() throws {
        final class FailingSink: RewritableSink {
            var handleOwners: [HandleOwner] { [] }
            var bytesWritten: Int64 = 0
            func write(_ chunk: UnsafeRawBufferPointer) throws {
                if bytesWritten > 50_000 { throw SystemError(.io, "disk full (test)") }
                bytesWritten += Int64(chunk.count)
            }
            func finish() throws {}
            func patch(_ patch: [UInt8], at offset: Int64) throws {}
        }
        var random = SeededRandom.fromEnvironment("GzipWriterTests.failingSink")
        let content = Self.randomBytes(1 << 20, &random)
        #expect {
            let writer = try GzipWriter(output: FailingSink(), threads: 3)
            try content.withUnsafeBytes { try writer.write($0) }
            try writer.finish()
        } throws: { error in
            (error as? SystemError)?.message == "disk full (test)"
        }
    }

    /// The nice value of each of the process's threads (Linux: /proc/self/task/TID/stat, field 19).
    static func threadNiceValues() -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var values: [String: Int] = [:]
        for task in tasks {
            if let nice = niceValue(statFile: "/proc/self/task/\(task)/stat") { values[task] = nice }
        }
        return values
    }

    /// Field 19 of a /proc stat file: after "pid (comm)", whose name may hold spaces.
    static func niceValue(statFile: String) -> Int? {
        guard let stat = try? String(contentsOfFile: statFile, encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil
    }

    @Test("the deflate threads yield to the thread that feeds them (nice 5 on Linux), the caller's stays as it was",
          .enabled(if: Capability.enabled(FileManager.default.fileExists(atPath: "/proc/thread-self/stat"))))
    func deflateThreadsYield() throws {
        try Capability.require(FileManager.default.fileExists(atPath: "/proc/thread-self/stat"), "/proc/self/task (Linux)")
        let before = Self.threadNiceValues()
        let ownBefore = Self.niceValue(statFile: "/proc/thread-self/stat")
        let writer = try GzipWriter(output: MemorySink(), threads: 3)
        // The threads lower their priority as they start: wait for them, at most 10 s.
        var lowered = 0
        let deadline = Date().addingTimeInterval(10)
        repeat {
            lowered = Self.threadNiceValues().filter { before[$0.key] == nil && $0.value == 5 }.count
        } while lowered < 3 && Date() < deadline
        #expect(lowered >= 3, "\(lowered) new threads at nice 5")
        #expect(ownBefore != nil && Self.niceValue(statFile: "/proc/thread-self/stat") == ownBefore, "the caller's nice value changed")
        try writer.finish()
    }

    @Test("a deflate stream zlib refuses to start is an ArchiveError naming the encoder, freed once (it was freed twice, a crash one run in three)")
    func encoderStartFails() {
        for _ in 0..<100 {
            #expect {
                _ = try GzipWriter(output: MemorySink(), level: 42, threads: 2)
            } throws: { error in
                let error = error as? ArchiveError
                return error?.kind == .io && error?.message.contains("cannot start the gzip encoder") == true
            }
        }
    }

    @Test("zlib running out of memory is said as such, not as a bare status (review h96: 'zlib status -4' under ulimit -v)")
    func memoryErrorIsNamed() {
        #expect(ZlibStatus.describe(-4) == "out of memory (zlib Z_MEM_ERROR)")
        #expect(ZlibStatus.describe(-2) == "zlib status -2")
    }
}
