import Foundation
import Testing
import PulseAge
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// An export's name says whether it is encrypted, and the small traps of key files, through
/// the built binary and against the real `age` tool (`.ci/run` installs it, and `script`).
@Suite struct NamesAndKeyTrapsTests {
    typealias Fixture = EncryptionCLITests.Fixture

    @discardableResult
    static func sh(_ script: String, in dir: TemporaryDirectory, environment: [String: String] = [:], expectingSuccess: Bool = true,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> CLI.Result {
        try CLI.shell(script, environment: environment, in: dir.path, expectingSuccess: expectingSuccess, sourceLocation: sourceLocation)
    }

    static func entries(_ dir: TemporaryDirectory) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
    }

    @Test(".age without a key, or a key without .age, is a usage error before any work; nothing is written")
    func namesTellTheTruth() throws {
        let f = try Fixture()
        f.dir.write("pass.txt", "a passphrase\n")
        try Self.sh("chmod 600 pass.txt", in: f.dir)
        let before = try Self.entries(f.dir)
        // The store named is missing: had any work been done first, it would fail otherwise.
        let cases: [(String, [String: String], [String])] = [
            ("-o x.json.gz.age", [:], ["ends in .age", "no --recipient, --recipients-file or --passphrase"]),
            ("-o x.json.gz.AGE", [:], ["ends in .age"]),
            ("-o x.json.gz.age", ["PULSE_ARCHIVE_PASSPHRASE": "set for reading"], ["PULSE_ARCHIVE_PASSPHRASE is set", "only when --passphrase is given"]),
            ("-o x.json.gz -r \(f.publicKey)", [:], ["does not end in .age", "name it x.json.gz.age"]),
            ("-o x.json.gz --passphrase-file pass.txt", [:], ["does not end in .age"]),
            ("-o x.json.gz --passphrase", ["PULSE_ARCHIVE_PASSPHRASE": "p"], ["does not end in .age"]),
        ]
        for (arguments, environment, messages) in cases {
            let result = try Self.sh("\"$PA\" export --store missing-store \(arguments) </dev/null", in: f.dir,
                                     environment: environment, expectingSuccess: false)
            #expect(result.exitCode == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("Usage: pulse-archive export"), "\(arguments)")
            for message in messages { #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)") }
            #expect(try Self.entries(f.dir) == before, "\(arguments)")
        }
        // Names that tell the truth are written; the default names follow the same rule.
        try Self.sh("\"$PA\" export --store store -o y.json.gz.age -r \(f.publicKey) && \"$PA\" export --store store -o y.json.gz", in: f.dir)
        try FileManager.default.createDirectory(atPath: f.dir.file("out"), withIntermediateDirectories: false)
        let plain = try Self.sh("\"$PA\" export --store store -o out", in: f.dir).stdout
        let sealed = try Self.sh("\"$PA\" export --store store -o out --passphrase", in: f.dir, environment: ["PULSE_ARCHIVE_PASSPHRASE": "p"]).stdout
        #expect(plain.hasSuffix(".json.gz\n") && sealed.hasSuffix(".json.gz.age\n"), "\(plain) \(sealed)")
        // The variable set, a plain export is written, with a word that it is not encrypted.
        let unsealed = try Self.sh("\"$PA\" export --store store -o z.json.gz", in: f.dir, environment: ["PULSE_ARCHIVE_PASSPHRASE": "p"])
        #expect(unsealed.stderr.contains("PULSE_ARCHIVE_PASSPHRASE is set") && unsealed.stderr.contains("this archive is not encrypted"), "\(unsealed.stderr)")
        #expect(!plain.contains("not encrypted"))
        // An existing -o is refused before the passphrase is asked for (here: no terminal to ask on).
        let existing = try Self.sh("\"$PA\" export --store store -o y.json.gz.age --passphrase </dev/null", in: f.dir, expectingSuccess: false)
        #expect(existing.exitCode == 1 && existing.stderr.contains("y.json.gz.age already exists") && !existing.stderr.contains("passphrase is needed"), "\(existing.stderr)")
    }

    @Test("an identity file given as --passphrase-file is refused, pointing to --identity and --recipient")
    func identityFileAsPassphraseFile() throws {
        let f = try Fixture()
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age -r \(f.publicKey) && age-keygen -o theirs.txt 2>/dev/null"
                    + " && printf '\\357\\273\\277' > bom-key.txt && grep AGE-SECRET-KEY theirs.txt >> bom-key.txt && chmod 600 bom-key.txt", in: f.dir)
        let before = try Self.entries(f.dir)
        // bom-key.txt: the bare secret-key line after a byte order mark, as an editor saves it.
        for (command, file) in [("export --store store -o p.json.gz.age", "key.txt"), ("inspect enc.json.gz.age", "key.txt"),
                                ("export --store store -o p.json.gz.age", "theirs.txt"), ("prune . --keep-last 1", "theirs.txt"),
                                ("export --store store -o p.json.gz.age", "bom-key.txt")] {
            let result = try Self.sh("\"$PA\" \(command) --passphrase-file \(file) </dev/null", in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 1, "\(command) \(file): \(result.stderr)")
            #expect(result.stderr.contains("\(file) is an age identity file"), "\(result.stderr)")
            #expect(result.stderr.contains("--identity \(file)") && result.stderr.contains("--recipient"), "\(result.stderr)")
            #expect(try Self.entries(f.dir) == before)
        }
    }

