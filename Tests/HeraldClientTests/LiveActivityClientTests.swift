import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldClient

@Suite("HeraldClient's Live Activity tokens against a running herald serve", .serialized)
struct LiveActivityClientTests {
    static let attributesType = "DeliveryAttributes"

    /// A client of `herald` for `ann` with an iOS installation registered.
    static func registeredClient(_ herald: RunningHerald) async throws -> HeraldClient {
        let client = try await HeraldClientTests.client(
            herald, user: "ann", file: herald.directory.file("installation.json"))
        try await client.register(
            deviceToken: HeraldClientTests.randomToken(), platform: .iOS, locale: "en-US",
            timeZone: try #require(TimeZone(identifier: "Europe/Paris")), bundleID: RunningHerald.topic)
        return client
    }

    static func suffix(_ token: Data) -> String { String(DeviceToken.hex(token).suffix(8)) }

    @Test("push-to-start tokens from a sequence: each registered, the newer replacing the older")
    func pushToStartTokens() async throws {
        try await HeraldClientTests.withHerald(pushToStartTokens)
    }

    func pushToStartTokens(_ herald: RunningHerald) async throws {
        let client = try await Self.registeredClient(herald)
        #expect(try await client.liveActivityTokens() == LiveActivityTokens(pushToStart: [], activities: []))

        let feed = TokenFeed()
        var asks = feed.asks.makeAsyncIterator()
        let keeping = Task { try await client.keepPushToStartTokens(feed, attributesType: Self.attributesType) }
        let first = HeraldClientTests.randomToken()
        let second = HeraldClientTests.randomToken()
        _ = await asks.next()
        feed.yield(first)
        _ = await asks.next()
        #expect(try await client.liveActivityTokens().pushToStart.map(\.tokenSuffix) == [Self.suffix(first)])
        feed.yield(second)
        feed.finish()
        try await keeping.value

        let stored = try await client.liveActivityTokens()
        #expect(stored.activities.isEmpty)
        let token = try #require(stored.pushToStart.first)
        #expect(stored.pushToStart.count == 1)
        #expect(token.attributesType == Self.attributesType && token.activityID == nil)
        #expect(token.tokenSuffix == Self.suffix(second))
        #expect(abs(token.updatedAt.timeIntervalSinceNow) < 300)
        // The whole token went, lowercase hex.
        let id = try #require(try await client.installation()?.id)
        let (status, listed) = try await herald.call("GET", "/v1/installations/\(id)/live-activities")
        #expect(status == 200)
        #expect((listed["push_to_start"] as? [[String: Any]])?.first?["token_suffix"] as? String == Self.suffix(second))

        try await client.removePushToStartToken(attributesType: Self.attributesType)
        #expect(try await client.liveActivityTokens().pushToStart.isEmpty)
        // Forgetting a token Herald does not have is not an error.
        try await client.removePushToStartToken(attributesType: Self.attributesType)
    }

    @Test("an activity's tokens from a sequence; its end (the sequence finished) forgets the activity")
    func activityTokens() async throws {
        try await HeraldClientTests.withHerald(activityTokens)
    }

    func activityTokens(_ herald: RunningHerald) async throws {
        let client = try await Self.registeredClient(herald)

        let feed = TokenFeed()
        var asks = feed.asks.makeAsyncIterator()
        let keeping = Task {
            try await client.keepActivityTokens(feed, activityID: "delivery-42", attributesType: Self.attributesType)
        }
        _ = await asks.next()
        for token in [HeraldClientTests.randomToken(), HeraldClientTests.randomToken()] {
            feed.yield(token)
            _ = await asks.next()
            #expect(try await client.liveActivityTokens().activities.map(\.tokenSuffix) == [Self.suffix(token)])
        }
        let activity = try #require(try await client.liveActivityTokens().activities.first)
        #expect(activity.activityID == "delivery-42" && activity.attributesType == Self.attributesType)
        // The app started it: its first token made it.
        #expect(try await herald.call("GET", "/v1/live-activities/delivery-42").0 == 200)

        // The activity ended on the device: its token sequence finishes.
        feed.finish()
        try await keeping.value
        #expect(try await client.liveActivityTokens().activities.isEmpty)
        // Ending an activity Herald no longer has is not an error.
        try await client.endActivity(activityID: "delivery-42")
    }

    @Test("a cancelled keep ends its loop with CancellationError and leaves the activity running")
    func cancellation() async throws {
        try await HeraldClientTests.withHerald(cancellation)
    }

    func cancellation(_ herald: RunningHerald) async throws {
        let client = try await Self.registeredClient(herald)
        let feed = TokenFeed()
        var asks = feed.asks.makeAsyncIterator()
        let keeping = Task {
            try await client.keepActivityTokens(feed, activityID: "delivery-7", attributesType: Self.attributesType)
        }
        _ = await asks.next()
        feed.yield(HeraldClientTests.randomToken())
        _ = await asks.next()
        keeping.cancel()
        await #expect(throws: CancellationError.self) { try await keeping.value }
        #expect(try await client.liveActivityTokens().activities.map(\.activityID) == ["delivery-7"])
    }

    @Test("bad tokens and ids fail with the server's code; a failed registration ends the keep loop")
    func errors() async throws {
        try await HeraldClientTests.withHerald(errors)
    }

    func errors(_ herald: RunningHerald) async throws {
        let unregistered = try await HeraldClientTests.client(
            herald, user: "ann", file: herald.directory.file("unregistered.json"))
        await #expect(throws: HeraldClientError.notRegistered) {
            try await unregistered.registerPushToStartToken(
                HeraldClientTests.randomToken(), attributesType: Self.attributesType)
        }

        let client = try await Self.registeredClient(herald)
        let empty = await #expect(throws: HeraldClientError.self) {
            try await client.registerPushToStartToken(Data(), attributesType: Self.attributesType)
        }
        #expect(empty?.code == "invalid_token")
        #expect(empty?.field == "token")
        #expect(empty?.status == 400)

