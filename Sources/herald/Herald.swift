import ArgumentParser

/// The `herald` command: the push gateway's server and its operator verbs.
@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Herald, a self-hosted unified push notification gateway.",
        subcommands: [
            Serve.self, Send.self, Listen.self, Import.self, Export.self, Migrate.self, Cleanup.self, Keys.self,
            Vapid.self, Config.self, Health.self, Webhooks.self,
        ],
        defaultSubcommand: Serve.self)
}
