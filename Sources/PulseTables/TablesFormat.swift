/// The form of each file `tables` writes: RFC 4180 CSV, or one JSON object per line.
public enum TablesFormat: String, Sendable, CaseIterable {
    case csv
    case ndjson

    /// The file name's extension, which is also the format's name.
    public var fileExtension: String { rawValue }
}
