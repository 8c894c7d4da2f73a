/// "1 file", "2 files": a count with its noun, for the one-line reports commands print.
func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
}
