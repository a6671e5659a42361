//! Tests of the `.npy` header: exact bytes NumPy writes, round trips,
//! every refusal, and decoding that never panics.

use super::*;
use crate::element::ALL;
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

const ORDERS: [Order; 2] = [Order::RowMajor, Order::ColumnMajor];

/// A preamble of `version` around `text`, its length field saying
/// `text.len()`.
fn preamble(version: (u8, u8), text: &[u8]) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[version.0, version.1]);
    if version.0 == 1 {
        bytes.extend_from_slice(&u16::try_from(text.len()).unwrap().to_le_bytes());
    } else {
        bytes.extend_from_slice(&u32::try_from(text.len()).unwrap().to_le_bytes());
    }
    bytes.extend_from_slice(text);
    bytes
}

/// A version 1.0 preamble around `text`.
fn v1(text: &str) -> Vec<u8> {
    preamble((1, 0), text.as_bytes())
}

/// The refusal of `bytes`, checked to be one sentence in the house style.
fn refused(bytes: &[u8]) -> String {
    match decode(bytes) {
        Err(Problem::Invalid(message)) => {
            assert!(
                message.chars().next().is_some_and(|c| !c.is_uppercase()),
                "{message}"
            );
            assert!(!message.ends_with('.'), "{message}");
            message
        }
        other => panic!(
            "expected a refusal of {:?}, got {other:?}",
            bytes.escape_ascii().to_string()
        ),
    }
}

/// The refusal of a version 1.0 header of `dict` and a newline.
fn refused_dict(dict: &str) -> String {
    refused(&v1(&format!("{dict}\n")))
}

/// What a version 1.0 header of `dict` and a newline says.
fn decoded_dict(dict: &str) -> Header {
    decode(&v1(&format!("{dict}\n"))).unwrap()
}

#[test]
fn encode_writes_what_numpy_writes() {
    // np.save(f, np.zeros((3, 4))) with NumPy 1.24.2.
    let mut numpy =
        b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }"
            .to_vec();
    numpy.extend_from_slice(&[b' '; 58]);
    numpy.push(b'\n');
    assert_eq!(numpy.len(), 128);
    assert_eq!(encode(ElementType::F64, Order::RowMajor, &[3, 4]), numpy);
}

#[test]
fn encode_writes_numpy_dicts() {
    // Observed from NumPy 1.24.2: the dict text, then spaces and '\n' to 128 bytes.
    let cases: [(ElementType, Order, &[usize], &str); 5] = [
        (
            ElementType::C32,
            Order::ColumnMajor,
            &[3, 4],
            "{'descr': '<c8', 'fortran_order': True, 'shape': (3, 4), }",
        ),
        (
            ElementType::U8,
            Order::RowMajor,
            &[5],
            "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }",
        ),
        (
            ElementType::I64,
            Order::RowMajor,
            &[usize::MAX, 2],
            "{'descr': '<i8', 'fortran_order': False, 'shape': (18446744073709551615, 2), }",
        ),
        (
            ElementType::I32,
            Order::RowMajor,
            &[123_456, 7, 89, 1],
            "{'descr': '<i4', 'fortran_order': False, 'shape': (123456, 7, 89, 1), }",
        ),
        (
            ElementType::U64,
            Order::ColumnMajor,
            &[1_000_000; 5],
            "{'descr': '<u8', 'fortran_order': True, 'shape': (1000000, 1000000, 1000000, 1000000, 1000000), }",
        ),
    ];
    for (element, order, shape, dict) in cases {
        let bytes = encode(element, order, shape);
        assert_eq!(bytes.len(), 128, "{dict}");
        assert_eq!(&bytes[..10], b"\x93NUMPY\x01\x00v\x00");
        assert_eq!(&bytes[10..10 + dict.len()], dict.as_bytes());
        assert!(bytes[10 + dict.len()..127].iter().all(|&b| b == b' '));
        assert_eq!(bytes[127], b'\n');
    }
    let zero_d = encode(ElementType::U8, Order::RowMajor, &[]);
    assert!(zero_d[10..].starts_with(b"{'descr': '|u1', 'fortran_order': False, 'shape': (), }"));
    assert_eq!(zero_d.len(), 128);
}

