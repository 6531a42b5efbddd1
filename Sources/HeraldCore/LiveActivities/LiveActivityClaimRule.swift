import Foundation

/// Whether one revision of an activity may be sent to an installation now, decided once for both
/// stores from what the installation's part in the activity holds: the last revision claimed for it
/// and until when that claim's sends may still be in flight.
///
/// A device is never sent a revision lower than one it was sent (providers keep whatever arrives
/// last, and do not keep order), so a lower revision is superseded; a higher one waits while a lower
/// one's sends may be in flight (its claim has not been released and has not lapsed), so it cannot
/// overtake it on the wire. The same revision may go again (a page sent twice after a crash).
public enum LiveActivityClaimRule {
    /// nil when the revision may be sent; otherwise why not.
    public static func decide(revision: Int, sentRevision: Int, sendingUntil: Date?, now: Date) -> LiveActivityClaim? {
        if revision < sentRevision { return .superseded }
        if revision > sentRevision, let until = sendingUntil, until > now { return .busy(until: until) }
        return nil
    }
}

/// What a claim's transaction decided for one installation: refused, or sent with its sealed token
/// (nil: the installation's own token), opened after the commit. Decided here once for both stores.
public enum LiveActivitySendDecision: Sendable {
    case refused(LiveActivityClaim)
    case send(sealed: [UInt8]?)

    /// Whether the installation is sent the revision (and so claimed for it).
    public var sends: Bool {
        if case .send = self { return true }
        return false
    }

    /// The decision for an installation taking part, from its part's row: the claim rule, then its
    /// token — none needed when it is sent through its own (`ownToken`); else `sealed` (the
    /// push-to-start token for a start, else the activity token). Without one nothing goes, so
    /// nothing is claimed and a later revision need not wait.
    public static func member(
        revision: Int, sentRevision: Int, sendingUntil: Date?, now: Date, ownToken: Bool, sealed: [UInt8]?
    ) -> Self {
        if let refused = LiveActivityClaimRule.decide(
            revision: revision, sentRevision: sentRevision, sendingUntil: sendingUntil, now: now)
        {
            return .refused(refused)
        }
        if ownToken { return .send(sealed: nil) }
        if let sealed { return .send(sealed: sealed) }
        return .refused(.noToken)
    }

    /// The claims of `ids` (those without a decision took no part: ``LiveActivityClaim/noToken``),
    /// their tokens opened.
    /// - Throws: `HeraldError` when a token does not open.
    public static func claims(
        _ decisions: [String: Self], for ids: [String], cipher: TokenCipher
    ) throws(HeraldError) -> [String: LiveActivityClaim] {
        var claims: [String: LiveActivityClaim] = [:]
        for id in ids {
            switch decisions[id] ?? .refused(.noToken) {
            case .refused(let claim): claims[id] = claim
            case .send(nil): claims[id] = .send(token: nil)
            case .send(let sealed?): claims[id] = .send(token: try cipher.openToken(sealed, service: .apns).identity)
            }
        }
        return claims
    }
}

/// Which token a claim sends each installation, and who joins the record by it.
public enum LiveActivityClaimTokens: Sendable, Equatable {
    /// A Live Activity's start: an APNs installation through its push-to-start token for the
    /// attributes type, another through its own; each it goes to becomes a member.
    case pushToStart
    /// A Live Activity's update or end: members only, an APNs one through its activity token.
    case activity
    /// A revision of an updatable notification: every installation through its own token. Sent to
    /// a target (`joining`), each it goes to becomes a member; sent to the members, only they.
    case installation(joining: Bool)

    /// Whether an installation of `service` is sent through its own token.
    public func ownToken(_ service: PushService) -> Bool {
        if case .installation = self { return true }
        return service != .apns
    }

    /// Whether installations the claim goes to become members without a push-to-start token.
    public var joinsAll: Bool { self == .installation(joining: true) }
}
