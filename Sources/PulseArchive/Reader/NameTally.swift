/// How often each name was seen (unknown fields, unknown enum names), for the warnings: the
/// first `namedLimit` distinct names of at most `longestNamed` bytes are counted by name, the
/// rest together, so that a row with a million different unknown keys costs fifty entries, not
/// a million, and sixty keys of 4 MiB cost nothing (they took 450 MB, and printed whole).
struct NameTally {
    static let namedLimit = 50
    static let longestNamed = 256

    private(set) var counts: [ByteKey: Int] = [:]
    /// Sightings of names past the first `namedLimit`.
    private(set) var others = 0

    /// - Returns: whether `name` is among those counted by name.
    @discardableResult
    mutating func add(_ name: ByteKey, count: Int = 1) -> Bool {
        if name.text.utf8.count <= Self.longestNamed && (counts[name] != nil || counts.count < Self.namedLimit) {
            counts[name, default: 0] += count
            return true
        }
        others += count
        return false
    }

    mutating func add(_ tally: NameTally) {
        for (name, count) in tally.counts { add(name, count: count) }
        others += tally.others
    }
}
