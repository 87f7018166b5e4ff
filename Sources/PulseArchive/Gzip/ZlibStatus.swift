import CZlib

/// A zlib status as a person reads it: memory running out is the one a user can act on
/// (`ulimit -v`, a smaller `--threads`), and a bare "status -4" did not say it.
enum ZlibStatus {
    static func describe(_ status: Int32) -> String {
        switch status {
        case Z_MEM_ERROR: "out of memory (zlib Z_MEM_ERROR)"
        case Z_VERSION_ERROR: "the zlib library is not the version this tool was built with (zlib Z_VERSION_ERROR)"
        default: "zlib status \(status)"
        }
    }
}
