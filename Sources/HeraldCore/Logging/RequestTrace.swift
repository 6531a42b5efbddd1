/// The request a piece of work runs for, so what it creates (a notification, and the jobs that send
/// it) can name the request in its log lines.
public enum RequestTrace {
    /// The current request's id (`X-Request-Id`, honoured or generated); nil outside a request.
    @TaskLocal public static var requestID: String?

    /// Whether a client's `X-Request-Id` is usable as is: 1 to 128 characters of letters, digits and
    /// `-_.:`, so it cannot break a log line or a header.
    public static func isValid(_ id: some StringProtocol) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                    UInt8(ascii: ":"):
                    true
                default: false
                }
            }
    }

    /// A new request id: 16 random bytes in hex (two draws from the system generator, not one
    /// system call per byte).
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let words: [UInt64] = [generator.next(), generator.next()]
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for word in words {
            for shift in stride(from: 60, through: 0, by: -4) {
                text.append(digits[Int((word >> UInt64(shift)) & 0xF)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
