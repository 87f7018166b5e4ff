// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PulseArchive",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pulse-archive", targets: ["pulse-archive"]),
        .library(name: "PulseArchive", targets: ["PulseArchive"]),
        .library(name: "PulseStore", targets: ["PulseStore"]),
        .library(name: "PulseVerify", targets: ["PulseVerify"]),
        .library(name: "Readiness", targets: ["Readiness"]),
        // The libFuzzer targets: scripts/fuzz.sh builds them with the fuzzer and address
        // sanitizers and -DPULSE_FUZZ into .build/fuzz; a plain build makes stubs (docs/testing.md).
        .executable(name: "fuzz-archive-reader", targets: ["fuzz-archive-reader"]),
        .executable(name: "fuzz-document-decoder", targets: ["fuzz-document-decoder"]),
        .executable(name: "fuzz-ulid-parser", targets: ["fuzz-ulid-parser"]),
        .executable(name: "fuzz-readiness", targets: ["fuzz-readiness"]),
        .executable(name: "fuzz-closure-pipeline", targets: ["fuzz-closure-pipeline"]),
        .executable(name: "fuzz-age-decryptor", targets: ["fuzz-age-decryptor"]),
        .executable(name: "fuzz-gadgetbridge-reader", targets: ["fuzz-gadgetbridge-reader"]),
    ],
    targets: [
        // C libraries at the edge: module maps only.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // OpenSSL 3's libcrypto: the primitives of the age format (X25519, ChaCha20-Poly1305,
        // HKDF, HMAC, scrypt, SHA-256, the CSPRNG). Nothing of the format itself.
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        // libzip: reads Gadgetbridge's backup ZIP (PulseGadgetbridge's ZipArchive owns its handles).
        .systemLibrary(
            name: "CZip",
            pkgConfig: "libzip",
            providers: [.apt(["libzip-dev"]), .brew(["libzip"])]
        ),
        // Message digests through libcrypto (SHA-1 for name-based UUIDs and fingerprints, SHA-256):
        // general hashing, apart from the age format.
        .target(name: "PulseDigest", dependencies: ["CCrypto"]),
        // The system layer: byte streams, private files and directories, signals and cleanup,
        // worker threads and bounded queues. Knows nothing of archives.
        // System calls the Glibc and Darwin modules do not declare (renameat2, prctl, O_TMPFILE).
        .systemLibrary(name: "CSystemCalls"),
        .target(name: "PulseSystem", dependencies: ["CSystemCalls"]),
        // The age file format (age-encryption.org/v1) over libcrypto: encrypting and decrypting
        // byte streams, keys, identity and recipients files. Knows nothing of archives.
        .target(name: "PulseAge", dependencies: ["CCrypto", "PulseDigest", "PulseSystem"]),
        // The codec: tables, JSON dialect, gzip, streaming reader and writer. No store.
        .target(name: "PulseArchive", dependencies: ["CZlib", "PulseSystem", "PulseAge", "PulseDigest"]),
        // The SQLite wrapper: connections, statements, errors, and the rule that one thread
        // owns a connection at a time. Knows nothing of archives.
        .target(name: "PulseSQLite", dependencies: ["CSQLite", "PulseSystem"]),
        // The workout document store: typed documents, canonical encoding, ULIDs, merge.
        .target(name: "PulseDocuments", dependencies: ["PulseArchive", "PulseSystem"]),
        // Pure readiness and sleep-score maths: no module at all (no codec, SQLite, store or chart).
        .target(name: "Readiness"),
        // The readiness trend chart (SVG) that `readiness --svg` writes.
        .target(name: "ReadinessChart", dependencies: ["Readiness"]),
        // The SQLite store: schema, frozen migrations, staging, import and export, readiness backfill.
        .target(name: "PulseStore", dependencies: ["PulseSystem", "PulseArchive", "PulseDocuments", "PulseSQLite", "Readiness"]),
        // verify: the archive checked as CI needs it, the round trip through a temporary store,
        // the comparison with a store, and `diff` (built on the same sorted key runs).
        .target(name: "PulseVerify", dependencies: ["PulseSystem", "PulseArchive", "PulseDigest", "PulseDocuments", "Readiness", "PulseSQLite", "PulseStore"]),
        // Deterministic synthetic ring data for `demo` and the sample archives.
        .target(name: "PulseDemo", dependencies: ["PulseArchive", "PulseDocuments", "PulseStore"]),
        // A directory of backups: the names of the scheme, the retention policy of `prune`,
        // the check of the newest archive, the removal of exact entries. No store.
        .target(name: "PulseBackups", dependencies: ["PulseSystem", "PulseArchive", "PulseAge"]),
        // A Gadgetbridge history (its SQLite database, or the backup ZIP holding it) read and
        // mapped onto the archive's rows (docs/gadgetbridge.md). No store.
        .target(name: "PulseGadgetbridge", dependencies: ["CZip", "PulseSystem", "PulseArchive", "PulseSQLite"]),
        // `tables`: an archive's or a store's content as a folder of CSV or NDJSON files. No store.
        .target(name: "PulseTables", dependencies: ["PulseArchive", "PulseDigest", "PulseSystem"]),
        // Argument parsing, commands, progress and reports.
        .target(name: "PulseArchiveCLI", dependencies: ["PulseSystem", "PulseArchive", "PulseStore", "PulseVerify", "ReadinessChart", "PulseDemo", "PulseBackups", "PulseAge", "PulseTables",
                                                        "PulseGadgetbridge"]),
        .executableTarget(name: "pulse-archive", dependencies: ["PulseArchiveCLI"]),
        // Writes the golden files in Archives/ once; refuses to overwrite them.
        .executableTarget(name: "make-sample-archives", dependencies: ["PulseArchive", "PulseStore", "PulseDemo"]),
        // The benchmark's floor: reads an archive through the codec and keeps nothing.
        .executableTarget(name: "read-floor", dependencies: ["PulseArchive"]),
        // The fuzz targets (Tests/Fuzz/<name>/): the fuzz entry point over the package's own modules.
        .executableTarget(name: "fuzz-archive-reader", dependencies: ["PulseSystem", "PulseArchive"], path: "Tests/Fuzz/archive-reader"),
        .executableTarget(name: "fuzz-document-decoder", dependencies: ["PulseSystem", "PulseArchive", "PulseDocuments"], path: "Tests/Fuzz/document-decoder"),
        .executableTarget(name: "fuzz-ulid-parser", dependencies: ["PulseArchive"], path: "Tests/Fuzz/ulid-parser"),
        .executableTarget(name: "fuzz-readiness", dependencies: ["Readiness", "ReadinessChart"], path: "Tests/Fuzz/readiness"),
        .executableTarget(name: "fuzz-closure-pipeline", dependencies: ["PulseSystem", "PulseArchive", "PulseDocuments", "Readiness", "PulseStore", "PulseVerify"], path: "Tests/Fuzz/closure-pipeline"),
        .executableTarget(name: "fuzz-age-decryptor", dependencies: ["PulseSystem", "PulseAge"], path: "Tests/Fuzz/age-decryptor"),
        .executableTarget(name: "fuzz-gadgetbridge-reader", dependencies: ["PulseSystem", "PulseArchive", "PulseGadgetbridge"], path: "Tests/Fuzz/gadgetbridge-reader"),
        // Tests (docs/testing.md). Unit tests: one target per module, linking that module, its
        // dependencies and the support below. Support: regular targets under Tests/, which the test
        // targets import with @testable (their declarations stay internal).
        .target(name: "PulseTestSupport", dependencies: ["PulseSystem", "PulseArchive", "PulseDocuments"], path: "Tests/PulseTestSupport"),
        .target(name: "PulseStoreTestSupport", dependencies: ["PulseTestSupport", "PulseSystem", "PulseArchive", "PulseSQLite", "PulseStore", "PulseDemo"],
                path: "Tests/PulseStoreTestSupport"),
        .target(name: "GadgetbridgeTestSupport", dependencies: ["CZip", "PulseSQLite"], path: "Tests/GadgetbridgeTestSupport"),
        .testTarget(name: "ReadinessTests", dependencies: ["Readiness"]),
        .testTarget(name: "PulseAgeTests", dependencies: ["PulseAge", "PulseDigest", "PulseSystem", "CZlib", "PulseTestSupport"]),
        .testTarget(name: "PulseArchiveTests", dependencies: ["PulseArchive", "PulseSystem", "PulseTestSupport"]),
        .testTarget(name: "PulseDocumentsTests", dependencies: ["PulseDocuments", "PulseArchive", "PulseDemo", "PulseTestSupport"]),
        .testTarget(name: "PulseSQLiteTests", dependencies: ["PulseSQLite", "PulseSystem", "PulseTestSupport"]),
        .testTarget(name: "PulseStoreTests", dependencies: ["PulseStore", "PulseArchive", "PulseSQLite", "PulseSystem", "Readiness", "PulseTestSupport", "PulseStoreTestSupport"]),
        .testTarget(name: "PulseTablesTests", dependencies: ["PulseTables", "PulseArchive", "PulseSystem"]),
        .testTarget(name: "PulseGadgetbridgeTests", dependencies: ["PulseGadgetbridge", "PulseArchive", "PulseSQLite", "PulseSystem", "GadgetbridgeTestSupport", "PulseTestSupport"]),
        .testTarget(name: "PulseVerifyTests", dependencies: ["PulseVerify", "PulseStore", "PulseSQLite", "PulseArchive", "PulseTestSupport"]),
        // The binary-driven tests: they run an optimized `pulse-archive` (docs/testing.md), and
        // check the store and archives it leaves with the modules themselves.
        .testTarget(
            name: "PulseArchiveEndToEndTests",
            dependencies: ["PulseSystem", "PulseArchive", "PulseDocuments", "Readiness", "ReadinessChart", "PulseStore", "PulseVerify",
                           "PulseDemo", "PulseBackups", "PulseArchiveCLI", "PulseAge", "PulseDigest", "PulseSQLite", "PulseTables", "PulseTestSupport", "PulseStoreTestSupport",
                           "PulseGadgetbridge", "GadgetbridgeTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
