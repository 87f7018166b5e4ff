/// The shape of every module's error, as `ArchiveError` has it: a `kind` a caller can branch
/// on without parsing text, and a `message` for people, naming the file, table, row or field,
/// the value found and what to do. Each module names its own (`SystemError`, `StoreError`,
/// `DocumentsError`, `VerifyError`) over its own `Kind` enum, whose cases are doc-commented with
/// the condition that raises them; two modules' errors are different types.
public struct KindedError<Kind: RawRepresentable & Hashable & Sendable>: Error, Sendable, Equatable, CustomStringConvertible
where Kind.RawValue == String {
    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
