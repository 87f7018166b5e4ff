import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// Encrypted archives through the built binary, and both ways against the real `age` tool
/// (`.ci/run` installs it, and `script` for a pseudo-terminal to type passphrases into it).
@Suite("Encrypted archives")
struct EncryptionCLITests {
    /// A shell line with `$PA` the built binary; fails the test when it exits non-zero and
    /// `expectingSuccess`.
    @discardableResult
    static func sh(_ script: String, in dir: TemporaryDirectory, environment: [String: String] = [:], expectingSuccess: Bool = true,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> CLI.Result {
        try CLI.shell(script, environment: environment, in: dir.path, expectingSuccess: expectingSuccess, sourceLocation: sourceLocation)
    }

    static func bytes(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

    /// A store, a key made by our keygen, and a plain export at a fixed time.
    struct Fixture {
        let dir = TemporaryDirectory()
        let publicKey: String

        init(days: Int = 6) throws {
            try StoreFixtures.demoStore(dir.file("store"), days: days)
            publicKey = try sh("\"$PA\" keygen -o key.txt", in: dir).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try sh("\"$PA\" export --store store -o plain.json.gz", in: dir, environment: ["SOURCE_DATE_EPOCH": "1773600000"])
        }

        var environment: [String: String] { ["SOURCE_DATE_EPOCH": "1773600000"] }
    }

    @Test("keygen writes age's identity-file format, 0600, never over a file; -y and age-keygen -y agree")
    func keygen() throws {
        let f = try Fixture()
        let text = String(decoding: Self.bytes(f.dir.file("key.txt")), as: UTF8.self)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("# created: 20"))
        #expect(lines[1] == "# public key: \(f.publicKey)")
        #expect(lines[2].hasPrefix("AGE-SECRET-KEY-1"))
        #expect(f.publicKey.hasPrefix("age1"))
        #expect(StoreFixtures.mode(f.dir.file("key.txt")) == 0o600)
        #expect(try Self.sh("age-keygen -y key.txt", in: f.dir).stdout == f.publicKey + "\n")
        #expect(try Self.sh("\"$PA\" keygen -y key.txt", in: f.dir).stdout == f.publicKey + "\n")
        let again = try Self.sh("\"$PA\" keygen -o key.txt", in: f.dir, expectingSuccess: false)
        #expect(again.exitCode == 1)
        #expect(again.stderr.contains("already exists"))
        #expect(String(decoding: Self.bytes(f.dir.file("key.txt")), as: UTF8.self) == text)
        // A folder is no identity file's name (`keys/` was written as `keys/keys`), nor a
        // chart's: usage errors, and nothing made.
        try FileManager.default.createDirectory(atPath: f.dir.file("keys"), withIntermediateDirectories: false)
        for arguments in [["keygen", "-o", "keys/"], ["keygen", "-o", "keys"], ["readiness", "--store", "store", "--svg", "keys/"]] {
            let refused = try CLI.run(arguments, in: f.dir.path)
            #expect(refused.exitCode == 64 && refused.stderr.contains("names a folder"), "\(arguments): \(refused.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.dir.file("keys")).isEmpty)
        let toStdout = try Self.sh("\"$PA\" keygen", in: f.dir)
        #expect(toStdout.stdout.contains("AGE-SECRET-KEY-1"))
        #expect(toStdout.stderr.hasPrefix("Public key: age1"))
        // An age-keygen key works with ours.
        try Self.sh("age-keygen -o theirs.txt 2>/dev/null && \"$PA\" keygen -y theirs.txt | grep -q '^age1'", in: f.dir)
    }

    @Test("'-' as a key file is standard input, as with age -i - (it was 'cannot open -'); with the archive on standard input too, refused")
    func keyFileFromStandardInput() throws {
        let f = try Fixture(days: 2)
        try Self.sh("\"$PA\" export --store store -o x.age -r \(f.publicKey)", in: f.dir)
        let read = try Self.sh("\"$PA\" inspect x.age -i - < key.txt", in: f.dir, expectingSuccess: false)
        #expect(read.exitCode == 0, "\(read.stderr)")
        let recipients = try Self.sh("echo \(f.publicKey) | \"$PA\" export --store store -o y.age -R - && \"$PA\" inspect y.age -i key.txt", in: f.dir, expectingSuccess: false)
        #expect(recipients.exitCode == 0, "\(recipients.stderr)")
        let both = try Self.sh("\"$PA\" inspect - -i - < x.age", in: f.dir, expectingSuccess: false)
        #expect(both.exitCode == 64 && both.stderr.contains("is standard input, which is the archive"), "\(both.stderr)")
    }

    @Test("a header with an scrypt stanza beside an X25519 one is damaged whatever keys are given (it was 'nothing in it can be read without the passphrase' with an identity)")
    func scryptBesideAnotherStanza() throws {
        let f = try Fixture(days: 2)
        try Self.sh("age -r \(f.publicKey) -o x.age plain.json.gz", in: f.dir)
        var bytes = Self.bytes(f.dir.file("x.age"))
        let header = Array("age-encryption.org/v1\n".utf8)
        try #require(Array(bytes.prefix(header.count)) == header)
        // An scrypt stanza (salt, work factor 10, a body) inserted before the X25519 one.
        bytes.insert(contentsOf: Array("-> scrypt AAAAAAAAAAAAAAAAAAAAAA 10\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n".utf8), at: header.count)
        f.dir.write("mix.age", Data(bytes))
        for keys in [["-i", "key.txt"], []] {
            let result = try Self.sh("\"$PA\" inspect mix.age " + keys.joined(separator: " "), in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 1 && result.stderr.contains("an scrypt (passphrase) stanza must be the only stanza, and there are 2"), "\(keys): \(result.stderr)")
        }
    }

    @Test("our X25519 export decrypts with age -d to exactly the plain export's gzip stream, which gunzip and inspect read")
    func ourRecipientExportOpensWithAge() throws {
        let f = try Fixture()
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age --recipient \(f.publicKey)", in: f.dir, environment: f.environment)
        #expect(Self.bytes(f.dir.file("enc.json.gz.age")).starts(with: Array("age-encryption.org/v1\n-> X25519 ".utf8)))
        #expect(StoreFixtures.mode(f.dir.file("enc.json.gz.age")) == 0o600)
        try Self.sh("age -d -i key.txt -o dec.json.gz enc.json.gz.age", in: f.dir)
        #expect(Self.bytes(f.dir.file("dec.json.gz")) == Self.bytes(f.dir.file("plain.json.gz")))
        try Self.sh("gunzip -t dec.json.gz && \"$PA\" inspect dec.json.gz >/dev/null", in: f.dir)
        // And ours reads it, from the file and from a pipe.
        let inspected = try Self.sh("\"$PA\" inspect enc.json.gz.age -i key.txt --json", in: f.dir)
        #expect(inspected.json["encrypted"] as? Bool == true)
        try Self.sh("age -d -i key.txt enc.json.gz.age | \"$PA\" import - --store fromPipe --no-backfill -q >/dev/null", in: f.dir)
        try Self.sh("cat enc.json.gz.age | \"$PA\" import - -i key.txt --store fromEncryptedPipe --no-backfill -q >/dev/null", in: f.dir)
        let original = try StoreSnapshot(store: f.dir.file("store"))
        #expect(try StoreSnapshot(store: f.dir.file("fromPipe")).sameContent(as: original))
        #expect(try StoreSnapshot(store: f.dir.file("fromEncryptedPipe")).sameContent(as: original))
    }

    @Test("our passphrase export decrypts with age -d (typed on a pseudo-terminal) to the plain export's bytes")
    func ourPassphraseExportOpensWithAge() throws {
        let f = try Fixture()
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age --passphrase", in: f.dir,
                    environment: f.environment.merging(["PULSE_ARCHIVE_PASSPHRASE": "correct horse battery"]) { $1 })
        #expect(Self.bytes(f.dir.file("enc.json.gz.age")).starts(with: Array("age-encryption.org/v1\n-> scrypt ".utf8)))
        // The work factor we write: 18.
        #expect(String(decoding: Self.bytes(f.dir.file("enc.json.gz.age")).prefix(80), as: UTF8.self).split(separator: "\n")[1].hasSuffix(" 18"))
        try Self.sh("printf 'correct horse battery\\n' | script -qec 'age -d -o dec.json.gz enc.json.gz.age' /dev/null >/dev/null", in: f.dir)
        #expect(Self.bytes(f.dir.file("dec.json.gz")) == Self.bytes(f.dir.file("plain.json.gz")))
        // --passphrase-file: its first line, without the line ending.
        f.dir.write("pass.txt", "correct horse battery\r\nsecond line\n")
        try Self.sh("chmod 600 pass.txt && \"$PA\" export --store store -o enc2.json.gz.age --passphrase-file pass.txt", in: f.dir, environment: f.environment)
        try Self.sh("printf 'correct horse battery\\n' | script -qec 'age -d -o dec2.json.gz enc2.json.gz.age' /dev/null >/dev/null", in: f.dir)
        #expect(Self.bytes(f.dir.file("dec2.json.gz")) == Self.bytes(f.dir.file("plain.json.gz")))
    }

    @Test("archives encrypted by age -e -r, -R, -a and -p import with ours")
    func ageEncryptedArchivesImport() throws {
        let f = try Fixture()
        f.dir.write("recipients.txt", "# mine\n\(f.publicKey)\n")
        try Self.sh("age -e -r \(f.publicKey) -o r.age plain.json.gz && age -e -R recipients.txt -o R.age plain.json.gz && age -e -a -r \(f.publicKey) -o a.age plain.json.gz", in: f.dir)
        try Self.sh("printf 'from the age tool\\nfrom the age tool\\n' | script -qec 'age -p -o p.age plain.json.gz' /dev/null >/dev/null", in: f.dir)
        f.dir.write("pass.txt", "from the age tool\n")
        let original = try StoreSnapshot(store: f.dir.file("store"))
        for (file, key) in [("r.age", "-i key.txt"), ("R.age", "-i key.txt"), ("a.age", "-i key.txt"), ("p.age", "--passphrase-file pass.txt")] {
            try Self.sh("chmod 600 pass.txt; \"$PA\" import \(file) \(key) --store s-\(file) --no-backfill -q >/dev/null", in: f.dir)
            #expect(try StoreSnapshot(store: f.dir.file("s-\(file)")).sameContent(as: original), "\(file)")
        }
    }

    @Test("a key file works with age and with ours, or with neither: a space or tab around a key or a line of only those is refused by both; CRLF and # comments work with both")
    func keyFilesAsAgeReadsThem() throws {
        let f = try Fixture()
        let secret = try #require(String(decoding: Self.bytes(f.dir.file("key.txt")), as: UTF8.self).split(separator: "\n").last.map(String.init))
        try Self.sh("age -e -r \(f.publicKey) -o a.age plain.json.gz", in: f.dir)
        let identities = [("trailing", "\(secret)  \n", false), ("leading", " \(secret)\n", false), ("tab", "\(secret)\t\n", false),
                          ("blank", "\(secret)\n \n", false), ("indented comment", " # mine\n\(secret)\n", false),
                          ("crlf", "# mine\r\n\(secret)\r\n\r\n", true), ("comments", "# a\n\n#b\n\(secret)\n", true),
                          ("text after the key", "\(secret) # mine\n", false),
                          // age reads lines of up to 65 535 bytes, comments too.
                          ("longest line", "# " + String(repeating: "a", count: 65_533) + "\n\(secret)\n", true),
                          ("a line too long", "# " + String(repeating: "a", count: 65_534) + "\n\(secret)\n", false)]
        for (name, text, works) in identities {
            f.dir.write("i.txt", text)
            try Self.sh("chmod 600 i.txt", in: f.dir)
            let age = try Self.sh("age -d -i i.txt a.age > /dev/null", in: f.dir, expectingSuccess: false)
            let ours = try Self.sh("\"$PA\" inspect a.age -i i.txt", in: f.dir, expectingSuccess: false)
            #expect((age.exitCode == 0) == works && (ours.exitCode == 0) == works, "\(name): age \(age.exitCode), ours \(ours.exitCode) \(ours.stderr)")
            if !works { #expect(!ours.stderr.contains(String(secret.dropFirst(20).prefix(16))), "\(name): the secret was shown") }
        }
        for (name, text, works) in [("trailing", "\(f.publicKey) \n", false), ("blank", "\(f.publicKey)\n\t\n", false), ("crlf", "#x\r\n\(f.publicKey)\r\n", true),
                                    ("a line too long", "# " + String(repeating: "a", count: 70_000) + "\n\(f.publicKey)\n", false)] {
            f.dir.write("r.txt", text)
            let age = try Self.sh("age -e -R r.txt -o /dev/null plain.json.gz", in: f.dir, expectingSuccess: false)
            let ours = try Self.sh("\"$PA\" export --store store -R r.txt -o r-\(name.prefix(4)).json.gz.age", in: f.dir, expectingSuccess: false)
            #expect((age.exitCode == 0) == works && (ours.exitCode == 0) == works, "\(name): age \(age.exitCode), ours \(ours.exitCode) \(ours.stderr)")
        }
    }

    @Test("without a key: inspect shows the header and says a key is needed, verify cannot vouch; both exit 1")
    func withoutAKey() throws {
        let f = try Fixture()
        try Self.sh("age -e -r \(f.publicKey) -r \(f.publicKey) -o two.json.gz.age plain.json.gz", in: f.dir)
        let inspected = try Self.sh("\"$PA\" inspect two.json.gz.age </dev/null", in: f.dir, expectingSuccess: false)
        #expect(inspected.exitCode == 1)
        #expect(inspected.stderr.contains("two.json.gz.age is encrypted with age (2 recipient stanzas: X25519, X25519)"), "\(inspected.stderr)")
        #expect(inspected.stderr.contains("--identity"))
        let verified = try Self.sh("\"$PA\" verify two.json.gz.age --json </dev/null", in: f.dir, expectingSuccess: false)
        #expect(verified.exitCode == 1)
        #expect(verified.json["ok"] as? Bool == false)
        #expect(verified.stdout.contains("cannot vouch for an archive it cannot read"))
    }

    @Test("no option takes a secret as its value; a passphrase never shows in a message")
    func noSecretOnTheCommandLine() throws {
        let f = try Fixture()
        let given = try Self.sh("\"$PA\" export --store store --passphrase hunter2", in: f.dir, expectingSuccess: false)
        #expect(given.exitCode == 64)
        for command in ["export", "import", "inspect", "verify", "diff", "prune"] {
            let help = try Self.sh("\"$PA\" \(command) --help", in: f.dir).stdout
            #expect(!help.contains("--passphrase <"), "\(command)")
            #expect(!help.contains("--identity <key"), "\(command)")
        }
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age --passphrase", in: f.dir, environment: ["PULSE_ARCHIVE_PASSPHRASE": "the right one"])
        let wrong = try Self.sh("\"$PA\" inspect enc.json.gz.age", in: f.dir, environment: ["PULSE_ARCHIVE_PASSPHRASE": "a wrong secret"], expectingSuccess: false)
        #expect(wrong.exitCode == 1)
        #expect(wrong.stderr.contains("enc.json.gz.age: wrong passphrase"))
        #expect(!wrong.stderr.contains("a wrong secret") && !wrong.stderr.contains("the right one"))
        let empty = try Self.sh("\"$PA\" export --store store -o e.json.gz.age --passphrase", in: f.dir, environment: ["PULSE_ARCHIVE_PASSPHRASE": ""], expectingSuccess: false)
        #expect(empty.exitCode == 1)
        #expect(empty.stderr.contains("empty passphrase is refused"))
        #expect(!FileManager.default.fileExists(atPath: f.dir.file("e.json.gz.age")))
        // A secret typed where its file's name goes is never echoed in "cannot open …".
        let secret = try #require(String(decoding: Self.bytes(f.dir.file("key.txt")), as: UTF8.self).split(separator: "\n").last.map(String.init))
        for command in ["inspect enc.json.gz.age -i \(secret)", "inspect enc.json.gz.age -i \(secret.lowercased().replacingOccurrences(of: "-", with: "_"))",
                        "keygen -y \(secret)", "export --store store -o r.json.gz.age -R \(secret)", "inspect enc.json.gz.age --passphrase-file hunter2"] {
            let result = try Self.sh("\"$PA\" \(command)", in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 1 && result.stderr.contains("not shown: it may be the secret itself"), "\(command): \(result.stderr)")
            #expect(!result.stderr.uppercased().contains(String(secret.dropFirst(20).prefix(12))) && !result.stderr.contains("hunter2"), "\(command): the secret was shown")
        }
        // Wherever a secret key is typed, and however it is spelled, no message shows it.
        let spaced = "AGE SECRET KEY 1" + secret.dropFirst("AGE-SECRET-KEY-1".count)
        let body = secret.dropFirst("AGE-SECRET-KEY-1".count)
        for command in ["inspect enc.json.gz.age -i=\(secret)", "inspect enc.json.gz.age -i\(secret)", "inspect \(secret)", "verify \(secret) --json",
                        "export --store \(secret)", "inspect enc.json.gz.age -i '\(spaced)'", "inspect enc.json.gz.age -- \(secret)",
                        // Its data alone, copied without the prefix.
                        "inspect \(body)", "export --store \(body.lowercased())", "inspect enc.json.gz.age -i=\(body)"] {
            let result = try Self.sh("\"$PA\" \(command)", in: f.dir, expectingSuccess: false)
            let shown = result.stdout + result.stderr
            #expect(result.exitCode != 0 && shown.contains("(a secret key, not shown)"), "\(command): \(shown)")
            #expect(!shown.uppercased().contains(String(secret.dropFirst(20).prefix(12))), "\(command): the secret was shown")
        }
        // A file name that cannot be a secret is still shown.
        let missing = try Self.sh("\"$PA\" inspect enc.json.gz.age -i no-such-key.txt", in: f.dir, expectingSuccess: false)
        #expect(missing.exitCode == 1 && missing.stderr.contains("no-such-key.txt"), "\(missing.stderr)")
        // keygen -o - is standard output, as export's is, never a file named "-".
        let dash = try Self.sh("\"$PA\" keygen -o - > dash.txt", in: f.dir)
        #expect(dash.stderr.hasPrefix("Public key: age1") && !FileManager.default.fileExists(atPath: f.dir.file("-"))
                && String(decoding: Self.bytes(f.dir.file("dash.txt")), as: UTF8.self).contains("AGE-SECRET-KEY-1"), "\(dash.stderr)")
        // export -o - --json with standard error closed would lose the report asked for.
        let lost = try Self.sh("\"$PA\" export --store store -o - --json 2>&- > lost.json.gz; echo $?", in: f.dir)
        #expect(lost.stdout == "64\n" && Self.bytes(f.dir.file("lost.json.gz")).isEmpty, "\(lost.stdout)")
    }

    @Test("an identity file readable by others gets a warning naming it and chmod 600; a pipe, a device or an empty file gets none")
    func sharedIdentityFileWarns() throws {
        let f = try Fixture()
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age -r \(f.publicKey) && chmod 644 key.txt", in: f.dir)
        let result = try Self.sh("\"$PA\" inspect enc.json.gz.age -i key.txt", in: f.dir)
        #expect(result.stderr.contains("warning: key.txt holds a secret and can be read by others than its owner: chmod 600 key.txt"))
        // The same key through a pipe or from a device: no file mode to advise on.
        let piped = try Self.sh("cat key.txt | \"$PA\" inspect enc.json.gz.age -i /dev/stdin", in: f.dir)
        #expect(!piped.stderr.contains("warning"), "\(piped.stderr)")
        let device = try Self.sh("\"$PA\" keygen -y /dev/null", in: f.dir, expectingSuccess: false)
        #expect(device.exitCode == 1 && device.stderr.contains("no identity in the file") && !device.stderr.contains("chmod"), "\(device.stderr)")
        let empty = try Self.sh(": > empty.txt && chmod 644 empty.txt && \"$PA\" keygen -y empty.txt", in: f.dir, expectingSuccess: false)
        #expect(empty.exitCode == 1 && empty.stderr.contains("no identity in the file") && !empty.stderr.contains("holds a secret"), "\(empty.stderr)")
        // A file of public keys holds no secret: refused as no identity file, with no warning.
        let recipients = try Self.sh("echo \(f.publicKey) > pub.txt && chmod 644 pub.txt && \"$PA\" keygen -y pub.txt", in: f.dir, expectingSuccess: false)
        #expect(recipients.exitCode == 1 && !recipients.stderr.contains("holds a secret"), "\(recipients.stderr)")
        // A secret key where a recipient goes is called one, and never shown.
        let secret = try #require(String(decoding: Self.bytes(f.dir.file("key.txt")), as: UTF8.self).split(separator: "\n").last.map(String.init))
        let misplaced = try Self.sh("\"$PA\" export --store store -o s.json.gz.age -r \(secret)", in: f.dir, expectingSuccess: false)
        #expect(misplaced.exitCode != 0 && misplaced.stderr.contains("a secret key (AGE-SECRET-KEY-1…), not a recipient"), "\(misplaced.stderr)")
        #expect(!misplaced.stderr.contains(String(secret.dropFirst(20))), "the secret was shown")
    }

    /// Each refusal of point 5: its own message naming the file, exit 1, the store untouched.
    @Test("each refusal has its own message, exit 1, and leaves the store byte-identical")
    func refusals() throws {
        let f = try Fixture(days: 40)
        let database = f.dir.file("store") + "/pulse.sqlite"
        let before = Self.bytes(database)
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age -r \(f.publicKey) && \"$PA\" keygen -o other.txt >/dev/null", in: f.dir)
        try Self.sh("\"$PA\" export --store store -o pass.json.gz.age --passphrase", in: f.dir, environment: ["PULSE_ARCHIVE_PASSPHRASE": "the right one"])
        let encrypted = Self.bytes(f.dir.file("enc.json.gz.age"))
        // The payload starts after the header's last line ("--- <mac>\n") and the 16-byte nonce.
        let macLine = try #require(encrypted.indices.first { encrypted[$0...].starts(with: Array("\n--- ".utf8)) }) + 1
        let headerEnd = try #require(encrypted[macLine...].firstIndex(of: 0x0A)) + 1
        let chunkCount = (encrypted.count - headerEnd - 16 + 65_551) / 65_552
        #expect(chunkCount >= 3, "the archive should span several chunks")
        var lastChunkFlipped = encrypted
        lastChunkFlipped[encrypted.count - 20] ^= 0x01
        var macChanged = encrypted
        let macStart = macLine + 4
        macChanged[macStart] = macChanged[macStart] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        var headerDamaged = encrypted
        headerDamaged[22] = UInt8(ascii: "?")  // in "-> X25519 …"
        // The sealed file key of the X25519 stanza (its body's first character): the right
        // identity no longer opens it, which no reader can tell from another key's stanza.
        var bodyDamaged = encrypted
        let stanzaLine = try #require(encrypted.indices.first { encrypted[$0...].starts(with: Array("\n-> X25519 ".utf8)) }) + 1
        let bodyStart = try #require(encrypted[stanzaLine...].firstIndex(of: 0x0A)) + 1
        bodyDamaged[bodyStart] = bodyDamaged[bodyStart] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        f.dir.write("body.json.gz.age", Data(bodyDamaged))
        let cut = Array(encrypted.prefix(headerEnd + 16 + 2 * 65_552))
        f.dir.write("flipped.json.gz.age", Data(lastChunkFlipped))
        f.dir.write("mac.json.gz.age", Data(macChanged))
        f.dir.write("header.json.gz.age", Data(headerDamaged))
        f.dir.write("cut.json.gz.age", Data(cut))
        f.dir.write("bad-identity.txt", "# a comment\nAGE-SECRET-KEY-1NOTAKEYATALLSECRETPART\n")
        f.dir.write("pq-identity.txt", "AGE-SECRET-KEY-PQ-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ\n")
        f.dir.write("wrong.txt", "a wrong secret\n")
        // A scrypt stanza asking for 2^23: the format's own test vector.
        let vector = String(decoding: Self.bytes(Repository.root + "/Tests/Resources/age-testkit/scrypt_work_factor_23"), as: UTF8.self)
        let ageFile = try #require(vector.range(of: "\n\n")).upperBound
        f.dir.write("wf23.json.gz.age", Data(vector[ageFile...].utf8))
        f.dir.write("right.txt", "the right one\n")
        _ = try Self.sh("chmod 600 *.txt", in: f.dir)
        let cases: [(file: String, key: String, expected: String)] = [
            ("pass.json.gz.age", "--passphrase-file wrong.txt", "pass.json.gz.age: wrong passphrase (the passphrase does not open the file; a damaged header reads the same: try it on another copy)"),
            ("enc.json.gz.age", "-i other.txt", "enc.json.gz.age: no identity matches: the file is encrypted to 1 stanza(s) of type X25519"),
            ("header.json.gz.age", "-i key.txt", "header.json.gz.age: the age header is damaged"),
            ("body.json.gz.age", "-i key.txt", "body.json.gz.age: no identity matches: the file is encrypted to 1 stanza(s) of type X25519, and none of the 1 identities given opens it (or its header was damaged, which reads the same: try the key on another copy)"),
            ("mac.json.gz.age", "-i key.txt", "mac.json.gz.age: the age header's MAC does not match"),
            ("flipped.json.gz.age", "-i key.txt", "flipped.json.gz.age: chunk \(chunkCount - 1) at offset \(headerEnd + 16 + (chunkCount - 1) * 65_552) fails its authentication tag"),
            ("cut.json.gz.age", "-i key.txt", "cut.json.gz.age: the file ends after chunk 1 without a final chunk (at offset \(headerEnd + 16 + 2 * 65_552)): it was cut short"),
            ("enc.json.gz.age", "-i bad-identity.txt", "bad-identity.txt, line 2: not an age X25519 identity"),
            ("enc.json.gz.age", "-i pq-identity.txt", "pq-identity.txt, line 1: identities of type AGE-SECRET-KEY-PQ-1"),
            ("wf23.json.gz.age", "--passphrase-file right.txt", "wf23.json.gz.age: the scrypt work factor 23 is above the limit of 22"),
        ]
        for (file, key, expected) in cases {
            let result = try Self.sh("\"$PA\" import \(file) \(key) --store store --replace", in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 1, "\(file) \(key)")
            #expect(result.stderr.contains(expected), "\(file) \(key): \(result.stderr)")
            #expect(!result.stderr.contains("NOTAKEYATALL") && !result.stderr.contains("the right one") && !result.stderr.contains("a wrong secret"))
            #expect(Self.bytes(database) == before, "\(file) \(key) changed the store")
        }
        let entries = try FileManager.default.contentsOfDirectory(atPath: f.dir.file("store"))
        #expect(!entries.contains { $0.hasPrefix(".staging") || $0 == "backups" }, "\(entries)")
    }