    @Test("a UTF-8 byte order mark before a passphrase is not part of it: age, typing the passphrase, opens the file")
    func byteOrderMarkInAPassphraseFile() throws {
        let f = try Fixture()
        f.dir.write("bom.txt", Data([0xEF, 0xBB, 0xBF] + Array("correct horse battery\r\n".utf8)))
        f.dir.write("plain.txt", "correct horse battery\n")
        let exported = try Self.sh("chmod 600 bom.txt plain.txt; \"$PA\" export --store store -o enc.json.gz.age --passphrase-file bom.txt", in: f.dir,
                                   environment: f.environment)
        #expect(exported.stderr.contains("starts with a UTF-8 byte order mark"), "\(exported.stderr)")
        try Self.sh("printf 'correct horse battery\\n' | script -qec 'age -d -o dec.json.gz enc.json.gz.age' /dev/null >/dev/null", in: f.dir)
        #expect(EncryptionCLITests.bytes(f.dir.file("dec.json.gz")) == EncryptionCLITests.bytes(f.dir.file("plain.json.gz")))
        // Both files open it with ours too.
        try Self.sh("\"$PA\" inspect enc.json.gz.age --passphrase-file plain.txt >/dev/null && \"$PA\" inspect enc.json.gz.age --passphrase-file bom.txt >/dev/null", in: f.dir)
    }

    @Test("more recipients than a header our reader accepts holds are refused by export before any work")
    func tooManyRecipients() throws {
        let f = try Fixture()
        var lines: [String] = []
        for _ in 0...AgeFormat.maximumX25519Recipients { lines.append(try AgeX25519Identity.generate().recipient.bech32) }
        #expect(lines.count == 10_699)
        f.dir.write("many.txt", lines.joined(separator: "\n") + "\n")
        let before = try Self.entries(f.dir)
        let refused = try Self.sh("\"$PA\" export --store store -o many.json.gz.age -R many.txt", in: f.dir, expectingSuccess: false)
        #expect(refused.exitCode == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("10699 recipients") && refused.stderr.contains("at most 10698 recipients"), "\(refused.stderr)")
        #expect(try Self.entries(f.dir) == before)
        // One fewer is the most a file can have: written, and read back by us with the last key.
        f.dir.write("most.txt", lines.dropLast(2).joined(separator: "\n") + "\n\(f.publicKey)\n")
        try Self.sh("\"$PA\" export --store store -o most.json.gz.age -R most.txt && \"$PA\" inspect most.json.gz.age -i key.txt >/dev/null", in: f.dir)
    }

