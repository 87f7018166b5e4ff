import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
import PulseSystem
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// What the process holds, read from /proc (Linux only). Other suites run meanwhile in this
/// process: descriptors are counted by path (a test's own), threads in all, with room for
/// what the others start (a few dozen, against the thousand a leak leaves).
enum ProcessResources {
    static var available: Bool { FileManager.default.fileExists(atPath: "/proc/self/task") }

    /// Descriptors open on files under `directory` (removed files included).
    static func descriptors(under directory: String) -> Int {
        let root = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path + "/"
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? "").hasPrefix(root)
        }.count
    }

    static var threadCount: Int { ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count }

    /// Waits up to `seconds` for `condition`: a released thread takes a moment to exit.
    static func settles(within seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return true
    }
}

/// Bytes that compress, but not to nothing (so no ratio guard minds them).
private func sampleBytes(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
    var state = seed
    return (0..<count).map { i in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return i % 3 == 0 ? UInt8(ascii: "a") : UInt8(truncatingIfNeeded: state >> 59) + UInt8(ascii: "0")
    }
}

private func inflate(_ bytes: [UInt8]) throws -> [UInt8] {
    try readToEnd(try GzipReader(source: MemorySource(bytes), name: "memory"))
}

@Suite("C and lifetime defects: zlib's streams, threads and descriptors")
struct LifetimeTests {
    /// Threads other suites may start while a test counts; a leak leaves a thousand.
    static let othersThreads = 200

