import PulseArchive

/// The option that raises each limit the reader and writer share: the library names the limit,
/// the command line says how to raise it.
enum LimitOptions {
    static func option(raising limit: ArchiveLimits.Name) -> String? {
        switch limit {
        case .stringBytes: "--max-string-size"
        case .wholeValueBytes: "--max-object-size"
        case .uncompressedBytes: "--max-size"
        case .inflateRatio: "--max-inflate-ratio"
        case .depth, .numberLength: nil
        }
    }

    /// `message` with the way to raise `limit`, when it can be raised.
    static func advice(_ message: String, limit: ArchiveLimits.Name?) -> String {
        guard let limit, let option = option(raising: limit) else { return message }
        return "\(message); \(option) raises the limit (then needed wherever the archive is read)"
    }
}
