import PulseArchive

/// Where generated data goes: a store being filled, or anything else that takes rows.
public protocol DemoSink {
    mutating func add(_ row: ArchiveRow, to table: ArchiveTable) throws
    mutating func setSetting(_ key: String, _ value: String) throws
    mutating func addAttachment(_ name: String, _ contents: [UInt8]) throws
}
