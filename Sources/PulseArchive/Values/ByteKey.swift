/// A key an archive controls (a settings key, an attachment name, a document path, a JSON
/// object key), equal to another only when their UTF-8 bytes are equal.
///
/// Swift's `String` compares and hashes by canonical equivalence: `café` typed as NFC and as
/// NFD are one `String` key but two SQLite keys, so a store could hold both and every export
/// of it would then be refused as a duplicate. Normalising also costs more than linear time
/// on long runs of combining marks (a 1 MB key took minutes). Bytes are what SQLite compares,
/// what the writer writes, and are hashed in one pass (docs/reliability.md, "Keys, blobs and
/// sizes: one rule").
public struct ByteKey: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let text: String

    public init(_ text: String) { self.text = text }
    public init(stringLiteral value: String) { self.text = value }

    public static func == (a: ByteKey, b: ByteKey) -> Bool {
        a.text.utf8.count == b.text.utf8.count && a.text.utf8.elementsEqual(b.text.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        var text = self.text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// The order of keys in our files and the app's: by UTF-8 bytes.
    public static func < (a: ByteKey, b: ByteKey) -> Bool {
        a.text.utf8.lexicographicallyPrecedes(b.text.utf8)
    }

    public var description: String { text }
}
