import PulseArchive
import PulseStore

extension StoreRowWriter: DemoSink {}

extension SyntheticRing {
    /// Fills an empty store with this ring's data in one transaction, then writes its workout
    /// documents (the last 90 days at most) into the store's tree.
    /// - Returns: rows per table key.
    public mutating func fill(storeDirectory: String) throws -> [String: Int] {
        let counts = try PulseStore.fillEmptyStore(storeDirectory) { writer in
            var sink = writer
            try generate(into: &sink)
        }
        var random = SeededGenerator(seed: options.seed &+ 0x5EED)
        let last = lastMidnight
        let first = max(firstMidnight, last - 89 * 86_400_000)
        try DemoDocuments(options: options, firstDay: first, lastDay: last).write(storeDirectory: storeDirectory, random: &random)
        return counts
    }
}
