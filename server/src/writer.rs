//! A connection's writer: one task per connection writing its answers as they complete, each
//! write within its deadline, and what it wrote counted in the connection's traffic. It reads
//! nothing from the client and runs no request.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufWriter};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc;

use crate::clients::Entry;
use crate::outbox::Charged;

/// Writes answers as they come (each returns its charge once written); a client that takes
/// none for `timeout` is given up on (the receiver closes, the reader stops, the requests
/// waiting to answer it end).
pub async fn write_loop(
    wr: OwnedWriteHalf,
    mut rx: mpsc::Receiver<Charged>,
    timeout: Duration,
    entry: Arc<Entry>,
) {
    let mut w = BufWriter::with_capacity(64 * 1024, wr);
    // Each write has its own deadline: a client that reads slowly but steadily is served.
    while let Some(out) = rx.recv().await {
        let mut wrote = write_one(&mut w, &out.frame, timeout).await;
        let mut bytes = out.frame.len();
        drop(out);
        // Answers that are already waiting go out in the same write.
        while let (Ok(()), Ok(more)) = (wrote, rx.try_recv()) {
            wrote = write_one(&mut w, &more.frame, timeout).await;
            bytes += more.frame.len();
        }
        if wrote.is_ok() {
            entry.traffic.bytes_out(bytes);
        }
        if wrote.is_err() || !matches!(tokio::time::timeout(timeout, w.flush()).await, Ok(Ok(()))) {
            rx.close();
            return;
        }
    }
    let _ = w.shutdown().await;
}

/// One frame into the writer's buffer, within `timeout`.
async fn write_one(
    w: &mut BufWriter<OwnedWriteHalf>,
    frame: &[u8],
    timeout: Duration,
) -> Result<(), ()> {
    match tokio::time::timeout(timeout, w.write_all(frame)).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(()),
    }
}
