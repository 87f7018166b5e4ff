/// Rows (or documents) that differ between an archive and a store.
public struct StoreDifference: Sendable, Equatable {
    /// In the archive, not in the store.
    public var missing = 0
    /// In the store, not in the archive.
    public var extra = 0
    /// In both under the same key, with different values.
    public var changed = 0

    public var isEmpty: Bool { missing == 0 && extra == 0 && changed == 0 }
}
