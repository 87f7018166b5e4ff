import Foundation
import Readiness

/// A self-contained SVG trend chart of readiness: a mark per scored day coloured by band, the
/// line broken where a day has no score, the band zones behind, and the trailing 7-day median.
public enum ReadinessTrendChart {
    public struct Day: Sendable {
        /// `yyyy-MM-dd`.
        public var date: String
        public var score: Int?
        public var bandRaw: String?

        public init(date: String, score: Int?, bandRaw: String?) {
            self.date = date
            self.score = score
            self.bandRaw = bandRaw
        }
    }

    static let width = 860.0, height = 320.0
    static let left = 48.0, right = 88.0, top = 40.0, bottom = 48.0

    static func colour(_ bandRaw: String?) -> String {
        switch bandRaw.flatMap(ReadinessBand.init(rawValue:)) {
        case .primed: return "#2e7d32"
        case .ready: return "#00897b"
        case .moderate: return "#f9a825"
        case .restNeeded: return "#c62828"
        case nil: return "#607d8b"
        }
    }

    /// - Parameter days: oldest first.
    public static func svg(_ days: [Day], title: String = "Readiness") -> String {
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        func x(_ index: Int) -> Double {
            days.count <= 1 ? left + plotWidth / 2 : left + plotWidth * Double(index) / Double(days.count - 1)
        }
        func y(_ score: Double) -> Double { top + plotHeight * (1 - score / 100) }
        // A stored score is any integer an archive held; outside 0–100 it is drawn at the
        // nearest edge (its tooltip keeps the stored value).
        func plotted(_ score: Int) -> Double { Double(min(100, max(0, score))) }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="-apple-system, Helvetica, Arial, sans-serif" font-size="11">
            <title>\(escape(title))</title>
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="\(f(left))" y="22" font-size="15" font-weight="600" fill="#263238">\(escape(title))</text>

            """
        let zones: [(ClosedRange<Double>, String)] = [(85...100, "Primed"), (70...85, "Ready"), (55...70, "Moderate"), (0...55, "Rest needed")]
        for (range, band) in zones {
            svg += "<rect class=\"zone\" x=\"\(f(left))\" y=\"\(f(y(range.upperBound)))\" width=\"\(f(plotWidth))\" height=\"\(f(y(range.lowerBound) - y(range.upperBound)))\" fill=\"\(colour(band))\" fill-opacity=\"0.08\"/>\n"
            svg += "<text x=\"\(f(left + plotWidth + 8))\" y=\"\(f((y(range.upperBound) + y(range.lowerBound)) / 2 + 4))\" fill=\"\(colour(band))\">\(escape(band))</text>\n"
        }
        for tick in stride(from: 0.0, through: 100, by: 25) {
            svg += "<line x1=\"\(f(left))\" x2=\"\(f(left + plotWidth))\" y1=\"\(f(y(tick)))\" y2=\"\(f(y(tick)))\" stroke=\"#cfd8dc\" stroke-width=\"0.5\"/>\n"
            svg += "<text x=\"\(f(left - 6))\" y=\"\(f(y(tick) + 4))\" text-anchor=\"end\" fill=\"#546e7a\">\(Int(tick))</text>\n"
        }
        let labelEvery = max(1, days.count / 8)
        // A date every labelEvery days, and the last day, dropping the label before it if close.
        var labelled = Array(stride(from: 0, to: days.count, by: labelEvery))
        if let previous = labelled.last, !days.isEmpty, previous != days.count - 1 {
            if days.count - 1 - previous < labelEvery / 2 + 1 { labelled.removeLast() }
            labelled.append(days.count - 1)
        }
        for i in labelled {
            let day = days[i]
            svg += "<text x=\"\(f(x(i)))\" y=\"\(f(height - bottom + 18))\" text-anchor=\"middle\" fill=\"#546e7a\">\(escape(String(day.date.dropFirst(5))))</text>\n"
        }

        // The score line, one segment per run of consecutive scored days.
        var run: [String] = []
        func closeRun() {
            if run.count > 1 { svg += "<polyline class=\"trend\" points=\"\(run.joined(separator: " "))\" fill=\"none\" stroke=\"#90a4ae\" stroke-width=\"1.5\"/>\n" }
            run = []
        }
        for (i, day) in days.enumerated() {
            if let score = day.score { run.append("\(f(x(i))),\(f(y(plotted(score))))") } else { closeRun() }
        }
        closeRun()

        // The trailing 7-day median of the scored days, where there is one.
        var median: [String] = []
        for i in days.indices {
            let window = days[max(0, i - 6)...i].compactMap(\.score).map(plotted).sorted()
            guard !window.isEmpty else { continue }
            let n = window.count
            let value = n % 2 == 1 ? window[n / 2] : (window[n / 2 - 1] + window[n / 2]) / 2
            median.append("\(f(x(i))),\(f(y(value)))")
        }
        if median.count > 1 {
            svg += "<polyline class=\"median\" points=\"\(median.joined(separator: " "))\" fill=\"none\" stroke=\"#37474f\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n"
        }
        for (i, day) in days.enumerated() {
            guard let score = day.score else { continue }
            svg += "<circle class=\"score\" cx=\"\(f(x(i)))\" cy=\"\(f(y(plotted(score))))\" r=\"4\" fill=\"\(colour(day.bandRaw))\"><title>\(escape(day.date)): \(score) \(escape(day.bandRaw ?? ""))</title></circle>\n"
        }
        svg += "<text x=\"\(f(left + plotWidth))\" y=\"22\" text-anchor=\"end\" fill=\"#546e7a\">dashed: 7-day median · gaps: no score</text>\n"
        svg += "</svg>\n"
        return svg
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
