/// Where a workout document lives in a store or container tree, checked so that no archive
/// can make a restore write outside it (documents.md: layout and names).
///
/// Accepted: `Splits/<ULID>.json`, `Workouts/YYYY/MM/<ULID>.json`, and either of those under
/// `Stubs/`. Nothing else: no `..`, no absolute path, no backslash, no other folder.
public struct DocumentPath: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable { case split, workout }

    public let path: String
    public let kind: Kind
    public let isStub: Bool
    /// The document's id, from its file name, upper-case.
    public let id: String

    public var description: String { path }

    /// How reports count it: `splits`, `workouts` or `stubs`.
    public var group: String { isStub ? "stubs" : kind == .split ? "splits" : "workouts" }

    /// The path without its `Stubs/` prefix: where the live document lives (or lived).
    public var livePath: String { isStub ? String(path.dropFirst("Stubs/".count)) : path }

    /// - Throws: `ArchiveError` of kind `unsafeDocumentPath`, naming the path and the rule.
    public init(_ path: String) throws {
        func refuse(_ why: String) -> ArchiveError {
            ArchiveError(.unsafeDocumentPath, "unsafe document path \(path.debugDescription): \(why)", table: "documents")
        }
        guard !path.hasPrefix("/") else { throw refuse("absolute paths are not allowed") }
        guard !path.contains("\\"), !path.utf8.contains(0) else { throw refuse("backslashes and NUL are not allowed") }
        var components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw refuse("empty, '.' and '..' components are not allowed")
        }
        var isStub = false
        if components.first == "Stubs" {
            isStub = true
            components.removeFirst()
        }
        guard let file = components.last, file.hasSuffix(".json"),
              let id = ULID.canonical(String(file.dropLast(5)))
        else { throw refuse("the file name must be <ULID>.json") }
        switch components.first {
        case "Splits" where components.count == 2:
            kind = .split
        case "Workouts" where components.count == 4 && Self.isDigits(components[1], 4) && Self.isDigits(components[2], 2):
            kind = .workout
        default:
            throw refuse("documents live in Splits/, Workouts/YYYY/MM/ or Stubs/")
        }
        self.path = path
        self.isStub = isStub
        self.id = id
    }

    /// The path as the app's case-insensitive file system sees it: two paths with one folded
    /// form are one file there (paths are ASCII, so folding is exact and linear).
    public var caseFolded: String { path.lowercased() }

    /// The refusal of two paths that differ only in letter case.
    public func caseCollision(with other: String) -> String {
        "the document paths \"\(other)\" and \"\(path)\" differ only in letter case: the app's file system holds them as one file"
    }

    private static func isDigits(_ s: String, _ count: Int) -> Bool {
        s.utf8.count == count && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
