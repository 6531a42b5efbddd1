import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A LazyFS mount for one run: a FUSE file system that keeps what is written in its own cache until
/// it is synced, so clearing that cache loses exactly the bytes nobody synced — what a power loss or
/// a kernel crash loses (metadata, though, reaches the disk at once: a missing directory sync cannot
/// show here). LazyFS is not in the repository: `scripts/bootstrap` builds it from
/// `../shared/tools/lazyfs` and links it as `.build/lazyfs` (docs/testing.md).
struct LazyFSMount {
    /// `lazyfs.sh`, which mounts LazyFS and drives it through its command FIFO.
    static let script: String = {
        if let path = ProcessInfo.processInfo.environment["HERALD_LAZYFS_SCRIPT"] { return path }
        return repository.deletingLastPathComponent().appendingPathComponent("shared/tools/lazyfs/lazyfs.sh").path
    }()
    /// The LazyFS binary `scripts/bootstrap` built.
    static let binary: String =
        ProcessInfo.processInfo.environment["LAZYFS_BIN"]
        ?? repository.appendingPathComponent(".build/lazyfs/lazyfs/lazyfs").path
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Where the file system is mounted: the files a test puts here can lose their unsynced data.
    let path: String
    let backing: String
    let state: String
    let cacheSize: String

    /// Mounts LazyFS over a new directory in `directory`, with a cache of `cacheSize` (`256mb`): larger than
    /// everything the run writes, or LazyFS writes through and hides a loss (``usage()`` tells).
    init(in directory: TemporaryDirectory, cacheSize: String = "256mb") async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary)
                && FileManager.default.fileExists(atPath: Self.script),
            "LazyFS is missing (\(Self.binary), \(Self.script)): run scripts/bootstrap with ../shared beside the clone")
        path = directory.file("lazyfs")
        backing = directory.file("lazyfs-backing")
        state = directory.file("lazyfs-state")
        self.cacheSize = cacheSize
        // The test peer's start can report "LazyFS exited during start", printing nothing else, while
        // LazyFS runs on (it read the new process's command line before the exec; seen on a loaded
        // machine), and then refuses the next start: it is stopped, and started once more.
        let (status, text) = await invoke("start", path, backing)
        if status != 0 && text.contains("exited during start") {
            _ = await invoke("stop", path)
            try await run("start", path, backing)
        } else {
            try #require(status == 0, "lazyfs.sh start: \(text)")
        }
    }

    /// Drops every byte not synced, as a power loss does; what was synced stays. Run it only once the
    /// writers are dead: a process still writing would append after the hole.
    func clearCache() async throws { try await run("clear-cache", path) }

    /// The share of the cache in use, in percent; at 100 LazyFS writes through and a run proves nothing.
    func usage() async throws -> Double {
        let output = try await run("usage", path)
        let number = output.split(whereSeparator: { !"0123456789.".contains($0) }).compactMap { Double($0) }.first
        return try #require(number, "lazyfs usage: \(output)")
    }

    /// The bytes written and not synced, as LazyFS reports them (its unsynced-data report).
    func unsyncedBytes() async throws -> Int {
        let output = try await run("report", path)
        guard let line = output.split(separator: "\n").first(where: { $0.contains("total number of bytes un-fsynced") })
        else { return 0 }
        return line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }.last ?? 0
    }

    /// Sends LazyFS a fault command (`lazyfs::crash::timing=after::op=write::from_rgx=…`: LazyFS kills itself at
    /// that operation, every byte not synced lost, the mount left dead until ``restart()``).
    func arm(_ command: String) async throws { try await run("cmd", path, command) }

    /// Whether LazyFS still runs (a crash fault has not fired).
    func isRunning() async throws -> Bool { try await run("status", path).contains("pid ") }

    /// Waits until an armed crash fault has fired.
    func waitForCrash(_ instant: String, timeout: Duration = .seconds(20)) async throws {
        try await waitUntil("LazyFS to crash \(instant)", timeout: timeout) { try await !isRunning() }
    }

    /// Mounts LazyFS again over the same backing directory, after a crash (what was synced is all there is).
    func restart() async throws { try await run("start", path, backing) }

    /// Unmounts without flushing.
    func stop() async {
        _ = try? await run("stop", path)
    }

    /// Unmounts without flushing, waiting here (for a `defer` when a run fails half-way).
    func stopNow() {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["bash", Self.script, "stop", path]
        var environment = ProcessInfo.processInfo.environment
        environment["LAZYFS_STATE_ROOT"] = state
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        process.waitUntilExit()
    }

    @discardableResult
    private func run(_ arguments: String...) async throws -> String {
        let (status, text) = await invoke(arguments)
        try #require(status == 0, "lazyfs.sh \(arguments.joined(separator: " ")): \(text)")
        return text
    }

    /// Runs `lazyfs.sh` with `arguments`: its exit status and what it printed.
    private func invoke(_ arguments: String...) async -> (status: Int32, text: String) {
        await invoke(arguments)
    }

    private func invoke(_ arguments: [String]) async -> (status: Int32, text: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["LAZYFS_BIN"] = Self.binary
        environment["LAZYFS_CACHE_SIZE"] = cacheSize
        environment["LAZYFS_STATE_ROOT"] = state
        let output = state + ".out"
        let wrapper = #"out=$1; shift; exec bash "$@" >"$out" 2>&1 </dev/null"#
        let command = ["/bin/bash", "-c", wrapper, "lazyfs", output, Self.script] + arguments
        let status = await Self.spawnAndWait(command, environment: environment)
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    /// Runs `command` and waits for it with `waitpid` on a thread of its own. Not Foundation's `Process`:
    /// `lazyfs.sh start` leaves a daemon behind (setsid), and Process then never saw the script exit (it
    /// stayed a zombie, its termination handler never called).
    static func spawnAndWait(_ command: [String], environment: [String: String]) async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var pid: pid_t = 0
                let arguments = command.map { strdup($0) } + [nil]
                let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
                defer {
                    for pointer in arguments + variables { free(pointer) }
                }
                guard posix_spawn(&pid, command[0], nil, nil, arguments, variables) == 0 else {
                    return continuation.resume(returning: -1)
                }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                // WIFEXITED / WEXITSTATUS, which Swift does not import as functions.
                continuation.resume(returning: status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f))
            }
        }
    }
}