#[test]
fn encode_pads_like_numpy_at_the_boundaries() {
    // Lengths numpy.lib.format._write_array_header writes (NumPy 1.24.2).
    // The first two cases end exactly at a multiple of 64 before padding,
    // where NumPy pads with 64 more spaces rather than none.
    let mut fifteen = vec![3; 15];
    fifteen[0] = 1;
    let cases: [(ElementType, Order, Vec<usize>, usize, u8); 5] = [
        (
            ElementType::F64,
            Order::ColumnMajor,
            fifteen.clone(),
            192,
            1,
        ),
        (ElementType::C64, Order::ColumnMajor, fifteen, 192, 1),
        (ElementType::F32, Order::RowMajor, vec![0], 128, 1),
        (
            ElementType::F64,
            Order::RowMajor,
            vec![1; 21_800],
            65_536,
            1,
        ),
        (
            ElementType::F64,
            Order::RowMajor,
            vec![1; 21_900],
            65_792,
            2,
        ),
    ];
    for (element, order, shape, len, major) in cases {
        let bytes = encode(element, order, &shape);
        assert_eq!(bytes.len(), len, "{} dimensions", shape.len());
        assert_eq!(bytes[6..8], [major, 0]);
        let header = decode(&bytes).unwrap();
        assert_eq!(header.version, (major, 0));
        assert_eq!(header.data_offset, len);
        assert_eq!(header.shape, shape);
    }
    // 12^17000 elements: written, but refused when read.
    let bytes = encode(ElementType::F64, Order::ColumnMajor, &[12; 17_000]);
    assert_eq!(bytes.len(), 68_096);
    assert_eq!(bytes[6..8], [2, 0]);
    let message = refused(&bytes);
    assert!(
        message.contains("17000-dimensional shape has more than 2^64 elements"),
        "{message}"
    );
    // The 64-space case, byte for byte as NumPy writes it.
    let bytes = encode(
        ElementType::F64,
        Order::ColumnMajor,
        &[1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3],
    );
    assert_eq!(&bytes[8..10], b"\xb6\x00");
    let dict = "{'descr': '<f8', 'fortran_order': True, 'shape': (1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3), }";
    assert_eq!(&bytes[10..10 + dict.len()], dict.as_bytes());
    assert_eq!(bytes.len() - 10 - dict.len() - 1, 20 + 64);
}

#[test]
fn every_type_order_and_rank_round_trips() {
    let shapes: [&[usize]; 6] = [
        &[7],
        &[0],
        &[3, 4],
        &[2, 1, 5],
        &[4096, 4096, 2, 9],
        &[1, 0, 1, 0],
    ];
    for element in ALL {
        for order in ORDERS {
            for shape in shapes {
                let bytes = encode(element, order, shape);
                let header = decode(&bytes).unwrap();
                assert_eq!(
                    header,
                    Header {
                        element,
                        order,
                        shape: shape.to_vec(),
                        version: (1, 0),
                        data_offset: bytes.len(),
                    }
                );
                assert_eq!(bytes.len() % 64, 0);
                // Data after the header is not looked at.
                let mut file = bytes.clone();
                file.extend_from_slice(&[0xff; 100]);
                assert_eq!(decode(&file), Ok(header));
            }
        }
    }
}

#[test]
fn reads_numpy_version_2_and_3_files() {
    // np.lib.format.write_array(f, np.zeros((2, 3), np.int32), version=(2, 0)),
    // and the same with version=(3, 0), NumPy 1.24.2.
    for major in [2, 3] {
        let mut bytes = vec![0x93, b'N', b'U', b'M', b'P', b'Y', major, 0, b't', 0, 0, 0];
        bytes.extend_from_slice(b"{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }");
        bytes.resize(127, b' ');
        bytes.push(b'\n');
        let header = decode(&bytes).unwrap();
        assert_eq!(header.version, (major, 0));
        assert_eq!(header.element, ElementType::I32);
        assert_eq!(header.shape, vec![2, 3]);
        assert_eq!(header.order, Order::RowMajor);
        assert_eq!(header.data_offset, 128);
    }
}

