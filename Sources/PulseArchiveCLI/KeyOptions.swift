import Foundation
import PulseAge
import PulseArchive
import PulseStore
import PulseSystem

/// Why the keys a command line names could not be had: a file that does not read, a passphrase
/// that is empty, missing or typed differently twice. Never holds a secret.
typealias KeyError = KindedError<KeyErrorKind>

enum KeyErrorKind: String, Sendable {
    /// An identity, recipients or passphrase file cannot be read (or is too large to be one).
    case unreadableFile
    /// The passphrase is empty (file, variable or typed).
    case emptyPassphrase
    /// A passphrase is needed and there is no file, no variable and no terminal to ask.
    case noPassphrase
    /// The two passphrases typed on the terminal differ.
    case passphraseMismatch
    /// The passphrase file is an age identity file.
    case identityAsPassphrase
    /// Core dumps could not be turned off before a secret was read.
    case exposedMemory
}

/// The options that give keys: `--identity`/`--passphrase-file` for the commands that read an
/// archive, `--recipient`/`--recipients-file`/`--passphrase` for `export`. None takes a secret
/// as its value (other users see command lines in `ps`): a passphrase comes from a file, the
/// environment variable `PULSE_ARCHIVE_PASSPHRASE`, or the terminal.
enum KeyOptions {
    static let variable = "PULSE_ARCHIVE_PASSPHRASE"
    /// Key files are small; a larger file is refused rather than read whole.
    static let maxKeyFileBytes = 1 << 20

    /// Reads an identity (or recipients, or passphrase) file, at most `maxKeyFileBytes` of it
    /// whatever it is: a pipe (`<(pass show backup)`) is welcome, a device that never ends is
    /// refused once past the bound. `-` is standard input, as for `age -i -` (a file named `-`
    /// is `./-`); a terminal there is refused, as for an archive: the read would wait for typing.
    static func readKeyFile(_ path: String, what: String) throws -> [UInt8] {
        if path == "-" && isatty(STDIN_FILENO) == 1 {
            throw UsageError(message: "the \(what) '-' is standard input, which is a terminal: pipe the key in, or give its file")
        }
        try protectMemory()
        do {
            let file = try SystemFile.openForReading(path == "-" ? "/dev/stdin" : path)
            var bytes = try file.read(upTo: maxKeyFileBytes + 1)
            guard bytes.count <= maxKeyFileBytes else {
                wipe(&bytes)
                throw KeyError(.unreadableFile, "the \(what) \(path) is larger than \(maxKeyFileBytes) bytes: not a key file")
            }
            return bytes
        } catch let error as SystemError {
            // A name that does not open may be the secret itself, typed where its file's name
            // goes (`-i AGE-SECRET-KEY-1…`, `--passphrase-file hunter2`): not shown then.
            guard mayBeTheSecret(path, what: what) else { throw KeyError(.unreadableFile, "cannot read the \(what): \(error.message)") }
            throw KeyError(.unreadableFile, "cannot read the \(what): " + error.message.replacingOccurrences(of: path, with: "(the name given, not shown: it may be the secret itself; give the path of a file that holds it)"))
        }
    }

    /// A passphrase file's name that does not open could be the passphrase; any key file's name
    /// that holds a secret key's prefix, in any case or spelling, is one.
    static func mayBeTheSecret(_ path: String, what: String) -> Bool {
        what == "passphrase file" || path.lowercased().replacingOccurrences(of: "_", with: "-").contains("secret-key-")
    }

    /// Turns core dumps off (`SystemCalls.disableCoreDumps`: no core file, and on Linux not
    /// dumpable, so no debugger of the same user and no /proc/PID/mem either) before a secret
    /// is read or made: a core file would hold it, and the decrypted rows, for as long as it
    /// lies on disk. Idempotent; the rest of the process stays so.
    static func protectMemory() throws {
        guard SystemCalls.disableCoreDumps() else {
            throw KeyError(.exposedMemory, "cannot turn core dumps off before reading a secret: \(errnoText()); nothing was read")
        }
    }

    /// True when a key was given on purpose: an identity, a passphrase file, the variable.
    static func keysGiven(_ arguments: ParsedArguments, console: Console) -> Bool {
        !arguments.values("--identity").isEmpty || passphraseGiven(arguments, console: console)
    }

    /// True when a passphrase file or the variable gives a passphrase (not the terminal).
    static func passphraseGiven(_ arguments: ParsedArguments, console: Console) -> Bool {
        arguments.value("--passphrase-file") != nil || console.environment[variable] != nil
    }

    /// True when `export` encrypts: recipients, or a passphrase asked for (`--passphrase`, or a
    /// passphrase file; the variable alone does not, as it may be set for reading).
    static func encrypts(_ arguments: ParsedArguments) -> Bool {
        wantsPassphrase(arguments) || !arguments.values("--recipient").isEmpty || !arguments.values("--recipients-file").isEmpty
    }

    private static func wantsPassphrase(_ arguments: ParsedArguments) -> Bool {
        arguments.flag("--passphrase") || arguments.value("--passphrase-file") != nil
    }

