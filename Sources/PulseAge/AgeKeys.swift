import CCrypto
import Foundation

/// A 32-byte X25519 secret key: the identity that opens files encrypted to its recipient.
/// Written `AGE-SECRET-KEY-1…` (Bech32, upper case). The secret lives in one buffer that is
/// wiped when the last copy of the identity goes; `bech32Encoded()` makes a String Swift
/// cannot wipe, so call it only to write a key file.
public struct AgeX25519Identity: Sendable {
    let secret: SecretBytes
    /// The public key of this identity, the `age1…` that files are encrypted to.
    public let recipient: AgeX25519Recipient

    static let hrp = "age-secret-key-"

    /// Parses `AGE-SECRET-KEY-1…`.
    /// - Throws: `.unsupportedIdentity` for a post-quantum (`AGE-SECRET-KEY-PQ-1…`) or plugin
    ///   (`AGE-PLUGIN-…`) identity, naming its type; `.identityFileSyntax` for anything else
    ///   that is not an X25519 identity (the message never repeats the text).
    public init(bech32: String) throws(AgeError) {
        if let type = Self.unsupportedType(bech32) {
            throw AgeError(.unsupportedIdentity, "identities of type \(type)… are not supported (only X25519 identities, AGE-SECRET-KEY-1…)")
        }
        if Self.hasLowerCase(bech32) { throw AgeError(.identityFileSyntax, Self.lowerCaseMessage) }
        guard case (let hrp, var data)? = Bech32.decode(bech32) else {
            throw AgeError(.identityFileSyntax, "not an age X25519 identity (AGE-SECRET-KEY-1… with a valid checksum)")
        }
        // Zeroed in place: a copy (`var wiped = data`) was zeroed while the decoded scalar
        // itself went back to the heap as it was.
        defer { data.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        guard hrp == Self.hrp, data.count == 32 else {
            throw AgeError(.identityFileSyntax, "not an age X25519 identity (AGE-SECRET-KEY-1… with a valid checksum)")
        }
        let secret = data.withUnsafeBytes { SecretBytes(copying: $0) }
        try self.init(secret: secret)
    }

    /// True for an identity with a lower-case letter. Bech32 allows either case, but age
    /// writes and accepts identities in upper case only: one `age -d -i` refuses is not
    /// accepted here either, so a key file works with both tools or with neither.
    static func hasLowerCase(_ text: String) -> Bool {
        text.uppercased().hasPrefix("AGE-SECRET-KEY-") && text.utf8.contains { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }
    }

    static let lowerCaseMessage = "an X25519 identity with lower-case letters: age accepts identities only in upper case (AGE-SECRET-KEY-1…), so this one is refused as age refuses it; write it in upper case"

    init(secret: SecretBytes) throws(AgeError) {
        self.secret = secret
        recipient = AgeX25519Recipient(publicKey: try LibCrypto.x25519PublicKey(secret: secret))
    }

    /// A new identity from the system's CSPRNG.
    public static func generate() throws -> Self {
        try Self(secret: try SecretBytes.random(count: 32))
    }

    /// The secret key as `AGE-SECRET-KEY-1…`, for the identity file `keygen` writes.
    public func bech32Encoded() -> String {
        let data = secret.withBytes { Array($0) }
        return Bech32.encode(hrp: Self.hrp, data: data).uppercased()
    }

    /// The type of an identity we recognise but do not implement, as a name safe to show
    /// (letters, digits and dashes of its prefix only), or nil.
    static func unsupportedType(_ text: String) -> String? {
        let upper = text.uppercased()
        if upper.hasPrefix("AGE-SECRET-KEY-PQ-1") { return "AGE-SECRET-KEY-PQ-1" }
        if upper.hasPrefix("AGE-PLUGIN-") {
            let name = upper.dropFirst("AGE-PLUGIN-".count).prefix { $0 != "-" && $0 != "1" }.prefix(32)
            guard name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return "AGE-PLUGIN-" }
            return "AGE-PLUGIN-\(name)-1"
        }
        return nil
    }
}

/// An X25519 public key, `age1…` (Bech32, lower case): what files are encrypted to. Not a
/// secret.
public struct AgeX25519Recipient: Sendable, Equatable {
    let publicKey: [UInt8]

    init(publicKey: [UInt8]) { self.publicKey = publicKey }

