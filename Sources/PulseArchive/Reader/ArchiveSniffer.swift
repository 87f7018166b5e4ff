/// Tells a gzip file from a plain JSON one by its first bytes.
enum ArchiveSniffer {
    enum Kind { case gzip, plainJSON }

    /// How many first bytes the reader reads for `sniff` (and replays).
    static let headSize = 4096

    /// - Parameter head: the first bytes of the file (up to `headSize`).
    static func sniff(_ head: [UInt8], name: String) throws -> Kind {
        let n = head.count
        guard n > 0 else { throw ArchiveError.notAnArchive("the file \(name) is empty") }
        if head.starts(with: GzipFraming.magic) { return .gzip }
        var i = 0
        if n >= 3, head[0] == JSONByte.byteOrderMark[0], head[1] == JSONByte.byteOrderMark[1], head[2] == JSONByte.byteOrderMark[2] { i = 3 }
        while i < n, JSONByte.isWhitespace(head[i]) { i += 1 }
        if i < n, head[i] == JSONByte.openBrace { return .plainJSON }
        // Whitespace to the end of a full head: only JSON may start so, and the parser finds
        // the object after it (or says what it found instead). Leading whitespace of 4 KiB or
        // more was refused as "neither gzip nor a JSON object", though JSON allows any amount.
        if i == n && n >= headSize { return .plainJSON }
        // A Gadgetbridge file (docs/gadgetbridge.md): `import` and `inspect` take one before the
        // reader opens it; here it came to `verify`, `diff` or `tables`.
        if head.starts(with: Array("SQLite format 3\u{0}".utf8)) || head.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            throw ArchiveError.notAnArchive("\(name) is an SQLite database or a ZIP file (a Gadgetbridge export or backup?), not a PulseLoop archive: "
                + "only import and inspect read a Gadgetbridge file (import it, then check the store or write its tables)")
        }
        throw ArchiveError.notAnArchive("\(name) is neither gzip nor a JSON object")
    }
}
