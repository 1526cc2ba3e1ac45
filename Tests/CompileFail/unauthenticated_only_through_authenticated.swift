// EXPECT-ERROR: cannot convert value of type 'Authenticated' to expected argument type 'Unauthenticated'
// Sealed-sender sends need the unauthenticated connection; the account's socket is refused.
import SignalChat
import SwitchboardRuntime

func misuse(authenticated: FakeServerTransport<Authenticated>) {
    let sealed = SealedSenderMessagesClient(transport: authenticated)
    _ = sealed
}
