import Testing

@testable import HeraldProviderMocks

@Suite("ConnectionScriptState: GOAWAY and drop bookkeeping")
struct ConnectionScriptStateTests {
    @Test("Without a script every stream is served")
    func noScript() {
        var state = ConnectionScriptState()
        for id in stride(from: 1, through: 9, by: 2) {
            #expect(state.streamOpened(streamID: id, script: nil, generation: 0) == (.serve(counted: false), .none))
        }
        #expect(state.peakOpenStreams == 5)
        #expect(state.streamFinished(counted: false) == .none)
        state.streamClosed()
        _ = state.streamOpened(streamID: 11, script: nil, generation: 0)
        #expect(state.peakOpenStreams == 5)
    }

    @Test("GOAWAY names the n-th stream, refuses later ones and closes once the served streams finish")
    func goAway() {
        var state = ConnectionScriptState()
        let script = ConnectionScript.goAway(afterStreams: 2)
        #expect(state.streamOpened(streamID: 1, script: script, generation: 1) == (.serve(counted: true), .none))
        #expect(
            state.streamOpened(streamID: 3, script: script, generation: 1)
                == (.serve(counted: true), .sendGoAway(lastStreamID: 3)))
        #expect(state.streamOpened(streamID: 5, script: script, generation: 1) == (.refuse, .none))
        #expect(state.streamFinished(counted: true) == .none)
        #expect(state.streamFinished(counted: true) == .close)
    }

    @Test("Counting starts at the stream after the script is set")
    func countsFromScript() {
        var state = ConnectionScriptState()
        _ = state.streamOpened(streamID: 1, script: nil, generation: 0)
        _ = state.streamOpened(streamID: 3, script: nil, generation: 0)
        let script = ConnectionScript.goAway(afterStreams: 1)
        #expect(
            state.streamOpened(streamID: 5, script: script, generation: 1)
                == (.serve(counted: true), .sendGoAway(lastStreamID: 5)))
        // The two streams from before the script still hold the connection open.
        #expect(state.streamFinished(counted: true) == .none)
        #expect(state.streamFinished(counted: false) == .none)
        #expect(state.streamFinished(counted: false) == .close)
    }

    @Test("A drop script holds later streams and drops after the n-th answer")
    func drop() {
        var state = ConnectionScriptState()
        let script = ConnectionScript.drop(afterStreams: 2)
        #expect(state.streamOpened(streamID: 1, script: script, generation: 1) == (.serve(counted: true), .none))
        #expect(state.streamOpened(streamID: 3, script: script, generation: 1) == (.serve(counted: true), .none))
        #expect(state.streamOpened(streamID: 5, script: script, generation: 1) == (.hold, .none))
        #expect(state.streamFinished(counted: true) == .none)
        #expect(state.streamFinished(counted: true) == .drop)
        #expect(state.streamOpened(streamID: 7, script: script, generation: 1) == (.refuse, .none))
    }

    @Test("A new script generation restarts the count; removing the script serves everything")
    func newGeneration() {
        var state = ConnectionScriptState()
        let first = ConnectionScript.drop(afterStreams: 1)
        #expect(state.streamOpened(streamID: 1, script: first, generation: 1) == (.serve(counted: true), .none))
        let second = ConnectionScript.drop(afterStreams: 2)
        #expect(state.streamOpened(streamID: 3, script: second, generation: 2) == (.serve(counted: true), .none))
        #expect(state.streamOpened(streamID: 5, script: second, generation: 2) == (.serve(counted: true), .none))
        #expect(state.streamOpened(streamID: 7, script: nil, generation: 3) == (.serve(counted: false), .none))
    }
}
