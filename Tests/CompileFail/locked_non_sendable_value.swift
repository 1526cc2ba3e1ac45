// EXPECT-ERROR: non-Sendable type 'Locked<Tally>'
// A Locked value is Sendable only when what it holds is: a mutable reference without its
// own locking cannot cross tasks inside one.
import SwitchboardRuntime

final class Tally { var count = 0 }

func share() -> @Sendable () -> Void {
    let tally = Locked(Tally())
    return { tally.withLock { $0.count += 1 } }
}
