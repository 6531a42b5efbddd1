import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How far a long operator verb (`export`, `import`) has got: when standard error is a terminal, one
/// line redrawn in place with the count, the rate and — when the total is known — a bar and the time
/// left. Nothing is drawn otherwise; the verb prints its summary line either way.
struct Progress {
    /// What is counted, plural ("installations").
    let noun: String
    /// Whether standard error is a terminal, so the line is drawn.
    let isTerminal: Bool
    private let started = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?

    /// At most this often the line is redrawn.
    static let interval: Duration = .milliseconds(100)

    /// Starts timing now; `drawn` false keeps the line off even on a terminal.
    init(noun: String, drawn: Bool = true) {
        self.noun = noun
        isTerminal = drawn && isatty(STDERR_FILENO) == 1
    }

    /// The time since the verb started.
    var elapsed: Duration { ContinuousClock.now - started }

    /// Redraws the line (at most every ``interval``) for `count` items done and, when the work's
    /// size is known, `done` of `total` units (bytes read of the file's size).
    mutating func update(count: Int, done: Int64? = nil, total: Int64? = nil) {
        guard isTerminal else { return }
        let now = ContinuousClock.now
        if let lastDrawn, now - lastDrawn < Self.interval { return }
        lastDrawn = now
        let known = total.flatMap { total in done.map { (done: $0, total: total) } }
        Self.write("\r" + Self.line(count: count, noun: noun, elapsed: now - started, work: known) + "\u{1B}[K")
    }

    /// Clears the line, so the summary that follows starts on a clean one.
    func finish() {
        guard isTerminal, lastDrawn != nil else { return }
        Self.write("\r\u{1B}[K")
    }

    /// The progress line: `120000 installations  40000/s` and, with a known amount of work,
    /// `[========>        ]  52%  ETA 3s`.
    static func line(count: Int, noun: String, elapsed: Duration, work: (done: Int64, total: Int64)?) -> String {
        let seconds = max(elapsed.seconds, 0.001)
        var text = "\(count) \(noun)  \(Int((Double(count) / seconds).rounded()))/s"
        guard let work, work.total > 0 else { return text }
        let fraction = min(1, max(0, Double(work.done) / Double(work.total)))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "=", count: filled) + (filled < width ? ">" : "")
        text += "  [\(bar.padding(toLength: width, withPad: " ", startingAt: 0))] \(Int(fraction * 100))%"
        if fraction > 0, fraction < 1 {
            text += "  ETA " + describe(.seconds(seconds * (1 - fraction) / fraction))
        }
        return text
    }

    /// A duration as an operator reads it: `0.4s`, `12.3s`, `4m05s`, `2h07m`.
    static func describe(_ duration: Duration) -> String {
        let seconds = duration.seconds
        if seconds < 60 { return String(format: "%.1fs", seconds) }
        let whole = Int(seconds.rounded())
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, whole % 3600 / 60)
    }

    private static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
