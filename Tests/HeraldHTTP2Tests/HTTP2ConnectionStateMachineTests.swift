import Testing

@testable import HeraldHTTP2

@Suite("HTTP/2 connection state machine")
struct HTTP2ConnectionStateMachineTests {
    typealias Machine = HTTP2ConnectionStateMachine<String>

    private func sent(_ actions: [Machine.Action]) -> [Int: String] {
        var result: [Int: String] = [:]
        for case .send(let id, let request) in actions { result[id] = request }
        return result
    }

    private func names(_ actions: [Machine.Action], _ pick: (Machine.Action) -> String?) -> [String] {
        actions.compactMap(pick)
    }

    @Test("Requests get odd stream ids up to the limit, then wait")
    func streamLimit() {
        var machine = Machine(initialMaxConcurrentStreams: 2, maxPending: 10)
        #expect(sent(machine.enqueue("a")) == [1: "a"])
        #expect(sent(machine.enqueue("b")) == [3: "b"])
        #expect(machine.enqueue("c").isEmpty)
        #expect(machine.pending.count == 1)
        let done = machine.streamCompleted(1)
        #expect(names(done) { if case .complete(let r) = $0 { r } else { nil } } == ["a"])
        #expect(sent(done) == [5: "c"])
    }

    @Test("SETTINGS lowering the limit to 1 and raising it again")
    func settings() {
        var machine = Machine(initialMaxConcurrentStreams: 100, maxPending: 100)
        #expect(machine.settingsReceived(maxConcurrentStreams: 1).isEmpty)
        _ = machine.enqueue("a")
        for name in ["b", "c", "d"] { #expect(machine.enqueue(name).isEmpty) }
        #expect(machine.openCount == 1)
        let raised = machine.settingsReceived(maxConcurrentStreams: 1000)
        #expect(Set(sent(raised).values) == ["b", "c", "d"])
        #expect(machine.openCount == 4)
        #expect(machine.settingsReceived(maxConcurrentStreams: nil).isEmpty)
    }

    @Test("A full queue sends requests to another connection")
    func boundedQueue() {
        var machine = Machine(initialMaxConcurrentStreams: 1, maxPending: 1)
        _ = machine.enqueue("a")
        #expect(machine.enqueue("b").isEmpty)
        let overflow = machine.enqueue("c")
        #expect(names(overflow) { if case .retry(let r) = $0 { r } else { nil } } == ["c"])
    }

    @Test("GOAWAY: streams above last-stream-id and waiting requests retry; the rest finish, then close")
    func goAway() {
        var machine = Machine(initialMaxConcurrentStreams: 3, maxPending: 10)
        for name in ["a", "b", "c", "d"] { _ = machine.enqueue(name) }  // a=1 b=3 c=5, d waits
        let actions = machine.goAwayReceived(lastStreamID: 3)
        #expect(Set(names(actions) { if case .retry(let r) = $0 { r } else { nil } }) == ["c", "d"])
        #expect(!machine.isAcceptingRequests)
        #expect(names(machine.enqueue("e")) { if case .retry(let r) = $0 { r } else { nil } } == ["e"])
        #expect(!machine.streamCompleted(1).contains { if case .close = $0 { true } else { false } })
        let last = machine.streamCompleted(3)
        #expect(names(last) { if case .complete(let r) = $0 { r } else { nil } } == ["b"])
        #expect(last.contains { if case .close = $0 { true } else { false } })
    }

    @Test("Connection loss fails requests in flight and retries the ones never sent")
    func connectionLoss() {
        var machine = Machine(initialMaxConcurrentStreams: 1, maxPending: 10)
        _ = machine.enqueue("a")
        _ = machine.enqueue("b")
        let actions = machine.connectionClosed()
        #expect(names(actions) { if case .fail(let r, .connectionClosed) = $0 { r } else { nil } } == ["a"])
        #expect(names(actions) { if case .retry(let r) = $0 { r } else { nil } } == ["b"])
        #expect(machine.connectionClosed().isEmpty)
    }

    @Test("REFUSED_STREAM retries; other resets and timeouts fail")
    func resets() {
        var machine = Machine(initialMaxConcurrentStreams: 10, maxPending: 10)
        _ = machine.enqueue("a")
        _ = machine.enqueue("b")
        _ = machine.enqueue("c")
        #expect(
            names(machine.streamReset(1, refused: true, errorCode: 7)) { if case .retry(let r) = $0 { r } else { nil } }
                == ["a"])
        #expect(
            names(machine.streamReset(3, refused: false, errorCode: 2)) {
                if case .fail(let r, .streamReset(code: 2)) = $0 { r } else { nil }
            } == ["b"])
        #expect(
            names(machine.streamFailed(5, error: .requestTimeout)) {
                if case .fail(let r, .requestTimeout) = $0 { r } else { nil }
            } == ["c"])
        #expect(machine.streamCompleted(5).isEmpty)  // an unknown stream changes nothing
    }
}

@Suite("HTTP/2 stream cap")
struct HTTP2StreamCapTests {
    @Test("Herald's own cap bounds the peer's limit")
    func cap() {
        var machine = HTTP2ConnectionStateMachine<Int>(initialMaxConcurrentStreams: 100, streamCap: 2, maxPending: 10)
        #expect(machine.maxConcurrentStreams == 2)
        _ = machine.settingsReceived(maxConcurrentStreams: 1000)
        #expect(machine.maxConcurrentStreams == 2)
        _ = machine.settingsReceived(maxConcurrentStreams: 1)
        #expect(machine.maxConcurrentStreams == 1)
    }
}
