/// One recipient stanza of the header: `-> type args…` and its body.
struct AgeStanza {
    var type: String
    var arguments: [String]
    var body: [UInt8]
}

/// The header of an age file, parsed strictly (c2sp.org/age): the intro line, the stanzas, the
/// MAC line. Keeps the bytes the MAC covers (from the first byte through `---`).
struct AgeHeader {
    static let intro = Array("age-encryption.org/v1".utf8)
    static let versionPrefix = Array("age-encryption.org/".utf8)
    static let bytesPerBodyLine = 48
    /// Limits a hostile header: one line, and the whole.
    static let maxLineBytes = 64 * 1024
    static let maxHeaderBytes = 1 << 20

    /// The one rule for a header's length, from the intro line through the MAC line's
    /// newline: the reader refuses a longer one, so the writer never writes one.
    static func exceedsLimit(_ byteCount: Int) -> Bool { byteCount > maxHeaderBytes }

    /// The length of the header the writer makes for `count` X25519 recipients: the intro line
    /// (22 bytes), per stanza `-> X25519 <43>` (54) and its 32-byte body as one line of 43
    /// (44), the payload's length `-> pulse-archive-length <20>` (45) and its empty body (1),
    /// the MAC line `--- <43>` (48).
    static func x25519HeaderLength(recipients count: Int) -> Int { 22 + 98 * count + 46 + 48 }

    var stanzas: [AgeStanza]
    var mac: [UInt8]
    var macInput: [UInt8]

    /// Reads the header from `input`, leaving it at the first byte of the payload.
    static func read(from input: AgeInput, name: String) throws(AgeError) -> AgeHeader {
        func damaged(_ what: String) -> AgeError { AgeError(.damagedHeader, "\(name): the age header is damaged: \(what)") }
        var raw: [UInt8] = []
        func nextLine(_ what: String) throws(AgeError) -> [UInt8] {
            guard let (line, terminated) = try input.readLine(limit: maxLineBytes), terminated else {
                throw damaged("the file ends inside the header (\(what))")
            }
            raw += line
            raw.append(UInt8(ascii: "\n"))
            guard !exceedsLimit(raw.count) else { throw damaged("the header is longer than \(maxHeaderBytes) bytes") }
            return line
        }

        guard let (first, terminated) = try input.readLine(limit: maxLineBytes) else {
            throw damaged("the file is empty")
        }
        if first != intro {
            if first == intro + [0x0D] {
                throw AgeError(.damagedHeader, "\(name): the file's line ends were converted to CR LF (copied as text: an FTP transfer in ASCII mode, git's autocrlf, a Windows editor), which damages its binary payload as well: copy the original again in binary mode")
            }
            if first.starts(with: versionPrefix) {
                let version = first.dropFirst(versionPrefix.count).prefix(16)
                let shown = version.allSatisfy({ $0 >= 0x21 && $0 <= 0x7e }) ? String(decoding: version, as: UTF8.self) : "?"
                throw AgeError(.unsupportedVersion, "\(name): age format version \(shown) is not supported (only v1)")
            }
            throw damaged("the first line is not age-encryption.org/v1")
        }
        guard terminated else { throw damaged("the file ends after the first line") }
        raw = first + [UInt8(ascii: "\n")]

        var stanzas: [AgeStanza] = []
        while true {
            let line = try nextLine("a stanza or the MAC line")
            if line.starts(with: Array("---".utf8)) {
                let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
                guard parts.count == 2, parts[0].elementsEqual("---".utf8),
                      let mac = AgeBase64.decode(parts[1]), mac.count == 32
                else { throw damaged("the MAC line is malformed") }
                raw.removeLast(line.count + 1 - 3)  // the MAC covers the header through "---"
                return AgeHeader(stanzas: stanzas, mac: mac, macInput: raw)
            }
            guard line.starts(with: Array("-> ".utf8)) else { throw damaged("stanza \(stanzas.count + 1) does not start with \"-> \"") }
            let arguments = line.dropFirst(3).split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard !arguments.isEmpty, arguments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= 0x21 && $0 <= 0x7e } }) else {
                throw damaged("stanza \(stanzas.count + 1) has an empty or invalid argument")
            }
            var body: [UInt8] = []
            while true {
                let bodyLine = try nextLine("the body of stanza \(stanzas.count + 1)")
                guard let bytes = AgeBase64.decode(bodyLine), bytes.count <= bytesPerBodyLine else {
                    throw damaged("the body of stanza \(stanzas.count + 1) is not canonical base64 in lines of 64 columns ending with a shorter one")
                }
                body += bytes
                if bytes.count < bytesPerBodyLine { break }
            }
            let strings = arguments.map { String(decoding: $0, as: UTF8.self) }
            stanzas.append(AgeStanza(type: strings[0], arguments: Array(strings.dropFirst()), body: body))
        }
    }
}

