import Foundation
import Synchronization

/// A test peer driven step by step (`scripts/matrix-synapse.py`): one JSON object a line each way,
/// requests written to its standard input, answers read from its standard output — a file polled,
/// as ``ScriptProcess`` does, so no cooperative thread ever blocks on a pipe.
public final class ConversationProcess: Sendable {
    private let process: Process
    private let input: Pipe
    private let directory: TemporaryDirectory
    private let outputPath: String
    /// How many of its output lines were read.
    private let consumed = Mutex(0)

    /// Starts `arguments` through `/usr/bin/env`.
    public init(_ arguments: [String]) throws {
        directory = try TemporaryDirectory()
        outputPath = directory.file("stdout")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: directory.file("stderr"), contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        input = Pipe()
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.file("stderr")))
        try process.run()
    }

    /// Everything it wrote to standard error so far.
    public var errors: String { (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? "" }

    /// Its next output line, parsed.
    /// - Throws: ``ConversationFailure`` when no line comes within `timeout`, or it exits first.
    public func next(timeout: Duration = .seconds(60)) async throws -> [String: Any] {
        var answer: [String: Any]?
        var running = true
        do {
            try await waitUntil("an answer", timeout: timeout, every: .milliseconds(25)) {
                running = process.isRunning
                let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                let index = consumed.withLock { $0 }
                guard lines.count > index else { return !running }
                consumed.withLock { $0 = index + 1 }
                let line = lines[lines.startIndex + index]
                guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    throw ConversationFailure("not a JSON object: \(line)")
                }
                answer = object
                return true
            }
        } catch is WaitTimedOut {}
        if let answer { return answer }
        throw ConversationFailure(
            (running ? "no answer in time" : "it exited (\(process.terminationStatus))") + "; stderr:\n\(errors)")
    }

    /// Sends one request and returns its answer.
    public func ask(_ request: [String: Any], timeout: Duration = .seconds(60)) async throws -> [String: Any] {
        var line = try JSONSerialization.data(withJSONObject: request)
        line.append(0x0A)
        input.fileHandleForWriting.write(line)
        return try await next(timeout: timeout)
    }

    /// Closes its input (it ends then) and waits for it to exit; kills it past `timeout`.
    public func finish(timeout: Duration = .seconds(20)) async {
        try? input.fileHandleForWriting.close()
        try? await waitUntil("the peer's exit", timeout: timeout, every: .milliseconds(50)) { !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        directory.remove()
    }
}

/// A conversation with a test peer went wrong.
public struct ConversationFailure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
