/// The rule that keeps attachment files inside their folder (archive-format.md §6).
public enum AttachmentName {
    /// - Throws: `ArchiveError.unsafeAttachmentName` for an empty name, one containing `/`,
    ///   `\`, `..` or NUL, or one starting with `.`.
    ///   Checked on the UTF-8 bytes, as the file system sees the name: `.` followed by a
    ///   combining mark still starts a hidden file, and a long run of marks costs linear time.
    ///   A name longer than `ArchiveLimits.maxNameBytes` is refused as a limit.
    public static func validate(_ name: String) throws {
        try ArchiveLimits.checkName(name, "attachment name", table: "attachments")
        let bytes = Array(name.utf8)
        let unsafe = bytes.isEmpty || bytes.contains(0x2F) || bytes.contains(0x5C) || bytes.contains(0)
            || bytes.first == 0x2E || zip(bytes, bytes.dropFirst()).contains { $0 == 0x2E && $1 == 0x2E }
        if unsafe {
            throw ArchiveError(.unsafeAttachmentName, "unsafe attachment name: \(name.debugDescription)", table: "attachments")
        }
    }
}