#[test]
fn version_3_headers_are_utf8() {
    let text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }  \u{3000}\n";
    // U+3000 is not Python whitespace to us: it is text after the dict.
    let message = refused(&preamble((3, 0), text.as_bytes()));
    assert!(message.contains("after the header dict"), "{message}");
    // UTF-8 inside a string reaches the type check.
    let text = "{'descr': '<f\u{e9}', 'fortran_order': False, 'shape': (3,), }\n";
    let message = refused(&preamble((3, 0), text.as_bytes()));
    assert!(message.contains("no ndcyclic element type"), "{message}");
    // The same bytes in version 1.0 and 2.0 are not ASCII.
    for version in [(1, 0), (2, 0)] {
        let message = refused(&preamble(version, text.as_bytes()));
        assert!(
            message.contains("not ASCII") && message.contains("0xc3"),
            "{message}"
        );
    }
    // Invalid UTF-8 in version 3.0.
    let mut bytes = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }".to_vec();
    bytes.extend_from_slice(b"\xff\n");
    let message = refused(&preamble((3, 0), &bytes));
    assert!(message.contains("not UTF-8"), "{message}");
}

#[test]
fn reads_what_other_writers_write() {
    // Python 2 NumPy: long integers, 16-byte alignment.
    let python2 = v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 4L), }        \n");
    assert_eq!(python2.len(), 80);
    let header = decode(&python2).unwrap();
    assert_eq!(header.shape, vec![3, 4]);
    assert_eq!(header.data_offset, 80);
    // Double quotes, no trailing commas, whitespace of every kind, keys in
    // any order.
    let header =
        decoded_dict("{\"shape\":(2,3,4) ,\n\t\"fortran_order\" :True,\"descr\":\"<c16\"}");
    assert_eq!(header.shape, vec![2, 3, 4]);
    assert_eq!(header.order, Order::ColumnMajor);
    assert_eq!(header.element, ElementType::C64);
    // A trailing comma in the tuple, leading whitespace, a 1-dimensional shape.
    let header =
        decoded_dict("  { 'descr' : '|u1' , 'fortran_order' : False , 'shape' : ( 9 , ) , }");
    assert_eq!(header.shape, vec![9]);
    let header = decoded_dict("{'descr': '<u4', 'fortran_order': False, 'shape': (2, 3,), }");
    assert_eq!(header.shape, vec![2, 3]);
    // No padding at all, and padding ended by blank lines.
    assert!(decode(&v1(
        "{'descr': '<i8', 'fortran_order': False, 'shape': (1,)}\n"
    ))
    .is_ok());
    assert!(decode(&v1(
        "{'descr': '<i8', 'fortran_order': False, 'shape': (1,)}\n  \n"
    ))
    .is_ok());
    // The largest extent.
    let header = decoded_dict(
        "{'descr': '|u1', 'fortran_order': False, 'shape': (18446744073709551615,), }",
    );
    assert_eq!(header.shape, vec![usize::MAX]);
}

#[test]
fn refuses_other_files_and_versions() {
    let good = encode(ElementType::F64, Order::RowMajor, &[3]);
    let mut wrong = good.clone();
    wrong[1] = b'n';
    let message = refused(&wrong);
    assert!(
        message.starts_with("not a .npy file: it does not start with \\x93NUMPY"),
        "{message}"
    );
    let message = refused(b"PK\x03\x04\x14\x00\x00\x00\x00\x00");
    assert!(
        message.contains("not a .npy file") && message.contains(".npz"),
        "{message}"
    );
    // Known as wrong from the first byte.
    assert!(refused(b"x").contains("not a .npy file"));
    for version in [(0, 0), (1, 1), (2, 1), (4, 0), (255, 255)] {
        let mut bytes = good.clone();
        bytes[6] = version.0;
        bytes[7] = version.1;
        let message = refused(&bytes);
        assert!(
            message.contains(&format!(
                "unsupported .npy format version {}.{}",
                version.0, version.1
            )),
            "{message}"
        );
    }
}

#[test]
fn refuses_missing_extra_and_repeated_keys() {
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, }");
    assert!(message.contains("no 'shape' key"), "{message}");
    let message = refused_dict("{'fortran_order': False, 'shape': (3,), }");
    assert!(message.contains("no 'descr' key"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'shape': (3,), }");
    assert!(message.contains("no 'fortran_order' key"), "{message}");
    let message =
        refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1}");
    assert!(message.contains("unexpected key \"extra\""), "{message}");
    let message =
        refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'shape': (3,)}");
    assert!(message.contains("key 'shape' appears twice"), "{message}");
    let message = refused_dict("{}");
    assert!(message.contains("no 'descr' key"), "{message}");
}