/// What the header of an age file says, read without a key: for `inspect`.
public struct AgeHeaderSummary: Sendable, Equatable {
    /// The recipient stanza types in the order of the header (`X25519`, `scrypt`,
    /// `mlkem768x25519`, …): every stanza but the payload-length record (`AgePayloadLength`).
    public let stanzaTypes: [String]
    /// True when the file is in the ASCII armor.
    public let armored: Bool
    /// The payload's length as the header records it (`AgePayloadLength`), nil when it records none.
    public let recordedPayloadLength: Int64?
    public var stanzaCount: Int { stanzaTypes.count }

    public init(stanzaTypes: [String], armored: Bool, recordedPayloadLength: Int64? = nil) {
        self.stanzaTypes = stanzaTypes
        self.armored = armored
        self.recordedPayloadLength = recordedPayloadLength
    }

    /// A record not in the writer's form counts as none here (every age reader skips it);
    /// `AgeFormat.checkStructure`, which relies on it, refuses it.
    init(_ header: AgeHeader, armored: Bool) {
        self.init(header, armored: armored, recorded: (try? AgePayloadLength.recorded(in: header.stanzas)) ?? nil)
    }

    init(_ header: AgeHeader, armored: Bool, recorded: Int64?) {
        self.init(stanzaTypes: AgePayloadLength.recipientStanzas(header.stanzas).map(\.type), armored: armored, recordedPayloadLength: recorded)
    }
}

/// The payload's length, recorded in the header by the writer of an archive, so that a file cut
/// short (or grown) can be told from a whole one without the key: age itself has no length, and
/// a file cut inside a chunk looks like one with a shorter last chunk. The record is one stanza,
/// `-> pulse-archive-length <20 digits>` with an empty body: a stanza of a type no identity
/// knows, which every age reader skips (c2sp.org/age; the format's test vectors carry such
/// "grease" stanzas), covered by the header's MAC like every stanza. Its width is fixed so that
/// a writer that learns the length only at the end rewrites it in place. Not in a passphrase
/// file: an scrypt stanza must be the only one in its header.
public enum AgePayloadLength {
    public static let stanzaType = "pulse-archive-length"
    /// The argument's width: every Int64 fits, zero-padded.
    static let digits = 20

