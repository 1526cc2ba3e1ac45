// EXPECT-ERROR: missing argument for parameter 'accessKey'
// An endpoint that declares a key cannot be called without it.
import SignalChat
import SwitchboardRuntime

func misuse(client: SealedSenderKeysClient) async {
    _ = await client.getPreKeys(GetPreKeysRequest(identifier: "a", deviceId: "1"))
}
