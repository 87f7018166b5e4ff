import PulseSystem

/// Why a Gadgetbridge file was refused (docs/gadgetbridge.md, "Refusals"). Every refusal comes
/// before the store changes.
public typealias GadgetbridgeError = KindedError<GadgetbridgeErrorKind>

public enum GadgetbridgeErrorKind: String, Sendable {
    /// A ZIP or SQLite file that cannot be read: `PRAGMA quick_check` not `ok`, an SQLite error
    /// while reading, a ZIP libzip cannot open or an entry whose CRC fails.
    case damaged
    /// A ZIP without `database/Gadgetbridge`, an SQLite database without `DEVICE` or without
    /// any COLMI data table, or without a Colmi ring among its devices.
    case notGadgetbridge
    /// A table we read lacks a column we need (a schema the specification does not know).
    case missingColumn
    /// Two `DEVICE` rows of one ring (the same MAC, case aside): its readings cannot be told apart.
    case duplicateDevice
    /// An encrypted entry, or one neither stored nor deflated.
    case unsupported
}
