// Fuzz target: the closure promise (docs/reliability.md, "The closure promise"), in-process.
// The SwiftPM target fuzz-closure-pipeline (Package.swift), built by scripts/fuzz.sh with the fuzzer and
// address sanitizers and -DPULSE_FUZZ; without that flag it builds as a stub (docs/testing.md).
//
// An input the import refuses is fine, provided the refusal left no store behind (inputs the
// reader alone refuses skip the store altogether). An input it
// accepts must close: the store exports, the export imports into an empty store with the
// default options (readiness backfill included), `verify` of the export against the first
// store finds no error, and the second store's export is the first one byte for byte (same
// `exportedAt` and `appVersion`, so the writer has nothing else to vary). Any violation traps
// with what went wrong, so libFuzzer saves the input.
#if PULSE_FUZZ
@testable import PulseSystem
@testable import PulseArchive
@testable import PulseDocuments
@testable import Readiness
@testable import PulseStore
@testable import PulseVerify
import Foundation

/// Where each execution works: tmpfs when there is one, so SQLite's fsyncs cost nothing.
private let closureRoot: String = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let root = "\(base)/pulse-closure-fuzz-\(getpid())"
    try? FileManager.default.removeItem(atPath: root)
    try! FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: "/dev/shm/pulse-closure-fuzz-\(getpid())") }
    return root
}()

/// A fixed clock, so `computedAt` and both exports' envelopes are the same in every execution
/// of an input. Far after any seed's data (2030-03-17): the backfill anchors at the newest day
/// with data only when that day is not after today, and a clock before the data would score
/// nothing.
private let closureNow: Int64 = 1_900_000_000_000

private func closureViolation(_ step: String, _ detail: Any) -> Never {
    fatalError("closure violation at \(step): \(detail)")
}

private func closureImport(_ archive: String, into store: String) throws -> ImportResult {
    try PulseStore.importArchive(archive, storeDirectory: store, options: ImportOptions(
        mode: nil, appVersion: "closure-fuzz", now: closureNow,
        backfill: BackfillRequest(days: 90, timeZone: TimeZone(identifier: "UTC")!)))
}

private func closureExport(_ store: String, to path: String) throws {
    _ = try PulseStore.exportArchive(storeDirectory: store, to: path,
                                     options: ExportOptions(appVersion: "closure-fuzz", exportedAt: closureNow))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClosure(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    // Most mutations break the JSON: the reader alone refuses those, in memory, a hundred
    // times faster than staging them into a store would. What it refuses, import refuses.
    var visitor = DiscardingVisitor()
    guard (try? ArchiveReader(bytes: Array(UnsafeBufferPointer(start: data, count: size)), name: "fuzz").read(into: &visitor)) != nil else {
        return 0
    }
    let root = closureRoot
    let input = root + "/input", first = root + "/first", second = root + "/second"
    let firstExport = root + "/first.json.gz", secondExport = root + "/second.json.gz"
    for path in [input, first, second, firstExport, secondExport] { try? FileManager.default.removeItem(atPath: path) }
    FileManager.default.createFile(atPath: input, contents: Data(bytes: data, count: size))

    do {
        _ = try closureImport(input, into: first)
    } catch {
        // Refused: all or nothing, so the store this import would have created is not there.
        if FileManager.default.fileExists(atPath: first) { closureViolation("refused import left a store", error) }
        return 0
    }
    do { try closureExport(first, to: firstExport) } catch { closureViolation("export of the imported store", error) }
    do { _ = try closureImport(firstExport, into: second) } catch { closureViolation("import of the export into an empty store", error) }
    do {
        let report = try ArchiveVerifier.verify(firstExport, store: first, timeZone: TimeZone(identifier: "UTC")!)
        if !report.ok { closureViolation("verify EXPORT --store", report.problems.map(\.message)) }
    } catch {
        closureViolation("verify EXPORT --store", error)
    }
    do { try closureExport(second, to: secondExport) } catch { closureViolation("export of the second store", error) }
    guard let a = FileManager.default.contents(atPath: firstExport), let b = FileManager.default.contents(atPath: secondExport) else {
        closureViolation("reading the exports back", "missing file")
    }
    if a != b { closureViolation("second export differs from the first", "\(a.count) vs \(b.count) bytes") }
    return 0
}
#else
import Foundation

/// Built without `-DPULSE_FUZZ` (a plain `swift build`): libFuzzer is not linked, so there is
/// nothing to run.
@main
enum NotBuiltForFuzzing {
    static func main() {
        FileHandle.standardError.write(Data("fuzz-closure-pipeline: built without the fuzzer; scripts/fuzz.sh builds it (docs/testing.md)\n".utf8))
        exit(64)
    }
}
#endif
