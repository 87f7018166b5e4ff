import Foundation
import PulseAge
import PulseSystem

/// `keygen [-o FILE]`, `keygen -y FILE`: a new age X25519 identity, or the public key of one.
struct KeygenCommand: Subcommand {
    static let spec = CommandSpec(
        name: "keygen",
        abstract: "Make a new age identity (key pair) for encrypted archives, or show an identity's public key.",
        discussion: "Writes the identity in age's identity-file format (what age-keygen writes, what age -d -i reads) to a new file, 0600, never over an existing one, and prints its public key (age1…) on stdout: give that to export --recipient. Without -o, or with -o -, the identity goes to stdout and the public key to stderr. Keep a copy of the identity away from the backups: without it an archive encrypted to it cannot be recovered by anyone. With -y, prints the public key of each identity in FILE.",
        options: [
            .value("--output", "-o", valueName: "file", help: "Write the identity to this new file (0600; never over an existing file)."),
            .value("-y", valueName: "file", help: "Print the public key of each identity in this identity file instead."),
        ],
        exclusive: [("--output", "-y")]
    )

    let output: String?
    let identityFile: String?
    let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        // `-o -` is standard output, as for export, never a file named "-".
        output = arguments.value("--output").flatMap { $0 == "-" ? nil : $0 }
        if let output {
            try ArgumentValues.requireFileName(output, option: "-o")
            try ArgumentValues.requireLastingName(output, option: "-o")
        }
        identityFile = arguments.value("-y")
        self.console = console
    }

    func run() throws -> Int32 {
        if let identityFile {
            var bytes = try KeyOptions.readKeyFile(identityFile, what: "identity file")
            defer { KeyOptions.wipe(&bytes) }
            // Parsed first: a file of public keys given here holds no secret to warn about.
            let identities = try AgeIdentityFile.parse(bytes, name: identityFile)
            KeyOptions.warnIfShared(identityFile, console: console)
            for identity in identities { try console.out(identity.recipient.bech32) }
            return 0
        }
        try KeyOptions.protectMemory()
        let identity = try AgeX25519Identity.generate()
        var contents = AgeIdentityFile.contents(of: identity, created: Self.now())
        defer { KeyOptions.wipe(&contents) }
        guard let output else {
            try contents.withUnsafeBytes { try SystemFile.standardOutput().write($0) }
            console.err("Public key: \(identity.recipient.bech32)")
            return 0
        }
        let file = try AtomicFile(targetPath: output)
        try contents.withUnsafeBytes { try file.file.write($0) }
        try file.commit()
        try console.out(identity.recipient.bech32)
        return 0
    }

    /// Now as RFC 3339 in the local zone, as age-keygen writes it.
    static func now() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = .current
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date())
    }
}
