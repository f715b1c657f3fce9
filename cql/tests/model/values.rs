//! Each CQL type's test values, written out by hand: how CQL writes a value, the bytes
//! Cassandra serializes it to, and its rank among the type's values (the clustering order the
//! model expects). Nothing here comes from the engine.

/// A value: how CQL writes it, the bytes it serializes to, its rank among its type's values.
pub type Val = (&'static str, &'static [u8], u8);

/// Types with values usable in keys (ranked in the type's order).
pub const KEY_TYPES: &[(&str, &[Val])] = &[
    (
        "int",
        &[
            ("-70000", &[0xff, 0xfe, 0xee, 0x90], 0),
            ("-1", &[0xff, 0xff, 0xff, 0xff], 1),
            ("0", &[0, 0, 0, 0], 2),
            ("3", &[0, 0, 0, 3], 3),
        ],
    ),
    (
        "bigint",
        &[
            ("-5", &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfb], 0),
            ("7", &[0, 0, 0, 0, 0, 0, 0, 7], 1),
            ("4294967296", &[0, 0, 0, 1, 0, 0, 0, 0], 2),
        ],
    ),
    (
        "smallint",
        &[
            ("-300", &[0xfe, 0xd4], 0),
            ("2", &[0, 2], 1),
            ("300", &[1, 0x2c], 2),
        ],
    ),
    (
        "tinyint",
        &[("-128", &[0x80], 0), ("0", &[0], 1), ("127", &[0x7f], 2)],
    ),
    (
        "varint",
        &[
            ("-129", &[0xff, 0x7f], 0),
            ("-1", &[0xff], 1),
            ("0", &[0], 2),
            ("128", &[0, 0x80], 3),
            ("65536", &[1, 0, 0], 4),
        ],
    ),
    (
        "text",
        &[
            ("'A'", b"A", 0),
            ("'a'", b"a", 1),
            ("'ab'", b"ab", 2),
            ("'b''c'", b"b'c", 3),
            ("'\u{e9}'", "\u{e9}".as_bytes(), 4),
        ],
    ),
    (
        "ascii",
        &[("'x'", b"x", 0), ("'xy'", b"xy", 1), ("'y'", b"y", 2)],
    ),
    (
        "blob",
        &[
            ("0x00", &[0], 0),
            ("0x0001", &[0, 1], 1),
            ("0x01", &[1], 2),
            ("0xff", &[0xff], 3),
        ],
    ),
    ("boolean", &[("false", &[0], 0), ("true", &[1], 1)]),
    (
        "double",
        &[
            ("-2.5", &[0xc0, 0x04, 0, 0, 0, 0, 0, 0], 0),
            ("0.0", &[0; 8], 1),
            ("1.5", &[0x3f, 0xf8, 0, 0, 0, 0, 0, 0], 2),
            (
                "1e300",
                &[0x7e, 0x37, 0xe4, 0x3c, 0x88, 0x00, 0x75, 0x9c],
                3,
            ),
        ],
    ),
    (
        "float",
        &[
            ("-1.0", &[0xbf, 0x80, 0, 0], 0),
            ("0.5", &[0x3f, 0, 0, 0], 1),
            ("2.0", &[0x40, 0, 0, 0], 2),
        ],
    ),
    (
        "timestamp",
        &[
            (
                "-1000",
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc, 0x18],
                0,
            ),
            (
                "'1970-01-01 00:00:01+0000'",
                &[0, 0, 0, 0, 0, 0, 3, 0xe8],
                1,
            ),
            ("1374546754299", &[0, 0, 1, 0x40, 0x09, 0x5e, 0xfa, 0xfb], 2),
        ],
    ),
    (
        "date",
        &[
            ("'1969-12-31'", &[0x7f, 0xff, 0xff, 0xff], 0),
            ("'1970-01-01'", &[0x80, 0, 0, 0], 1),
            ("'1970-01-03'", &[0x80, 0, 0, 2], 2),
        ],
    ),
    (
        "time",
        &[
            ("'00:00:00'", &[0; 8], 0),
            ("'00:00:01.5'", &[0, 0, 0, 0, 0x59, 0x68, 0x2f, 0x00], 1),
            ("'23:59:59'", &[0, 0, 0x4e, 0x94, 0x55, 0xb4, 0x36, 0x00], 2),
        ],
    ),
    // Addresses order as bytes: the 16-byte ::1 starts with 00, before any IPv4 address here.
    (
        "inet",
        &[
            (
                "'::1'",
                &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                0,
            ),
            ("'1.2.3.4'", &[1, 2, 3, 4], 1),
            ("'10.0.0.1'", &[10, 0, 0, 1], 2),
        ],
    ),
];

