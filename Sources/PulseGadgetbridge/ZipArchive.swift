#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZip
import PulseArchive
import PulseSystem

/// A ZIP file opened read-only through libzip: the only owner of its `zip_t` and of the
/// `zip_file_t` of the entry being read.
///
/// Not `Sendable`: the thread that opens it uses it and closes it (`deinit`), so libzip, which
/// is not thread-safe for one archive, never sees two threads. Only what the Gadgetbridge
/// import needs: find an entry, check how it is stored, copy it out in pieces under the
/// archive reader's size and ratio limits.
final class ZipArchive {
    /// What messages call the file.
    let path: String
    private let handle: OpaquePointer

    /// Opens `path` (checking the central directory's consistency, `ZIP_CHECKCONS`).
    /// - Parameter name: what messages call it (standard input's private copy is "standard input").
    init(path: String, shownAs name: String? = nil) throws(GadgetbridgeError) {
        self.path = name ?? path
        var code: Int32 = 0
        guard let handle = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code) else {
            if code == ZIP_ER_EXISTS {
                throw GadgetbridgeError(.damaged, "\(name ?? path) is a ZIP with two entries of the same name (libzip refuses it: which one is meant "
                    + "cannot be told); a Gadgetbridge backup holds each file, \(GadgetbridgeFile.databaseEntry) included, once: export it anew")
            }
            throw GadgetbridgeError(.damaged, "\(name ?? path) starts as a ZIP file but libzip cannot read it: \(Self.text(ofCode: code))")
        }
        self.handle = handle
    }

    deinit { zip_discard(handle) }

    /// What the central directory says of one entry.
    struct Entry {
        let index: UInt64
        let size: Int64
        let compressedSize: Int64
        let method: Int32
        let encrypted: Bool
    }

    /// The entry called exactly `name`, or nil.
    func entry(named name: String) throws(GadgetbridgeError) -> Entry? {
        let index = zip_name_locate(handle, name, 0)
        guard index >= 0 else { return nil }
        var info = zip_stat_t()
        zip_stat_init(&info)
        guard zip_stat_index(handle, UInt64(index), 0, &info) == 0 else {
            throw GadgetbridgeError(.damaged, "\(path): cannot read the entry \(name): \(lastError())")
        }
        return Entry(index: UInt64(index), size: Int64(clamping: info.size), compressedSize: Int64(clamping: info.comp_size),
                     method: Int32(info.comp_method), encrypted: info.encryption_method != UInt16(ZIP_EM_NONE))
    }

    /// Copies `entry` to `sink` in pieces, refusing an encrypted entry, one neither stored nor
    /// deflated, one whose CRC fails, and one that passes `limits`' size or inflate ratio (a ZIP
    /// bomb is refused by what comes out, whatever its directory declares).
    func copy(_ entry: Entry, named name: String, to sink: SystemFile, limits: ArchiveLimits) throws -> Int64 {
        guard !entry.encrypted else {
            throw GadgetbridgeError(.unsupported, "\(path): the entry \(name) is encrypted; export the Gadgetbridge backup without a password")
        }
        guard entry.method == ZIP_CM_STORE || entry.method == ZIP_CM_DEFLATE else {
            throw GadgetbridgeError(.unsupported, "\(path): the entry \(name) uses compression method \(entry.method); only stored and deflated entries are read")
        }
        try checkSize(entry.size, name: name, limits: limits)
        guard let file = zip_fopen_index(handle, entry.index, 0) else {
            throw GadgetbridgeError(.damaged, "\(path): cannot open the entry \(name): \(lastError())")
        }
        defer { zip_fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total: Int64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { zip_fread(file, $0.baseAddress!, UInt64($0.count)) }
            if count < 0 {
                let error = String(cString: zip_error_strerror(zip_file_get_error(file)))
                throw GadgetbridgeError(.damaged, "\(path): the entry \(name) is damaged: \(error)")
            }
            if count == 0 { break }
            total += count
            try checkSize(total, name: name, limits: limits)
            if limits.exceedsInflateRatio(content: total, compressed: entry.compressedSize, ratio: limits.maxInflateRatio, grace: limits.inflateRatioGrace) {
                throw ArchiveError(.limitExceeded, "\(path): the entry \(name) inflates more than \(Int(limits.maxInflateRatio)) times its compressed size "
                    + "(a ZIP bomb?)", limit: .inflateRatio)
            }
            try buffer.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[0..<Int(count)])) }
        }
        return total
    }

    private func checkSize(_ size: Int64, name: String, limits: ArchiveLimits) throws {
        guard size <= limits.maxUncompressedBytes else {
            throw ArchiveError(.limitExceeded, "\(path): the entry \(name) holds more than the limit of \(limits.maxUncompressedBytes) bytes",
                               limit: .uncompressedBytes)
        }
    }

    private func lastError() -> String { String(cString: zip_error_strerror(zip_get_error(handle))) }

    private static func text(ofCode code: Int32) -> String {
        var error = zip_error_t()
        zip_error_init_with_code(&error, code)
        defer { zip_error_fini(&error) }
        return String(cString: zip_error_strerror(&error))
    }
}