#[test]
fn refuses_values_of_the_wrong_kind() {
    let message = refused_dict(
        "{'descr': [('x', '<f8'), ('y', '<i4')], 'fortran_order': False, 'shape': (3,), }",
    );
    assert!(
        message.contains("structured arrays (record dtypes) are not read"),
        "{message}"
    );
    let message = refused_dict("{'descr': 8, 'fortran_order': False, 'shape': (3,), }");
    assert!(
        message.contains("type string") && message.contains("'descr'"),
        "{message}"
    );
    // The type check's own message.
    let message = refused_dict("{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }");
    assert_eq!(message, ElementType::from_npy_descr(">f8").unwrap_err());
    let message = refused_dict("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }");
    assert!(message.contains("object array"), "{message}");
    for value in ["1", "true", "Truth", "'True'", ""] {
        let message = refused_dict(&format!(
            "{{'descr': '<f8', 'fortran_order': {value}, 'shape': (3,), }}"
        ));
        assert!(message.contains("True or False"), "{value}: {message}");
    }
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': [3, 4], }");
    assert!(message.contains("tuple of integers"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': 3, }");
    assert!(message.contains("tuple of integers"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (5), }");
    assert!(
        message.contains("not a tuple") && message.contains("(5,)"),
        "{message}"
    );
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3, -4), }");
    assert!(message.contains("negative"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4.0), }");
    assert!(message.contains("',' or ')'"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3,, 4), }");
    assert!(message.contains("non-negative integer"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3 4), }");
    assert!(message.contains("',' or ')'"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (0x10,), }");
    assert!(message.contains("',' or ')'"), "{message}");
}

#[test]
fn refuses_shapes_without_a_layout_or_a_size() {
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (), }");
    assert_eq!(
        message,
        "a 0-dimensional array (shape ()) has no layout; save it with at least one dimension"
    );
    let message = refused_dict(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551616,), }",
    );
    assert!(message.contains("too large"), "{message}");
    let message = refused_dict(&format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, 3), }}",
        "9".repeat(500)
    ));
    assert!(
        message.contains("too large") && message.len() < 200,
        "{message}"
    );
    let message = refused_dict(
        "{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
    );
    assert!(message.contains("more than 2^64 elements"), "{message}");
    // Elements fit in 64 bits, bytes do not.
    let message = refused_dict(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 536870912), }",
    );
    assert!(message.contains("more than 2^64 bytes"), "{message}");
    assert!(decode(&encode(
        ElementType::F64,
        Order::RowMajor,
        &[4_294_967_296, 536_870_911]
    ))
    .is_ok());
    // Huge extents beside a zero one: no elements, no overflow.
    assert!(decode(&encode(
        ElementType::F64,
        Order::RowMajor,
        &[0, usize::MAX, usize::MAX]
    ))
    .is_ok());
}

#[test]
fn refuses_malformed_text() {
    let message = refused(&v1(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }   ",
    ));
    assert!(message.contains("does not end with a newline"), "{message}");
    let message = refused(&v1(""));
    assert!(message.contains("dict literal"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), } x");
    assert!(message.contains("after the header dict"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }}");
    assert!(message.contains("after the header dict"), "{message}");
    let message = refused_dict("dict(descr='<f8')");
    assert!(message.contains("dict literal"), "{message}");
    let message = refused_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)");
    assert!(
        message.contains("',' or '}'") && message.contains("end of the header"),
        "{message}"
    );
    let message = refused_dict("{'descr': '<f8' 'fortran_order': False, 'shape': (3,), }");
    assert!(
        message.contains("',' or '}' after the value of 'descr'"),
        "{message}"
    );
    let message = refused_dict("{'descr' '<f8', 'fortran_order': False, 'shape': (3,), }");
    assert!(message.contains("':' after the key 'descr'"), "{message}");
    let message = refused_dict("{descr: '<f8', 'fortran_order': False, 'shape': (3,), }");
    assert!(message.contains("quoted key"), "{message}");
    let message = refused_dict("{'descr: '<f8', 'fortran_order': False, 'shape': (3,), }");
    assert!(message.contains("unexpected key \"descr: \""), "{message}");
    let message = refused_dict("{'descr': '<f8\\x00', 'fortran_order': False, 'shape': (3,), }");
    assert!(message.contains("escape"), "{message}");
    let message = refused_dict("{'descr': '<f8, 'fortran_order': False, 'shape': (3,), }");
    assert!(message.contains("after the value of 'descr'"), "{message}");
    let message = refused_dict("{'descr': \"<f8', 'fortran_order': False, 'shape': (3,), }");
    assert!(message.contains("no closing quote"), "{message}");
    let message = refused(&v1(
        "{'descr': '<f8\n', 'fortran_order': False, 'shape': (3,), }\n",
    ));
    assert!(message.contains("no closing quote"), "{message}");
}

