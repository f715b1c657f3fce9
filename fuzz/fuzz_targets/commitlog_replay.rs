//! Fuzz target `commitlog_replay`: its body is `supercolumn::fuzz::commitlog_replay`, which the engine's tests also run
//! on random and mutated inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = supercolumn::fuzz::commitlog_replay(data);
});
