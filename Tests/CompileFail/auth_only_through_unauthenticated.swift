// EXPECT-ERROR: cannot convert value of type 'Unauthenticated' to expected argument type 'Authenticated'
// An account-only service cannot be built over the unauthenticated connection.
import SignalChat
import SwitchboardRuntime

func misuse(unauthenticated: InProcessTransport<Unauthenticated>) {
    let keys = KeysClient(transport: unauthenticated)
    _ = keys
}
