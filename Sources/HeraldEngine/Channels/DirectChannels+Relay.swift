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

    /// The nodes holding these installations' channels elsewhere (this node's own are left out).
    public func remoteHolders(of installationIDs: [String], now: Date = Date()) async -> [String: String] {
        guard let relay, !installationIDs.isEmpty else { return [:] }
        let holders = (try? await relay.channelHolders(of: installationIDs, now: now)) ?? [:]
        return holders.filter { $0.value != node }
    }

    /// Serves the relay until cancelled: delivers what other nodes send to this node's channels,
    /// answers with the outcome, resolves the outcomes of what this node relayed, and renews this
    /// node's holds every third of the lease.
    public func runRelay() async {
        guard let relay else { return }
        let messages = relay.messages(for: node)
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.lease / 3)
                    guard !Task.isCancelled else { break }
                    try? await relay.renewChannels(
                        node: self.node, until: Date().addingTimeInterval(self.lease.timeInterval))
                }
            }
            for await text in messages {
                guard let message = RelayMessage(text) else { continue }
                switch message.kind {
                case .deliver(let installationID, let event):
                    group.addTask {
                        let outcome = await self.deliver(event, to: installationID, holder: self.node)
                        let answer = RelayMessage(id: message.id, from: self.node, kind: .outcome(outcome))
                        try? await relay.post(answer.text, to: message.from)
                    }
                case .outcome(let outcome):
                    state.withLock { $0.relayed.removeValue(forKey: message.id) }?.resume(returning: outcome)
                }
            }
            group.cancelAll()
        }
    }

    /// Hands an event to the node holding the installation's channel and waits for the outcome:
    /// the confirm window, and a little more for the round trip. No answer counts as unconfirmed.
    func relayDeliver(_ event: [String: JSONValue], to installationID: String, holder: String?) async -> Outcome {
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
        let window = confirmWindow + .seconds(5)
        return await withCheckedContinuation { continuation in
            state.withLock { $0.relayed[message.id] = continuation }
            Task {
                do {
                    try await relay.post(text, to: target)
                } catch {
                    self.resolveRelayed(message.id, .fellBack(reason: "the node holding the channel is unreachable"))
                }
            }
            Task {
                try? await Task.sleep(for: window)
                self.resolveRelayed(message.id, .fellBack(reason: "the node holding the channel did not answer"))
            }
        }
    }

    private func resolveRelayed(_ id: String, _ outcome: Outcome) {
        state.withLock { $0.relayed.removeValue(forKey: id) }?.resume(returning: outcome)
    }
}

/// A message between nodes' channels, as JSON text.
struct RelayMessage {
    enum Kind {
        case deliver(installationID: String, event: [String: JSONValue])
        case outcome(DirectChannels.Outcome)
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
            case .string("fell_back")?:
                guard case .string(let reason)? = object["reason"] else { return nil }
                self.kind = .outcome(.fellBack(reason: reason))
            default: return nil
            }
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
            case .fellBack(let reason):
                object["outcome"] = .string("fell_back")
                object["reason"] = .string(reason)
            }
        }
        return String(decoding: JSONValue.object(object).serialized(), as: UTF8.self)
    }
}
