//! Fuzz target `storage_conf`: its body is `supercolumn::fuzz::storage_conf`, which the engine's tests also run
//! on random and mutated inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = supercolumn::fuzz::storage_conf(data);
});
