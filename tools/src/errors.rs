//! How the tools report a failure: one line on stderr, each cause once, and nothing at all
//! when the reader of their output went away (`| head`).

/// An error as one line: its context chain, each cause once (an I/O error's text is part of
/// the engine's message already).
pub fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line.replace('\n', " ")
}

/// Whether the error is stdout closed under us (`| head`): not the tool's failure.
pub fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
