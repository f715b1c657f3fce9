//! Fuzz target `native_frame`: its body is `supercolumn_server::fuzz_frames` (frames checked and
//! request messages decoded as a connection does), which the server's tests also run on
//! random frames. The first byte says whether LZ4 was negotiated.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((&flags, frames)) = data.split_first() {
        let _ = supercolumn_server::fuzz_frames(frames, flags & 1 == 1);
    }
});