#[test]
fn says_how_many_bytes_it_needs() {
    assert_eq!(decode(b""), Err(Problem::NeedBytes(10)));
    assert_eq!(decode(b"\x93NUM"), Err(Problem::NeedBytes(10)));
    assert_eq!(decode(b"\x93NUMPY\x01"), Err(Problem::NeedBytes(10)));
    assert_eq!(decode(b"\x93NUMPY\x01\x00v"), Err(Problem::NeedBytes(10)));
    assert_eq!(decode(b"\x93NUMPY\x02\x00"), Err(Problem::NeedBytes(12)));
    assert_eq!(
        decode(b"\x93NUMPY\x03\x00t\x00\x00"),
        Err(Problem::NeedBytes(12))
    );
    assert_eq!(
        decode(b"\x93NUMPY\x01\x00v\x00"),
        Err(Problem::NeedBytes(128))
    );
    assert_eq!(
        decode(b"\x93NUMPY\x02\x00\x00\x00\x01\x00{"),
        Err(Problem::NeedBytes(12 + 65_536))
    );
    assert_eq!(
        decode(b"\x93NUMPY\x02\x00\xff\xff\xff\xff"),
        Err(Problem::NeedBytes(12 + 0xffff_ffff))
    );
    let bytes = encode(ElementType::U32, Order::RowMajor, &[1; 30_000]);
    assert_eq!(bytes[6], 2);
    for cut in [0, 5, 8, 10, 11, 12, 64, bytes.len() - 1] {
        let needed = match cut {
            0..=7 => 10,
            8..=11 => 12,
            _ => bytes.len(),
        };
        assert_eq!(
            decode(&bytes[..cut]),
            Err(Problem::NeedBytes(needed)),
            "cut at {cut}"
        );
    }
}

#[test]
fn data_bytes_is_elements_times_size() {
    let header = decode(&encode(ElementType::C64, Order::RowMajor, &[3, 4])).unwrap();
    assert_eq!(data_bytes(&header), Some(3 * 4 * 16));
    let header = Header {
        shape: vec![usize::MAX, 2],
        ..header
    };
    assert_eq!(data_bytes(&header), None);
    let header = Header {
        shape: vec![1 << 62],
        ..header
    };
    assert_eq!(data_bytes(&header), None);
    let header = Header {
        shape: vec![],
        ..header
    };
    assert_eq!(data_bytes(&header), Some(16));
}

/// An element type, an order and a shape of 1 to 5 extents below 10^6.
#[derive(Debug, Clone)]
struct Case {
    element: ElementType,
    order: Order,
    shape: Vec<usize>,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Self {
        let element = *g.choose(&ALL).unwrap();
        let order = *g.choose(&ORDERS).unwrap();
        let dims = usize::arbitrary(g) % 5 + 1;
        let shape = (0..dims)
            .map(|_| {
                // Small extents too, so that many shapes have a size.
                let bound = *g.choose(&[11, 1_001, 1_000_001]).unwrap();
                usize::arbitrary(g) % bound
            })
            .collect();
        Case {
            element,
            order,
            shape,
        }
    }
}

fn encode_then_decode(case: Case) -> bool {
    let bytes = encode(case.element, case.order, &case.shape);
    let size = element_count(&case.shape)
        .and_then(|count| count.checked_mul(u64::try_from(case.element.size()).ok()?));
    match (decode(&bytes), size) {
        (Ok(header), Some(size)) => {
            header.element == case.element
                && header.order == case.order
                && header.shape == case.shape
                && header.version == (1, 0)
                && header.data_offset == bytes.len()
                && header.data_offset % 64 == 0
                && data_bytes(&header) == Some(size)
        }
        (Err(Problem::Invalid(message)), None) => message.contains("more than 2^64"),
        _ => false,
    }
}

