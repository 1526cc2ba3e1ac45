extension Duration {
    /// Whole milliseconds, rounded up and saturating at `Int32.max` (about 24 days), for
    /// `poll`: a huge configured timeout means "wait long", never an overflow trap.
    var pollMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return .max }
        return Int32(clamping: whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000 + (attoseconds % 1_000_000_000_000_000 > 0 ? 1 : 0)).partialValue)
    }

    /// Nanoseconds, saturating at `Int.max`, for Dispatch.
    var saturatingNanoseconds: Int {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowAgain ? .max : Int(total)
    }
}
