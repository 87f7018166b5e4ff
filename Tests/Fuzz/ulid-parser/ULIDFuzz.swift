// Fuzz target: the ULID parser and encoder.
// The SwiftPM target fuzz-ulid-parser (Package.swift), built by scripts/fuzz.sh with the fuzzer and
// address sanitizers and -DPULSE_FUZZ; without that flag it builds as a stub (docs/testing.md).
#if PULSE_FUZZ
@testable import PulseArchive

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzULID(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if let ulid = ULID(text) {
        // Parsing is case-insensitive and the written form parses back to the same value.
        guard ULID(ulid.description) == ulid, ulid.description == text.uppercased() else { fatalError("ULID round trip: \(text)") }
    }
    if bytes.count >= 16 {
        let ulid = ULID(bytes: Array(bytes[0..<16]))
        guard ULID(ulid.description)?.bytes == ulid.bytes else { fatalError("ULID bytes round trip") }
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
        FileHandle.standardError.write(Data("fuzz-ulid-parser: built without the fuzzer; scripts/fuzz.sh builds it (docs/testing.md)\n".utf8))
        exit(64)
    }
}
#endif
