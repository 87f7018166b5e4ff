import PulseArchive
import PulseSystem

/// A sink in memory that can patch what it wrote: not a file, so a writer that patched only
/// files would leave its checksum out.
final class MemorySink: RewritableSink {
    var handleOwners: [HandleOwner] { [] }

    private(set) var bytes: [UInt8] = []
    var bytesWritten: Int64 { Int64(bytes.count) }
    func write(_ chunk: UnsafeRawBufferPointer) throws { bytes += chunk }
    func finish() throws {}
    func patch(_ patch: [UInt8], at offset: Int64) throws {
        bytes.replaceSubrange(Int(offset)..<Int(offset) + patch.count, with: patch)
    }
}

/// Everything a gzip reader gives, whatever its source.
func readToEnd(_ reader: GzipReader) throws -> [UInt8] {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        if n == 0 { return out }
        out += buffer[0..<n]
    }
}
