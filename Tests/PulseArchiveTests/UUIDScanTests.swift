import Testing
@testable import PulseArchive

/// The export asks `CanonicalUUID.isUUID` of every UUID a store holds, eight bytes at a time;
/// it must answer what the reader's rule, spelt out byte by byte, answers.
@Suite("The eight-bytes-at-a-time UUID check")
struct UUIDScanTests {
    /// The rule as the format states it: 8-4-4-4-12 hex digits of either case, hyphens between.
    static func byTheRule(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 36 else { return false }
        return bytes.enumerated().allSatisfy { i, c in
            [8, 13, 18, 23].contains(i) ? c == 0x2D : (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c)
        }
    }

    static func isUUID(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer(CanonicalUUID.isUUID) }

    @Test("every byte value at every place of a UUID, in both cases, and whether it has a lower-case letter; every length around 36")
    func everyByteEverywhere() {
        for valid in ["0A1B2C3D-4E5F-6A7B-8C9D-0E1F2A3B4C5D", "abcdef01-2345-6789-abcd-ef0123456789", "FFFFFFFF-0000-9999-aAfF-000000000000"] {
            let bytes = Array(valid.utf8)
            #expect(Self.isUUID(bytes) && Self.byTheRule(bytes))
            for place in 0..<36 {
                for value in 0...255 {
                    var changed = bytes
                    changed[place] = UInt8(value)
                    #expect(Self.isUUID(changed) == Self.byTheRule(changed), "byte 0x\(String(value, radix: 16)) at \(place) of \(valid)")
                    if Self.byTheRule(changed) {
                        #expect(changed.withUnsafeBufferPointer(CanonicalUUID.hasLowerCase) == changed.contains { (0x61...0x66).contains($0) },
                                "lower case: byte 0x\(String(value, radix: 16)) at \(place) of \(valid)")
                    }
                }
            }
            for length in 0...40 where length != 36 {
                let text = Array((valid + valid).utf8.prefix(length))
                #expect(!Self.isUUID(text), "\(length) bytes")
            }
            #expect(CanonicalUUID.canonical(valid) == valid.uppercased())
        }
    }
}
