import PulseSystem

/// Why an archive could not be read or written.
///
/// Every message names what was wrong and where (file, table, row, field) and, where there is
/// one, what to do about it. The `kind` lets a caller branch without parsing the message; a
/// remedy that is a front end's (an option that raises a limit, a key to give, an update) is
/// left to it, with the `kind` and `limit` it needs, so no message names a command or option.
public struct ArchiveError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The file is not a PulseLoop archive at all, or its structure is broken: not JSON,
        /// no usable `formatVersion`, a missing required key, `formatVersion` below 1.
        case notAnArchive
        /// `formatVersion` is newer than this version reads (a front end says how to update).
        case unsupportedVersion
        /// A value does not decode as its field's type: wrong JSON type, `null` in a required
        /// field, a bad UUID or date, an integer beyond 64 bits, invalid UTF-8 or base64.
        case invalidValue
        /// Two rows of one table share the table's unique key, or two attachments share a name.
        case duplicateKey
        /// An attachment name could escape the attachments folder or hide a file.
        case unsafeAttachmentName
        /// A document path could escape the document tree, or is not where documents live.
        case unsafeDocumentPath
        /// A hostile-input limit was passed: nesting depth, string or number length, size.
        case limitExceeded
        /// The gzip container is damaged: cut short, a corrupted byte, a bad checksum or
        /// length, or bytes after the end of the stream.
        case damagedCompression
        /// Reading or writing a file failed at the operating-system level.
        case io
        /// The archive is sound but asks for something this version does not do yet.
        case unsupportedFeature
        /// The archive is encrypted (age) and no key was given: the message says what its
        /// header holds.
        case encrypted
        /// The encryption refused the archive: a damaged or altered header, a bad chunk, a file
        /// cut short or extended, an identity of a type this version does not implement.
        case decryption
        /// The archive is encrypted and the keys given do not open it: no identity matches, a
        /// wrong passphrase. The file may be sound; the key is not its key.
        case keysDoNotOpen
        /// The machine failed the read (memory run out in zlib or libcrypto's scrypt): nothing
        /// is known of the archive, which may well be sound (`MachineFailure`).
        case machineFailure
    }

    public let kind: Kind
    public let message: String
    /// The table, or `settings`, `attachments`, `documents`, when the problem is in one.
    public let table: String?
    /// Which limit a `limitExceeded` error passed, so a front end can say how to raise it
    /// (the library names the limit, not a command-line option).
    public let limit: ArchiveLimits.Name?

    public init(_ kind: Kind, _ message: String, table: String? = nil, limit: ArchiveLimits.Name? = nil) {
        self.kind = kind
        self.message = message
        self.table = table
        self.limit = limit
    }

    /// Problems a read can step over to report the next one: the value is consumed, the
    /// structure intact.
    public var isRecoverable: Bool {
        [.invalidValue, .duplicateKey, .unsafeAttachmentName, .unsafeDocumentPath].contains(kind)
    }

    public var description: String { message }

    /// The same error with the file named in front of its message, unless it names it already
    /// (errors of opening or inflating a file do).
    public func naming(file: String) -> ArchiveError {
        message.contains(file) ? self : ArchiveError(kind, "\(file): \(message)", table: table, limit: limit)
    }

    /// The same error placed in the row it was found in (`measurements[12]`), unless it has a
    /// place already: for what the JSON scanner finds inside a row (a string past the limit,
    /// a number it cannot read, nesting too deep), which knows only the byte offset.
    func located(at location: String, table: String?) -> ArchiveError {
        guard self.table == nil else { return self }
        // A damaged or cut gzip stream keeps its own words first, its place after them.
        if kind == .damagedCompression {
            // A place is a name (`measurements[3]`, `settings`) or already a phrase (`in "counts"`,
            // `after "settings"`, `at the top level`).
            let isPhrase = ["in ", "after ", "at "].contains { location.hasPrefix($0) }
            return ArchiveError(kind, "\(message) (\(isPhrase ? "" : "in ")\(location))", table: table, limit: limit)
        }
        guard [.notAnArchive, .limitExceeded, .invalidValue].contains(kind) else { return self }
        let isWrapped = message.hasPrefix(Self.notAnArchivePrefix)
        let detail = isWrapped ? message.dropFirst(Self.notAnArchivePrefix.count) : message[...]
        guard !detail.hasPrefix(location) else { return ArchiveError(kind, message, table: table, limit: limit) }
        let placed = (isWrapped ? Self.notAnArchivePrefix : "") + location + ": " + detail
        return ArchiveError(kind, placed, table: table, limit: limit)
    }

    /// Runs `body`; an `ArchiveError` it throws comes out `located(at:table:)`, its place put
    /// into words only then.
    static func placing<T>(at location: @autoclosure () -> String, table: String?, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ArchiveError {
            throw error.located(at: location(), table: table)
        }
    }

    /// The wording for anything the app would call "isn't a PulseLoop export, or it's damaged".
    static func notAnArchive(_ detail: String, table: String? = nil) -> ArchiveError {
        ArchiveError(.notAnArchive, notAnArchivePrefix + detail, table: table)
    }

    private static let notAnArchivePrefix = "not a PulseLoop archive, or damaged: "

    /// What a parse found wrong, without the words for a file that is no archive: for JSON
    /// that is one value inside an archive or a store (a settings blob), whose file is sound.
    package var problemInValue: String {
        message.hasPrefix(Self.notAnArchivePrefix) ? String(message.dropFirst(Self.notAnArchivePrefix.count)) : message
    }

    static func unsupportedVersion(found: Int64) -> ArchiveError {
        unsupportedVersion(literal: String(found))
    }

    /// As `unsupportedVersion(found:)`, for a version past 64 bits, as the file writes it.
    static func unsupportedVersion(literal: String) -> ArchiveError {
        ArchiveError(
            .unsupportedVersion,
            "this archive is format \(literal); this tool reads up to \(ArchiveFormat.newestVersion)"
        )
    }
}

extension ArchiveError: MachineFailureReporting {
    public var isMachineFailure: Bool { kind == .machineFailure }
}
