import PulseAge
import PulseArchive
import PulseSystem

/// The newest archive did not read, or could not be checked: `prune` removes nothing, so a broken backup never causes
/// the good ones before it to be deleted.
public struct UnreadableNewestArchive: Error, CustomStringConvertible {
    /// Why it was refused: each asks for another remedy.
    public enum Reason: Sendable {
        /// It does not read: damaged, cut short, refused by the reader.
        case unreadable
        /// Encrypted, no key given, and its header records no length: it may be whole, but
        /// nothing short of the key can tell.
        case needsKey
        /// The machine failed the check (memory, threads, room in the temporary directory):
        /// nothing is known of the archive, which may well be sound.
        case couldNotCheck
        /// Encrypted, and the keys given do not open it (no identity matches, a wrong
        /// passphrase): the backup may be sound; the key is not its key.
        case keysDoNotOpen
    }

    public let path: String
    /// The reader's error (an `ArchiveError` for a damaged, refused or unreadable archive).
    public let cause: Error
    public let reason: Reason

    init(path: String, cause: Error, reason: Reason = .unreadable) {
        self.path = path
        self.cause = cause
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .needsKey:
            "refusing to prune: \(cause); nothing was removed. Give a key to read it all the way, then prune again"
        case .keysDoNotOpen:
            "refusing to prune: the keys given do not open the newest archive \(path) (\(cause)); nothing was removed. Give the key it was encrypted with, then prune again"
        case .couldNotCheck:
            "refusing to prune: the newest archive \(path) could not be checked, for no fault of its own (\(cause)); nothing was removed. Prune again when the machine has what it lacked"
        case .unreadable:
            "refusing to prune: the newest archive \(path) does not read (\(cause)); nothing was removed. Replace it with a good backup (or move it out of the directory), then prune again"
        }
    }
}

/// The check `prune` makes of the newest archive before it removes anything.
public enum NewestArchiveCheck {
    /// How far the newest archive could be checked.
    public enum Depth: String, Sendable {
        /// Read all the way, every value checked.
        case full
        /// Encrypted, and no key was given: its age header parsed and its payload is exactly as
        /// long as the header records (`AgeFormat.checkStructure`, `AgePayloadLength`);
        /// nothing more can be known.
        case header
    }

    /// Reads the archive at `path` all the way with `read` (the codec's reader by default; the
    /// command line stages the rows as `inspect` does). An encrypted one is read all the way
    /// with `keys` that open it; without any key (`headerOnly`), as far as its structure: the
    /// header must parse and record the payload's length, and the payload be that long (a copy
    /// cut short would otherwise pass as the newest, and the good backups before it go). A file
    /// whose header records no length (encrypted by `age`, by a version of this tool before the
    /// record, or with a passphrase, whose header has room for no other stanza) is refused
    /// without a key: a cut inside a chunk looks like a shorter last chunk. Keys given that do
    /// not open it refuse it.
    /// - Returns: how far it was checked, and what it was found to be where its name says
    ///   otherwise (`misnamed`): a `.age` that is not encrypted, plaintext anyone can read under
    ///   a name its owner takes for sealed; a `.gz` that is plain JSON, or the reverse.
    /// - Throws: `UnreadableNewestArchive`.
    public static func check(_ name: BackupName, at path: String, limits: ArchiveLimits, keys: AgeKeys?, headerOnly: Bool,
                             read: (ArchiveReader) throws -> ArchiveSummary = { try $0.inspect() }) throws(UnreadableNewestArchive) -> (depth: Depth, misnamed: String?) {
        do {
            let summary = try read(ArchiveReader(ArchiveInput.file(path).decrypting(with: keys), limits: limits))
            var found: [String] = []
            if name.encrypted != summary.isEncrypted { found.append(summary.isEncrypted ? "encrypted" : "not encrypted") }
            if name.compressed != summary.isCompressed { found.append(summary.isCompressed ? "gzip" : "plain JSON") }
            return (.full, found.isEmpty ? nil : found.joined(separator: " and "))
        } catch let error as ArchiveError where error.kind == .encrypted && name.encrypted && headerOnly {
            do {
                let summary = try AgeFormat.checkStructure(of: try SystemFile.openForReading(path, followingLinks: false), name: path)
                guard summary.recordedPayloadLength != nil else {
                    let made = summary.stanzaTypes.contains("scrypt") ? "encrypted with a passphrase, whose header holds nothing else"
                        : "encrypted by another program or an earlier version of this one"
                    throw UnreadableNewestArchive(path: path, cause: ArchiveError(.encrypted,
                        "the newest archive \(path) is encrypted and its header records no length (\(made)), so without a key a copy cut short cannot be told from a whole one"),
                        reason: .needsKey)
                }
                return (.header, nil)
            } catch let error as UnreadableNewestArchive {
                throw error
            } catch let error as AgeError {
                throw UnreadableNewestArchive(path: path, cause: ArchiveError(error.kind == .io ? .io : .decryption, error.message))
            } catch {
                throw UnreadableNewestArchive(path: path, cause: error)
            }
        } catch let error as ArchiveError where error.kind == .keysDoNotOpen || error.kind == .encrypted {
            // `.encrypted` here: keys were given, of the other kind (a passphrase for a file to
            // public keys, or the reverse).
            throw UnreadableNewestArchive(path: path, cause: error, reason: .keysDoNotOpen)
        } catch {
            throw UnreadableNewestArchive(path: path, cause: error, reason: MachineFailure.caused(error) ? .couldNotCheck : .unreadable)
        }
    }
}
