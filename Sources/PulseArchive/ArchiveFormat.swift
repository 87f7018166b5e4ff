/// Facts about the archive format that every reader and writer shares.
public enum ArchiveFormat {
    /// The newest `formatVersion` this tool reads and the one it writes by default.
    public static let newestVersion: Int64 = 2
    /// The oldest `formatVersion` accepted. The app lets 0 and negatives through; we do not.
    public static let oldestVersion: Int64 = 1
    /// The settings key of the readiness preferences, added with format 2.
    public static let readinessPrefsKey = "pulseloop.readiness.prefs.v1"
}