    /// The argument for `length`: its decimal digits, zero-padded to `digits`.
    static func argument(_ length: Int64) -> String {
        let text = String(max(0, length))
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// The payload (nonce, chunks, tags) an age file has for `plaintext` bytes, or nil past
    /// what an Int64 counts.
    public static func payloadLength(plaintext: Int64) -> Int64? {
        guard plaintext >= 0 else { return nil }
        let chunk = Int64(AgeFormat.chunkSize), tag = Int64(ChaChaPoly.tagSize)
        let chunks = max(1, plaintext / chunk + (plaintext % chunk == 0 ? 0 : 1))
        let (tags, overflowTags) = chunks.multipliedReportingOverflow(by: tag)
        let (withTags, overflowSum) = plaintext.addingReportingOverflow(tags)
        let (total, overflowNonce) = withTags.addingReportingOverflow(16)
        return overflowTags || overflowSum || overflowNonce ? nil : total
    }

    /// The stanzas but the length record: the recipients' (what "no identity matches" counts).
    static func recipientStanzas(_ stanzas: [AgeStanza]) -> [AgeStanza] {
        stanzas.filter { $0.type != stanzaType }
    }

    /// The length the stanzas record, nil when none does.
    /// - Throws: `.damagedHeader` for a record not in the writer's form, or more than one.
    static func recorded(in stanzas: [AgeStanza]) throws(AgeError) -> Int64? {
        let records = stanzas.filter { $0.type == stanzaType }
        guard let record = records.first else { return nil }
        guard records.count == 1, record.arguments.count == 1, record.body.isEmpty,
              record.arguments[0].utf8.count == digits, record.arguments[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let length = Int64(record.arguments[0]) else {
            throw AgeError(.damagedHeader, "the age header's \(stanzaType) record is damaged (one stanza, \(digits) digits, no body)")
        }
        return length
    }
}

/// Recognising age files and reading their header.
public enum AgeFormat {
    /// The age tool's limit on the scrypt work factor (log2 N): above it a file is refused
    /// before any scrypt work, as it would take minutes and gigabytes.
    public static let maximumWorkFactor = 22
    /// The work factor we write, the age tool's default.
    public static let defaultWorkFactor = 18
    /// Plaintext bytes per payload chunk.
    public static let chunkSize = 64 * 1024
    /// The most X25519 recipients one file can have: a header of more is longer than readers
    /// (ours, as `age`'s own limits go) accept, so the writer refuses it (10 698).
    public static let maximumX25519Recipients = (AgeHeader.maxHeaderBytes - AgeHeader.x25519HeaderLength(recipients: 0)) / 98

    /// Refuses, before any work, a number of X25519 recipients whose header no reader of ours
    /// would accept.
    /// - Throws: `.tooManyRecipients`.
    public static func checkRecipientCount(_ count: Int) throws(AgeError) {
        let length = AgeHeader.x25519HeaderLength(recipients: count)
        guard !AgeHeader.exceedsLimit(length) else {
            throw AgeError(.tooManyRecipients, "\(count) recipients make an age header of \(length) bytes, longer than the \(AgeHeader.maxHeaderBytes) bytes readers accept: at most \(maximumX25519Recipients) recipients per file")
        }
    }

    /// True when `head` (the first bytes of a file: give at least the first 1 100 bytes, or the
    /// whole file when shorter) starts like an age file: `age-encryption.org/`, or the armor's
    /// BEGIN line after whitespace only.
    public static func looksLikeAge(_ head: [UInt8]) -> Bool {
        if head.starts(with: AgeHeader.versionPrefix) { return true }
        let afterSpace = head.drop { $0 == 0x20 || ($0 >= 0x09 && $0 <= 0x0d) }
        guard head.count - afterSpace.count <= AgeArmorReader.maxWhitespace else { return false }
        return afterSpace.starts(with: AgeArmorReader.beginLine)
    }

    /// Reads the header (binary or armored) and says what it holds, checking its syntax but
    /// not its MAC (that needs the file key).
    /// - Throws: `.damagedHeader`, `.unsupportedVersion`, `.armor`, `.io`.
    public static func readHeaderSummary(from source: ByteSource, name: String) throws(AgeError) -> AgeHeaderSummary {
        let (input, armored) = try openInput(CountedSource(source), name: name)
        let header = try AgeHeader.read(from: input, name: name)
        return AgeHeaderSummary(header, armored: armored)
    }

    /// Checks what can be checked of an age file without a key: the header parses, the payload
    /// after it is as long as a complete one can be — the 16-byte nonce, then chunks of
    /// 64 KiB + 16 (the tag), the last one of 1 byte + 16 to 64 KiB + 16 (a last chunk of the
    /// tag alone only when it is the only one, for an empty plaintext, which no archive is) —
    /// and, when the header records the payload's length (`AgePayloadLength`), exactly that
    /// long. Without a record most cuts cannot be seen: a file cut inside a chunk looks like
    /// one with a shorter last chunk; the caller decides what that is worth
    /// (`recordedPayloadLength` nil). Nothing tells a chunk that was changed without the key.
    /// Reads the whole file.
    /// - Throws: `.damagedHeader`, `.unsupportedVersion`, `.armor`, `.truncated`, `.io`.
    public static func checkStructure(of source: ByteSource, name: String) throws(AgeError) -> AgeHeaderSummary {
        let (input, armored) = try openInput(CountedSource(source), name: name)
        let header = try AgeHeader.read(from: input, name: name)
        var payload: Int64 = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try typedAge { try buffer.withUnsafeMutableBytes { bytes in try input.read(into: bytes) } }
            if count == 0 { break }
            payload += Int64(count)
        }
        if let problem = payloadProblem(length: payload) { throw AgeError(.truncated, "\(name): \(problem)") }
        let recorded: Int64?
        do throws(AgeError) { recorded = try AgePayloadLength.recorded(in: header.stanzas) } catch {
            throw AgeError(error.kind, "\(name): \(error.message)")
        }
        if let recorded, recorded != payload {
            throw AgeError(.truncated, "\(name): the payload is \(payload) bytes where its header records \(recorded): "
                + (payload < recorded ? "it was cut short" : "bytes were added after its end") + " (or the record was altered)")
        }
        return AgeHeaderSummary(header, armored: armored, recorded: recorded)
    }

    /// Why a payload (nonce and chunks) of `length` bytes cannot be complete, or nil.
    static func payloadProblem(length: Int64) -> String? {
        let nonce: Int64 = 16, tag = Int64(ChaChaPoly.tagSize), fullChunk = Int64(chunkSize) + tag
        guard length >= nonce else {
            return length == 0
                ? "the file ends right after the age header, without the payload: it was cut short"
                : "the file ends inside the payload's nonce: it was cut short"
        }
        let chunks = length - nonce
        guard chunks > 0 else { return "the file ends after the payload's nonce, without any chunk: it was cut short" }
        guard chunks != tag else { return "the payload is one empty chunk: the file holds nothing" }
        let last = chunks % fullChunk
        guard last == 0 || last > tag else {
            return "the payload's length (\(length) bytes) is not one a complete age file can have (its last chunk would hold \(last) bytes, no more than a tag): it was cut short or damaged"
        }
        return nil
    }

    /// The stream of the age file proper: `source` itself, or the armor decoded.
    static func openInput(_ source: ByteSource, name: String) throws(AgeError) -> (AgeInput, armored: Bool) {
        let raw = AgeInput(source: source, name: name)
        // Binary when it starts (or, cut short, would start) with `age-encryption.org/`, or is
        // empty; anything else is read as armor, whose reader says precisely what is wrong.
        let head = try raw.peek(atLeast: AgeHeader.versionPrefix.count)
        let prefix = head.prefix(AgeHeader.versionPrefix.count)
        guard !head.isEmpty, !AgeHeader.versionPrefix.starts(with: prefix) else { return (raw, false) }
        return (AgeInput(source: AgeArmorReader(input: raw, name: name), name: name, bufferSize: 4096), true)
    }
}

import PulseSystem
