/// The one rule for a settings value (archive-format.md §5): it is that setting's stored JSON
/// text, so it must be JSON, and it must fit in one archive string. The reader refuses any
/// other value, `verify` reports it, and the writer refuses to write one (a store from an
/// earlier version may hold it), so a store never takes a blob that a later `verify` fails.
public enum SettingsBlob {
    /// - Throws: `ArchiveError` naming the key and what is wrong with its value.
    public static func check(key: String, value: String, limits: ArchiveLimits = .standard) throws {
        try ArchiveLimits.checkName(key, "settings key", table: "settings")
        let size = value.utf8.count
        guard size <= limits.maxStringBytes else {
            throw ArchiveError(.limitExceeded, "settings.\(key): the blob of \(size) bytes is longer than the string limit of \(limits.maxStringBytes) bytes",
                               table: "settings", limit: .stringBytes)
        }
        // Checked as JSON by reading it whole, so a whole value's limit.
        try limits.checkWholeValue(size, "settings.\(key)")
        do {
            _ = try JSONNode.parse(Array(value.utf8), limits: limits, what: "the stored blob")
        } catch let error as ArchiveError where error.kind == .invalidValue {
            // JSON, but with a key twice: which of the two values holds is anyone's guess.
            throw ArchiveError(.invalidValue, "settings.\(key): \(error.message)", table: "settings")
        } catch let error as ArchiveError {
            throw ArchiveError(.invalidValue, "settings.\(key): the stored blob is not valid JSON (\(error.problemInValue))", table: "settings")
        }
    }
}
