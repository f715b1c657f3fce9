//! Fuzz target `cql_parse`: its body is `supercolumn_cql::fuzz::cql_parse`, which the CQL crate's tests also run
//! on random and mutated inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = supercolumn_cql::fuzz::cql_parse(data);
});
