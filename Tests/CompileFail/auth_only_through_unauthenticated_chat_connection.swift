// EXPECT-ERROR: cannot convert value of type 'Unauthenticated' to expected argument type 'Authenticated'
// The chat connection carries its auth kind: an account-only service cannot be built over
// an unauthenticated chat connection.
import SignalChat
import SwitchboardChat
import SwitchboardRuntime

func misuse(unauthenticated: ChatConnection<Unauthenticated>) {
    let keys = KeysClient(transport: unauthenticated)
    _ = keys
}
