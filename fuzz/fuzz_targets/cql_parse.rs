//! Fuzz target `cql_parse`: its body is `supercolumn::fuzz::cql_parse`, which the engine's tests also run
//! on random and mutated inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = supercolumn::fuzz::cql_parse(data);
});
