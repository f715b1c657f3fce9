//! Fuzz target `sstable_read`: its body is `supercolumn::fuzz::sstable_read`, which the engine's tests also run
//! on random and mutated inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = supercolumn::fuzz::sstable_read(data);
});
