/// Finds age secret keys in text a command is about to print.
///
/// No option takes a secret, yet a secret pasted into the wrong place (`-i=AGE-SECRET-KEY-1…`,
/// an archive's name, `--store`, `TZ`) comes back in the message about that place: "unknown
/// option '…'", "cannot open …". A key has a shape no other text has, so whatever is printed is
/// searched for it, wherever the message came from. The search reads only the ASCII letters and
/// digits, upper-cased, so a key typed in groups, with dashes doubled, in lower case or with a
/// stray character inside is still one key; and a key's data copied without its prefix is
/// known by its checksum.
public enum SecretKeyText {
    /// What a secret key's place shows instead of it.
    public static let placeholder = "(a secret key, not shown)"

    /// Bech32's characters, upper case: a key's data part is made of these only.
    private static let bech32 = Set("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".utf8)
    /// Fewer data characters after the `1` are a message naming the prefix (`AGE-SECRET-KEY-1…`),
    /// no secret.
    private static let shortestData = 8
    /// More than a data part of any identity type is text after the key.
    private static let longestData = 200

    /// `text` with every age secret key in it (`AGE-SECRET-KEY-1…`, `AGE-SECRET-KEY-PQ-1…`,
    /// `AGE-PLUGIN-NAME-1…`) replaced by `placeholder`, from its first letter to its last data
    /// character, whatever lies between them.
    public static func redacted(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count > 12 else { return text }
        // The letters and digits, upper-cased, each with its place in `scalars`.
        var letters: [UInt8] = [], places: [Int] = []
        for (place, scalar) in scalars.enumerated() where scalar.isASCII {
            let byte = UInt8(scalar.value)
            if (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) {
                letters.append(byte); places.append(place)
            } else if (0x61...0x7A).contains(byte) {
                letters.append(byte - 0x20); places.append(place)
            }
        }
        var found: [ClosedRange<Int>] = []
        var start = 0
        while let key = firstKey(in: letters, from: start) {
            found.append(key)
            start = key.upperBound + 1
        }
        found += bareBodies(in: letters, outside: found)
        guard !found.isEmpty else { return text }
        let cuts = found.sorted { $0.lowerBound < $1.lowerBound }.map { places[$0.lowerBound]...places[$0.upperBound] }
        var result = String.UnicodeScalarView()
        var next = 0
        for cut in cuts {
            result.append(contentsOf: scalars[next..<cut.lowerBound])
            result.append(contentsOf: placeholder.unicodeScalars)
            next = cut.upperBound + 1
        }
        result.append(contentsOf: scalars[next...])
        return String(result)
    }

    /// The data characters of an X25519 key copied without its prefix (the 58 after
    /// `AGE-SECRET-KEY-1`): any run of 58 Bech32 characters that is a key's data, its checksum
    /// holding under that prefix. No other text has one by chance (a 30-bit checksum).
    private static func bareBodies(in letters: [UInt8], outside keys: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        let length = 58
        var bodies: [ClosedRange<Int>] = []
        var run = 0
        var index = 0
        while index < letters.count {
            run = bech32.contains(letters[index]) ? run + 1 : 0
            let candidate = (index + 1 - length)...index
            if run >= length, !keys.contains(where: { $0.overlaps(candidate) }),
               Bech32.decode("age-secret-key-1" + String(decoding: letters[candidate], as: UTF8.self).lowercased()) != nil {
                bodies.append(candidate)
                run = 0
            }
            index += 1
        }
        return bodies
    }

    /// The first key in `letters` from `start`: its first letter to its last data character.
    private static func firstKey(in letters: [UInt8], from start: Int) -> ClosedRange<Int>? {
        let age = Array("AGE".utf8), secret = Array("SECRETKEY".utf8), pq = Array("PQ".utf8), plugin = Array("PLUGIN".utf8)
        var index = start
        while index + 3 <= letters.count {
            defer { index += 1 }
            guard letters[index..<index + 3].elementsEqual(age) else { continue }
            var cursor = index + 3
            var oneCandidates: [Int] = []
            var prefix: String?
            if letters[cursor...].starts(with: secret) {
                cursor += secret.count
                prefix = "age-secret-key-"
                if letters[cursor...].starts(with: pq) { cursor += pq.count; prefix = "age-secret-key-pq-" }
                oneCandidates = [cursor]
            } else if letters[cursor...].starts(with: plugin) {
                // The plugin's name, then the `1` that ends the prefix.
                cursor += plugin.count
                oneCandidates = Array(cursor..<min(cursor + 40, letters.count))
            } else {
                continue
            }
            for one in oneCandidates where one < letters.count && letters[one] == UInt8(ascii: "1") {
                var end = one + 1
                while end < letters.count, end - (one + 1) < longestData, bech32.contains(letters[end]) { end += 1 }
                guard end - (one + 1) >= shortestData else { continue }
                // Where the key's checksum holds, the key ends: the letters after it (`.json`'s
                // `JS`, a word of the message) are not part of it and stay shown. A key typed
                // wrong has no such place; then all the data characters go.
                if let prefix {
                    let data = String(decoding: letters[(one + 1)..<end], as: UTF8.self).lowercased()
                    for length in stride(from: data.utf8.count, through: shortestData, by: -1)
                    where Bech32.decode(prefix + "1" + data.prefix(length)) != nil {
                        return index...(one + length)
                    }
                }
                return index...(end - 1)
            }
        }
        return nil
    }
}
