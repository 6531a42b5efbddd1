import Foundation
import HeraldTestSupport
import Testing

/// A small filesystem of its own (tmpfs) for one test, so the test can fill it or make it
/// read-only; needs root, as CI has.
struct ScratchFilesystem {
    let directory: TemporaryDirectory
    var path: String { directory.path }

    /// Whether this machine lets the tests mount a tmpfs (root, and a kernel that allows it); the tests that need one
    /// are reported as skipped otherwise.
    static let mountable: Bool = {
        guard let probe = try? mount(megabytes: 1) else { return false }
        probe.unmount()
        return true
    }()

    /// Mounts a tmpfs of `megabytes`, or nil when this machine does not let the tests mount one.
    static func mount(megabytes: Int) throws -> Self? {
        let directory = try TemporaryDirectory()
        guard run("/bin/mount", "-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", directory.path) else {
            directory.remove()
            return nil
        }
        return Self(directory: directory)
    }

    /// Remounts read-only (`true`) or read-write.
    func setReadOnly(_ readOnly: Bool) {
        #expect(Self.run("/bin/mount", "-o", "remount,\(readOnly ? "ro" : "rw")", path))
    }

    /// Fills the filesystem with one file until the disk is full.
    func fill() throws -> String {
        let filler = path + "/filler"
        _ = FileManager.default.createFile(atPath: filler, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
        defer { try? handle.close() }
        let chunk = Data(count: 64 * 1024)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        return filler
    }

    func unmount() {
        _ = Self.run("/bin/umount", "-l", path)
        directory.remove()
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: String...) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}

@Suite("A full disk and a read-only database")
struct StorageFailureTests {
    /// Registers one new installation; the answer's status and body.
    static func register(_ address: String, key: String) async throws -> (status: Int, body: String) {
        try await request(
            "POST", "\(address)/v1/installations", bearer: key,
            json: #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
    }

    /// Polls `GET /readyz` until its status is `status` and its body contains `text`; the last answer.
    static func readiness(
        _ address: String, becomes status: Int, containing text: String = ""
    ) async throws -> (status: Int, body: String) {
        var answer = (status: 0, body: "")
        // The caller checks the answer: a readiness that never comes shows there with its body.
        do {
            try await waitUntil("readyz \(status)", timeout: .seconds(20), every: .milliseconds(100)) {
                answer = try await request("GET", "\(address)/readyz")
                return answer.status == status && (text.isEmpty || answer.body.contains(text))
            }
        } catch is WaitTimedOut {}
        return answer
    }

    @Test(
        "Writes fail with 503 storage_unavailable, readyz says why, and both recover when space returns",
        .enabled(if: ScratchFilesystem.mountable, "needs to mount a tmpfs (root)"))
    func fullDiskAndReadOnly() async throws {
        let scratch = try #require(try ScratchFilesystem.mount(megabytes: 24))
        defer { scratch.unmount() }
        let server = try HeraldProcess(
            ["serve", "--database", "sqlite://\(scratch.path)/herald.sqlite", "--port", "0"])
        defer { server.process.terminate() }
        let address = try await server.line(startingWith: "Herald is listening on ")
        let key = try await server.line(startingWith: "server key: ")
        #expect(try await request("GET", "\(address)/readyz").status == 200)
        var accepted: [String] = []
        for _ in 0..<20 {
            let answer = try await Self.register(address, key: key)
            #expect(answer.status == 201, "\(answer.body)")
            accepted.append(answer.body)
        }

        // Disk full: every write is refused cleanly, never 500, until the space returns.
        let filler = try scratch.fill()
        var refused = 0
        for _ in 0..<400 where refused < 5 {
            let answer = try await Self.register(address, key: key)
            #expect(answer.status == 201 || answer.status == 503, "\(answer.body)")
            if answer.status == 503 {
                refused += 1
                #expect(answer.body.contains("storage_unavailable"), "\(answer.body)")
                #expect(answer.body.contains("nothing was changed"), "SQLite refused the change: \(answer.body)")
            } else {
                accepted.append(answer.body)
            }
        }
        #expect(refused == 5, "a full disk refused \(refused) of the registrations")
        let full = try await Self.readiness(address, becomes: 503, containing: "storage_unavailable")
        #expect(full.status == 503 && full.body.contains("storage_unavailable"), "\(full.body)")
        #expect(try await request("GET", "\(address)/healthz").status == 200, "the process itself is alive")
        try FileManager.default.removeItem(atPath: filler)
        #expect(try await Self.readiness(address, becomes: 200).status == 200)
        let afterFull = try await Self.register(address, key: key)
        #expect(afterFull.status == 201, "\(afterFull.body)")

        // Nothing accepted was lost.
        for body in accepted {
            let id = try #require(
                (try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["id"] as? String)
            #expect(try await request("GET", "\(address)/v1/installations/\(id)", bearer: key).status == 200)
        }
        #expect(!server.text.contains("internal_error"), "\(server.text)")

        // SQLite holds its file open for writing, so the kernel will not remount the volume
        // read-only under it; a server started on a read-only volume stops with a clear error.
        server.process.terminate()
        _ = try await server.exitStatus()
        scratch.setReadOnly(true)
        defer { scratch.setReadOnly(false) }
        let readOnly = try HeraldProcess(
            ["serve", "--database", "sqlite://\(scratch.path)/herald.sqlite", "--port", "0"])
        #expect(try await readOnly.exitStatus() != 0)
        #expect(readOnly.text.contains("Cannot create") || readOnly.text.contains("read-only"), "\(readOnly.text)")
    }

    /// An `LD_PRELOAD` library that makes `fsync` and `fdatasync` fail with `EIO` while the file its
    /// `HERALD_FAIL_FSYNC` variable names exists, compiled here with the machine's C compiler.
    static func failingSyncLibrary(in directory: TemporaryDirectory) async throws -> String {
        let source = directory.file("failsync.c")
        try """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <errno.h>
        #include <stdlib.h>
        #include <unistd.h>
        static int failing(void) {
            const char *trigger = getenv("HERALD_FAIL_FSYNC");
            return trigger != NULL && access(trigger, F_OK) == 0;
        }
        int fdatasync(int fd) {
            if (failing()) { errno = EIO; return -1; }
            int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
            return real(fd);
        }
        int fsync(int fd) {
            if (failing()) { errno = EIO; return -1; }
            int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
            return real(fd);
        }
        """.write(toFile: source, atomically: false, encoding: .utf8)
        let library = directory.file("libfailsync.so")
        let (status, _, errors) = try await ScriptProcess.run(["cc", "-shared", "-fPIC", "-o", library, source, "-ldl"])
        try #require(status == 0, "cc: \(errors)")
        return library
    }

    @Test(
        "A failed fsync is never answered as success: the write gets 503, readyz says so, and no later write is accepted until a restart"
    )
    func failedFsync() async throws {
        let directory = try TemporaryDirectory()
        let library = try await Self.failingSyncLibrary(in: directory)
        let trigger = directory.file("fail-fsync-now")
        let database = directory.file("herald.sqlite")
        let environment = ["LD_PRELOAD": library, "HERALD_FAIL_FSYNC": trigger]
        let server = try HeraldProcess(
            ["serve", "--database", "sqlite://\(database)", "--port", "0"], environment: environment)
        defer { server.process.terminate() }
        let address = try await server.line(startingWith: "Herald is listening on ")
        let key = try await server.line(startingWith: "server key: ")
        let first = try await Self.register(address, key: key)
        #expect(first.status == 201, "\(first.body)")

        // The disk fails one sync: that write is refused, not answered 201.
        FileManager.default.createFile(atPath: trigger, contents: nil)
        let refused = try await Self.register(address, key: key)
        #expect(refused.status == 503 && refused.body.contains("storage_unavailable"), "\(refused.body)")
        // The commit is in SQLite's log, unsynced: the answer does not say nothing was changed.
        #expect(refused.body.contains("may have been kept or not"), "\(refused.body)")
        // The disk answers again, but the kernel may have dropped what the failed sync should have written:
        // nothing is accepted as durable any more, and readiness says why, until Herald is restarted.
        try FileManager.default.removeItem(atPath: trigger)
        for _ in 0..<3 {
            let later = try await Self.register(address, key: key)
            #expect(
                later.status == 503 && later.body.contains("restart"),
                "\(later.body)\nwhat the server logged:\n\(server.text)")
        }
        let ready = try await Self.readiness(address, becomes: 503, containing: "restart")
        #expect(ready.status == 503 && ready.body.contains("restart"), "\(ready.body)")
        #expect(try await request("GET", "\(address)/healthz").status == 200)
        #expect(!server.text.contains("internal_error"), "\(server.text)")
        server.process.terminate()
        _ = try await server.exitStatus()

        // Restarted, it accepts writes again, and what it acknowledged before is there.
        let restarted = try HeraldProcess(
            ["serve", "--database", "sqlite://\(database)", "--port", "0"], environment: environment)
        defer { restarted.process.terminate() }
        let secondAddress = try await restarted.line(startingWith: "Herald is listening on ")
        #expect(try await Self.readiness(secondAddress, becomes: 200).status == 200)
        #expect(try await Self.register(secondAddress, key: key).status == 201)
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(first.body.utf8)) as? [String: Any])?["id"] as? String)
        #expect(try await request("GET", "\(secondAddress)/v1/installations/\(id)", bearer: key).status == 200)
    }

    @Test("PostgreSQL turned read-only: writes answer 503 storage_unavailable, readyz says so, both recover")
    func postgresReadOnly() async throws {
        let database = try await PostgresTestDatabase.create()
        do {
            try await postgresReadOnly(on: database)
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }

    private func postgresReadOnly(on database: PostgresTestDatabase) async throws {
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let server = try HeraldProcess(
            ["serve", "--port", "0"], environment: ["HERALD_SECRET_KEY": key, "HERALD_DATABASE": database.url])
        defer { server.process.terminate() }
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        let first = try await Self.register(address, key: serverKey)
        #expect(first.status == 201, "\(first.body)")

        // As after a fail-over to a standby: every new transaction is read-only.
        let endSessions =
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database.name)' "
            + "AND pid <> pg_backend_pid()"
        try await database.administer("ALTER DATABASE \(database.name) SET default_transaction_read_only = on")
        try await database.administer(endSessions)
        let readOnly = try await Self.readiness(address, becomes: 503, containing: "read-only")
        #expect(readOnly.status == 503 && readOnly.body.contains("read-only"), "\(readOnly.body)")
        var refused = (status: 0, body: "")
        for _ in 0..<50 {
            refused = try await Self.register(address, key: serverKey)
            if refused.status == 503 { break }
        }
        #expect(refused.status == 503 && refused.body.contains("storage_unavailable"), "\(refused.body)")
        #expect(try await request("GET", "\(address)/healthz").status == 200)

        try await database.administer("ALTER DATABASE \(database.name) RESET default_transaction_read_only")
        try await database.administer(endSessions)
        #expect(try await Self.readiness(address, becomes: 200).status == 200)
        var recovered = 0
        for _ in 0..<50 where recovered == 0 {
            recovered = try await Self.register(address, key: serverKey).status == 201 ? 1 : 0
        }
        #expect(recovered == 1)
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(first.body.utf8)) as? [String: Any])?["id"] as? String)
        #expect(try await request("GET", "\(address)/v1/installations/\(id)", bearer: serverKey).status == 200)
    }
}
