import HeraldServer
import Testing

@Suite("glibc's heaps (MallocArenas)")
struct MallocArenasTests {
    @Test("the operator's MALLOC_ARENA_MAX or GLIBC_TUNABLES wins; otherwise mallopt is found and takes the limit")
    func limit() {
        #expect(MallocArenas.setByEnvironment(["MALLOC_ARENA_MAX": "4"]))
        #expect(MallocArenas.setByEnvironment(["GLIBC_TUNABLES": "glibc.malloc.arena_max=4"]))
        #expect(!MallocArenas.setByEnvironment(["GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "HOME": "/"]))
        #expect(!MallocArenas.limit(to: 8, environment: ["MALLOC_ARENA_MAX": "8"]), "left to glibc")
        #if os(Linux)
            // Eight, glibc's own limit for a core: the test process keeps what it has.
            #expect(MallocArenas.limit(to: 8, environment: [:]), "mallopt(M_ARENA_MAX) not found or refused")
        #endif
    }
}
