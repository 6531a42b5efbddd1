import ArgumentParser
import Foundation
import HeraldWebPush

/// `herald vapid`: makes a VAPID key pair for Web Push (RFC 8292).
struct Vapid: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate a VAPID key pair for Web Push.",
        discussion: """
            Writes the private key (PEM, mode 0600) to --out and prints the public key in the base64url \
            form browsers take as applicationServerKey. Point app.<id>.webpush.vapid_private_key_file at the \
            file and set app.<id>.webpush.subject to a mailto: or https: contact.

            Examples:
              herald vapid --out /etc/herald/vapid.pem
              herald vapid --out vapid.pem --force        (a new key: subscribed browsers must subscribe again)
            """)

    @Option(name: .long, help: "Where to write the private key.")
    var out = "vapid-private-key.pem"

    @Flag(name: .long, help: "Replace the file if it exists.")
    var force = false

    func run() async throws {
        if FileManager.default.fileExists(atPath: out), !force {
            throw ValidationError(
                "\(out) exists; pass --force to replace it (browsers subscribed with its key stop receiving).")
        }
        let key = VAPIDKey.generate()
        // Created with 0600 before a byte of the key is written.
        guard FileManager.default.createFile(atPath: out, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: out)
        else { throw ValidationError("Cannot write \(out).") }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data((key.pemRepresentation + "\n").utf8))
        try handle.close()
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: out)
        print("private key: \(out)")
        print("public key: \(key.publicKeyBase64URL)")
    }
}
