import Foundation

/// The project's Python environments, which `scripts/bootstrap` builds under `<repository>/.python/`
/// from pinned lock files: the tests run their Python peers (moto, boto3, Selenium, Home
/// Assistant's notify code, LeanCloud's SDK) with these interpreters, never with the system's.
public enum TestPython: String, Sendable {
    /// moto, boto3, schemathesis, websockets, Selenium, cryptography: every peer whose pins agree.
    case tools
    /// Home Assistant's `mobile_app` notify code (its pins are its own).
    case homeAssistant = "homeassistant"
    /// LeanCloud's Python SDK (it pins Werkzeug, requests and urllib3 below the others).
    case leanCloud = "leancloud"
    /// A throwaway Synapse homeserver (`matrix-synapse`), the Matrix push gateway's real sender.
    case matrix

    /// The repository's root directory (this file is `Sources/HeraldTestSupport/TestPython.swift`).
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `scripts/NAME` in the repository.
    public static func script(_ name: String) -> String {
        repository.appendingPathComponent("scripts").appendingPathComponent(name).path
    }

    /// The environment's interpreter.
    public var executable: String {
        Self.repository.appendingPathComponent(".python/\(rawValue)/bin/python3").path
    }

    /// The interpreter, or an error that names the script that makes it: a test whose peer is
    /// missing fails, it is not skipped.
    public func interpreter() throws -> String {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestPythonMissing(
                "\(executable) is missing: run scripts/bootstrap (scripts/test runs it) to build the pinned "
                    + "Python environments the tests drive")
        }
        return executable
    }

    /// `[interpreter, script, arguments…]` for ``ScriptProcess/run(_:environment:)``.
    public func command(_ script: String, _ arguments: [String] = []) throws -> [String] {
        [try interpreter(), script] + arguments
    }
}

/// A Python environment of `scripts/bootstrap` is not there.
public struct TestPythonMissing: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