    /// The keys a reader was given. The passphrase (file, variable, else the terminal, if there
    /// is one) is asked only when a file needs one, once; without any, an encrypted archive is
    /// refused with what its header says.
    ///
    /// The keys wipe their secrets (identities and passphrase) as soon as the file keys of
    /// `files` archives are derived: 1 for every command but `diff`, which opens two.
    static func decryptionKeys(_ arguments: ParsedArguments, console: Console, files: Int = 1) throws -> AgeKeys {
        if arguments.positionals.contains("-") {
            for path in arguments.values("--identity") + arguments.values("--passphrase-file") where isStandardInput(path) {
                throw UsageError(message: "'\(path)' is standard input, which is the archive (-): give the key in a file of its own")
            }
        }
        var identities: [AgeX25519Identity] = []
        for path in arguments.values("--identity") {
            var bytes = try readKeyFile(path, what: "identity file")
            defer { wipe(&bytes) }
            identities += try AgeIdentityFile.parse(bytes, name: path)
            warnIfShared(path, console: console)
        }
        let passphraseFile = arguments.value("--passphrase-file")
        let given = passphraseGiven(arguments, console: console)
        guard given || Terminal.isAvailable else {
            return AgeKeys(identities: identities).wipingSecrets(afterOpening: files, then: {})
        }
        let cache = PassphraseCache { try passphrase(file: passphraseFile, console: console, confirm: false) }
        // A file or the variable is read now, so a bad one is refused before any work; only
        // the terminal waits until a file asks for a passphrase.
        if given { try cache.load() }
        return AgeKeys(identities: identities, passphrase: {
            do {
                return try cache.value()
            } catch let error as KeyError {
                // The decryption passes its own errors on; this one it would call an I/O error.
                throw AgeError(.wrongPassphrase, error.message)
            }
        }).wipingSecrets(afterOpening: files, then: cache.wipe)
    }

    /// The transformation `export` applies to the finished archive, or nil for a plain one.
    static func sealing(_ arguments: ParsedArguments, console: Console) throws -> ExportOptions.Sealing? {
        var recipients = try arguments.values("--recipient").map { try AgeX25519Recipient(bech32: $0) }
        for path in arguments.values("--recipients-file") {
            recipients += try AgeRecipientsFile.parse(try readKeyFile(path, what: "recipients file"), name: path)
        }
        if wantsPassphrase(arguments) {
            guard recipients.isEmpty else {
                throw UsageError(message: "'--passphrase' cannot be combined with recipients: an age file has one passphrase or any number of public keys")
            }
            let secret = PassphraseCache { try passphrase(file: arguments.value("--passphrase-file"), console: console, confirm: true) }
            try secret.load()
            // Wiped once the archive's file key is wrapped: the sink needs it no longer.
            return { output, _ in
                defer { secret.wipe() }
                return try AgeEncryptingSink(output: output, passphrase: try secret.value())
            }
        }
        guard encrypts(arguments) else { return nil }
        // The archive's file key is a secret too, and the rows pass through memory in clear.
        try protectMemory()
        guard !recipients.isEmpty else {
            throw KeyError(.unreadableFile, "the recipients files hold no recipient (age1…): nothing to encrypt to")
        }
        try AgeFormat.checkRecipientCount(recipients.count)
        return { output, plaintextBytes in try AgeEncryptingSink(output: output, recipients: recipients, plaintextLength: plaintextBytes) }
    }

    /// The passphrase: `--passphrase-file`'s first line (without its line ending), else the
    /// variable, else the terminal (typed twice when `confirm`).
    static func passphrase(file: String?, console: Console, confirm: Bool) throws -> [UInt8] {
        try protectMemory()
        if let file {
            var bytes = try readKeyFile(file, what: "passphrase file")
            defer { wipe(&bytes) }
            try refuseIdentityFile(bytes, file: file)
            var line = Array(bytes.prefix { $0 != 0x0A })
            if line.last == 0x0D { line.removeLast() }
            if line.starts(with: utf8BOM) {
                // An editor's mark, not typed: age, asking on a terminal, never sees one.
                line.removeFirst(utf8BOM.count)
                console.err("warning: the passphrase file \(file) starts with a UTF-8 byte order mark (EF BB BF); it is not part of the passphrase, as it is not when the passphrase is typed into age")
            }
            guard !line.isEmpty else { throw KeyError(.emptyPassphrase, "the passphrase file \(file) has an empty first line: an empty passphrase is refused") }
            warnIfShared(file, console: console)
            return line
        }
        if let value = console.environment[variable] {
            guard !value.isEmpty else { throw KeyError(.emptyPassphrase, "\(variable) is set but empty: an empty passphrase is refused") }
            return Array(value.utf8)
        }
        guard var typed = try Terminal.readSecret(prompt: "Passphrase: ") else {
            throw KeyError(.noPassphrase, "a passphrase is needed and there is no terminal to ask it on: give --passphrase-file FILE or set \(variable)")
        }
        guard !typed.isEmpty else { throw KeyError(.emptyPassphrase, "an empty passphrase is refused") }
        if confirm {
            var again = try Terminal.readSecret(prompt: "Passphrase again: ") ?? []
            defer { wipe(&again) }
            guard again == typed else {
                wipe(&typed)
                throw KeyError(.passphraseMismatch, "the two passphrases typed differ; nothing was written")
            }
        }
        return typed
    }

