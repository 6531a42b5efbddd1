import Foundation
import HeraldCore
import Synchronization

// Channels held by other nodes: holds (leases) in the shared store, and relay messages.
extension DirectChannels {
    /// Records this node's hold of a channel it opened.
    func hold(_ installationID: String) async {
        guard let relay else { return }
        do {
            try await relay.attachChannel(
                installationID: installationID, node: node, until: Date().addingTimeInterval(lease.timeInterval))
            state.withLock { $0.clusterHeld = (true, Date()) }
        } catch {
            // The device still gets what this node sends; other nodes fall back to its cloud route.
        }
    }

    /// Forgets this node's hold of a channel that closed.
    func release(_ installationID: String) async {
        try? await relay?.detachChannel(installationID: installationID, node: node)
    }

    /// Whether a channel is open on this node or, with a relay, on any node (read at most once a second).
    public func anyOpenAnywhere(now: Date = Date()) async -> Bool {
        if anyOpen { return true }
        guard let relay else { return false }
        if let known = state.withLock({ $0.clusterHeld }), abs(now.timeIntervalSince(known.at)) < 1 {
            return known.held
        }
        let held = (try? await relay.anyChannelHeld(now: now)) ?? false
        state.withLock { $0.clusterHeld = (held, now) }
        return held
    }

    /// Whether the installation has a channel open on this node or on another one.
    public func isConnected(_ installationID: String, now: Date = Date()) async -> Bool {
        if isOpen(installationID) { return true }
        return await !remoteHolders(of: [installationID], now: now).isEmpty
    }

    /// The nodes holding these installations' channels elsewhere (this node's own are left out).
    public func remoteHolders(of installationIDs: [String], now: Date = Date()) async -> [String: String] {
        guard let relay, !installationIDs.isEmpty else { return [:] }
        let holders = (try? await relay.channelHolders(of: installationIDs, now: now)) ?? [:]
        return holders.filter { $0.value != node }
    }

    /// Serves the relay until cancelled: delivers what other nodes send to this node's channels,
    /// answers with the outcome (and later the settlement), resolves the outcomes and settlements
    /// of what this node relayed, renews this node's holds every third of the lease, and tears down
    /// channels that missed a confirmation (every second).
    public func runRelay() async {
        guard let relay else { return }
        let (messages, inbox) = AsyncStream<String>.makeStream()
        await withDiscardingTaskGroup { group in
            group.addTask { await relay.listen(for: self.node, into: inbox) }
            group.addTask {
                let tick = min(.seconds(1), self.lease / 3)
                var sinceRenewal: Duration = .zero
                while !Task.isCancelled {
                    try? await self.clock.sleep(for: tick)
                    guard !Task.isCancelled else { break }
                    await self.expireMissed()
                    sinceRenewal += tick
                    guard sinceRenewal >= self.lease / 3 else { continue }
                    sinceRenewal = .zero
                    try? await relay.renewChannels(
                        node: self.node, until: Date().addingTimeInterval(self.lease.timeInterval))
                }
            }
            for await text in messages {
                guard let message = RelayMessage(text) else { continue }
                switch message.kind {
                case .deliver(let installationID, let event):
                    group.addTask {
                        let outcome = await self.deliver(
                            event, to: installationID, holder: self.node,
                            ticket: .relayed(messageID: message.id, origin: message.from))
                        let answer = RelayMessage(id: message.id, from: self.node, kind: .outcome(outcome))
                        try? await relay.post(answer.text, to: message.from)
                    }
                case .outcome(let outcome):
                    resolveRelayed(message.id, outcome)
                case .settled(let reason):
                    guard let delivery = state.withLock({ $0.relayedDeliveries.removeValue(forKey: message.id) })
                    else { continue }
                    let action = settledAction
                    group.addTask { await action?(delivery.notificationID, delivery.installationID, reason) }
                }
            }
            group.cancelAll()
        }
    }

    /// Hands an event to the node holding the installation's channel and waits for its answer (a
    /// few seconds: no answer counts as a channel that could not be reached). A confirming answer
    /// settles later, with another message.
    func relayDeliver(
        _ event: [String: JSONValue], to installationID: String, notificationID: String, holder: String?
    ) async -> Outcome {
        guard let relay, holder != node else { return .notConnected }
        var target = holder
        if target == nil { target = await remoteHolders(of: [installationID])[installationID] }
        guard let target else { return .notConnected }
        let message = RelayMessage(
            id: Self.confirmID(), from: node, kind: .deliver(installationID: installationID, event: event))
        let text = message.text
        guard text.utf8.count <= type(of: relay).maxMessageBytes else {
            return .fellBack(reason: "the notification is too large to relay to the node holding the channel")
        }
        // Known before the message goes: its settlement may come right after its answer.
        state.withLock { $0.relayedDeliveries[message.id] = (notificationID, installationID) }
        let noAnswer = Outcome.fellBack(reason: "the node holding the channel did not answer")
        // The deadline settles the wait as the answer would: whichever comes first is the outcome.
        let outcome =
            (try? await withDeadline(Self.relayAnswerLimit, clock: clock) {
                await self.answer(to: message.id, posting: text, to: target, via: relay, cancelled: noAnswer)
            } onDeadline: {
                self.resolveRelayed(message.id, noAnswer)
            }) ?? noAnswer
        if case .confirming = outcome { return outcome }
        state.withLock { _ = $0.relayedDeliveries.removeValue(forKey: message.id) }
        return outcome
    }