    /// Parses `age1…`.
    /// - Throws: `.recipientSyntax` when it is not a valid X25519 recipient; a post-quantum,
    ///   plugin or SSH recipient is named as unsupported.
    public init(bech32: String) throws(AgeError) {
        let lower = bech32.lowercased()
        if lower.hasPrefix("age1pq1") {
            throw AgeError(.recipientSyntax, "post-quantum recipients (age1pq1…) are not supported: only X25519 recipients (age1…)")
        }
        if lower.hasPrefix("ssh-") {
            throw AgeError(.recipientSyntax, "SSH public keys are not supported as recipients: only X25519 recipients (age1…)")
        }
        // A secret key where a recipient goes: said as such (never shown), not taken for a
        // recipient in the wrong case.
        if lower.replacingOccurrences(of: "_", with: "-").contains("age-secret-key-") {
            throw AgeError(.recipientSyntax, "a secret key (AGE-SECRET-KEY-1…), not a recipient: give its public key (age1…), and keep the secret key private")
        }
        if lower.hasPrefix("age-plugin-") {
            throw AgeError(.recipientSyntax, "a plugin identity (AGE-PLUGIN-…), not a recipient: plugins are not supported; give an X25519 recipient (age1…)")
        }
        // A plugin's recipient is age1<plugin>1…: its Bech32 prefix holds the plugin's name.
        if let (hrp, _) = Bech32.decode(lower), hrp.hasPrefix("age1"), hrp.count > 4 {
            throw AgeError(.recipientSyntax, "a recipient of the age plugin \(hrp.dropFirst(4)) (\(hrp)1…): plugins are not supported; give an X25519 recipient (age1…)")
        }
        // Bech32 allows either case, but age writes and accepts recipients in lower case only
        // ("unknown recipient type" for AGE1…): one that `age -r` refuses is not accepted here
        // either, so a recipient works with both tools or with neither. Upper case is named as
        // the fault only of what would otherwise be a recipient.
        if lower != bech32, let (hrp, data) = Bech32.decode(lower), hrp == "age", data.count == 32 {
            throw AgeError(.recipientSyntax, "an X25519 recipient with upper-case letters: age accepts recipients only in lower case (age1…), so this one is refused as age refuses it; write it in lower case")
        }
        if let (hrp, data) = Bech32.decode(bech32), hrp == "age", data.count == 32 {
            publicKey = data
            return
        }
        throw AgeError(.recipientSyntax, "not an age X25519 recipient (age1… with a valid checksum and a 32-byte key)")
    }

    /// The recipient as `age1…`.
    public var bech32: String { Bech32.encode(hrp: "age", data: publicKey) }
}

/// The keys a decryption may use. `passphrase` is called only when the file has an scrypt
/// (passphrase) stanza, at most once, after the stanza's work factor has been checked; the
/// bytes it returns are wiped after use (our copy; Swift may have made others). An `AgeError`
/// it throws is passed on unchanged; any other error becomes `.io`.
///
/// By default the keys live as long as their last copy. `wipingSecrets(afterOpening:then:)`
/// shortens that: once the file keys of the files a command opens are derived, the identities'
/// scalars are wiped and the caller wipes its passphrase, so that they are not in memory for
/// the rest of the command; a file opened again (a reader explaining a failure reopens it)
/// uses the file key already derived.
public struct AgeKeys {
    public var identities: [AgeX25519Identity]
    public var passphrase: (() throws -> [UInt8])?
    /// Shared by every copy of these keys.
    let opened = OpenedFiles()

    public init(identities: [AgeX25519Identity] = [], passphrase: (() throws -> [UInt8])? = nil) {
        self.identities = identities
        self.passphrase = passphrase
    }

    /// These keys, which wipe their identities' scalars and call `forget` (which wipes the
    /// passphrase the caller keeps) as soon as `count` file keys have been derived, and from
    /// then on open only those files again.
    public func wipingSecrets(afterOpening count: Int, then forget: @escaping () -> Void) -> AgeKeys {
        opened.wipe(after: count, identities: identities.map(\.secret), then: forget)
        return self
    }

    /// True once the secrets were wiped.
    public var secretsWiped: Bool { opened.isWiped }
}

/// The file keys a command's keys have derived, by header MAC, and the wipe they lead to.
final class OpenedFiles: @unchecked Sendable {
    private let lock = NSLock()
    private var fileKeys: [[UInt8]: SecretBytes] = [:]
    private var derived = 0
    private var wipeAfter: Int?
    private var secrets: [SecretBytes] = []
    private var forget: (() -> Void)?
    private var wiped = false

    func wipe(after count: Int, identities: [SecretBytes], then forget: @escaping () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        wipeAfter = max(1, count)
        secrets = identities
        self.forget = forget
    }

    var isWiped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return wiped
    }

    /// The file key derived earlier for the header with this MAC, when the keys wipe (else
    /// none is kept).
    func fileKey(forHeaderMAC mac: [UInt8]) -> SecretBytes? {
        lock.lock()
        defer { lock.unlock() }
        return fileKeys[mac]
    }

    /// Records a file key just derived; the last one expected wipes the secrets.
    func derived(_ fileKey: SecretBytes, forHeaderMAC mac: [UInt8]) {
        lock.lock()
        guard let wipeAfter, !wiped else { return lock.unlock() }
        fileKeys[mac] = fileKey
        derived += 1
        guard derived >= wipeAfter else { return lock.unlock() }
        wiped = true
        for secret in secrets { secret.wipe() }
        secrets = []
        let forget = self.forget
        self.forget = nil
        lock.unlock()
        forget?()
    }
}
