import Foundation

/// Herald's record ids: UUID version 7 text (RFC 9562 §5.7), so ids sort by creation time and
/// keyset pagination over them lists records oldest first.
public enum Identifier {
    /// A new time-ordered id.
    public static func make(now: Date = Date()) -> String {
        var generator = SystemRandomNumberGenerator()
        return make(now: now, using: &generator)
    }

    /// A new time-ordered id drawing randomness from `generator`.
    public static func make(now: Date, using generator: inout some RandomNumberGenerator) -> String {
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        for index in 6..<16 { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)  // version 7
        bytes[8] = 0x80 | (bytes[8] & 0x3F)  // RFC 9562 variant
        let uuid = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        return uuid.uuidString.lowercased()
    }
}
