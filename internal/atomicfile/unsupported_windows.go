package atomicfile

// mcptape runs on Linux and macOS (README.md, Platforms). Windows would
// need its own ways to share a cassette between processes (the store's
// flock leases), to stop a server with the processes it started (the
// recorder's process group and signals), and to tell whether a recorder
// still runs. Until it has them, and a machine to test them on, a build
// for Windows stops here, at the first package everything imports, with
// this name as its one error rather than a page of undefined Unix calls.
var _ = mcptape_runs_on_Linux_and_macOS_only__see_README_Platforms
