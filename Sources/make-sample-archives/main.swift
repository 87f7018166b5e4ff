// Writes the sample archives in Archives/ from fixed demo data. They are golden files: tests
// read them and nobody regenerates them, so this refuses to overwrite one that exists.
//
//   swift run make-sample-archives [Archives]
import Foundation
import PulseArchive
import PulseDemo
import PulseStore

let directory = CommandLine.arguments.dropFirst().first ?? "Archives"
let zone = TimeZone(identifier: "Europe/Berlin")!
let end = DateComponents(year: 2026, month: 3, day: 15)

/// One sample: a fresh store from fixed options, exported with fixed envelope values.
func writeSample(named name: String, demo: DemoOptions, export: ExportOptions) throws {
    let path = "\(directory)/\(name)"
    guard !FileManager.default.fileExists(atPath: path) else {
        print("\(path) exists: golden files are never regenerated")
        return
    }
    let store = NSTemporaryDirectory() + "sample-store-\(getpid())-\(name)"
    defer { try? FileManager.default.removeItem(atPath: store) }
    var ring = SyntheticRing(options: demo)
    _ = try ring.fill(storeDirectory: store)
    let result = try PulseStore.exportArchive(storeDirectory: store, to: path, options: export)
    print("wrote \(path): \(result.tables.values.reduce(0, +)) rows, \(result.fileBytes) bytes")
}

do {
    // The app's own plain format 1 (cycle-tracking line): keys sorted throughout, no readiness.
    try writeSample(
        named: "sample-format1.json",
        demo: DemoOptions(days: 21, seed: 2026, endDay: end, timeZone: zone),
        export: ExportOptions(formatVersion: 1, appVersion: "1.6.2", exportedAt: ArchiveDate.parse("2026-03-15T19:42:07.318Z")!,
                              compressed: false, envelopeKeysFirst: false))
    // Ours: gzip, format 2, with the readiness rows an app on the readiness line stored.
    try writeSample(
        named: "sample-format2.json.gz",
        demo: DemoOptions(days: 21, seed: 2027, endDay: end, timeZone: zone, includeStoredReadiness: true),
        export: ExportOptions(formatVersion: 2, appVersion: "pulse-archive 0.1.0", exportedAt: ArchiveDate.parse("2026-03-15T19:45:00.000Z")!))
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
