/// How far a read has come: rows decoded and file bytes consumed.
public struct ReadProgress: Sendable {
    public var rows: Int
    public var bytesRead: Int64
    public var totalBytes: Int64
}