/// Types seen only as regular columns.
pub const VALUE_TYPES: &[(&str, &[Val])] = &[
    // A non-frozen user type (`pt (x int, y text)`): a cell per field, read back as the frozen
    // form; never all null (a value of no cells is no value).
    (
        "pt",
        &[
            (
                "{x: 1, y: 'a'}",
                &[0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, b'a'],
                0,
            ),
            (
                "{x: -1}",
                &[0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                1,
            ),
            ("{y: ''}", &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0], 2),
        ],
    ),
    (
        "decimal",
        &[
            ("1.50", &[0, 0, 0, 2, 0, 0x96], 0),
            ("-3", &[0, 0, 0, 0, 0xfd], 1),
        ],
    ),
    (
        "uuid",
        &[(
            "5f0d6a10-f487-11e2-801f-df9895e5d0f8",
            &[
                0x5f, 0x0d, 0x6a, 0x10, 0xf4, 0x87, 0x11, 0xe2, 0x80, 0x1f, 0xdf, 0x98, 0x95, 0xe5,
                0xd0, 0xf8,
            ],
            0,
        )],
    ),
];

/// Frozen collections of scalars: one cell each, holding the collection's serialized form (a
/// count, then each element, a map's key then value, as an `int` length and bytes); a set's
/// elements and a map's keys sorted, as Cassandra writes them. Ranked as Cassandra orders them
/// (element by element, a shorter collection first), for keys, set elements and map keys.
pub const FROZEN_TYPES: &[(&str, &[Val])] = &[
    // A frozen user type (`pt (x int, y text)`): every field's length and bytes, `-1` for a
    // null; ordered field by field, a null before any value.
    (
        "frozen<pt>",
        &[
            ("{y: 'a'}", &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, b'a'], 0),
            (
                "{x: -1}",
                &[0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                1,
            ),
            (
                "{x: -1, y: 'a'}",
                &[0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, b'a'],
                2,
            ),
            ("{y: '', x: 2}", &[0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 0], 3),
        ],
    ),
    (
        "frozen<list<int>>",
        &[
            ("[]", &[0, 0, 0, 0], 0),
            ("[-1]", &[0, 0, 0, 1, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff], 1),
            (
                "[-1, 0]",
                &[
                    0, 0, 0, 2, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 4, 0, 0, 0, 0,
                ],
                2,
            ),
            (
                "[1, 2]",
                &[0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2],
                3,
            ),
        ],
    ),
    (
        "frozen<set<text>>",
        &[
            ("{}", &[0, 0, 0, 0], 0),
            ("{'a'}", &[0, 0, 0, 1, 0, 0, 0, 1, b'a'], 1),
            (
                "{'b', 'a'}",
                &[0, 0, 0, 2, 0, 0, 0, 1, b'a', 0, 0, 0, 1, b'b'],
                2,
            ),
            ("{'b'}", &[0, 0, 0, 1, 0, 0, 0, 1, b'b'], 3),
        ],
    ),
    (
        "frozen<map<int, text>>",
        &[
            ("{}", &[0, 0, 0, 0], 0),
            (
                "{1: 'y'}",
                &[0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, b'y'],
                1,
            ),
            (
                "{2: 'x', 1: 'y'}",
                &[
                    0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, b'y', 0, 0, 0, 4, 0, 0, 0, 2,
                    0, 0, 0, 1, b'x',
                ],
                2,
            ),
            (
                "{2: 'a'}",
                &[0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 1, b'a'],
                3,
            ),
        ],
    ),
];