    static let utf8BOM: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// An age identity file given as a passphrase file would make its first line — the public
    /// `# created: …` comment of `age-keygen` and `keygen` — the passphrase.
    static func refuseIdentityFile(_ bytes: [UInt8], file: String) throws {
        // Compared byte by byte on each line's start: no String copy of a secret is made.
        let upper = { (byte: UInt8) in byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte }
        let holdsIdentity = bytes.split(separator: 0x0A).contains { line in
            // A byte order mark, spaces or tabs before it still make it an identity line.
            let start = (line.starts(with: utf8BOM) ? line.dropFirst(utf8BOM.count) : line).drop { $0 == 0x20 || $0 == 0x09 }
            return [Array("AGE-SECRET-KEY-".utf8), Array("AGE-PLUGIN-".utf8)].contains { prefix in
                start.count >= prefix.count && zip(start, prefix).allSatisfy { upper($0) == $1 }
            }
        }
        guard holdsIdentity else { return }
        throw KeyError(.identityAsPassphrase, "the passphrase file \(file) is an age identity file (it holds an AGE-SECRET-KEY-… line), not a passphrase: give it with --identity \(file) to read archives; to encrypt to it, give its public key with --recipient (pulse-archive keygen -y \(file) prints it)")
    }

    /// `message` with the options that give a key, for an archive refused as encrypted.
    static func advice(_ message: String, kind: ArchiveError.Kind) -> String {
        guard kind == .encrypted else { return message }
        return "\(message): give --identity FILE, or --passphrase-file FILE or \(variable) for a passphrase"
    }

    /// True when `path` names the file standard input is (`/dev/stdin`, `/dev/fd/0`, or the file
    /// redirected in).
    static func isStandardInput(_ path: String) -> Bool {
        if path == "-" { return true }
        var named = stat(), input = stat()
        guard stat(path, &named) == 0, fstat(STDIN_FILENO, &input) == 0 else { return false }
        return named.st_dev == input.st_dev && named.st_ino == input.st_ino
    }

    /// Warns when a regular file holding a secret can be read by group or others. A device or a
    /// pipe (`/dev/stdin`, a process substitution) has no mode worth changing: `chmod 600
    /// /dev/null` is no advice to give; nor does an empty file hold a secret.
    static func warnIfShared(_ path: String, console: Console) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0, info.st_mode & 0o077 != 0 else { return }
        console.err("warning: \(path) holds a secret and can be read by others than its owner: chmod 600 \(path)")
    }

    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            for i in buffer.indices { buffer[i] = 0 }
        }
    }
}

/// A passphrase had once (the terminal is asked once, a file read once) and kept, in one
/// buffer that is wiped in place, until the file keys it opens are derived (`wipe`, which the
/// keys call then). Each `value()` is a fresh copy that its user wipes.
final class PassphraseCache {
    private let obtain: () throws -> [UInt8]
    private(set) var secret: SecretBytes?
    private var wiped = false

    init(_ obtain: @escaping () throws -> [UInt8]) { self.obtain = obtain }

    /// Reads the passphrase now, if not yet had.
    func load() throws {
        guard !wiped else {
            throw KeyError(.noPassphrase, "the passphrase was wiped once the files it opens were open, and another file asks for it")
        }
        guard secret == nil else { return }
        var got = try obtain()
        defer { KeyOptions.wipe(&got) }
        secret = got.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    func value() throws -> [UInt8] {
        try load()
        return secret!.withBytes { Array($0) }
    }

    /// Zeroes the passphrase; it is not asked again.
    func wipe() {
        secret?.wipe()
        wiped = true
    }
}

extension CommandSpec.Option {
    static let identity = CommandSpec.Option.repeatable("--identity", "-i", valueName: "file",
        help: "An age identity file (AGE-SECRET-KEY-1… lines, as keygen and age-keygen write) that opens an encrypted archive; may be repeated.")
    static let passphraseFile = CommandSpec.Option.value("--passphrase-file", valueName: "file",
        help: "Read the passphrase of an encrypted archive from this file's first line (default: $PULSE_ARCHIVE_PASSPHRASE, else the terminal).")
    static let recipient = CommandSpec.Option.repeatable("--recipient", "-r", valueName: "age1…",
        help: "Encrypt the archive to this public key (age format; writes .json.gz.age); may be repeated.")
    static let recipientsFile = CommandSpec.Option.repeatable("--recipients-file", "-R", valueName: "file",
        help: "Encrypt to every public key in this file (one age1… per line, # comments); may be repeated.")
    static let passphrase = CommandSpec.Option.flag("--passphrase", "-p",
        help: "Encrypt the archive with a passphrase (from --passphrase-file, $PULSE_ARCHIVE_PASSPHRASE, else asked twice on the terminal).")
}