    /// Posts message `id` (`text`) to `target` and waits for its answer: the other node's, a failed
    /// post's, or `cancelled` when the task is cancelled.
    private func answer(
        to id: String, posting text: String, to target: String, via relay: any ChannelRelay, cancelled: Outcome
    ) async -> Outcome {
        await withTaskGroup(of: Void.self) { group in
            let outcome = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let waiting = state.withLock { state in
                        guard !Task.isCancelled else { return false }
                        state.relayed[id] = continuation
                        return true
                    }
                    guard waiting else { return continuation.resume(returning: cancelled) }
                    group.addTask {
                        do {
                            try await relay.post(text, to: target)
                        } catch {
                            self.resolveRelayed(id, .fellBack(reason: "the node holding the channel is unreachable"))
                        }
                    }
                }
            } onCancel: {
                self.resolveRelayed(id, cancelled)
            }
            group.cancelAll()
            return outcome
        }
    }

    /// How long a node waits for the node holding a channel to answer a relayed delivery.
    static var relayAnswerLimit: Duration { .seconds(5) }

    private func resolveRelayed(_ id: String, _ outcome: Outcome) {
        state.withLock { $0.relayed.removeValue(forKey: id) }?.resume(returning: outcome)
    }
}

/// A message between nodes' channels, as JSON text.
struct RelayMessage {
    enum Kind {
        case deliver(installationID: String, event: [String: JSONValue])
        case outcome(DirectChannels.Outcome)
        /// How a confirming delivery settled, after its `confirming` outcome.
        case settled(PendingDelivery.Reason)
    }

    var id: String
    var from: String
    var kind: Kind

    init(id: String, from: String, kind: Kind) {
        self.id = id
        self.from = from
        self.kind = kind
    }

    /// Reads a message; nil when it is not one.
    init?(_ text: String) {
        guard case .object(let object)? = try? JSONValue.parse(Array(text.utf8)),
            case .string(let id)? = object["id"], case .string(let from)? = object["from"],
            case .string(let kind)? = object["kind"]
        else { return nil }
        self.id = id
        self.from = from
        switch kind {
        case "deliver":
            guard case .string(let installationID)? = object["installation"], case .object(let event)? = object["event"]
            else { return nil }
            self.kind = .deliver(installationID: installationID, event: event)
        case "outcome":
            switch object["outcome"] {
            case .string("confirmed")?: self.kind = .outcome(.delivered(confirmed: true))
            case .string("delivered")?: self.kind = .outcome(.delivered(confirmed: false))
            case .string("not_connected")?: self.kind = .outcome(.notConnected)
            case .string("confirming")?:
                guard case .number(let until)? = object["until"] else { return nil }
                self.kind = .outcome(.confirming(until: Date(timeIntervalSince1970: until.doubleValue)))
            case .string("fell_back")?:
                guard case .string(let reason)? = object["reason"] else { return nil }
                self.kind = .outcome(.fellBack(reason: reason))
            default: return nil
            }
        case "settled":
            guard case .string(let raw)? = object["reason"], let reason = PendingDelivery.Reason(rawValue: raw),
                PendingDelivery.Reason.settlements.contains(reason)
            else { return nil }
            self.kind = .settled(reason)
        default: return nil
        }
    }

    /// The message as JSON text.
    var text: String {
        var object: [String: JSONValue] = ["id": .string(id), "from": .string(from)]
        switch kind {
        case .deliver(let installationID, let event):
            object["kind"] = .string("deliver")
            object["installation"] = .string(installationID)
            object["event"] = .object(event)
        case .outcome(let outcome):
            object["kind"] = .string("outcome")
            switch outcome {
            case .delivered(let confirmed): object["outcome"] = .string(confirmed ? "confirmed" : "delivered")
            case .notConnected: object["outcome"] = .string("not_connected")
            case .confirming(let until):
                object["outcome"] = .string("confirming")
                object["until"] = .number(JSONNumber(until.timeIntervalSince1970))
            case .fellBack(let reason):
                object["outcome"] = .string("fell_back")
                object["reason"] = .string(reason)
            }
        case .settled(let reason):
            object["kind"] = .string("settled")
            object["reason"] = .string(reason.rawValue)
        }
        return String(decoding: JSONValue.object(object).serialized(), as: UTF8.self)
    }
}
