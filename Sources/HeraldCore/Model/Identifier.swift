import Foundation
import Synchronization

/// Herald's record ids: UUID version 7 text (RFC 9562 §5.7), so ids sort by creation time and
/// keyset pagination over them lists records oldest first.
///
/// Ids made by one process in the same millisecond strictly increase (RFC 9562 §6.2, method 1: a
/// 42-bit counter in `rand_a` and the top of `rand_b`, seeded at random each millisecond). Records
/// made together — a bulk import's batch shares one `now` — then lie in the database in id order,
/// and a broadcast that walks them by id updates neighbouring rows on the same pages instead of
/// one page per row.
public enum Identifier {
    /// The counter of the ids this process makes.
    private static let counter = Mutex(MillisecondCounter())

    /// A new time-ordered id.
    public static func make(now: Date = Date()) -> String {
        var generator = SystemRandomNumberGenerator()
        return make(now: now, using: &generator)
    }

    /// A new time-ordered id drawing randomness from `generator`.
    public static func make(now: Date, using generator: inout some RandomNumberGenerator) -> String {
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        let seed = MillisecondCounter.seed(using: &generator)
        let value = counter.withLock { $0.next(milliseconds: milliseconds, seed: seed) }
        return make(
            milliseconds: milliseconds, counter: value, tail: UInt32.random(in: 0...UInt32.max, using: &generator))
    }

    /// The id text: 48 bits of milliseconds, the version, 42 counter bits around the variant, and
    /// 32 random bits.
    static func make(milliseconds: UInt64, counter: UInt64, tail: UInt32) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        bytes[6] = 0x70 | UInt8(truncatingIfNeeded: counter >> 38) & 0x0F  // version 7, counter 41…38
        bytes[7] = UInt8(truncatingIfNeeded: counter >> 30)  // counter 37…30
        bytes[8] = 0x80 | UInt8(truncatingIfNeeded: counter >> 24) & 0x3F  // RFC 9562 variant, counter 29…24
        bytes[9] = UInt8(truncatingIfNeeded: counter >> 16)
        bytes[10] = UInt8(truncatingIfNeeded: counter >> 8)
        bytes[11] = UInt8(truncatingIfNeeded: counter)
        for index in 12..<16 { bytes[index] = UInt8(truncatingIfNeeded: tail >> (8 * (15 - index))) }
        let uuid = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        return uuid.uuidString.lowercased()
    }
}

/// The 42-bit counter of RFC 9562 §6.2 method 1: it counts up within a millisecond and starts
/// again from a random seed in the next one.
struct MillisecondCounter {
    static let bits = 42
    private var milliseconds: UInt64 = 0
    private var value: UInt64 = 0

    /// A fresh seed, its top bit clear: 2^41 ids fit in a millisecond after it.
    static func seed(using generator: inout some RandomNumberGenerator) -> UInt64 {
        UInt64.random(in: 0..<(1 << (bits - 1)), using: &generator)
    }

    /// The counter for an id made in `milliseconds`: one more than the last in the same
    /// millisecond, else `seed` (a new millisecond, or a clock that went back: that id keeps its own
    /// time and is not ordered after the ones before it).
    mutating func next(milliseconds: UInt64, seed: UInt64) -> UInt64 {
        if milliseconds == self.milliseconds, value + 1 < 1 << Self.bits {
            value += 1
        } else {
            (self.milliseconds, value) = (milliseconds, seed)
        }
        return value
    }
}
