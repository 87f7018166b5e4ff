// Fuzz target: the archive reader, gzip and plain, strict and collecting.
// The SwiftPM target fuzz-archive-reader (Package.swift), built by scripts/fuzz.sh with the fuzzer and
// address sanitizers and -DPULSE_FUZZ; without that flag it builds as a stub (docs/testing.md).
// Any crash, leak, hang or sanitizer report is a bug: refusals must be errors, never traps.
#if PULSE_FUZZ
@testable import PulseSystem
@testable import PulseArchive

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArchiveReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = ArchiveLimits.standard
    limits.maxUncompressedBytes = 64 << 20
    limits.maxStringBytes = 4 << 20
    var visitor = DiscardingVisitor()
    _ = try? ArchiveReader(bytes: bytes, name: "fuzz", limits: limits).read(into: &visitor)
    _ = try? ArchiveReader(bytes: bytes, name: "fuzz", limits: limits).collectProblems(into: &visitor)
    return 0
}
#else
import Foundation

/// Built without `-DPULSE_FUZZ` (a plain `swift build`): libFuzzer is not linked, so there is
/// nothing to run.
@main
enum NotBuiltForFuzzing {
    static func main() {
        FileHandle.standardError.write(Data("fuzz-archive-reader: built without the fuzzer; scripts/fuzz.sh builds it (docs/testing.md)\n".utf8))
        exit(64)
    }
}
#endif
