import PulseDigest

/// The names a read has met where each may appear once (top-level keys, `counts` names,
/// settings keys, attachment names), to tell a repeated one: by their digests (`TextDigest`),
/// since holding the names cost the archive's key bytes again (200,000 settings keys of 1 KiB:
/// 200 MB more for `inspect`), past the memory every command keeps to.
struct SeenNames {
    private var digests = Set<TextDigest>()

    /// Adds `name`; false when it was met before (byte for byte: no Unicode normalisation).
    mutating func insert(_ name: String) -> Bool {
        digests.insert(TextDigest(name)).inserted
    }

    func contains(_ name: String) -> Bool {
        digests.contains(TextDigest(name))
    }
}
