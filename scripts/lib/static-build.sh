# breeze as it ships on Linux, for scripts/release and Benchmarks/run (source this file):
# release mode, the Swift runtime linked in (`--static-swift-stdlib`, which also spares every run
# ~6 ms of loading Foundation's shared libraries), and FreshAir's default traits off, so that
# URLSession (FoundationNetworking, hence libcurl and some thirty shared libraries) is left out:
# breeze syncs through AsyncHTTPClient. The binary needs only glibc, libstdc++ and zlib. Its own
# build folder, so the debug and plain release builds are left alone.
static_build=(swift build -c release --static-swift-stdlib --disable-default-traits --build-path .build-static)
