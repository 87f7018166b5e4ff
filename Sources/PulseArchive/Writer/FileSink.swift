import PulseSystem

/// Writes straight to a file.
public final class FileSink: RewritableSink {
    public let file: SystemFile
    public private(set) var bytesWritten: Int64 = 0
    /// Where the file's position stood when the sink began, so that a patch lands on the
    /// sink's own bytes even when the file held others before them.
    private let origin: Int64

    public var handleOwners: [HandleOwner] { file.handleOwners }

    public init(_ file: SystemFile) {
        self.file = file
        origin = file.position()
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        TestPausePoint.reached("write")
        // What went out counts when the write fails part way (a reader that went away).
        let before = file.written
        defer { bytesWritten += file.written - before }
        try file.write(bytes)
    }

    public func finish() throws {}

    public func patch(_ bytes: [UInt8], at offset: Int64) throws {
        try file.write(bytes, at: origin + offset)
    }
}
