#if canImport(Glibc)
    import Glibc
#endif

/// How many heaps glibc's allocator keeps for a serving process.
///
/// glibc gives each thread that allocates while the others hold their heaps ("arenas") a heap of its
/// own, up to eight per core. A freed block goes back to the heap it came from, so every heap grows
/// to the working set of the threads that happen to use it, and a thread Swift's executor or
/// libdispatch starts late (a burst, half an hour in) opens one more that grows the same way: the
/// PostgreSQL soak's RSS stepped from 174 to 202 MB when a seventh thread appeared at minute 30.
/// Two heaps hold the working set twice at most, for a little contention on two cores.
///
/// `MALLOC_ARENA_MAX` or `GLIBC_TUNABLES` with `glibc.malloc.arena_max`, set by the operator, win.
public enum MallocArenas {
    /// The heaps `herald serve` keeps unless the environment says otherwise.
    public static let serving: Int32 = 2

    /// glibc's `M_ARENA_MAX` (`malloc.h`), which Swift's Glibc module does not export.
    static let arenaMaxParameter: Int32 = -8

    /// Whether the environment sets the limit itself.
    public static func setByEnvironment(_ environment: [String: String]) -> Bool {
        environment["MALLOC_ARENA_MAX"] != nil || environment["GLIBC_TUNABLES"]?.contains("arena_max") == true
    }

    /// Limits the heaps to `count`, unless the environment sets the limit. Call it first thing: glibc
    /// fixes its limit once the process has eight heaps.
    /// - Returns: Whether this call set the limit (false: the environment's, or not glibc).
    @discardableResult
    public static func limit(to count: Int32 = serving, environment: [String: String]) -> Bool {
        guard !setByEnvironment(environment) else { return false }
        #if canImport(Glibc)
            // `mallopt` is glibc's; Swift's Glibc module does not export `malloc.h`, so it is looked up.
            guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "mallopt") else { return false }
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            return unsafeBitCast(symbol, to: Mallopt.self)(arenaMaxParameter, count) == 1
        #else
            return false
        #endif
    }
}