    @Test("an age file whose line ends were converted to CR LF says so")
    func crlfMangledFile() throws {
        let f = try Fixture()
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age -r \(f.publicKey)", in: f.dir)
        var mangled: [UInt8] = []
        for byte in EncryptionCLITests.bytes(f.dir.file("enc.json.gz.age")) {
            if byte == 0x0A { mangled.append(0x0D) }
            mangled.append(byte)
        }
        f.dir.write("mangled.json.gz.age", Data(mangled))
        for command in ["inspect mangled.json.gz.age -i key.txt", "inspect mangled.json.gz.age", "verify mangled.json.gz.age -i key.txt"] {
            let result = try Self.sh("\"$PA\" \(command) </dev/null", in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 1, "\(command)")
            #expect(result.stderr.contains("line ends were converted to CR LF") || result.stdout.contains("line ends were converted to CR LF"), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("version ?"), "\(command)")
        }
    }

    @Test("an identity file in lower case is refused, as the age tool refuses it")
    func lowerCaseIdentity() throws {
        let f = try Fixture()
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age -r \(f.publicKey) && tr 'A-Z' 'a-z' < key.txt > lower.txt && chmod 600 lower.txt", in: f.dir)
        let theirs = try Self.sh("age -d -i lower.txt -o /dev/null enc.json.gz.age", in: f.dir, expectingSuccess: false)
        #expect(theirs.exitCode != 0, "age accepted a lower-case identity: \(theirs.stderr)")
        let ours = try Self.sh("\"$PA\" inspect enc.json.gz.age -i lower.txt", in: f.dir, expectingSuccess: false)
        #expect(ours.exitCode == 1)
        #expect(ours.stderr.contains("lower.txt, line 3") && ours.stderr.contains("upper case"), "\(ours.stderr)")
        let secret = String(decoding: EncryptionCLITests.bytes(f.dir.file("lower.txt")), as: UTF8.self).split(separator: "\n").last ?? ""
        #expect(!ours.stderr.contains(String(secret.dropFirst(16).prefix(12))))
        // The upper-case file opens it, with both tools.
        try Self.sh("age -d -i key.txt -o /dev/null enc.json.gz.age && \"$PA\" inspect enc.json.gz.age -i key.txt >/dev/null", in: f.dir)
    }

    @Test("an upper-case recipient (AGE1…) is refused before any work, as the real age refuses it; the lower-case one works with both")
    func upperCaseRecipient() throws {
        let f = try Fixture()
        let upper = f.publicKey.uppercased()
        let theirs = try Self.sh("echo x | age -r \(upper) -o /dev/null", in: f.dir, expectingSuccess: false)
        #expect(theirs.exitCode != 0, "age accepted an upper-case recipient: \(theirs.stderr)")
        let ours = try Self.sh("\"$PA\" export --store store -o upper.json.gz.age -r \(upper)", in: f.dir, expectingSuccess: false)
        #expect(ours.exitCode != 0 && ours.stderr.contains("upper-case"), "\(ours.exitCode) \(ours.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.dir.file("upper.json.gz.age")))
        try Self.sh("echo \(upper) > recipients.txt", in: f.dir)
        let file = try Self.sh("\"$PA\" export --store store -o upper2.json.gz.age --recipients-file recipients.txt", in: f.dir, expectingSuccess: false)
        #expect(file.exitCode != 0 && file.stderr.contains("upper-case"), "\(file.exitCode) \(file.stderr)")
        try Self.sh("echo x | age -r \(f.publicKey) -o /dev/null && \"$PA\" export --store store -o lower.json.gz.age -r \(f.publicKey)", in: f.dir)
    }
}