    @Test("data after a full final chunk is refused as such")
    func dataAfterTheFinalChunk() throws {
        let f = try Fixture()
        // A plain archive of a whole number of chunks (JSON allows the trailing whitespace), so
        // the final chunk is full and what follows it is told apart from a damaged chunk.
        var plain = Self.bytes(Repository.sampleFormat1)
        plain += [UInt8](repeating: 0x20, count: 65_536 - plain.count % 65_536)
        f.dir.write("exact.json", Data(plain))
        try Self.sh("age -e -r \(f.publicKey) -o exact.json.gz.age exact.json && printf 'appended' >> exact.json.gz.age", in: f.dir)
        let result = try Self.sh("\"$PA\" inspect exact.json.gz.age -i key.txt", in: f.dir, expectingSuccess: false)
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("exact.json.gz.age: data follows the final chunk"), "\(result.stderr)")
    }

    @Test("export -o DIR with a recipient names the file .json.gz.age; prune reads an encrypted newest archive's header without keys")
    func defaultNameAndPrune() throws {
        let f = try Fixture()
        try FileManager.default.createDirectory(atPath: f.dir.file("backups"), withIntermediateDirectories: false)
        let path = try Self.sh("\"$PA\" export --store store -o backups -r \(f.publicKey)", in: f.dir).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(path.hasSuffix(".json.gz.age"))
        #expect(URL(fileURLWithPath: path).lastPathComponent.hasPrefix("pulseloop-backup-"))
        try Self.sh("cp plain.json.gz backups/pulseloop-backup-2020-01-01-0000.json.gz", in: f.dir)
        let pruned = try Self.sh("\"$PA\" prune backups --keep-last 1 --json </dev/null", in: f.dir)
        #expect((pruned.json["removed"] as? [Any])?.count == 1)
        // A newest "archive" whose header does not parse: nothing is removed.
        try Self.sh("rm backups/*.age && cp plain.json.gz backups/pulseloop-backup-2020-01-01-0000.json.gz && printf 'age-encryption.org/v1\\n-> X25519\\n' > backups/pulseloop-backup-2021-01-01-0000.json.gz.age", in: f.dir)
        let refused = try Self.sh("\"$PA\" prune backups --keep-last 1 </dev/null", in: f.dir, expectingSuccess: false)
        #expect(refused.exitCode == 1)
        #expect(FileManager.default.fileExists(atPath: f.dir.file("backups/pulseloop-backup-2020-01-01-0000.json.gz")))
    }

    @Test("an encrypted export to a file never writes the plaintext anywhere: it needs no temporary directory at all")
    func noPlaintextOnDisk() throws {
        let f = try Fixture()
        // A temporary directory that cannot be used: an export that staged the plain archive there would fail.
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age -r \(f.publicKey)", in: f.dir, environment: ["TMPDIR": f.dir.file("missing")])
        try Self.sh("age -d -i key.txt enc.json.gz.age | gunzip -t", in: f.dir)
        // To standard output it stages the archive in a private scratch directory, removed after.
        let scratch = f.dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        try Self.sh("\"$PA\" export --store store -o - -r \(f.publicKey) > out.age", in: f.dir, environment: ["TMPDIR": scratch])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
        try Self.sh("age -d -i key.txt out.age | gunzip -t", in: f.dir)
    }

    @Test("a key option on an endless device or on standard input that is the archive is refused, bounded")
    func keyFilesAreBounded() throws {
        let f = try Fixture()
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age -r \(f.publicKey)", in: f.dir)
        for option in ["--passphrase-file /dev/zero", "-i /dev/zero", "-i /dev/urandom"] {
            let result = try Self.sh("\"$PA\" inspect enc.json.gz.age \(option)", in: f.dir, expectingSuccess: false)
            #expect(result.exitCode == 1, "\(option)")
            #expect(result.stderr.contains("is larger than 1048576 bytes: not a key file"), "\(option): \(result.stderr)")
        }
        let twice = try Self.sh("\"$PA\" inspect - -i /dev/stdin < enc.json.gz.age", in: f.dir, expectingSuccess: false)
        #expect(twice.exitCode == 64)
        #expect(twice.stderr.contains("is standard input, which is the archive"))
        // A pipe is a fine key file (process substitution, `pass show`).
        try Self.sh("cat enc.json.gz.age | \"$PA\" inspect - -i /dev/fd/3 3< key.txt >/dev/null", in: f.dir)
    }

    @Test("a file cut inside its first chunk says it may be cut short")
    func cutInsideTheFirstChunk() throws {
        let f = try Fixture()
        try Self.sh("\"$PA\" export --store store -o enc.json.gz.age -r \(f.publicKey) && head -c 2000 enc.json.gz.age > cut.json.gz.age", in: f.dir)
        let result = try Self.sh("\"$PA\" inspect cut.json.gz.age -i key.txt", in: f.dir, expectingSuccess: false)
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("chunk 0 at offset") && result.stderr.contains("cut short inside it"), "\(result.stderr)")
    }

    @Test("prune says when it could check an encrypted newest archive only by its header, and refuses one the keys given do not open, asking for its key")
    func pruneAndEncryptedNewest() throws {
        let f = try Fixture()
        try FileManager.default.createDirectory(atPath: f.dir.file("b"), withIntermediateDirectories: false)
        try Self.sh("cp plain.json.gz b/pulseloop-backup-2020-01-01-0000.json.gz && \"$PA\" export --store store -o b/pulseloop-backup-2021-01-01-0000.json.gz.age -r \(f.publicKey)", in: f.dir)
        f.dir.write("pass.txt", "some passphrase\n")
        let refused = try Self.sh("chmod 600 pass.txt; \"$PA\" prune b --keep-last 1 --passphrase-file pass.txt </dev/null", in: f.dir, expectingSuccess: false)
        #expect(refused.exitCode == 1)
        // The backup is sound; the key is not its key: the remedy is the key, not a new backup.
        #expect(refused.stderr.contains("the keys given do not open the newest archive") && refused.stderr.contains("nothing was removed")
                && refused.stderr.contains("Give --identity or the passphrase it was encrypted with") && !refused.stderr.contains("Replace it"), "\(refused.stderr)")
        try Self.sh("\"$PA\" keygen -o other.txt >/dev/null", in: f.dir)
        let otherKey = try Self.sh("\"$PA\" prune b --keep-last 1 -i other.txt", in: f.dir, expectingSuccess: false)
        #expect(otherKey.exitCode == 1 && otherKey.stderr.contains("the keys given do not open the newest archive")
                && otherKey.stderr.contains("no identity matches"), "\(otherKey.stderr)")
        #expect(FileManager.default.fileExists(atPath: f.dir.file("b/pulseloop-backup-2020-01-01-0000.json.gz")))
        let headerOnly = try Self.sh("\"$PA\" prune b --keep-last 1 --json </dev/null", in: f.dir)
        #expect(headerOnly.json["newestCheck"] as? String == "header")
        #expect(headerOnly.stderr.contains("checked only as far as its age header"), "\(headerOnly.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.dir.file("b/pulseloop-backup-2020-01-01-0000.json.gz")))
        let full = try Self.sh("\"$PA\" prune b --keep-last 1 --json -i key.txt", in: f.dir)
        #expect(full.json["newestCheck"] as? String == "full")
    }
}
