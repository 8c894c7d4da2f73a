# breeze as it ships on Linux, for scripts/release and Benchmarks/run (source this file):
# release mode, the Swift runtime linked in (`--static-swift-stdlib`, which also spares every run
# ~6 ms of loading Foundation's shared libraries), and FreshAir's default traits off, so that
# URLSession (FoundationNetworking, hence libcurl and some thirty shared libraries) is left out:
# breeze syncs through AsyncHTTPClient. The binary needs only glibc, libstdc++ and zlib. Its own
# build folder, so the debug and plain release builds are left alone.
# `--no-export-dynamic` undoes the `-export-dynamic` of Swift's static-stdlib link, which made each
# of the binary's symbols dynamic (2.4 MB of names) for the loader to read and `dladdr` to search at
# every start. The binary ships stripped and nothing looks its symbols up. Measured 2026-11-26
# (hyperfine, a no-change sync of 10,000 files): start 4.8 -> 3.9 ms, the check 16.2 -> 14.3 ms,
# peak RSS 35.7 -> 32.1 MB. Packed relative relocations (lld, `-z pack-relative-relocs`) saved
# 3.5 MB more, but need glibc 2.36: Ubuntu 22.04 could no longer run the binary.
#
# Code layout: every function in its own section (`-function-sections`, `-ffunction-sections`) and
# lld laying out first, side by side, the functions scripts/lib/breeze.order names (what the
# everyday commands run; scripts/order-file writes it). Each page fault maps 64 KB of code around
# it, so code spread by module kept 14 MB of breeze resident for a no-change check; measured
# 2026-11-27 (stripped, 100,000-file bundle, the same code linked both ways): no-change
# 29.7-29.9 -> 23.4-23.9 MB peak RSS, cold sync 51.1-51.7 -> 46.2-46.9 MB. The Swift runtime and
# Foundation come prebuilt with a section per file, not per function, and move whole.
static_build_order="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/breeze.order"
static_build=(swift build -c release --static-swift-stdlib --disable-default-traits --build-path .build-static
    -Xlinker --no-export-dynamic
    -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xswiftc -use-ld=lld)
if [ -f "$static_build_order" ]; then
    static_build+=(-Xlinker "--symbol-ordering-file=$static_build_order" -Xlinker --no-warn-symbol-ordering)
fi
