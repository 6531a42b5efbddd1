import Foundation
import HeraldCore
import Testing

@testable import HeraldEngine

/// A direct channel's confirmation that comes before the page recording its delivery has
/// committed: kept until the commit, then applied; without I/O.
@Suite("Channel settlements between the write and the page's commit")
struct ChannelSettlementsTests {
    typealias Key = ChannelSettlements.Key
    let a = Key(notificationID: "n-1", recipient: "i-a")
    let b = Key(notificationID: "n-1", recipient: "i-b")

    func confirming(_ key: Key) -> PendingDelivery {
        PendingDelivery(
            notificationID: key.notificationID, recipient: key.recipient, runAt: Date(timeIntervalSince1970: 0),
            attempts: 0, reason: .confirming)
    }

    @Test("a settlement while its delivery is written or its page uncommitted waits for the commit, once")
    func early() {
        var settlements = ChannelSettlements()
        settlements.expect([a, b])
        let kept = settlements.keep(.confirmed, for: a)
        #expect(kept)
        settlements.written([a, b], confirming: ["i-a"])
        let applied = settlements.pageDone([confirming(a)])
        #expect(applied.map(\.key) == [a])
        #expect(applied.map(\.reason) == [.confirmed])
        let late = settlements.keep(.unconfirmed, for: a)
        #expect(!late, "committed: its pending row settles now")
    }

    @Test("a delivery not recorded as confirming, or never expected, settles at once")
    func notExpected() {
        var settlements = ChannelSettlements()
        let unexpected = settlements.keep(.confirmed, for: a)
        #expect(!unexpected)
        settlements.expect([a, b])
        settlements.written([a, b], confirming: ["i-a"])
        let written = settlements.keep(.channelClosed, for: b)
        #expect(!written, "not recorded as confirming")
        let recorded = settlements.keep(.channelClosed, for: a)
        #expect(recorded)
    }

    @Test("a page committed with no settlement yet applies nothing and stops expecting its deliveries")
    func noneEarly() {
        var settlements = ChannelSettlements()
        settlements.expect([a])
        settlements.written([a], confirming: ["i-a"])
        let applied = settlements.pageDone([confirming(a)])
        #expect(applied.isEmpty)
        let late = settlements.keep(.confirmed, for: a)
        #expect(!late)
    }
}
