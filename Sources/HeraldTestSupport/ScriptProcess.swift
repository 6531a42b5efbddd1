import Foundation

/// Runs the scripts tests drive (an SDK, Home Assistant's own code, `scripts/postgres`).
public enum ScriptProcess {
    /// Runs `arguments` through `/usr/bin/env` with `environment` (nil: this process's); its exit
    /// status, standard output and standard error.
    public static func run(
        _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let environment { process.environment = environment }
        // Files, not pipes: a script may print more than a pipe holds, and reading a pipe while it
        // runs would block one of the few cooperative threads the server needs.
        let directory = try TemporaryDirectory()
        let outputPath = directory.file("stdout")
        let errorsPath = directory.file("stderr")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorsPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: errorsPath))
        process.standardOutput = output
        process.standardError = errors
        // Not waitUntilExit: blocking one of the few cooperative threads would starve the server.
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        try? output.close()
        try? errors.close()
        let out = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        directory.remove()
        return (status, out, err)
    }
}
