import Foundation
import Testing
import PulseArchive
@testable import Readiness

/// Readiness writes its contributors string with its own two JSON forms (it depends on no
/// module); the store keeps that string beside rows the codec writes, so both must agree.
@Suite("The contributors string writes JSON as the codec does")
struct ContributorsJSONTextTests {
    @Test("numbers: the codec's shortest form, for integral, fractional, huge, tiny and signed values")
    func numbers() {
        let values: [Double] = [0, -0.0, 1, -1, 0.1, -2.5e-8, 1e21, 36.57, 1234567.0, 9_007_199_254_740_991, 9_007_199_254_740_992,
                                -9_007_199_254_740_993, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
                                .leastNormalMagnitude, 1.0 / 3.0, 100, 12.5, 30, 25]
        for value in values {
            #expect(ReadinessJSONText.number(value) == JSONText.number(value), "\(value)")
        }
    }

    @Test("strings: every escape the codec writes, and text that needs none")
    func strings() {
        var every = ""
        for scalar in 0..<0x80 { every.unicodeScalars.append(Unicode.Scalar(UInt8(scalar))) }
        for text in ["", "HRV 12% above your baseline", "a/b \"q\" \\ \n\r\t", every, "Zoë 🏃 Ωμέγα\u{0}", String(repeating: "/", count: 300)] {
            #expect(ReadinessJSONText.quoted(text) == JSONText.quoted(text), "\(text.debugDescription)")
        }
    }
}
