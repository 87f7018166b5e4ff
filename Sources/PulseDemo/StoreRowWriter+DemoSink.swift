import PulseArchive
import PulseStore

extension StoreRowWriter: DemoSink {}

extension SyntheticRing {
    /// Fills an empty store with this ring's data in one transaction.
    /// - Returns: rows per table key.
    public mutating func fill(storeDirectory: String) throws -> [String: Int] {
        try PulseStore.fillEmptyStore(storeDirectory) { writer in
            var sink = writer
            try generate(into: &sink)
        }
    }
}
