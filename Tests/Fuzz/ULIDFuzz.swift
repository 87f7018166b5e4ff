// Fuzz target: the ULID parser and encoder.
// Built by scripts/fuzz.sh together with Sources/PulseSystem and Sources/PulseArchive.

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
