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
        // The system layer: byte streams, private files and directories, signals and cleanup,
        // worker threads and bounded queues. Knows nothing of archives.
        .target(name: "PulseSystem"),
        // The age file format (age-encryption.org/v1) over libcrypto: encrypting and decrypting
        // byte streams, keys, identity and recipients files. Knows nothing of archives.
        .target(name: "PulseAge", dependencies: ["CCrypto", "PulseSystem"]),
        // The codec: tables, JSON dialect, gzip, streaming reader and writer. No store.
        .target(name: "PulseArchive", dependencies: ["CZlib", "PulseSystem", "PulseAge"]),
        // The SQLite wrapper: connections, statements, errors, and the rule that one thread
        // owns a connection at a time. Knows nothing of archives.
        .target(name: "PulseSQLite", dependencies: ["CSQLite", "PulseSystem"]),
        // The workout document store: typed documents, canonical encoding, ULIDs, merge.
        .target(name: "PulseDocuments", dependencies: ["PulseArchive", "PulseSystem"]),
        // Pure readiness and sleep-score maths: no SQLite, no store, no chart.
        .target(name: "Readiness", dependencies: ["PulseArchive"]),
        // The readiness trend chart (SVG) that `readiness --svg` writes.
        .target(name: "ReadinessChart", dependencies: ["Readiness"]),
        // The SQLite store: schema, frozen migrations, staging, import and export, readiness backfill.
        .target(name: "PulseStore", dependencies: ["PulseSystem", "PulseArchive", "PulseDocuments", "PulseSQLite", "Readiness"]),
        // verify: the archive checked as CI needs it, the round trip through a temporary store,
        // the comparison with a store, and `diff` (built on the same sorted key runs).
        .target(name: "PulseVerify", dependencies: ["PulseSystem", "PulseArchive", "PulseDocuments", "Readiness", "PulseSQLite", "PulseStore"]),
        // Deterministic synthetic ring data for `demo` and the sample archives.
        .target(name: "PulseDemo", dependencies: ["PulseArchive", "PulseDocuments", "PulseStore"]),
        // A directory of backups: the names of the scheme, the retention policy of `prune`,
        // the check of the newest archive, the removal of exact entries. No store.
        .target(name: "PulseBackups", dependencies: ["PulseSystem", "PulseArchive", "PulseAge"]),
        // Argument parsing, commands, progress and reports.
        .target(name: "PulseArchiveCLI", dependencies: ["PulseSystem", "PulseArchive", "PulseStore", "PulseVerify", "ReadinessChart", "PulseDemo", "PulseBackups", "PulseAge"]),
        .executableTarget(name: "pulse-archive", dependencies: ["PulseArchiveCLI"]),
        // Writes the golden files in Archives/ once; refuses to overwrite them.
        .executableTarget(name: "make-sample-archives", dependencies: ["PulseArchive", "PulseStore", "PulseDemo"]),
        // The benchmark's floor: reads an archive through the codec and keeps nothing.
        .executableTarget(name: "read-floor", dependencies: ["PulseArchive"]),
        .testTarget(
            name: "PulseArchiveTests",
            dependencies: ["PulseSystem", "PulseArchive", "PulseDocuments", "Readiness", "ReadinessChart", "PulseStore", "PulseVerify", "PulseDemo", "PulseBackups", "PulseArchiveCLI", "pulse-archive", "PulseAge", "PulseSQLite", "CZlib"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
