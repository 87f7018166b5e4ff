// Fuzz target: the Gadgetbridge reader (docs/gadgetbridge.md). An input is the bytes of a
// database file (or of a backup ZIP), written to a private temporary file and read as import
// reads it: detection, quick_check, the schema checks, the mapping into a discarding visitor.
// The SwiftPM target fuzz-gadgetbridge-reader (Package.swift), built by scripts/fuzz.sh with
// -DPULSE_FUZZ; without that flag it builds as a stub (docs/testing.md).
// Any crash, leak, hang or sanitizer report is a bug: refusals must be errors, never traps.
#if PULSE_FUZZ
import Foundation
@testable import PulseSystem
@testable import PulseArchive
@testable import PulseGadgetbridge

private let directory = try! PrivateFiles.temporaryDirectory(prefix: "pulse-archive-fuzz")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGadgetbridgeReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let path = directory + "/input"
    PrivateFiles.remove(path)
    guard let file = try? SystemFile.createExclusive(path) else { return 0 }
    try? file.write(UnsafeRawBufferPointer(start: data, count: size))
    try? file.close()
    var limits = ArchiveLimits.standard
    limits.maxUncompressedBytes = 64 << 20
    if let database = try? GadgetbridgeFile.open(path, limits: limits) {
        var visitor = DiscardingVisitor()
        _ = try? GadgetbridgeMapper(database, timeZone: TimeZone(identifier: "Europe/Berlin")!, now: 0).map(into: &visitor)
    }
    return 0
}
#else
import Foundation

/// Built without `-DPULSE_FUZZ` (a plain `swift build`): libFuzzer is not linked, so there is
/// nothing to run.
@main
enum NotBuiltForFuzzing {
    static func main() {
        FileHandle.standardError.write(Data("fuzz-gadgetbridge-reader: built without the fuzzer; scripts/fuzz.sh builds it (docs/testing.md)\n".utf8))
        exit(64)
    }
}
#endif
