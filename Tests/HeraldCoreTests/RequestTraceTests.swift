import HeraldCore
import Testing

@Suite("Request ids")
struct RequestTraceTests {
    @Test("A generated id is 32 lowercase hex digits, valid as a client's id, and new each time")
    func generated() {
        let ids = (0..<1000).map { _ in RequestTrace.generate() }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.utf8.count == 32 && RequestTrace.isValid(id))
            #expect(id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }, "\(id)")
        }
    }
}
