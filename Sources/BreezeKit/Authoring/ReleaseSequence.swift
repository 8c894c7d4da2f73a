import FreshAir

/// Release numbers. Devices never take a release whose sequence is not above the one they
/// installed, so every new release is one above the last; the count must not overflow, since
/// the number may come from a bucket anyone with write access can edit.
package enum ReleaseSequence {
    /// The sequence of the release after the one numbered `sequence` (1 after none).
    ///
    /// - Parameter source: where `sequence` was read, for the message.
    /// - Throws: ``PublishError`` of `kind` when `sequence` is the largest a manifest holds.
    package static func after(_ sequence: Int?, in source: String, kind: PublishError.Kind) throws(PublishError) -> Int
    {
        let (next, overflow) = (sequence ?? 0).addingReportingOverflow(1)
        guard overflow else { return next }
        throw PublishError(
            "\(source) has sequence \(sequence ?? 0), the largest a manifest holds, so no release can be above it. "
                + "If your key did not sign it, someone else wrote it and no device installed it: delete it and "
                + "release again. If your key did, devices that installed it take no later release under this identity",
            kind: kind
        )
    }
}
