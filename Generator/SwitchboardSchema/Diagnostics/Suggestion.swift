/// "Did you mean" hints for names typed by hand: in schemas, and in the JSON given to
/// `switchboard call`.
public enum Suggestion {
    /// The candidate closest to `word` (within two edits), if any.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        Parser.suggest(word, among: candidates)
    }
}