#[test]
fn encode_then_decode_returns_the_array() {
    QuickCheck::new()
        .tests(3000)
        .quickcheck(encode_then_decode as fn(Case) -> bool);
}

fn every_truncation_needs_more(case: Case) -> TestResult {
    let bytes = encode(case.element, case.order, &case.shape);
    if decode(&bytes).is_err() {
        return TestResult::discard();
    }
    TestResult::from_bool((0..bytes.len()).all(|cut| match decode(&bytes[..cut]) {
        Err(Problem::NeedBytes(needed)) => needed > cut && needed <= bytes.len(),
        _ => false,
    }))
}

#[test]
fn a_truncated_header_says_how_many_bytes_it_needs() {
    QuickCheck::new()
        .tests(300)
        .quickcheck(every_truncation_needs_more as fn(Case) -> TestResult);
}

fn never_panics(bytes: Vec<u8>) -> bool {
    let _ = decode(&bytes);
    true
}

/// Arbitrary header text behind a valid magic string, version and
/// length field (the length of the text, or an arbitrary one).
fn never_panics_behind_a_valid_prefix(major: u8, text: Vec<u8>, honest: bool, length: u32) -> bool {
    let version = (major % 3 + 1, 0);
    let mut bytes = preamble(version, &text);
    if !honest {
        let field = length.to_le_bytes();
        let width = if version.0 == 1 { 2 } else { 4 };
        bytes[8..8 + width].copy_from_slice(&field[..width]);
    }
    if let Ok(header) = decode(&bytes) {
        assert!(header.data_offset <= bytes.len());
    }
    true
}

/// Pieces of header text, so that random text gets deep into the parser.
const PIECES: [&str; 33] = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    " ",
    "\n",
    "\t",
    "'",
    "\"",
    "\\",
    "L",
    "-",
    "'descr'",
    "'fortran_order'",
    "'shape'",
    "'<f8'",
    "\"|u1\"",
    "'>i4'",
    "True",
    "False",
    "0",
    "7",
    "4096",
    "18446744073709551615",
    "99999999999999999999999",
    "é",
    "\u{3000}",
    "'é",
    "'\n",
];

fn never_panics_on_header_like_text(picks: Vec<u8>, major: u8) -> bool {
    let text: String = picks
        .iter()
        .map(|&pick| PIECES[usize::from(pick) % PIECES.len()])
        .collect();
    let bytes = preamble((major % 3 + 1, 0), text.as_bytes());
    if let Ok(header) = decode(&bytes) {
        assert_eq!(header.data_offset, bytes.len());
    }
    true
}

/// A valid preamble with one byte changed.
fn never_panics_on_a_changed_byte(case: Case, at: usize, byte: u8) -> bool {
    let mut bytes = encode(case.element, case.order, &case.shape);
    let at = at % bytes.len();
    bytes[at] = byte;
    let _ = decode(&bytes);
    true
}

#[test]
fn decode_never_panics() {
    QuickCheck::new()
        .tests(3000)
        .quickcheck(never_panics as fn(Vec<u8>) -> bool);
    QuickCheck::new()
        .tests(3000)
        .quickcheck(never_panics_behind_a_valid_prefix as fn(u8, Vec<u8>, bool, u32) -> bool);
    QuickCheck::new()
        .tests(5000)
        .quickcheck(never_panics_on_header_like_text as fn(Vec<u8>, u8) -> bool);
    QuickCheck::new()
        .tests(3000)
        .quickcheck(never_panics_on_a_changed_byte as fn(Case, usize, u8) -> bool);
}

#[test]
fn header_like_text_sometimes_decodes() {
    // A sanity check of the piecewise generator's reach: the pieces can
    // spell a valid header.
    let picks = [0u8, 16, 6, 19, 7, 17, 6, 23, 7, 18, 6, 2, 26, 7, 3, 1, 9];
    let text: String = picks.iter().map(|&p| PIECES[usize::from(p)]).collect();
    assert_eq!(
        text,
        "{'descr':'<f8','fortran_order':False,'shape':(4096,)}\n"
    );
    assert!(never_panics_on_header_like_text(picks.to_vec(), 0));
    assert!(decode(&v1(&text)).is_ok());
}
