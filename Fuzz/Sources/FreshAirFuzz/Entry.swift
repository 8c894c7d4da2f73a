/// libFuzzer's entry point: each input goes to the target `FRESHAIR_FUZZ_TARGET` names.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTarget.selected.run(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
