// Fuzz target: the archive reader, gzip and plain, strict and collecting.
// Built by scripts/fuzz.sh together with Sources/PulseSystem and Sources/PulseArchive (one module); not a SwiftPM target.
// Any crash, leak, hang or sanitizer report is a bug: refusals must be errors, never traps.

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