        let emptyActivity = await #expect(throws: HeraldClientError.self) {
            try await client.registerActivityToken(
                Data(), activityID: "delivery-1", attributesType: Self.attributesType)
        }
        #expect(emptyActivity?.code == "invalid_token")
        #expect(emptyActivity?.field == "token")
        #expect(emptyActivity?.status == 400)

        let badID = await #expect(throws: HeraldClientError.self) {
            try await client.registerActivityToken(
                HeraldClientTests.randomToken(), activityID: "channels", attributesType: Self.attributesType)
        }
        #expect(badID?.code == "invalid_id")
        #expect(badID?.field == "activity_id")

        // The loop stops at the first failure and rethrows it; the token after it is never sent.
        let (tokens, yield) = AsyncStream.makeStream(of: Data.self)
        yield.yield(Data())
        yield.yield(HeraldClientTests.randomToken())
        yield.finish()
        let loop = await #expect(throws: HeraldClientError.self) {
            try await client.keepPushToStartTokens(tokens, attributesType: Self.attributesType)
        }
        #expect(loop?.code == "invalid_token")
        #expect(try await client.liveActivityTokens().pushToStart.isEmpty)
    }
}

/// Tokens for a keep loop, as `pushTokenUpdates` hands them out, that tell the test each time the loop
/// asks for one: it has then registered the one before. The test waits for that instead of polling
/// Herald beside the loop's own calls, and cancels the loop only while it waits for a token: on Linux,
/// `URLSession.data` can deadlock when its task is cancelled just as the answer arrives (the
/// cancellation handler and the completion take the task's lock and the session's queue in opposite
/// orders).
struct TokenFeed: AsyncSequence, Sendable {
    private let tokens: AsyncStream<Data>
    private let supply: AsyncStream<Data>.Continuation
    private let asking: AsyncStream<Void>.Continuation
    /// One element each time the loop asks for a token.
    let asks: AsyncStream<Void>

    init() {
        (tokens, supply) = AsyncStream.makeStream(of: Data.self)
        (asks, asking) = AsyncStream.makeStream(of: Void.self)
    }

    func yield(_ token: Data) { supply.yield(token) }

    func finish() { supply.finish() }

    func makeAsyncIterator() -> Iterator { Iterator(tokens: tokens.makeAsyncIterator(), asking: asking) }

    struct Iterator: AsyncIteratorProtocol {
        var tokens: AsyncStream<Data>.Iterator
        let asking: AsyncStream<Void>.Continuation

        mutating func next() async -> Data? {
            asking.yield()
            return await tokens.next()
        }
    }
}

@Suite("HeraldClient's Live Activity helpers without a server")
struct LiveActivityClientUnitTests {
    /// An app's attributes type keeping Herald's id under its key.
    struct DeliveryAttributes: Codable {
        var orderNumber: Int
        var heraldActivityID: String?

        enum CodingKeys: String, CodingKey {
            case orderNumber = "order_number"
            case heraldActivityID = "herald-activity-id"
        }
    }

    @Test("Herald's activity id is read from the attributes' JSON; nil when they do not carry it")
    func heraldActivityID() {
        #expect(HeraldClient.activityIDAttribute == "herald-activity-id")
        #expect(
            HeraldClient.heraldActivityID(in: DeliveryAttributes(orderNumber: 1, heraldActivityID: "la-1")) == "la-1")
        #expect(HeraldClient.heraldActivityID(in: DeliveryAttributes(orderNumber: 1)) == nil)
        #expect(HeraldClient.heraldActivityID(in: ["other": "x"]) == nil)
        #expect(HeraldClient.heraldActivityID(in: [1, 2]) == nil)
    }
}
