// Fuzz target: the document decoder (JSON, classification, canonical encoding, merge).
// The SwiftPM target fuzz-document-decoder (Package.swift), built by scripts/fuzz.sh with the fuzzer and
// address sanitizers and -DPULSE_FUZZ; without that flag it builds as a stub (docs/testing.md).
#if PULSE_FUZZ
@testable import PulseSystem
@testable import PulseArchive
@testable import PulseDocuments

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDocumentDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let paths = ["Splits/01JN2Z3Y4X5W6V7T8S9R0Q1P2N.json", "Workouts/2025/03/01JN2Z3Y4X5W6V7T8S9R0Q1P3A.json",
                 "Stubs/Splits/01JN2Z3Y4X5W6V7T8S9R0Q1P2N.json"].map { try! DocumentPath($0) }
    for path in paths {
        let document = DocumentClassifier.classify(path, bytes: bytes)
        guard let node = document.node else { continue }
        // The canonical encoding is a fixed point: encoding what it reads back changes nothing.
        let canonical = DocumentCoder.encode(node)
        guard let again = try? JSONNode.parse(canonical), DocumentCoder.encode(again) == canonical else {
            fatalError("the canonical encoding does not read back as itself")
        }
        let merger = DocumentMerger(now: 1_773_600_000_000)
        _ = merger.decide(store: document, archive: document)
        _ = merger.mergeWorkouts(node, node)
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
        FileHandle.standardError.write(Data("fuzz-document-decoder: built without the fuzzer; scripts/fuzz.sh builds it (docs/testing.md)\n".utf8))
        exit(64)
    }
}
#endif
