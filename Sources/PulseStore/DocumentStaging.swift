/// Writes a document file into a tree being built, as an import stages the archive's documents,
/// for the modules above the store (verify's round trip restores its documents the same way).
///
/// A forwarder to `StoreDocuments.writeFile`, which is the store's own; it goes when that file
/// can be changed (phase 2 of issue 17) and its function is given package access.
package enum DocumentStaging {
    package static func writeFile(_ bytes: [UInt8], at relative: String, under root: String) throws {
        try StoreDocuments.writeFile(bytes, at: relative, under: root)
    }
}
