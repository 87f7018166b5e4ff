/// The bounds that keep a hostile archive from crashing the reader or exhausting memory
/// (archive-format.md §1.4). Passing one refuses the file with a message naming the limit.
public struct ArchiveLimits: Sendable, Equatable {
    /// Deepest JSON nesting accepted anywhere, unknown keys included.
    public var maxDepth: Int
    /// Longest single string after decoding escapes, held whole: a row's text field, a
    /// settings blob, a name, a document's own base64 bytes. A verify holds several copies of
    /// such a string, and a few more are in flight between the threads, so 8 MiB keeps every
    /// command under 150 MB (docs/reliability.md, "Memory"). Not for the base64 of an
    /// attachment or a document file (`documentFiles`): those are read, decoded, stored and
    /// written in pieces, never held whole, so no per-value limit applies to them below the
    /// archive's `maxUncompressedBytes` (and SQLite's 1 GB for one value, for an attachment).
    public var maxStringBytes: Int
    /// Largest JSON text of a value the reader holds whole as a tree: a document, a row of the
    /// Android dialect, a meal or food row, a settings blob. A tree takes several times its
    /// text in memory (up to about 20 times for `[[0],[0],…]`), hence a limit of its own; a
    /// workout document is a few kilobytes.
    public var maxWholeValueBytes: Int
    /// Longest number literal.
    public var maxNumberLength: Int
    /// Largest decompressed (or plain) archive content.
    public var maxUncompressedBytes: Int64
    /// Largest ratio of decompressed to compressed bytes, checked once
    /// `inflateRatioGrace` bytes have come out. JSON archives deflate 5–30 times; a stream of
    /// zeros a thousand times (a decompression bomb).
    public var maxInflateRatio: Double
    public var inflateRatioGrace: Int64

    public init(maxDepth: Int = 256, maxStringBytes: Int = 8 << 20, maxWholeValueBytes: Int = 2 << 20, maxNumberLength: Int = 64,
                maxUncompressedBytes: Int64 = 64 << 30, maxInflateRatio: Double = 200, inflateRatioGrace: Int64 = 8 << 20) {
        self.maxDepth = maxDepth
        self.maxStringBytes = maxStringBytes
        self.maxWholeValueBytes = maxWholeValueBytes
        self.maxNumberLength = maxNumberLength
        self.maxUncompressedBytes = maxUncompressedBytes
        self.maxInflateRatio = maxInflateRatio
        self.inflateRatioGrace = inflateRatioGrace
    }

    public static let standard = ArchiveLimits()

    /// Longest settings key or attachment name. A name is a key: it is held in the sets that
    /// find repeats, in SQLite's index, in messages, so one of megabytes cost as much as a
    /// value; an attachment name is a file name in the app, whose file systems allow 255 bytes.
    public static let maxNameBytes = 1_024

    /// The one name rule, for the reader and the writer.
    /// - Parameter what: names the name (`settings key`, `attachment name`).
    public static func checkName(_ name: String, _ what: String, table: String) throws {
        let size = name.utf8.count
        guard size <= maxNameBytes else {
            throw ArchiveError(.limitExceeded, "\(table): the \(what) of \(size) bytes starting \(ShownText.quoted(String(decoding: name.utf8.prefix(48), as: UTF8.self))) "
                + "is longer than the limit of \(maxNameBytes) bytes", table: table)
        }
    }

    /// The whole-value rule on `value` as our writer writes it back (compact, escaped as the app
    /// escapes), which can be longer than the text it was read from.
    public func checkWrittenBack(_ value: JSONNode, _ what: @autoclosure () -> String) throws {
        var compact = ByteBuffer()
        value.appendCompact(to: &compact)
        try checkWholeValue(compact.count, "\(what()) (as written back)")
    }

    /// Names a limit, so that a front end can say how to raise the one that was passed.
    public enum Name: String, Sendable, Equatable {
        case depth, stringBytes, wholeValueBytes, numberLength, uncompressedBytes, inflateRatio
    }

    /// The most bytes whose standard base64 fits in one string of `maxStringBytes` (6 MiB by
    /// default): a document's own bytes travel as base64 and are held whole, so this is how
    /// large they can be and still be read back. (Attachments and document files stream.)
    public var maxBase64PayloadBytes: Int { maxStringBytes / 4 * 3 }

    /// The one size rule for a value that travels as base64: the writer calls it before writing
    /// (export names the value and writes nothing), the reader meets it as the string limit.
    /// - Parameter what: names the value (`attachments: "x.jpg"`, `documents: Splits/….json`).
    public func checkBase64Payload(_ byteCount: Int, _ what: @autoclosure () -> String) throws {
        guard byteCount <= maxBase64PayloadBytes else {
            throw ArchiveError(.limitExceeded, "\(what()) holds \(byteCount) bytes; an archive carries at most \(maxBase64PayloadBytes) bytes "
                + "in one value (its base64 must fit the string limit of \(maxStringBytes) bytes), so it cannot be backed up", limit: .stringBytes)
        }
    }

    /// The one whole-value rule: the reader refuses a tree whose text passes
    /// `maxWholeValueBytes` as it reads it; the writer refuses to write one (naming it), so
    /// every archive it writes reads back with the same limits.
    /// - Parameter what: names the value (`documents[3].document`, `documents: Splits/….json`).
    public func checkWholeValue(_ byteCount: some BinaryInteger, _ what: @autoclosure () -> String) throws {
        guard byteCount <= maxWholeValueBytes else {
            throw ArchiveError(.limitExceeded, "\(what()): its JSON passes the limit of \(maxWholeValueBytes) bytes for a value held whole "
                + "(a document, an Android row, a meal or food row, a settings blob)", limit: .wholeValueBytes)
        }
    }

    /// The one inflate-ratio rule: past `inflateRatioGrace` bytes of content, more than
    /// `ratio` content bytes per compressed byte. The reader refuses a file at
    /// `maxInflateRatio`; our writer stores (does not compress) whatever would take it past
    /// `writerInflateRatio`, so no archive it writes can be refused by this rule.
    public func exceedsInflateRatio(content: Int64, compressed: Int64, ratio: Double, grace: Int64) -> Bool {
        content > grace && Double(content) > ratio * Double(max(1, compressed))
    }

    /// The ratio our gzip writer keeps its output under, from half the reader's grace on: half
    /// the reader's limit, so what zlib holds back between two checks cannot carry a file past it.
    public var writerInflateRatio: Double { maxInflateRatio / 2 }
}