    @Test("a gzip decoder that fails to start says so and frees its buffer once (it was freed twice, a crash)")
    func inflateStartFails() throws {
        // 7 window bits are below zlib's minimum: inflateInit2_ refuses them (Z_STREAM_ERROR).
        for _ in 0..<100 {
            #expect {
                _ = try GzipReader(source: MemorySource([]), name: "bad.json.gz", bufferSize: 64, windowBits: 7 + 16)
            } throws: { error in
                let error = error as? ArchiveError
                return error?.kind == .io && error?.message.contains("cannot start the gzip decoder of bad.json.gz") == true
            }
        }
        // A reader that did start still reads after them.
        let sink = MemorySink()
        let writer = try GzipWriter(output: sink)
        try Array("{}".utf8).withUnsafeBytes { try writer.write($0) }
        try writer.finish()
        #expect(try inflate(sink.bytes) == Array("{}".utf8))
    }

    @Test("the checksum reaches any rewritable sink: a gzip stream in memory reads back, and without the checksum it would be refused")
    func checksumInAnySink() throws {
        let content = sampleBytes(600_000)
        let sink = MemorySink()
        let writer = try GzipWriter(output: sink, blockSize: 4096)
        for start in stride(from: 0, to: content.count, by: 10_000) {
            try content[start..<min(start + 10_000, content.count)].withUnsafeBytes { try writer.write($0) }
        }
        try writer.finish()
        #expect(try inflate(sink.bytes) == content)
        #expect(Array(sink.bytes[12..<16]) == [0x50, 0x41, 4, 0], "the header carries the PA subfield")
        // What the writer used to leave in a sink that was not a file: a zero checksum (and
        // the header CRC of that header). Every reader of ours refuses it.
        var unpatched = sink.bytes
        for i in 16..<20 { unpatched[i] = 0 }
        #expect(unpatched != sink.bytes)
        #expect {
            _ = try inflate(unpatched)
        } throws: { error in
            (error as? ArchiveError)?.kind == .damagedCompression
        }
    }

    @Test("the checksum lands in the sink's own header when the file held bytes before it")
    func checksumAfterAPrefix() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("prefixed.bin")
        let prefix = Array("PREFIX-BYTES".utf8)
        let content = sampleBytes(100_000, seed: 11)
        let file = try SystemFile.createExclusive(path)
        try prefix.withUnsafeBytes { try file.write($0) }
        let writer = try GzipWriter(output: FileSink(file))
        try content.withUnsafeBytes { try writer.write($0) }
        try writer.finish()
        try file.close()
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Array(written.prefix(prefix.count)) == prefix, "the patch overwrote the bytes before the stream")
        #expect(try inflate(Array(written.dropFirst(prefix.count))) == content)
    }

    @Test("writers started together, written later, each write their own header")
    func headerOutlivesTheCall() throws {
        // Other writers and allocations between a writer's start and its content must not
        // touch its header.
        let sinks = (0..<8).map { _ in MemorySink() }
        let writers = try sinks.map { try GzipWriter(output: $0, blockSize: 64) }
        var churn: [[UInt8]] = []
        for i in 0..<1000 { churn.append([UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 64)) }
        for (i, writer) in writers.enumerated().reversed() {
            let content = sampleBytes(5000, seed: UInt64(i))
            try content.withUnsafeBytes { try writer.write($0) }
            try writer.finish()
            let bytes = sinks[i].bytes
            // ID1 ID2 CM FLG (FEXTRA | FHCRC), no time, XFL, OS 255, XLEN 8, "PA", 4.
            #expect(Array(bytes[0..<4]) == [0x1F, 0x8B, 8, 0x06])
            #expect(Array(bytes[4..<8]) == [0, 0, 0, 0])
            #expect(bytes[9] == 255)
            #expect(Array(bytes[10..<16]) == [8, 0, 0x50, 0x41, 4, 0])
            #expect(try inflate(bytes) == content)
        }
        #expect(churn.count == 1000)
    }

    @Test("a gzip writer released before it finished stops its deflate threads and closes its file: 1000 of them leave nothing",
          .enabled(if: Capability.enabled(ProcessResources.available)))
    func releasedWritersLeaveNothing() throws {
        try Capability.require(ProcessResources.available, "/proc/self/task and /proc/self/fd")
        let dir = TemporaryDirectory()
        do {
            // The count below sees a live writer's file.
            let writer = try GzipWriter(output: FileSink(try SystemFile.createExclusive(dir.file("live"))), threads: 2)
            #expect(ProcessResources.descriptors(under: dir.path) == 1)
            try writer.finish()
        }
        let chunk = sampleBytes(20_000)
        let threadsBefore = ProcessResources.threadCount
        for i in 0..<1000 {
            let file = try SystemFile.createExclusive(dir.file("part-\(i)"))
            let writer = try GzipWriter(output: FileSink(file), blockSize: 4096, threads: 2)
            try chunk.withUnsafeBytes { try writer.write($0) }
        }
        #expect(ProcessResources.settles { ProcessResources.threadCount < threadsBefore + Self.othersThreads },
                "\(ProcessResources.threadCount - threadsBefore) more threads than before")
        #expect(ProcessResources.settles { ProcessResources.descriptors(under: dir.path) == 0 },
                "\(ProcessResources.descriptors(under: dir.path)) descriptors left open")
    }

    @Test("1000 failed exports in one process leave no thread, descriptor or partial file behind",
          .enabled(if: Capability.enabled(ProcessResources.available)))
    func failedExportsLeaveNothing() throws {
        try Capability.require(ProcessResources.available, "/proc/self/task and /proc/self/fd")
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try StoreFixtures.demoStore(store, days: 2)
        let out = dir.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let threadsBefore = ProcessResources.threadCount
        // A format the writer refuses: the export fails after its compressing sink started.
        let options = ExportOptions(formatVersion: 3, appVersion: "tests", exportedAt: 1_773_600_000_000)
        for _ in 0..<1000 {
            #expect {
                _ = try PulseStore.exportArchive(storeDirectory: store, to: out + "/backup.json.gz", options: options)
            } throws: { error in
                "\(error)".contains("cannot write format 3")
            }
        }
        #expect(ProcessResources.settles { ProcessResources.threadCount < threadsBefore + Self.othersThreads },
                "\(ProcessResources.threadCount - threadsBefore) more threads than before")
        #expect(ProcessResources.settles { ProcessResources.descriptors(under: out) == 0 },
                "\(ProcessResources.descriptors(under: out)) descriptors left open on partial archives")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty)
        // And the store still exports.
        let result = try StoreFixtures.export(store, to: out + "/backup.json.gz")
        #expect(result.fileBytes > 0)
    }

    /// An archive broken a few bytes in, followed by megabytes that inflate slowly: the read
    /// stops at once while the reading-ahead thread is still inflating.
    static func brokenEarly(in dir: TemporaryDirectory) throws -> (gzip: String, plain: String) {
        let text = Array(#"{"formatVersion":2,"exportedAt":!"#.utf8) + sampleBytes(4 << 20, seed: 5)
        let plain = dir.write("broken.json", Data(text))
        try gzipped(text, to: dir.file("broken.json.gz"))
        return (dir.file("broken.json.gz"), plain)
    }

    @Test("a read stopped early counts what it parsed on its own thread, as a plain read does (it read a count the other thread was writing)")
    func stoppedReadCountsItsOwnBytes() throws {
        let dir = TemporaryDirectory()
        let files = try Self.brokenEarly(in: dir)
        func jsonBytes(_ path: String) throws -> Int64 {
            var visitor = CollectingVisitor()
            do {
                _ = try ArchiveReader(path: path).collectProblems(into: &visitor)
            } catch let interrupted as ArchiveReader.Interrupted {
                #expect("\(interrupted.error)".contains("unexpected '!'"))
                return interrupted.summary.jsonBytes
            }
            Issue.record("\(path) was read as sound")
            return -1
        }
        for _ in 0..<20 {
            #expect(try jsonBytes(files.gzip) == jsonBytes(files.plain))
        }
    }

    @Test("verify and inspect of a gzip archive broken early, through the binary: refused, and no data race (under the thread sanitizer)")
    func stoppedReadThroughTheBinary() throws {
        let dir = TemporaryDirectory()
        let files = try Self.brokenEarly(in: dir)
        for command in ["verify", "inspect"] {
            let result = try CLI.run([command, files.gzip])
            #expect(result.exitCode == 1, "\(command): \(result.stderr)")
            #expect((result.stdout + result.stderr).contains("unexpected '!'"), "\(command): \(result.stdout) \(result.stderr)")
            #expect(!result.stderr.contains("ThreadSanitizer"), "\(command): \(result.stderr)")
        }
    }
}
