import ArgumentParser

/// `herald-bench`: measurements that need code inside the process, run by the scripts in `bench/`.
@main
struct HeraldBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-bench", abstract: "Benchmarks of Herald that bench/*.sh run.",
        subcommands: [PoolBench.self, LatencyBench.self, NotifyBench.self], defaultSubcommand: PoolBench.self)
}
