import Foundation
import Testing
@testable import PulseArchive
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// `export --threads N` and `--rsyncable` through the binary, read back by the system's gzip
/// (docs/performance.md, "Parallel and rsyncable gzip").
@Suite("Parallel and rsyncable export")
struct ParallelExportTests {
    static let environment = ["SOURCE_DATE_EPOCH": "1773600000"]

    static func sh(_ script: String, in dir: TemporaryDirectory, expectingSuccess: Bool = true,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> CLI.Result {
        try CLI.shell(script, environment: environment, in: dir.path, expectingSuccess: expectingSuccess, sourceLocation: sourceLocation)
    }

    static func bytes(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

    /// The deflate stream between our 22-byte header and the 8-byte trailer: the header's stream
    /// checksum and the trailer differ whenever anything does.
    static func body(_ archive: [UInt8]) -> ArraySlice<UInt8> { archive[22..<(archive.count - 8)] }

    /// The share of `new`'s compressed bytes after the first difference that end `old` too.
    static func sharedAfterChange(_ old: [UInt8], _ new: [UInt8]) -> (prefix: Int, shared: Double) {
        let a = body(old), b = body(new)
        let prefix = zip(a, b).prefix { $0 == $1 }.count
        let suffix = zip(a.reversed(), b.reversed()).prefix { $0 == $1 }.count
        let rest = b.count - prefix
        return (prefix, Double(min(suffix, rest)) / Double(max(1, rest)))
    }

    @Test("--threads 1, 2, 3, 7 write the default export's bytes; --rsyncable the same for every count; both pass gzip -t and gunzip to the same JSON")
    func sameBytesForEveryThreadCount() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 20)
        _ = try Self.sh("\"$PA\" export --store store -o default.json.gz && gunzip -c default.json.gz > default.json", in: dir)
        let reference = Self.bytes(dir.file("default.json.gz"))
        _ = try Self.sh("\"$PA\" export --store store -o r.json.gz --rsyncable", in: dir)
        let rsyncable = Self.bytes(dir.file("r.json.gz"))
        for threads in [1, 2, 3, 7] {
            _ = try Self.sh("""
                "$PA" export --store store -o t\(threads).json.gz --threads \(threads) && gzip -t t\(threads).json.gz &&
                "$PA" export --store store -o r\(threads).json.gz --threads \(threads) --rsyncable && gzip -t r\(threads).json.gz &&
                gunzip -c r\(threads).json.gz | cmp - default.json
                """, in: dir)
            #expect(Self.bytes(dir.file("t\(threads).json.gz")) == reference, "--threads \(threads)")
            #expect(Self.bytes(dir.file("r\(threads).json.gz")) == rsyncable, "--rsyncable --threads \(threads)")
        }
        #expect(rsyncable != reference)
        #expect(Double(rsyncable.count) <= 1.05 * Double(reference.count), "rsyncable \(rsyncable.count) bytes, default \(reference.count)")
    }

    @Test("verify reads the rsyncable archive, import restores it, and the restored store exports the original's bytes")
    func rsyncableRoundTrip() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 10)
        _ = try Self.sh("""
            "$PA" export --store store -o default.json.gz --threads 1 &&
            "$PA" export --store store -o r.json.gz --rsyncable --threads 3 &&
            "$PA" verify r.json.gz --store store &&
            "$PA" import r.json.gz --store back --no-backfill -q &&
            "$PA" export --store back -o back.json.gz --threads 2
            """, in: dir)
        #expect(Self.bytes(dir.file("back.json.gz")) == Self.bytes(dir.file("default.json.gz")))
    }

    /// One row early in the store gains a digit (1 byte more content, every later byte
    /// shifted): with --rsyncable the compressed file after that row is almost all shared with
    /// the old one; without, the shift reaches every fixed block after it.
    @Test("a one-byte change early in the store leaves most of an rsyncable archive's bytes after it unchanged, and almost none of a default archive's")
    func rsyncableLocality() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("a"), days: 40)
        _ = try Self.sh("\"$PA\" export --store a -o a.json.gz && gunzip -c a.json.gz > a.json", in: dir)
        var text = Self.bytes(dir.file("a.json"))
        let key = Array(#""steps":"#.utf8)
        let at = try #require((0...(text.count - key.count)).first { text[$0..<($0 + key.count)].elementsEqual(key) }) + key.count
        text.insert(UInt8(ascii: "1"), at: at)  // "steps":321 becomes "steps":1321
        _ = dir.write("b.json", Data(text))
        _ = try Self.sh("""
            "$PA" import b.json --store b --no-backfill -q &&
            "$PA" export --store a -o a-r.json.gz --rsyncable && "$PA" export --store b -o b-r.json.gz --rsyncable &&
            "$PA" export --store b -o b.json.gz && gunzip -c b-r.json.gz | cmp - b.json
            """, in: dir)
        #expect(at < 2000, "the change is early: byte \(at) of \(text.count)")
        let rsyncable = Self.sharedAfterChange(Self.bytes(dir.file("a-r.json.gz")), Self.bytes(dir.file("b-r.json.gz")))
        let plain = Self.sharedAfterChange(Self.bytes(dir.file("a.json.gz")), Self.bytes(dir.file("b.json.gz")))
        print("after the change: rsyncable shares \(rsyncable.shared), default \(plain.shared) of the compressed bytes")
        #expect(rsyncable.shared >= 0.9)
        #expect(plain.shared <= 0.5)
    }

    @Test("a deflate thread the system refuses: the export goes on with the threads it has, the same bytes; never a wait for a thread that never started")
    func refusedThreadFallsBack() throws {
        try #require(ProcessInfo.processInfo.activeProcessorCount >= 2, "needs two processors: with one, export starts one deflate thread and none is refused")
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 20)
        _ = try Self.sh("\"$PA\" export --store store -o default.json.gz -q", in: dir)
        // The second deflate thread cannot start, as under `ulimit -v` with many threads; before,
        // Foundation's Thread said nothing and the writer waited for it forever (bounded here).
        let refused = try Self.sh("PULSE_ARCHIVE_TEST_REFUSE=thread timeout 120 \"$PA\" export --store store -o fallback.json.gz --threads 2 -q", in: dir)
        #expect(refused.exitCode == 0, "\(refused.stderr)")
        #expect(Self.bytes(dir.file("fallback.json.gz")) == Self.bytes(dir.file("default.json.gz")))
    }

    @Test("--threads takes 1 to 64: 0, 65, -2 and 'two' are usage errors before the store is opened")
    func threadsValidated() throws {
        let dir = TemporaryDirectory()
        for value in ["0", "65", "-2", "two"] {
            let result = try Self.sh("\"$PA\" export --store missing -o x.json.gz --threads=\(value)", in: dir, expectingSuccess: false)
            #expect(result.exitCode == 64, "--threads \(value)")
            #expect(result.stderr.hasPrefix("Error: The value '\(value)' is invalid for '--threads': expected an integer from 1 to 64"), "\(result.stderr)")
            #expect(result.stderr.contains("Usage: pulse-archive export"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("missing")))
    }
}
