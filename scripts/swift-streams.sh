# The three streams of Swift tests, shared by scripts/test and scripts/flake-hunt (sourced, not run).
# Stream 1: the process-level suites (herald serve as a process, kill -9, several nodes) and the
# PostgreSQL store's; stream 2: the provider fault matrix (mostly waiting out timeouts and pauses) and
# the power-loss tests (the loop, and the losses aimed at one instant); stream 3: the other suites.
stream_one='^(heraldTests|HeraldPostgresTests)\.'
stream_two='^(HeraldServerTests\.ProviderFaultTests|heraldTests\.PowerLoss)'
# swift_stream N BINARY: runs Swift stream N (1 to 3) of the test bundle BINARY, one test at a time.
swift_stream() {
    case $1 in
    1) "$2" --testing-library swift-testing --no-parallel --filter "$stream_one" --skip "$stream_two" ;;
    2) "$2" --testing-library swift-testing --no-parallel --filter "$stream_two" ;;
    3) "$2" --testing-library swift-testing --no-parallel --skip "$stream_one" --skip "$stream_two" ;;
    esac
}
